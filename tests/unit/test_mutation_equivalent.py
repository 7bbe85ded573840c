'''The mutation run's survivors argued equivalent (tests/mutation/equivalent.yaml, issue 58):
the file itself, its refusals, the stale argument, and the score that leaves the argued out.'''
import pathlib
import sys

import pytest
import yaml

MUTATION = pathlib.Path(__file__).resolve().parents[1] / 'mutation'
sys.path.insert(0, str(MUTATION))

import equivalent  # noqa: E402
import run  # noqa: E402

# a survivor as `mutmut show` prints it (mutmut 3.8.1, past.figures of 2026-12-02)
DIFF = '''# mdxbench.post.analysis.past.x_figures__mutmut_10: survived
--- src/mdxbench/post/analysis/past.py
+++ src/mdxbench/post/analysis/past.py
@@ -3,7 +3,7 @@
     values = np.asarray(values, dtype=float)
-    starts, ns = np.asarray(starts, dtype=np.int64), np.asarray(ns, dtype=np.int64)
+    starts, ns = np.asarray(starts, ), np.asarray(ns, dtype=np.int64)
     k = len(ns)'''
NAME = 'mdxbench.post.analysis.past.x_figures__mutmut_10'


def _write(tmp_path, data):
    f = tmp_path / 'equivalent.yaml'
    f.write_text(yaml.safe_dump(data, allow_unicode=True))
    return f


def _one(change='np.asarray(starts, )', why='typed'):
    return {'reasons': {'typed': {'title': 'already typed', 'text': 'an int64 array'}},
            'mutants': {'mdxbench.post.analysis.past':
                        {'x_figures__mutmut_10': {'change': change, 'why': why}}}}


def test_the_projects_arguments_load_and_name_the_runs_modules():
    argued = equivalent.load()
    modules = {run.staged(m) for g in yaml.safe_load(run.GROUPS.read_text())['groups'].values()
               for m in g['modules']}
    # src/mdxbench/post/analysis/past.py -> mdxbench.post.analysis.past
    names = {m[len('src/'):-len('.py')].replace('/', '.') for m in modules}
    assert argued.mutants, 'no survivor argued'
    for mutant, (change, why) in argued.mutants.items():
        assert run.module_of(mutant) in names, mutant
        assert why in argued.reasons


def test_a_survivor_is_argued_only_by_the_change_it_is(tmp_path):
    argued = equivalent.load(_write(tmp_path, _one()))
    assert argued.judge(NAME, DIFF) == 'argued'
    # the same name, another change (mutmut numbered the function anew): stale, not argued
    other = DIFF.replace('np.asarray(starts, ), np.asarray(ns, dtype=np.int64)',
                         'np.asarray(starts, dtype=np.int64), np.asarray(ns, )')
    assert argued.judge(NAME, other) == 'stale'
    # the change looked for on the new lines only: the old line holds no '(starts, )'
    assert argued.judge(NAME, DIFF.replace('+    starts', '     starts')) == 'stale'
    assert argued.judge(NAME.replace('_10', '_11'), DIFF) is None


def test_a_change_spread_over_lines_is_found_whitespace_aside(tmp_path):
    diff = ('-    if a and \\\n-            b:\n+    if a or b:\n')
    argued = equivalent.load(_write(tmp_path, _one(change='if  a or\n b')))
    assert argued.judge(NAME, diff) == 'argued'


@pytest.mark.parametrize('data, says', [
    ({'reasons': {}}, 'wants the keys reasons and mutants'),
    (dict(_one(), mutants={'numpy': {'x_f__mutmut_1': {'change': 'x', 'why': 'typed'}}}),
     'mutants.numpy: not a module of mdxbench'),
    (dict(_one(), mutants={'mdxbench.x': {'f_1': {'change': 'x', 'why': 'typed'}}}),
     "mutants.mdxbench.x.f_1: not a mutmut mutant's name"),
    (_one(change=' '), 'x_figures__mutmut_10: change: wants a piece'),
    (_one(why='dtype'), "why: 'dtype' is none of the reasons (typed)"),
    (dict(_one(), reasons={'typed': {'title': 'already typed', 'text': ' '}}),
     'reasons.typed: wants a title and a text'),
    (dict(_one(), reasons={'typed': {'title': 't', 'text': 'x'}, 'tie': {'title': 't', 'text': 'y'}}),
     'reasons no mutant gives: tie'),
])
def test_a_malformed_argument_is_refused_naming_it(tmp_path, data, says):
    f = _write(tmp_path, data)
    with pytest.raises(ValueError) as e:
        equivalent.load(f)
    assert str(f) in str(e.value) and says in str(e.value)


def test_the_score_leaves_the_argued_out_and_counts_every_other_survivor():
    st = {'killed': ['k'] * 9, 'timeout': ['t'], 'survived': ['s'] * 2, 'argued': ['a'] * 5,
          'no tests': ['n'], 'not checked': ['c'] * 3}
    # caught: killed and timed out; of the checked, less those argued equivalent
    assert run.counts(st) == (10, 13)


def test_the_reference_shows_each_mutant_its_change_and_why(tmp_path):
    text = equivalent.markdown(equivalent.load(_write(tmp_path, _one())))
    assert '**`mdxbench.post.analysis.past`** (1)' in text
    assert '| `x_figures__mutmut_10` | `np.asarray(starts, )` | already typed |' in text
    assert '* *already typed*: an int64 array' in text
