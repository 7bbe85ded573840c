'''The whole suite on `local`: every check runs through the real Slurm or is skipped with
its reason; the perflogs go into the real Elasticsearch, once.'''
import os
import re
import shutil

import pytest

from conftest import MAIN_SHORT, ROOT, VENV_BIN, count, mdxbench, prove_skip, run
from mdxbench import perflog

# The only reasons a case may skip on `local`: what the configuration cannot know (FFTW MPI
# is not among them: ci/install.sh installs libfftw3-mpi-dev)
SKIP_REASONS = ('is not installed on local:debug', 'has 1 node(s)', 'no hardware PMU',
                # IOR without O_DIRECT on one node, decided from its sizing before it runs
                'is the page cache, not storage',
                'is not in the short sweep of object target minio',
                # mdx I's IOR process sweep (2 to 64 ranks) where a partition declares it
                'is not in the process sweep of local:debug',
                # the one-queue iperf3 series needs two nodes and a NIC a job may change
                'loopback does not go through the NIC',
                # the GPU checks (issue 42): local declares no GPU
                'local:debug declares no GPU')


def _local_gpus():
    '''The GPU devices local's site file declares, read as YAML.'''
    import yaml

    text = (ROOT / 'site-configs' / 'systems' / 'local.yaml').read_text()
    return [d for part in yaml.safe_load(text)['partitions'] for d in part.get('devices') or []
            if d.get('type') == 'gpu']


def _local_ior():
    import yaml

    text = (ROOT / 'site-configs' / 'systems' / 'local.yaml').read_text()
    return yaml.safe_load(text)['partitions'][0]['extras'].get('ior') or {}


def _local_sweep():
    import yaml

    text = (ROOT / 'site-configs' / 'systems' / 'local.yaml').read_text()
    part = yaml.safe_load(text)['partitions'][0]
    return part['extras']['object_targets']['minio']['sweep']


LOCAL_SWEEP = _local_sweep()


# spack/local's view (ci/install.sh builds it where a Spack is at hand): the `spack`
# environment of `local` puts it first on PATH, in place of `native`
SPACK_VIEW = ROOT / 'spack' / 'local' / '.spack-env' / 'view'


def _spack_checks(env='local'):
    """The checks whose benchmark Spack builds in ``env``: spack/tools/needs.yaml, the data
    the lockfiles are held to (a check added there is held to run on Spack's build here)."""
    import yaml

    roots = yaml.safe_load((ROOT / 'spack' / 'tools' / 'needs.yaml').read_text())['roots']
    return {c for r in roots if env in r.get('environments', [env]) for c in r['checks']}


#: checks Spack builds for local that cannot run on its one node (their skips, or their
#: absence, asserted above): the rest of _spack_checks() must pass on Spack's build
SPACK_BUILDS_NOT_ON_LOCAL = {
    'Iperf3OneQueue': 'loopback does not go through the NIC',
    'Iperf3Aggregate': 'pairs of nodes: has 1 node(s)',
    'NetperfToPeer': 'no network peer declared: no case on local'}
SPACK_BUILDS = _spack_checks() - set(SPACK_BUILDS_NOT_ON_LOCAL)


def installed(cls):
    """Whether a check's benchmark binary is on the job's PATH (Spack's view, then this
    machine's) or in its search dirs."""
    import shutil

    binary = cls.bench_binary.default_value if hasattr(cls.bench_binary, 'default_value') \
        else cls.bench_binary
    dirs = cls.bench_search_dirs.default_value if hasattr(cls.bench_search_dirs, 'default_value') \
        else cls.bench_search_dirs
    dirs = [d.replace('$MDXBENCH_SPACK_VIEW', str(SPACK_VIEW)) for d in dirs]
    path = [str(SPACK_VIEW / 'bin'), os.environ['PATH']] + dirs
    return shutil.which(binary, path=os.pathsep.join(path)) is not None


@pytest.fixture(scope='module')
def suite_run(main_job):
    """The whole suite on `local` as the main job runs it (conftest.main_job: ci/main.sh
    itself, short runs): its output, report and perflogs."""
    res, report = main_job['res'], main_job['report']
    assert report is not None, res.stdout[-6000:] + res.stderr[-3000:]
    cases = [tc for r in report['runs'] for tc in r['testcases']]
    return {'res': res, 'tmp': main_job['tmp'], 'report': report, 'cases': cases,
            'passed': {tc['name'].split()[0] for tc in cases if tc['result'] == 'pass'}}


