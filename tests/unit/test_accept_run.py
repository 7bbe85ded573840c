'''fleet/accept.py outside Slurm: a run's directory, its nodes judged from the perflogs
under it (the real perflogs of one main job, tests/fixtures/perflogs/main-job-1, whose
acceptance-tagged records are of the node ``vm`` of local:debug), the history the
suspects read, what a dry run says and what a run's outcome tells. (The jobs themselves:
tests/integration/test_fleet_acceptance.py.)'''
import re
import shutil

import pytest

from mdxbench import REPO_ROOT
from mdxbench.post.fleet import accept, jobs

MAIN = REPO_ROOT / 'tests' / 'fixtures' / 'perflogs' / 'main-job-1'


def _run_dir(tmp_path):
    out = tmp_path / 'out'
    shutil.copytree(MAIN, out / 'perflogs')
    return out


def test_a_runs_directory_is_new_or_empty_never_an_earlier_runs(tmp_path, monkeypatch):
    fresh = tmp_path / 'fresh'
    assert accept.new_out_dir(fresh) == fresh
    fresh.mkdir()
    assert accept.new_out_dir(str(fresh)) == fresh
    (fresh / 'perflogs').mkdir()
    with pytest.raises(ValueError) as err:
        accept.new_out_dir(fresh)
    assert str(err.value) == (f"--out {fresh} is not empty (an earlier run's records would "
                              f"be judged with this one's): give a new directory")
    monkeypatch.setenv('MDXBENCH_STATE_DIR', str(tmp_path / 'state'))
    default = accept.new_out_dir()
    assert default.parent == tmp_path / 'state' / 'accept'
    assert re.fullmatch(r'\d{8}T\d{6}', default.name), default


def test_the_nodes_are_judged_from_the_runs_perflogs_of_their_own_partition(tmp_path, capsys):
    '''local:debug's node vm passes on its 33 acceptance records: 31 figures of its six
    checks, HpccHpl's two measured twice (the latest run of each judged); a node Slurm drained is not tested; the same perflogs judged for another
    partition give vm nothing; an unreadable line is said, naming its file and line.'''
    out = _run_dir(tmp_path)
    log = out / 'perflogs' / 'local' / 'debug' / 'HpccHpl.log'
    lines = log.read_text().splitlines(keepends=True)
    log.write_text(''.join(lines) + 'not a perflog line\n')
    plan = jobs.Plan('local', 'debug', 'debug', ['vm'], {'n9': 'drained'}, [], 1)
    found = {v['node']: v for v in accept.judge(plan, out, {}, {})}
    assert {n: v['verdict'] for n, v in found.items()} == {'vm': 'pass', 'n9': 'not tested'}
    assert len(found['vm']['measurements']) == 31
    assert {m['check'].split()[0] for m in found['vm']['measurements']} == {
        'BabelStreamOmp', 'FioTarget', 'HpccHpl', 'HpccStream', 'NodeConformance', 'StreamOmp'}
    err = capsys.readouterr().err
    assert f'{log}:{len(lines) + 1}:' in err
    other = jobs.Plan('nscluster', 'nodes', 'debug', ['vm'], {}, [], 1)
    [v] = accept.judge(other, out, {}, {})
    assert (v['node'], v['verdict'], v['reasons']) == (
        'vm', 'not tested', ['no acceptance measurement (state idle)'])
    assert accept.session_records(plan, out).height == 33
    assert accept.session_records(other, out).height == 0
    empty = tmp_path / 'empty'
    empty.mkdir()
    assert accept.session_records(plan, empty).height == 0
    assert [v['verdict'] for v in accept.judge(plan, empty, {}, {})] == ['not tested', 'not tested']


def test_the_suspects_history_is_the_acceptance_runs_of_the_partition(tmp_path, capsys):
    seq = accept.sequential(0.02, 0.1, 3, [MAIN], system='local', partition='debug')
    assert (seq.alpha, seq.beta, seq.max_extra_jobs) == (0.02, 0.1, 3)
    assert seq.history.height == 33 and set(seq.history['nodes']) == {'vm'}
    assert set(seq.history['partition']) == {'debug'}
    plan = jobs.Plan('local', 'debug', 'debug', ['vm'], {}, [], 1)
    assert accept._history(plan, seq).height == 33
    assert accept._history(jobs.Plan('local', 'other', 'o', [], {}, [], 1), seq).height == 0
    assert accept.sequential(0.01, 0.05, None, [MAIN], system='nscluster').history.height == 0
    assert accept.sequential(0.01, 0.05, None).history is None
    assert accept._history(plan, accept.Sequential()) is None


def test_the_suspects_budget_is_the_operators_or_half_the_nodes():
    plan = jobs.Plan('s', 'p', 'p', [f'n{i}' for i in range(9)], {}, [], 1)
    assert accept._budget(plan, accept.Sequential(max_extra_jobs=0)) == 0
    assert accept._budget(plan, accept.Sequential()) == 4
    assert accept.default_budget(3) == 2 and accept.default_budget(4) == 2
    assert accept.default_budget(10) == 5


def test_a_dry_run_says_what_a_run_would_submit():
    plan = jobs.Plan('mdx2', 'vc16m32g', 'p', ['n1', 'n2'], {'n3': 'drained', 'n4': 'down*'},
                     [], 4)
    assert accept.dry_run(plan, 7) == (
        'nodes to test: 2 (n1, n2); not tested: 2 (n3 drained, n4 down*)\n'
        'acceptance test cases per node: 7\n'
        'jobs: mdxbench accept submits 2, at most 4 queued at once; reframe '
        '--distribute=all would submit 14 (2 x 7)')
    none = jobs.Plan('mdx2', 'vc16m32g', 'p', ['n1'], {}, [], 1)
    assert accept.dry_run(none, 1).startswith('nodes to test: 1 (n1); not tested: 0 (-)\n')


def test_an_outcome_passes_only_where_every_node_passed_and_carries_its_figures():
    from mdxbench.post.fleet import suspects

    nz = {'A bw': suspects.Noise(0.02, 'repeated runs', 9)}
    ok = accept.Outcome([{'node': 'a', 'verdict': 'pass'}], 3, 2, 12.5, {'a': '1'}, nz)
    assert ok.passed and ok.figures() == {'jobs': 3, 'max_in_queue': 2, 'seconds': 12.5}
    assert ok.noise_json() == {'A bw': {'sigma': 0.02, 'source': 'repeated runs', 'n': 9}}
    assert not accept.Outcome([{'node': 'a', 'verdict': 'pass'},
                               {'node': 'b', 'verdict': 'undecided'}], 1, 1, 1.0, {}).passed
    assert accept.Outcome([], 0, 0, 0.0, {}).noise_json() == {}
