'''GPU nodes judged like CPU nodes (issue 42): each GPU's figures are their own
measurement, compared with the same GPU index on the other nodes and with the references.

The records are made here from real outputs of one NVIDIA H200 (tests/fixtures/gpu): its
four BabelStream CUDA runs and its two nvbandwidth runs give each GPU of four nodes of
eight GPUs a real figure (GPU i of node k: run (i + k) mod 4). One GPU is then degraded by
a stated factor -- node n2's GPU 5 at 0.6 of its triad, its link's host-to-device copy at
0.5 (a link trained at half its lanes) -- and the verdicts must name that node and GPU.'''
import datetime as dt
import json

import pytest

from hang import HANG_S
from mdxbench.gpu import expand_reference, expand_table, per_gpu_var
from mdxbench.parsers import babelstream, nvbandwidth
from mdxbench.post.fleet import jobs, verdicts
from mdxbench.post.store import records

T = dt.datetime(2026, 11, 26, tzinfo=dt.timezone.utc)
NODES, GPUS = ['n0', 'n1', 'n2', 'n3'], 8
SLOW_NODE, SLOW_GPU = 'n2', 5
TRIAD_FACTOR, H2D_FACTOR = 0.6, 0.5


def real_figures(fixture_text):
    triads = [babelstream.parse(fixture_text(f'gpu/{name}'))['triad'] for name in (
        'babelstream-5.0-cuda-h200.out', 'babelstream-5.0-cuda-h200-s2e29.out',
        'babelstream-5.0-cuda-h200-csv.out', 'babelstream-5.0-cuda-h200-triad.out')]
    h2d = [nvbandwidth.parse(fixture_text(f'gpu/{name}'))['tests']['host_to_device_memcpy_ce']
           ['matrix'][0][0] for name in ('nvbandwidth-0.8-h200-vm.out',
                                          'nvbandwidth-0.8-h200-vm-subset.json')]
    return triads, h2d


def record(node, check, var, value, unit, i):
    return {'time': (T + dt.timedelta(seconds=i)).isoformat(), 'system': 'mdx1',
            'partition': 'gpu', 'environ': 'spack', 'check': check, 'perf_var': var,
            'value': value, 'unit': unit, 'better': 'higher', 'ref': None, 'result': 'pass',
            'jobid': str(i), 'nodes': node, 'tags': 'acceptance,gpu',
            'meta': json.dumps({'tags': ['acceptance', 'gpu']})}


def fleet(fixture_text):
    triads, h2d = real_figures(fixture_text)
    rows, i = [], 0
    for k, node in enumerate(NODES):
        for g in range(GPUS):
            t, h = triads[(g + k) % len(triads)], h2d[(g + k) % len(h2d)]
            if (node, g) == (SLOW_NODE, SLOW_GPU):
                t, h = t * TRIAD_FACTOR, h * H2D_FACTOR
            rows.append(record(node, 'BabelStreamCuda', per_gpu_var(g, 'triad'), t, 'GB/s', i))
            rows.append(record(node, 'Nvbandwidth', per_gpu_var(g, 'h2d_ce'), h, 'GB/s', i + 1))
            i += 2
    return records.frame(rows)


def test_the_degraded_gpu_fails_its_node_and_the_reasons_name_it(fixture_text):
    got = {v['node']: v for v in verdicts.judge(fleet(fixture_text),
                                                {n: 'idle' for n in NODES})}
    assert {n for n, v in got.items() if v['verdict'] == 'fail'} == {SLOW_NODE}, got
    reasons = got[SLOW_NODE]['reasons']
    # both of its figures, each naming the GPU, nothing about the other seven
    assert len(reasons) == 2, reasons
    assert any(r.startswith(f'BabelStreamCuda gpu{SLOW_GPU}_triad=') and 'outlier' in r
               for r in reasons), reasons
    assert any(r.startswith(f'Nvbandwidth gpu{SLOW_GPU}_h2d_ce=') and 'outlier' in r
               for r in reasons), reasons
    # each judged against the same GPU index of the other nodes: its median is GPU 5's
    m = next(x for x in got[SLOW_NODE]['measurements']
             if x['perf_var'] == f'gpu{SLOW_GPU}_triad')
    assert m['outlier'] and m['deficit'] == pytest.approx(1 - TRIAD_FACTOR, abs=0.05)
    # the drain line names the node and the GPU
    [line] = jobs.drain_lines(list(got.values()))
    assert f'nodename={SLOW_NODE}' in line and f'gpu{SLOW_GPU}_' in line


def test_every_gpu_of_the_others_passes(fixture_text):
    got = verdicts.judge(fleet(fixture_text))
    for v in got:
        if v['node'] != SLOW_NODE:
            assert v['verdict'] == 'pass' and len(v['measurements']) == 2 * GPUS, v


