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
    '''The real outputs of one H200 (nvbandwidth as the check asks it: derived): the four
    checks pass, each GPU's figures printed.'''
    res, cases = vet(tmp_path, 1)
    assert res.returncode == 0 and 'Ran 4/4 test case(s)' in res.stdout, res.stdout[-3000:]
    assert {n: c['result'] for n, c in cases.items()} == dict.fromkeys(
        ('BabelStreamCuda', 'Nvbandwidth', 'GpuP2pBandwidthLatency', 'GpuConformance'), 'pass')
    assert 'gpu0_triad: 3778.652252 GB/s' in res.stdout
    assert 'gpu0_h2d_ce: 55.53 GB/s' in res.stdout


def test_eight_gpus_without_p2p_pass_where_none_is_declared(tmp_path):
    res, cases = vet(tmp_path, 8, '-x', 'GpuP2pBandwidthLatency')
    assert res.returncode == 0 and 'Ran 3/3 test case(s)' in res.stdout, res.stdout[-3000:]
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
    assert res.returncode != 0 and {c['result'] for c in cases.values()} == {'fail'}
    assert 'nvidia-smi lists 1 GPU(s), the partition declares 8' in \
        cases['BabelStreamCuda']['fail_reason']
    assert '1 GPU(s) visible, 8 declared' in cases['GpuConformance']['fail_reason']


def test_a_node_without_a_working_nvidia_smi_is_an_error_not_skips(tmp_path):
    from mdxbench import sitecfg

    env = {'PATH': str(tmp_path), 'MDXBENCH_STATE_DIR': str(tmp_path / 'state')}
    with pytest.raises(sitecfg.SiteConfigError, match=r'gpunode.yaml: partitions\[0\]\.devices'
                       r'\[0\]\.num_devices: detect: .*nvidia-smi.*MDXBENCH_GPUNODE_GPUS=N'):
        sitecfg.build_config(REPO_ROOT / 'site-configs', selected='gpunode', env=env)
