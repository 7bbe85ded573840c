'''The whole suite on `local`: every check runs through the real Slurm or is skipped with
its reason; the perflogs go into the real Elasticsearch, once.'''
import json
import re

import pytest

from conftest import ROOT, VENV_BIN, count, mdxbench, run
from mdxbench import perflog

# What must run on `local` (Debian's tools), with the perf variables each must report
EXPECTED_PASS = {
    'HpccStream': {'copy', 'scale', 'add', 'triad', 'copy_1t', 'triad_1t'},
    'HpccHpl': {'gflops', 'percent_peak'},
    'Iperf3Throughput': {'throughput'},
    'SockperfPingPong': {'mean_rtt', 'p50_rtt', 'p99_rtt'},
    'NetperfTcpRR': {'mean_rtt', 'p50_rtt', 'p90_rtt', 'p99_rtt'},
    'FioTarget': {'bandwidth', 'iops'},
    'LikwidCacheSweep': {'l1_bw', 'l2_bw', 'l3_bw', 'memory_bw'},
    'FftwMpi2d': {'total_time', 'compute_time', 'comm_time', 'gflops', 'comm_share'},
    'PdsTpch': {f'{lib}_{q}' for lib in ('polars', 'duckdb', 'pandas', 'dask')
                for q in ('q1', 'q3', 'q6', 'total')},
}
SKIP_REASONS = ('is not installed on local:debug', 'has 1 node(s)', 'declares no storage target',
                'declares no object target', 'no hardware PMU')


@pytest.fixture(scope='module')
def suite_run(services, tmp_path_factory):
    tmp = tmp_path_factory.mktemp('suite')
    env = {'MDXBENCH_PERFLOG_DIR': str(tmp / 'perflogs'),
           'RFM_CONFIG_FILES': str(ROOT / 'site-configs' / 'settings.py')}
    report = tmp / 'report.json'
    res = run([str(VENV_BIN / 'reframe'), '-c', 'checks/', '-r', '--system', 'local',
               '--prefix', str(tmp / 'rfm'), '--report-file', str(report),
               '--nocolor', '-S', 'duration=3', '-S', 'size=256M', '-S', 'runtime=3',
               '-S', 'LikwidCacheSweep.repeats=3', '-S', 'FftwMpi2d.points=2048',
               '-S', 'scale_factor=0.05'],
              env=env, timeout=2400)
    return {'res': res, 'tmp': tmp, 'report': json.loads(report.read_text())}


def test_every_check_runs_or_is_skipped_with_its_reason(suite_run):
    res = suite_run['res']
    assert res.returncode == 0, res.stdout[-6000:] + res.stderr[-2000:]
    cases = [tc for r in suite_run['report']['runs'] for tc in r['testcases']]
    # ReFrame's report keeps no skip reason; its output does: [ SKIP ] (i/N) NAME /hash @... [why]
    reasons = dict(re.findall(r'^\[\s*SKIP\s*\] \(\s*\d+/\d+\) (.+?) /[0-9a-f]+ @\S+ \[(.*)\]$',
                              res.stdout, re.M))
    passed = {}
    for tc in cases:
        name = tc['name'].split()[0]
        if tc['result'] == 'skip':
            reason = reasons.get(tc['display_name'], '')
            assert any(s in reason for s in SKIP_REASONS), (tc['name'], reason)
            # a check that runs here may skip only its multi-node cases and other targets
            assert name not in EXPECTED_PASS or 'has 1 node(s)' in reason \
                or 'declares no storage target' in reason, (tc['name'], reason)
        else:
            assert tc['result'] == 'pass', (tc['name'], tc.get('fail_reason'))
            passed.setdefault(name, []).append(tc)

    assert set(passed) == set(EXPECTED_PASS)
    assert len(passed['Iperf3Throughput']) == 5      # streams 1, 2, 4, 8, 16 on one node
    assert len(passed['FioTarget']) == 4             # four workloads on local scratch
    assert [tc['name'] for tc in passed['FftwMpi2d']] == ['FftwMpi2d %num_nodes=1']
    # HPL on both BLAS libraries of local: OpenBLAS (native) and Intel MKL (mkl)
    assert sorted(tc['environ'] for tc in passed['HpccHpl']) == ['mkl', 'native']
    # only BLAS users run in the mkl environment
    assert {n for n, tcs in passed.items() if any(tc['environ'] == 'mkl' for tc in tcs)} == {'HpccHpl'}