def test_the_main_job_stores_every_record_once_and_says_so(suite_run):
    """ci/main.sh's own summary: every record stored in Elasticsearch (its
    --expect-equal), one cycle that opened nothing, each session's cases by result with
    the skips grouped by reason."""
    out = suite_run['res'].stdout
    nrec = sum(len(perflog.parse_line(ln)) for f in (suite_run['tmp'] / 'perflogs').rglob('*.log')
               for ln in f.read_text().splitlines()[1:])
    assert re.search(rf'records {nrec}, sent {nrec}, created {nrec}, present 0', out), out[-6000:]
    assert re.search(r'mdxbench cycle: \d+ records', out), out[-4000:]
    # the results start with the Spack that built the benchmarks (CI: ours, from the archives)
    results = out[out.index('== mdxbench: results of this run'):]
    assert re.match(r'.*\n+Spack: \S+/spack/bin/spack \(own\): 1\.2\.0\.dev0', results), results[:500]
    cases = suite_run['cases']
    want = {}
    for tc in cases:
        want[tc['result']] = want.get(tc['result'], 0) + 1
    line = re.search(r'^cases: (\d+) \((.*)\)$', out, re.M)
    assert line and int(line.group(1)) == len(cases), out[-4000:]
    said = {r: int(n) for n, r in (x.split() for x in line.group(2).split(', '))}
    assert said == want, (said, want)
    assert 'skipped, by reason:' in out and 'minutes per area' in out
    assert (suite_run['tmp'] / 'main' / 'cycle' / 'local' / 'site' / 'index.html').is_file()


def slurm_nodes(partition='debug'):
    '''How many nodes Slurm has in the partition (sinfo), whatever the site config says.'''
    res = run(['sinfo', '-h', '-N', '-p', partition, '-o', '%N'])
    assert res.returncode == 0, res.stderr
    return len(set(res.stdout.split()))


