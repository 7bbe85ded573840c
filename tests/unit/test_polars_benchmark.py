'''PdsBenchmark's output (issue 60, item 9): pola-rs/polars-benchmark at 6e3fefc run by
checks/apps/src/polars-benchmark.sh at scale factor 1 on this machine -- a whole run, and a
run in which pandas' q5 was aborted at its exit (tests/fixtures/README.md).'''
import pytest

from dry_runs import slurm_client_path
from mdxbench.parsers import ParseError, polars_benchmark as pb

LIBS = ('polars', 'duckdb', 'pandas', 'dask')
QUERIES = tuple(range(1, 8))
WHOLE = 'polars-benchmark/polars-benchmark-6e3fefc-sf1.out'
ABORT = 'polars-benchmark/polars-benchmark-6e3fefc-sf1-pandas-q5-abort.out'


def _csv_seconds(text, lib, q):
    '''The duration the benchmark's timings file gives a query, read off its line.'''
    [line] = [ln for ln in text.splitlines() if ln.startswith(f'{lib},') and
              ln.split(',')[2] == str(q)]
    return float(line.split(',')[3])


def test_a_whole_run_gives_every_query_of_every_library_its_own_timing(fixture_text):
    text = fixture_text(WHOLE)
    r = pb.parse(text)
    assert r['checked'] is True
    assert sorted(r['runs']) == sorted(f'{lib} q{q}' for lib in LIBS for q in QUERIES)
    assert all(s == [0] for s in r['runs'].values())
    f = pb.figures(r, LIBS, QUERIES)
    for lib in LIBS:
        for q in QUERIES:
            assert f[f'{lib}_q{q}'] == _csv_seconds(text, lib, q)
        assert f[f'{lib}_total'] == pytest.approx(sum(_csv_seconds(text, lib, q)
                                                      for q in QUERIES))
    assert f['versions'] == {'polars': '1.8.2', 'duckdb': '0.10.2', 'pandas': '2.2.2',
                             'dask': '2024.4.1'}
    assert f['scale_factor'] == 1.0 and f['ran_twice'] == []
    # what ReFrame writes into its JSON report (a check's results): no key that is not text
    import json
    json.dumps(dict(r, **f))
    # the linetimer line of a query says what its timings row says
    assert "Code block 'Run pandas query 5' took: " in text
    assert round(f['pandas_q5'], 3) == round(float(
        text.split("Code block 'Run pandas query 5' took: ")[1].split()[0]), 3)


def test_a_query_whose_process_failed_fails_the_run_naming_it(fixture_text):
    '''pandas q5 logged its timing, then its process was aborted (exit 134): whether its
    answer was checked is not known, so the run fails, naming the query and the status.'''
    r = pb.parse(fixture_text(ABORT))
    assert r['runs']['pandas q5'] == [134]
    with pytest.raises(ValueError) as err:
        pb.figures(r, LIBS, QUERIES)
    assert str(err.value) == ("polars-benchmark: pandas q5 failed (exit 134: its answer "
                              "differs from the benchmark's, or it crashed)")
    # the other 27 are fine: asked for alone, they give their figures
    f = pb.figures(r, ('polars', 'duckdb', 'dask'), QUERIES)
    assert len([k for k in f if k.endswith(('_q1', '_q7'))]) == 6


def test_a_query_that_ran_twice_counts_its_last_run_and_says_so(fixture_text):
    '''A signal ended the first run, the second ended well: its figure is the second's
    timing row, and the query is named among those that ran twice. (The statuses and rows
    of the real whole run, with one query's first run added as a parse would give it.)'''
    r = pb.parse(fixture_text(WHOLE))
    first = dict(next(x for x in r['rows'] if (x['library'], x['query']) == ('pandas', 5)),
                 seconds=99.0)
    r['rows'].insert(0, first)
    r['runs']['pandas q5'] = [134, 0]
    f = pb.figures(r, LIBS, QUERIES)
    assert f['pandas_q5'] != 99.0 and f['ran_twice'] == ['pandas q5 (exit 134, then 0)']


def test_every_query_missing_or_without_timing_is_named(fixture_text):
    r = pb.parse(fixture_text(WHOLE))
    del r['runs']['dask q7']
    r['rows'] = [x for x in r['rows'] if (x['library'], x['query']) != ('duckdb', 3)]
    with pytest.raises(ValueError) as err:
        pb.figures(r, LIBS, QUERIES)
    assert str(err.value) == 'polars-benchmark: duckdb q3 logged no timing; dask q7 did not run'


def test_an_output_cut_before_its_timings_or_not_the_benchmarks_is_refused(fixture_text):
    text = fixture_text(WHOLE)
    cut = text[:text.index('polars-benchmark: timings.csv')]
    with pytest.raises(ParseError, match='no "polars-benchmark: timings.csv" line'):
        pb.parse(cut)
    with pytest.raises(ParseError, match='header solution,version,query_number,duration'
                                         r'\[s\],io_type, expected'):
        pb.parse(text.replace(',scale_factor\n', '\n', 1))
    with pytest.raises(ParseError, match='whether the answers were checked'):
        pb.parse('\n'.join(ln for ln in text.splitlines()
                           if not ln.startswith('polars-benchmark: answers')))
    bad = text.replace('polars,1.8.2,1,', 'polars,1.8.2,one,', 1)
    with pytest.raises(ParseError, match=r'timings line 2: not a query number.*polars,1.8.2,one,'):
        pb.parse(bad)
    with pytest.raises(ParseError, match='no query ran'):
        pb.parse('\n'.join(ln for ln in text.splitlines() if ' exit ' not in ln))