def test_perflogs_hold_every_perf_value_with_provenance(suite_run):
    records = []
    for f in (suite_run['tmp'] / 'perflogs').rglob('*.log'):
        for line in f.read_text().splitlines()[1:]:
            records += perflog.parse_line(line)

    by_check = {}
    for r in records:
        by_check.setdefault(r['check'].split()[0], set()).add(r['perf_var'])
        assert r['perf_value'] > 0, r
        assert re.fullmatch(r'\d+', r['jobid']) and r['nodelist'], r
        assert r['meta']['command'] and r['meta']['bench_version'] != 'unknown', r
        assert len(r['meta']['suite_commit']) >= 40

    assert by_check == EXPECTED_PASS
    blas = {r['environ']: r['meta']['blas'] for r in records if r['check'] == 'HpccHpl'}
    assert blas['mkl']['library'].endswith('libmkl_rt.so')
    assert blas['mkl']['debian_package'].startswith('libmkl-rt ')
    assert 'openblas' in blas['native']['library']
    iperf = [r for r in records if r['perf_var'] == 'throughput']
    assert {r['meta']['streams'] for r in iperf} == {1, 2, 4, 8, 16}
    assert all('multiqueue' in r['meta'] and r['meta']['nic_dev'] for r in iperf)
    # the job really went through Slurm and completed there
    job = run(['scontrol', 'show', 'job', records[0]['jobid']])
    assert 'JobState=COMPLETED' in job.stdout, job.stdout + job.stderr


def test_perflogs_into_elasticsearch_once(suite_run, es):
    plogs = suite_run['tmp'] / 'perflogs'
    nrec = sum(len(perflog.parse_line(ln)) for f in plogs.rglob('*.log')
               for ln in f.read_text().splitlines()[1:])
    state = suite_run['tmp'] / 'state.json'
    res = mdxbench('ingest', str(plogs), '--state', str(state), env=es['env'])
    assert res.returncode == 0, res.stdout + res.stderr
    assert f'records {nrec}, sent {nrec}, created {nrec}, present 0' in res.stdout
    assert count(es) == nrec

    state.unlink()      # forget what was sent: ids still prevent duplicates
    res = mdxbench('ingest', str(plogs), '--state', str(state), env=es['env'])
    assert res.returncode == 0 and f'created 0, present {nrec}' in res.stdout, res.stdout
    assert count(es) == nrec

    hits = es['client'].search(index=f"{es['prefix']}-*", size=1,
                               query={'term': {'perf_var': 'triad'}})['hits']['hits']
    doc = hits[0]['_source']
    assert doc['check'] == 'HpccStream' and doc['meta']['bench'] == 'hpcc'


def test_counters_without_a_pmu_fail_naming_the_events(services, tmp_path):
    '''This VM has no hardware PMU, so PerfCountersFft is skipped (facts.pmu false). Run
    anyway, the job runs the FFT kernel under perf through Slurm and the check fails with
    perf's own words for the events it could not count: never a zero count, never a pass.'''
    env = {'MDXBENCH_PERFLOG_DIR': str(tmp_path / 'perflogs'),
           'RFM_CONFIG_FILES': str(ROOT / 'site-configs' / 'settings.py')}
    base = [str(VENV_BIN / 'reframe'), '-c', 'checks/apps/perfcounters.py', '-r', '--system',
            'local', '--prefix', str(tmp_path / 'rfm'), '--nocolor', '-S', 'points=512',
            '-S', 'repeats=2']
    skipped = run(base, env=env, timeout=600)
    assert skipped.returncode == 0
    assert re.search(r'SKIP.*PerfCountersFft.*no hardware PMU', skipped.stdout), skipped.stdout

    ran = run(base + ['-S', 'skip_without_pmu=false'], env=env, timeout=600)
    assert ran.returncode != 0
    assert re.search(r'perf could not count instructions, cycles, cache-references, '
                     r'cache-misses on \S+ \(instructions <not supported>', ran.stdout), ran.stdout
    recs = [r for f in (tmp_path / 'perflogs').rglob('*.log')
            for line in f.read_text().splitlines()[1:] for r in perflog.parse_line(line)]
    assert recs and all(r['result'] == 'fail' and r['perf_value'] is None for r in recs)