def test_every_check_runs_or_is_skipped_with_its_reason(suite_run):
    """Every case passes, or skips for a reason the configuration cannot know -- and then
    the reason is true, found out here and not by the check's code: its binary is really
    absent, `perf stat` really counts nothing, IOR's bytes per node really are under twice
    the memory `free` reports."""
    from mdxbench import catalog

    res = suite_run['res']
    assert res.returncode == 0, res.stdout[-6000:] + res.stderr[-2000:]
    classes = catalog.check_classes()
    cases = suite_run['cases']
    nodes = slurm_nodes()
    # ReFrame's report keeps no skip reason; its output does: [ SKIP ] (i/N) NAME /hash @... [why]
    reasons = dict(re.findall(r'^\[\s*SKIP\s*\] \(\s*\d+/\d+\) (.+?) /[0-9a-f]+ @\S+ \[(.*)\]$',
                              res.stdout, re.M))
    passed, skipped = {}, {}
    for tc in cases:
        name = tc['name'].split()[0]
        if tc['result'] == 'skip':
            reason = reasons.get(tc['display_name'], '')
            assert any(s in reason for s in SKIP_REASONS), (tc['name'], reason)
            if 'is not installed' in reason:
                assert not installed(classes[name]), (tc['name'], 'installed, yet skipped')
                if SPACK_VIEW.is_dir():
                    # with Spack's builds, only Intel's LINPACK binaries are missing
                    assert name.startswith('MklLinpack'), (tc['name'], reason)
                    assert "Intel's download" in reason, reason
                    prove_skip(name, f'{classes[name].bench_binary} is on neither the job\'s '
                                     'PATH (Spack\'s view first) nor in its search dirs')
            if 'is not in the process sweep' in reason:
                # local declares no sweep (extras.ior.ranks_sweep): 1 rank or all cores
                assert name == 'Ior' and not re.search(r'%ranks_per_node=(1|cores)$',
                                                       tc['display_name']), (tc['name'], reason)
                assert 'ranks_sweep' not in _local_ior(), reason
            if 'page cache' in reason:
                assert name == 'Ior' and '%odirect=False' in tc['display_name'] \
                    and '%num_nodes=1' in tc['display_name'], (tc['name'], reason)
                _assert_page_cache_reason(tc['display_name'], reason)
            if 'has 1 node(s)' in reason:
                # true only if Slurm has that many nodes and the case needs more
                have, need = map(int, re.search(r'has (\d+) node\(s\);.* needs (\d+)',
                                                reason).groups())
                assert have == nodes and need > have, (tc['name'], reason, nodes)
            if 'no hardware PMU' in reason:
                assert not perf_counts_instructions(), tc['name']
            if 'does not go through the NIC' in reason:
                shown = tc['display_name']
                assert shown.startswith('Iperf3OneQueue') and 'loopback' in shown, shown
            if 'declares no GPU' in reason:
                # true if local's site file lists no GPU device (read here as YAML) and this
                # machine has no NVIDIA driver to ask (no nvidia-smi, no /dev/nvidia0)
                assert not _local_gpus() and not shutil.which('nvidia-smi') \
                    and not os.path.exists('/dev/nvidia0'), (tc['name'], reason)
                prove_skip(name, "local's site file declares no GPU device, and this machine "
                                 'has no nvidia-smi or /dev/nvidia0')
            if 'short sweep' in reason and name == 'IorS3':
                # IOR over S3: the processes local's object target names (ior_ranks)
                ranks = int(re.search(r'%ranks=(\d+)', tc['display_name']).group(1))
                assert ranks not in LOCAL_SWEEP['ior_ranks'], (tc['name'], reason)
            elif 'short sweep' in reason:
                conc = int(re.search(r'%concurrency=(\d+)', tc['display_name']).group(1))
                op = re.search(r'%op=(\w+)', tc['display_name']).group(1)
                assert conc not in LOCAL_SWEEP['concurrency'][op], (tc['name'], reason)
            skipped.setdefault(name, []).append(tc)
        else:
            assert tc['result'] == 'pass', (tc['name'], tc.get('fail_reason'))
            passed.setdefault(name, []).append(tc)

    # an installed benchmark skips only for what the machine lacks (nodes, PMU)
    for name, tcs in skipped.items():
        if installed(classes[name]):
            assert all(re.search('has 1 node|no hardware PMU|short sweep|process sweep|'
                                 'through the NIC|page cache',
                                 reasons.get(tc['display_name'], '')) for tc in tcs), name
    # with a Go toolchain, ci/install.sh builds MinIO and warp, ci/services.sh starts MinIO,
    # and the short sweep of local's object target runs against it
    if installed(classes['WarpObjectStorage']):
        done = {(tc['display_name']) for tc in passed.get('WarpObjectStorage', [])}
        want = {f'WarpObjectStorage %target=minio %op={op} %concurrency={c}'
                for op, cs in LOCAL_SWEEP['concurrency'].items() for c in cs}
        assert done == want, (done, want)
        for tc in passed['WarpObjectStorage']:
            conc = re.search(r'%concurrency=(\d+)', tc['display_name']).group(1)
            op = re.search(r'%op=(\w+)', tc['display_name']).group(1)
            line = next(ln for ln in _job_script(tc).splitlines()
                        if re.search(r'/warp (get|put) ', ln))
            assert f' {op} ' in line and f' --concurrent={conc} ' in line + ' ', line
        assert len(passed['WarpMultiClient']) == 2          # GET and PUT from one client
    # IOR over S3 (Spack's ior +s3, IorS3) against the same MinIO: each process count of
    # the sweep, its keys in the IOR script, not on the command line
    if installed(classes['WarpObjectStorage']) and SPACK_VIEW.is_dir():
        done = {tc['display_name'] for tc in passed.get('IorS3', [])}
        assert done == {f'IorS3 %target=minio %ranks={r}' for r in LOCAL_SWEEP['ior_ranks']}, done
        for tc in passed['IorS3']:
            script = _job_script(tc)
            line = next(ln for ln in script.splitlines() if '/ior -w ' in ln)
            assert ' -s 1 ' in line and '-f "$iorkeys/s3.ior"' in line, line
            assert 'secret' not in line and 'access-key' not in line, line
            assert '--S3-libs3.secret-key=$WARP_SECRET_KEY' in script, script
    # ci/install.sh installs these tools (netperf and MKL from Debian non-free)
    # and the FFT kernel builds against libfftw3-mpi-dev and runs on one node
    # and PDS with its TPC-H generator (tpchgen-cli and the libraries: extra datascience)
    must = {'NetperfTcpRR', 'HpccHpl', 'SockperfPingPong', 'FioTarget', 'FftwMpi2d', 'PdsTpch',
            'LikwidCacheSweep', 'HpccStream'}
    assert must <= set(passed), must - set(passed)
    # Spack's builds: with Spack's archives given (CI) the view must exist, and every check
    # of a benchmark Spack builds ran on it, in the `spack` environment
    if os.environ.get('MDXBENCH_SPACK_TARBALL'):
        assert SPACK_VIEW.is_dir(), 'MDXBENCH_SPACK_TARBALL is set, yet spack/local was not built'
    native = 'spack' if SPACK_VIEW.is_dir() else 'native'
    if SPACK_VIEW.is_dir():
        assert SPACK_BUILDS <= set(passed), SPACK_BUILDS - set(passed)
        # the exceptions are Spack's checks, and none of them ran here (else not one)
        assert set(SPACK_BUILDS_NOT_ON_LOCAL) <= _spack_checks()
        assert not set(SPACK_BUILDS_NOT_ON_LOCAL) & set(passed)
        for name in SPACK_BUILDS:
            for tc in passed[name]:
                assert tc['environ'] == 'spack', tc['name']
                assert tc['bench_path'].startswith(str(SPACK_VIEW)), tc['bench_path']
        _assert_job_scripts_run_what_they_say(passed)
    # HPL on both BLAS libraries of local; only BLAS users run in the mkl environment
    assert sorted(tc['environ'] for tc in passed['HpccHpl']) == sorted(['mkl', native])
    assert {n for n, tcs in passed.items() if any(tc['environ'] == 'mkl' for tc in tcs)} \
        == {n for n, c in classes.items() if c.uses_blas and n in passed}