def test_above_scale_factor_1_nothing_is_said_of_answers_and_one_scale_is_required(
        fixture_text):
    """The job says when it does not check the answers (the benchmark's answers are of
    scale factor 1): a failed query is then a failed process, nothing more is claimed.
    (The real run with that line in place of the line it printed.)"""
    text = fixture_text(ABORT).replace(
        [ln for ln in fixture_text(ABORT).splitlines()
         if ln.startswith('polars-benchmark: answers checked')][0],
        'polars-benchmark: answers not checked (its answers are of scale factor 1)')
    r = pb.parse(text)
    assert r['checked'] is False
    with pytest.raises(ValueError) as err:
        pb.figures(r, LIBS, QUERIES)
    assert str(err.value) == 'polars-benchmark: pandas q5 failed (exit 134)'
    whole = pb.parse(fixture_text(WHOLE))
    whole['rows'][-1]['scale_factor'] = 10.0
    with pytest.raises(ValueError, match=r'timings of several scale factors: \[1.0, 10.0\]'):
        pb.figures(whole, LIBS, QUERIES)


# --- the check: what its job runs, and where it cannot ---------------------------------
@pytest.fixture(scope='module')
def state(tmp_path_factory):
    """One state directory for the module's ReFrame runs: local's processor is detected
    once (ReFrame keeps the topology there)."""
    return tmp_path_factory.mktemp('state')


def _dry_run(tmp_path, state, **env):
    '''``reframe --dry-run`` of PdsBenchmark on local with a stand-in dbgen (ReFrame only
    looks it up) in a tree laid out as the Spack package installs it; no Spack view (the
    machine's environment, where the stand-in is first on PATH).'''
    import os
    import pathlib
    import subprocess
    import sys

    from mdxbench import REPO_ROOT
    tree = tmp_path / 'prefix' / 'share' / 'polars-benchmark'
    (tree / 'tpch-dbgen').mkdir(parents=True)
    (tree / 'tpch-dbgen' / 'dbgen').write_text('#!/bin/sh\nexit 0\n')
    (tree / 'tpch-dbgen' / 'dbgen').chmod(0o755)
    (tmp_path / 'bin').mkdir()
    (tmp_path / 'bin' / 'dbgen').symlink_to(tree / 'tpch-dbgen' / 'dbgen')
    exe = pathlib.Path(sys.executable).parent / 'reframe'
    res = subprocess.run(
        [str(exe), '-c', 'checks/apps/pds.py', '-n', '^PdsBenchmark$', '--dry-run',
         '--system', 'local', '--nocolor', '--prefix', str(tmp_path / 'rfm')],
        capture_output=True, text=True, cwd=REPO_ROOT, timeout=300,
        env=dict(os.environ, RFM_CONFIG_FILES=str(REPO_ROOT / 'site-configs' / 'settings.py'),
                 MDXBENCH_STATE_DIR=str(state), MDXBENCH_SPACK_VIEW=str(tmp_path / 'no-view'),
                 PATH=f"{tmp_path / 'bin'}{os.pathsep}{slurm_client_path(tmp_path / 'srun')}",
                 **env))
    assert res.returncode == 0 and '/1 test case(s) from 1 check(s)' in res.stdout, \
        res.stdout[-3000:] + res.stderr[-2000:]
    return res.stdout, tree


def test_the_job_runs_the_benchmarks_tree_with_its_python_at_the_partitions_scale(
        tmp_path, state):
    py = tmp_path / 'py'
    py.write_text('#!/bin/sh\n')
    py.chmod(0o755)
    out, tree = _dry_run(tmp_path, state, MDXBENCH_PDS_PYTHON=str(py))
    assert 'SKIP' not in out, out[-2000:]
    [script] = list((tmp_path / 'rfm').rglob('PdsBenchmark/rfm_job.sh'))
    run = script.read_text().strip().splitlines()[-1]
    # local's extras.pds.scale_factor: 1, the scale the benchmark's answers are for
    assert run == (f'srun bash polars-benchmark.sh {py} {tree} {script.parent}/tables 1 '
                   '"polars duckdb pandas dask" "1 2 3 4 5 6 7"'), run


def test_without_the_benchmarks_python_the_check_skips_saying_where_it_looked(
        tmp_path, state):
    out, _ = _dry_run(tmp_path, state, MDXBENCH_PDS_PYTHON=str(tmp_path / 'none' / 'python'))
    [line] = [ln for ln in out.splitlines() if 'SKIP' in ln]
    assert f"no Python with polars-benchmark's libraries at {tmp_path / 'none' / 'python'} " \
        '(ci/install.sh makes it from checks/apps/src/polars-benchmark.txt; ' \
        'MDXBENCH_PDS_PYTHON names another)' in line, out[-2000:]