def test_per_gpu_tables_and_references():
    '''A check's per-GPU entries, once per GPU; a reference given for the figure applies to
    each GPU's variable (ReFrame's reference, in either of its forms).'''
    table = expand_table({'gpus': ('gpu_count', 'count', 'higher')},
                         {'triad': ('triad', 'GB/s', 'higher')}, 3)
    assert table == {'gpus': ('gpu_count', 'count', 'higher'),
                     'gpu0_triad': ('gpu0_triad', 'GB/s', 'higher'),
                     'gpu1_triad': ('gpu1_triad', 'GB/s', 'higher'),
                     'gpu2_triad': ('gpu2_triad', 'GB/s', 'higher')}
    ref = (1300.0, -0.15, None, 'GB/s')
    for given in ({'mdx1:gpu': {'triad': ref}}, {'mdx1:gpu:triad': ref}):
        out = expand_reference(given, {'triad': None}, 2)
        assert out == {'mdx1:gpu': {'triad': ref, 'gpu0_triad': ref, 'gpu1_triad': ref}}


def test_the_gpu_checks_are_cases_on_mdx1_and_skip_where_no_gpu_is_declared(tmp_path):
    '''ReFrame itself on the GPU checks: on mdx1 (8 A100 declared) a case each, listed; on
    a partition that declares no GPU (mdx2's; local's in the main job, test_end_to_end)
    each skipped, saying so, before any binary is looked for.'''
    import os
    import pathlib
    import subprocess
    import sys

    from mdxbench import REPO_ROOT

    exe = pathlib.Path(sys.executable).parent / 'reframe'
    env = dict(os.environ, RFM_CONFIG_FILES=str(REPO_ROOT / 'site-configs' / 'settings.py'),
               MDXBENCH_STATE_DIR=str(tmp_path))
    names = ('GpuConformance', 'GpuP2pBandwidthLatency', 'BabelStreamCuda', 'Nvbandwidth')
    listed = subprocess.run([str(exe), '-c', 'checks/gpu', '-l', '--system', 'mdx1'],
                            capture_output=True, text=True, env=env, cwd=REPO_ROOT, timeout=HANG_S)
    assert listed.returncode == 0, listed.stderr
    assert all(f'- {n} /' in listed.stdout for n in names), listed.stdout
    dry = subprocess.run([str(exe), '-c', 'checks/gpu', '--dry-run', '--system',
                          'mdx2:vc16m32g', '--nocolor'], capture_output=True, text=True,
                         env=env, cwd=REPO_ROOT, timeout=300)
    for n in names:
        assert any(n in line and 'SKIP' in line and 'mdx2:vc16m32g declares no GPU' in line
                   for line in dry.stdout.splitlines()), dry.stdout


def test_the_gpu_job_scripts_on_mdx1_run_what_the_checks_say(tmp_path):
    '''--dry-run on mdx1 (8 GPUs declared) with stand-in binaries on PATH (ReFrame only
    looks them up; nothing runs): each check one process on the node, BabelStream once per
    GPU through scripts/per-gpu.sh, nvbandwidth the cases the figures come from, nvidia-smi
    the fields the conformance reads.'''
    import os
    import pathlib
    import subprocess
    import sys

    from mdxbench import REPO_ROOT
    stubs = tmp_path / 'bin'
    stubs.mkdir()
    for name in ('nvidia-smi', 'nvbandwidth', 'p2pBandwidthLatencyTest', 'cuda-stream',
                 'all_reduce_perf', 'all_gather_perf', 'sendrecv_perf', 'gpu_burn'):
        (stubs / name).write_text('#!/bin/sh\nexit 0\n')
        (stubs / name).chmod(0o755)
    exe = pathlib.Path(sys.executable).parent / 'reframe'
    env = dict(os.environ, RFM_CONFIG_FILES=str(REPO_ROOT / 'site-configs' / 'settings.py'),
               MDXBENCH_STATE_DIR=str(tmp_path / 'state'),
               PATH=f"{stubs}{os.pathsep}{os.environ['PATH']}")
    res = subprocess.run([str(exe), '-c', 'checks/gpu', '--dry-run', '--system', 'mdx1',
                          '--nocolor'], capture_output=True, text=True, env=env,
                         cwd=REPO_ROOT, timeout=300)
    assert res.returncode == 0 and 'Ran 11/11 test case(s)' in res.stdout, res.stdout[-3000:]
    last = {p.parent.name: p.read_text().strip().splitlines()[-1]
            for p in (tmp_path / 'state').rglob('rfm_job.sh')}
    # issue 61: nccl-tests within the node (one process, -g 8) and across two (a rank per
    # GPU); gpu-burn line-buffered for the site's 300 s, nvidia-smi -q -x around it
    sweep = '-b 8 -e 8G -f 2'
    assert last['NcclTests_a63df4a7'] == f'srun {stubs}/all_reduce_perf {sweep} -g 8'
    assert last['NcclTests_156ff605'] == f'srun {stubs}/all_reduce_perf {sweep} -g 1'
    across = next((tmp_path / 'state').rglob('NcclTests_156ff605/rfm_job.sh')).read_text()
    assert '#SBATCH --ntasks=16\n#SBATCH --ntasks-per-node=8\n' in across, across
    burn = next((tmp_path / 'state').rglob('GpuBurn/rfm_job.sh')).read_text()
    assert f'srun stdbuf -oL {stubs}/gpu_burn -d 300\n' in burn, burn
    assert burn.index('smi-before-burn.xml') < burn.index('gpu_burn -d') < \
        burn.index('smi-after-burn.xml')
    assert last['BabelStreamCuda'].endswith(
        f'per-gpu.sh 8 --device {stubs}/cuda-stream --arraysize 33554432 --numtimes 100')
    assert last['GpuP2pBandwidthLatency'] == f'srun {stubs}/p2pBandwidthLatencyTest'
    assert last['Nvbandwidth'].startswith(f'srun {stubs}/nvbandwidth -t host_to_device_memcpy_ce')
    conformance = next((tmp_path / 'state').rglob('GpuConformance/rfm_job.sh')).read_text()
    assert f'srun {stubs}/nvidia-smi -q -x\n' in conformance
    assert last['GpuConformance'].endswith('scripts/gpu-xid.sh > xid.txt 2>&1')
    for text in (tmp_path / 'state').rglob('rfm_job.sh'):
        script = text.read_text()
        assert '#SBATCH --ntasks=1\n' in script or text.parent.name in (
            'NcclTests_156ff605', 'NcclTests_3a4a79f1', 'NcclTests_10bd9f44')
        # every GPU of the node, and the node alone (issue 56)
        assert '#SBATCH --gres=gpu:8' in script and '#SBATCH --exclusive' in script
        assert 'export CUDA_DEVICE_ORDER=PCI_BUS_ID' in script


