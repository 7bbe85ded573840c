'''ReFrame itself on the GPU checks of one node vetted on its own (`gpunode`: the local
scheduler, the GPU count from nvidia-smi), the GPU programs stand-ins that print real
outputs or outputs derived from them in the tools' own format (tests/gpu_stand_ins.py):
the checks' own logic decides. Issue 56.'''
import json
import os
import pathlib
import subprocess
import sys

import pytest

from mdxbench import REPO_ROOT

sys.path.insert(0, str(REPO_ROOT / 'tests'))
import gpu_stand_ins  # noqa: E402


def vet(tmp_path, gpus, *args, **env):
    bindir = gpu_stand_ins.install(tmp_path / 'bin', gpus=gpus)
    exe = pathlib.Path(sys.executable).parent / 'reframe'
    full = {k: v for k, v in os.environ.items() if not k.startswith('MDXBENCH_GPUNODE_')}
    full.update(RFM_CONFIG_FILES=str(REPO_ROOT / 'site-configs' / 'settings.py'),
                MDXBENCH_STATE_DIR=str(tmp_path / 'state'),
                PATH=f"{bindir}{os.pathsep}{os.environ['PATH']}", **env)
    res = subprocess.run([str(exe), '-c', 'checks/gpu', '-r', '--system', 'gpunode',
                          '--nocolor', '--report-file', str(tmp_path / 'report.json'), *args],
                         capture_output=True, text=True, env=full, cwd=REPO_ROOT, timeout=600)
    report = tmp_path / 'report.json'
    cases = {c['name'].split()[0]: c for r in json.loads(report.read_text())['runs']
             for c in r['testcases']} if report.exists() else {}
    return res, cases


def test_one_real_h200_passes_every_gpu_check(tmp_path):
    '''The real outputs of one H200 (nvbandwidth as the check asks it, and gpu-burn:
    derived): the five checks pass, each GPU's figures printed; nccl-tests' six cases skip,
    saying why (one GPU, one node).'''
    res, cases = vet(tmp_path, 1)
    assert res.returncode == 0 and 'Ran 5/11 test case(s)' in res.stdout, res.stdout[-3000:]
    assert {n: c['result'] for n, c in cases.items() if n != 'NcclTests'} == dict.fromkeys(
        ('BabelStreamCuda', 'Nvbandwidth', 'GpuP2pBandwidthLatency', 'GpuConformance',
         'GpuBurn'), 'pass')
    assert res.stdout.count('has 1 GPU per node: a collective within a node needs two') == 3
    assert res.stdout.count('runs its jobs on this one node: a collective across nodes '
                            'needs two') == 3
    assert 'gpu0_gflops: 53600.0 Gflop/s' in res.stdout
    assert 'gpu0_triad: 3778.652252 GB/s' in res.stdout
    assert 'gpu0_h2d_ce: 55.53 GB/s' in res.stdout


def test_eight_gpus_without_p2p_pass_where_none_is_declared(tmp_path):
    res, cases = vet(tmp_path, 8, '-x', 'GpuP2pBandwidthLatency')
    assert res.returncode == 0 and 'Ran 7/10 test case(s)' in res.stdout, res.stdout[-3000:]
    assert 'gpu7_h2d_ce: 55.53 GB/s' in res.stdout
    # no pair figure where no pair has peer access: not measured, not a 0
    assert 'd2d_read_ce' not in res.stdout


def test_a_node_declared_p2p_whose_run_waives_the_pairs_fails(tmp_path):
    res, cases = vet(tmp_path, 8, '-n', 'Nvbandwidth', MDXBENCH_GPUNODE_P2P='true')
    assert res.returncode != 0 and cases['Nvbandwidth']['result'] == 'fail'
    assert 'device_to_device_memcpy_read_ce: waived by nvbandwidth' in \
        cases['Nvbandwidth']['fail_reason']


def test_a_gpu_that_computes_garbage_fails_naming_it(tmp_path):
    res, cases = vet(tmp_path, 8, '-n', 'BabelStreamCuda', MDXBENCH_TEST_BAD_GPU='5')
    assert res.returncode != 0 and cases['BabelStreamCuda']['result'] == 'fail'
    assert 'GPU 5: BabelStream: the results are wrong' in cases['BabelStreamCuda']['fail_reason']


def test_a_node_declared_with_more_gpus_than_it_shows_fails(tmp_path):
    '''MDXBENCH_GPUNODE_GPUS=8 where nvidia-smi lists one: every check fails, saying so.'''
    res, cases = vet(tmp_path, 1, MDXBENCH_GPUNODE_GPUS='8')
    # (nccl-tests: the one GPU's stand-ins have none, and the node runs no job across nodes)
    assert res.returncode != 0 and {c['result'] for n, c in cases.items()
                                    if n != 'NcclTests'} == {'fail'}
    assert 'nvidia-smi lists 1 GPU(s), the partition declares 8' in \
        cases['BabelStreamCuda']['fail_reason']
    assert '1 GPU(s) visible, 8 declared' in cases['GpuConformance']['fail_reason']


def test_a_node_without_a_working_nvidia_smi_is_an_error_not_skips(tmp_path):
    from mdxbench import sitecfg

    env = {'PATH': str(tmp_path), 'MDXBENCH_STATE_DIR': str(tmp_path / 'state')}
    with pytest.raises(sitecfg.SiteConfigError, match=r'gpunode.yaml: partitions\[0\]\.devices'
                       r'\[0\]\.num_devices: detect: .*nvidia-smi.*MDXBENCH_GPUNODE_GPUS=N'):
        sitecfg.build_config(REPO_ROOT / 'site-configs', selected='gpunode', env=env)


def test_nccl_on_eight_gpus_passes_and_a_wrong_result_fails_whatever_the_bandwidth(tmp_path):
    """Issue 61: nccl-tests' three collectives on the node's 8 GPUs pass, each its bus
    bandwidth at 8 GiB; the all-reduce whose data check finds wrong elements from 64 MiB on
    fails, naming the first size, though its bandwidth is the passing run's."""
    res, cases = vet(tmp_path, 8, '-n', 'NcclTests', '-x', '%scope=nodes')
    assert res.returncode == 0 and 'Ran 3/3 test case(s)' in res.stdout, res.stdout[-3000:]
    assert res.stdout.count('busbw: 27.69 GB/s') == 3, res.stdout[-3000:]
    bad, cases = vet(tmp_path / 'wrong', 8, '-n', 'NcclTests%collective=all_reduce',
                     '-x', '%scope=nodes', MDXBENCH_TEST_NCCL_WRONG='1')
    assert bad.returncode != 0 and cases['NcclTests']['result'] == 'fail', bad.stdout[-3000:]
    why = cases['NcclTests']['fail_reason']
    assert 'all_reduce_perf computed wrong results: 67108864 B out of place: 2097150 wrong' \
        in why, why


def test_gpu_burn_that_finds_gpu_3_faulty_fails_naming_gpu_3(tmp_path):
    """Issue 61: gpu-burn's FAULTY GPU 3 (of 8) fails the burn-in by its index and bus id;
    the other GPUs' figures are still printed."""
    res, cases = vet(tmp_path, 8, '-n', 'GpuBurn', MDXBENCH_TEST_BAD_GPU='3')
    assert res.returncode != 0 and cases['GpuBurn']['result'] == 'fail', res.stdout[-3000:]
    why = cases['GpuBurn']['fail_reason']
    assert 'GPU 3 (00000000:00:09.0): FAULTY, 28672 wrong result(s)' in why, why
    assert 'GPU 2' not in why and 'GPU 4' not in why, why