def perf_counts_instructions():
    '''Whether this machine's `perf stat` counts instructions, asked of perf itself (not of
    the check's PMU detection): a VM without a virtual PMU says <not supported>.'''
    res = run(['perf', 'stat', '-x,', '-e', 'instructions', '--', 'true'])
    assert res.returncode == 0 or 'not supported' in res.stderr, res.stderr
    line = next((ln for ln in res.stderr.splitlines() if 'instructions' in ln), '')
    return bool(re.match(r'\d+,', line))


def _assert_page_cache_reason(shown, reason):
    '''IOR's skip for the page cache, its figures computed here from the site config and
    `free`: the bytes one node writes (segments x 1 MiB x ranks) are less than twice the
    memory Linux reports, so its read would be the page cache.'''
    segments = _ior_segments()
    written = float(re.search(r'([\d.]+) GiB written per node', reason).group(1))
    if '%ranks_per_node=1' in shown:
        assert written == pytest.approx(segments / 1024, abs=0.05), (shown, reason)
    else:
        ranks = written / (segments / 1024)
        assert abs(ranks - round(ranks)) < 0.05 and 1 <= round(ranks) <= os.cpu_count(), reason
    mem = int(run(['free', '-b']).stdout.splitlines()[1].split()[1])
    assert written * 2 ** 30 < 2 * mem, (reason, mem)


def _short(name):
    '''The main job's -S NAME=VALUE in CI (conftest.MAIN_SHORT), or None.'''
    return next((a.split('=', 1)[1] for a in MAIN_SHORT if a.startswith(f'{name}=')), None)


def _ior_segments():
    '''IOR's segments per rank in the main job: CI's -S Ior.segments, else local's sizing.'''
    import yaml

    local = yaml.safe_load((ROOT / 'site-configs' / 'systems' / 'local.yaml').read_text())
    return int(_short('Ior.segments') or local['partitions'][0]['extras']['ior']['segments'])


def _job_script(tc):
    return open(os.path.join(tc['outputdir'], 'rfm_job.sh')).read()