def test_nccl_across_nodes_is_a_pair_check_that_runs_inside_a_pair_runs_allocation(tmp_path):
    '''Issue 61: the three across-node NcclTests cases are the pair checks (tag pair) of
    mdx1 -- a node's own acceptance job leaves them out --, and inside the two-node
    allocation of a pair run (mdxbench accept's: MDXBENCH_PAIR_SUBJECT, MDXBENCH_STEP_NODE)
    they run, a rank per GPU on both nodes; inside a one-node allocation they skip, saying
    why. --dry-run with stand-in binaries on PATH (ReFrame only looks them up).'''
    import os
    import pathlib
    import subprocess
    import sys

    from mdxbench import REPO_ROOT
    stubs = tmp_path / 'bin'
    stubs.mkdir()
    for name in ('nvidia-smi', 'all_reduce_perf', 'all_gather_perf', 'sendrecv_perf'):
        (stubs / name).write_text('#!/bin/sh\nexit 0\n')
        (stubs / name).chmod(0o755)
    exe = pathlib.Path(sys.executable).parent / 'reframe'
    base = dict(os.environ, RFM_CONFIG_FILES=str(REPO_ROOT / 'site-configs' / 'settings.py'),
                PATH=f"{stubs}{os.pathsep}{os.environ['PATH']}")

    def reframe(*args, **env):
        state = tmp_path / f'state{len(list(tmp_path.iterdir()))}'
        res = subprocess.run([str(exe), '-c', 'checks/gpu/nccl.py', *args, '--system',
                              'mdx1:gpu', '--nocolor'], capture_output=True, text=True,
                             env=dict(base, MDXBENCH_STATE_DIR=str(state), **env),
                             cwd=REPO_ROOT, timeout=300)
        assert res.returncode == 0, res.stdout[-3000:] + res.stderr[-2000:]
        return res.stdout, state

    listed, _ = reframe('-t', 'acceptance', '-t', 'pair', '-l')
    cases = [ln for ln in listed.splitlines() if ln.startswith('- NcclTests')]
    assert len(cases) == 3 and all('%scope=nodes' in c for c in cases), listed
    node_job, _ = reframe('-t', 'acceptance', '-T', 'pair', '-l')
    cases = [ln for ln in node_job.splitlines() if ln.startswith('- NcclTests')]
    assert len(cases) == 3 and all('%scope=node ' in c + ' ' for c in cases), node_job
    inside = {'MDXBENCH_INSIDE_ALLOCATION': '1', 'SLURM_JOB_ID': '42'}
    out, state = reframe('-t', 'pair', '--dry-run', **inside, MDXBENCH_PAIR_SUBJECT='mdx1-001',
                         MDXBENCH_STEP_NODE='mdx1-001,mdx1-002')
    assert 'Ran 3/3 test case(s)' in out and 'SKIP' not in out, out[-3000:]
    scripts = sorted((s.read_text() for s in state.rglob('rfm_job.sh')))
    assert len(scripts) == 3
    for script in scripts:
        run = script.strip().splitlines()[-1]
        assert run.startswith('srun --nodelist=mdx1-001,mdx1-002 --ntasks=16 '
                              '--ntasks-per-node=8 ') and run.endswith(' -b 8 -e 8G -f 2 -g 1'), run
    alone, _ = reframe('-t', 'pair', '--dry-run', **inside)
    skipped = [ln for ln in alone.splitlines() if 'SKIP' in ln]
    assert len(skipped) == 3 and all(
        'runs its jobs on this one node: a collective across nodes needs two' in ln
        for ln in skipped), alone[-3000:]