def _assert_job_scripts_run_what_they_say(passed):
    """The generated job scripts run what the checks say: IOR with the partition's sizing
    and --posix.odirect exactly when odirect; STREAM as built (needs.yaml's size) with the
    threads asked for; BabelStream with the size it records."""
    import yaml

    segments = _ior_segments()
    for tc in passed['Ior']:
        script = _job_script(tc)
        line = next(ln for ln in script.splitlines() if '/ior ' in ln)
        assert f' -s {segments} -b 1m -t 1m ' in line, line
        assert ('--posix.odirect' in line) == ('%odirect=True' in tc['display_name']), line
        assert (' -F ' in line) == ('file-per-process' in tc['display_name']), line
        assert ' -i 3 ' in line and ' -C ' in line, line
    needs = yaml.safe_load((ROOT / 'spack' / 'tools' / 'needs.yaml').read_text())['roots']
    size = int(next(n for n in needs if n['package'] == 'stream')['variants']['stream_array_size'])
    for tc in passed['StreamOmp']:
        out = open(os.path.join(tc['outputdir'], 'rfm_job.out')).read()
        assert f'Array size = {size} (elements)' in out, out[:2000]
        assert 'Each kernel will be executed 10 times.' in out, out[:2000]
        threads = 1 if 'one-thread' in tc['display_name'] else tc['num_cpus_per_task']
        assert f'export OMP_NUM_THREADS={threads}' in _job_script(tc)
    # the main job's iterations (conftest.MAIN_SHORT), else the check's 100
    times = _short('BabelStreamOmp.num_times') or '100'
    for tc in passed['BabelStreamOmp']:
        n = tc['mdx_extra']['array_elements']
        assert f"/omp-stream -s {n} -n {times}" in _job_script(tc)
        out = open(os.path.join(tc['outputdir'], 'rfm_job.out')).read()
        assert f'Array size: {n * 8 / 1e6:.1f} MB' in out, out[:1500]


def test_perflogs_hold_every_perf_value_with_provenance(suite_run):
    """Each passed case's perflog line holds exactly the perf variables its check declares,
    with a value, its direction, the job and the provenance."""
    from mdxbench import catalog

    classes = catalog.check_classes()
    records = []
    for f in (suite_run['tmp'] / 'perflogs').rglob('*.log'):
        for line in f.read_text().splitlines()[1:]:
            records += perflog.parse_line(line)

    by_check = {}
    for r in records:
        by_check.setdefault(r['check'].split()[0], set()).add(r['perf_var'])
        assert r['perf_value'] > 0, r
        # ReFrame's squeue backend (local) may not see the node of a job that ends fast:
        # the job's own host name is recorded as well
        assert re.fullmatch(r'\d+', r['jobid']) and (r['nodelist'] or r['meta']['job_host']), r
        assert r['meta']['node_kernel'] == os.uname().release, r
        assert r['meta']['command'] and r['meta']['bench_version'] != 'unknown', r
        assert len(r['meta']['suite_commit']) >= 40
        assert r['perf_better'] == catalog.describe(classes[r['check'].split()[0]])['better'][r['perf_var']]

    # every passed check wrote its records, and only passed checks did
    assert suite_run['passed'] and set(by_check) == suite_run['passed']
    for name, vars_ in by_check.items():
        assert vars_ == set(catalog.describe(classes[name])['perf_vars']), name
    blas = {r['environ']: r['meta']['blas'] for r in records if r['check'] == 'HpccHpl'}
    # the paper's oneAPI MKL 2025.0.1, PyPI's wheel in the project's venv
    assert blas['mkl']['library'].endswith('/lib/libmkl_rt.so.2')
    assert blas['mkl']['source'] == 'pypi' and blas['mkl']['pypi_package'] == 'mkl 2025.0.1'
    # the machine's BLAS (OpenBLAS) in `native`, or in `spack` where that replaces it
    assert 'openblas' in blas['spack' if SPACK_VIEW.is_dir() else 'native']['library']
    # warp ran 5 s, and again for twice as long wherever it had too few samples
    warp = [r['meta']['durations_s'] for r in records if r['check'].startswith('Warp')]
    assert warp and all(d[0] == 5 and all(b == 2 * a for a, b in zip(d, d[1:])) for d in warp), warp
    print('warp durations run:', sorted(warp))
    iperf = [r for r in records if r['perf_var'] == 'throughput' and r['check'].startswith('Iperf3')]
    assert {r['meta']['streams'] for r in iperf} == {1, 2, 4, 8, 16}
    assert all('multiqueue' in r['meta'] and r['meta']['nic_dev'] for r in iperf)
    # the job really went through Slurm and completed there: the newest one (slurmctld,
    # without accounting, forgets a job MinJobAge after it ends: ci/slurm.sh keeps it 1 h)
    newest = max(records, key=lambda r: int(r['jobid']))
    job = run(['scontrol', 'show', 'job', newest['jobid']])
    assert 'JobState=COMPLETED' in job.stdout, job.stdout + job.stderr


def dead_letters(tmp):
    '''What ingest could not store, for a failure's message.'''
    p = tmp / 'dead-letter.jsonl'
    return '\ndead letters:\n' + p.read_text()[-4000:] if p.exists() else ''


def test_perflogs_into_elasticsearch_once(suite_run, es):
    plogs = suite_run['tmp'] / 'perflogs'
    nrec = sum(len(perflog.parse_line(ln)) for f in plogs.rglob('*.log')
               for ln in f.read_text().splitlines()[1:])
    state = suite_run['tmp'] / 'state.json'
    res = mdxbench('ingest', str(plogs), '--state', str(state), '--dead-letter',
                   str(suite_run['tmp'] / 'dead-letter.jsonl'), env=es['env'])
    assert res.returncode == 0, res.stdout + res.stderr
    said = res.stdout + res.stderr + dead_letters(suite_run['tmp'])
    assert f'records {nrec}, sent {nrec}, created {nrec}, present 0' in res.stdout, said
    assert count(es) == nrec, said

    state.unlink()      # forget what was sent: ids still prevent duplicates
    res = mdxbench('ingest', str(plogs), '--state', str(state), '--dead-letter',
                   str(suite_run['tmp'] / 'dead-letter.jsonl'), env=es['env'])
    said = res.stdout + res.stderr + dead_letters(suite_run['tmp'])
    assert res.returncode == 0 and f'created 0, present {nrec}' in res.stdout, said
    assert count(es) == nrec, said

    hits = es['client'].search(index=f"{es['prefix']}-*", size=100,
                               query={'term': {'perf_var': 'triad'}})['hits']['hits']
    bench = {h['_source']['check'].split()[0]: h['_source']['meta'].get('bench') for h in hits}
    assert bench['HpccStream'] == 'hpcc', bench
    # with Spack's builds, STREAM and BabelStream report their triad too, as themselves
    assert {bench.get('StreamOmp', 'stream'), bench.get('BabelStreamOmp', 'babelstream')} \
        == {'stream', 'babelstream'}, bench


def test_counters_run_where_a_pmu_is_and_fail_naming_the_events_where_none_is(services, tmp_path):
    """PerfCountersFft on this machine, whichever it is: with a hardware PMU (detected) it
    runs through Slurm and records counts; without one it is skipped (facts.pmu false), and
    run anyway it fails with perf's own words for the events it could not count: never a
    zero count, never a pass."""
    env = {'MDXBENCH_PERFLOG_DIR': str(tmp_path / 'perflogs'),
           'RFM_CONFIG_FILES': str(ROOT / 'site-configs' / 'settings.py')}
    base = [str(VENV_BIN / 'reframe'), '-c', 'checks/apps/perfcounters.py', '-r', '--system',
            'local', '--prefix', str(tmp_path / 'rfm'), '--nocolor', '-S', 'points=512',
            '-S', 'repeats=2']
    if perf_counts_instructions():
        ran = run(base, env=env, timeout=600)
        assert ran.returncode == 0, ran.stdout[-4000:]
        recs = [r for f in (tmp_path / 'perflogs').rglob('*.log')
                for line in f.read_text().splitlines()[1:] for r in perflog.parse_line(line)]
        assert {r['perf_var'] for r in recs} >= {'instructions', 'ipc', 'cache_miss_rate'}
        assert all(r['perf_value'] > 0 for r in recs if r['perf_var'] != 'page_faults')
        return

    skipped = run(base, env=env, timeout=600)
    assert skipped.returncode == 0
    assert re.search(r'SKIP.*PerfCountersFft.*no hardware PMU', skipped.stdout), skipped.stdout
    prove_skip('PerfCountersFft', '`perf stat -e instructions` run directly counts none '
                                  '(no hardware PMU)')

    ran = run(base + ['-S', 'skip_without_pmu=false'], env=env, timeout=600)
    assert ran.returncode != 0
    assert re.search(r'perf could not count instructions, cycles, cache-references, '
                     r'cache-misses on \S+ \(instructions <not supported>', ran.stdout), ran.stdout
    recs = [r for f in (tmp_path / 'perflogs').rglob('*.log')
            for line in f.read_text().splitlines()[1:] for r in perflog.parse_line(line)]
    assert recs and all(r['result'] == 'fail' and r['perf_value'] is None for r in recs)
