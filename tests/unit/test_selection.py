'''What `reframe -l` lists for each system is what that system's configuration says it can
run: the storage and S3 targets each partition declares, multi-node I/O only on shared
targets, the BLAS-swapping environment only for checks that use a BLAS. Derived from the
site configuration and the check classes, for every system file (a new one included).'''
import os
import pathlib
import re
import subprocess
import sys

import pytest

from mdxbench import catalog, sitecfg
from mdxbench.storage import ObjectTargetTest, StorageTargetTest

ROOT = pathlib.Path(__file__).resolve().parents[2]
SITE = ROOT / 'site-configs'
SYSTEMS = [f.stem for f in sitecfg.system_files(SITE)]
CASE = re.compile(r'^- (\w+)((?: %\w+=\S+)*) /[0-9a-f]+ @([\w-]+):([\w-]+)\+([\w-]+)$', re.M)


def _env(tmp_path, **extra):
    env = dict(os.environ, RFM_CONFIG_FILES=str(SITE / 'settings.py'),
               MDXBENCH_STATE_DIR=str(tmp_path / 'state'), MDXBENCH_LAUREL_ACCOUNT='acct',
               # listing laurel's cases needs no Lmod on this machine
               MDXBENCH_LAUREL_MODULES_SYSTEM='nomod',
               # gpunode reads its GPU count from nvidia-smi, which this machine lacks
               MDXBENCH_GPUNODE_GPUS='8', **extra)
    for k in [k for k in env if k.startswith('RFM_') and k != 'RFM_CONFIG_FILES']:
        del env[k]
    return env


def listed_cases(system, env):
    exe = pathlib.Path(sys.executable).parent / 'reframe'
    res = subprocess.run([str(exe), '-c', 'checks/', '-lC', '--system', system, '--nocolor'],
                         capture_output=True, text=True, env=env, cwd=ROOT, timeout=300)
    assert res.returncode == 0, res.stdout + res.stderr
    cases = [(n, dict(re.findall(r'%(\w+)=(\S+)', p)), s, part, e)
             for n, p, s, part, e in CASE.findall(res.stdout)]
    assert cases, res.stdout
    return cases


def partitions(system, env):
    cfg = sitecfg.build_config(SITE, selected=system, env=env)
    return {p['name']: p for p in next(s for s in cfg['systems'] if s['name'] == system)['partitions']}


@pytest.mark.parametrize('system', SYSTEMS)
def test_each_system_lists_only_what_it_can_run(system, tmp_path):
    env = _env(tmp_path)
    parts = partitions(system, env)
    classes = catalog.check_classes()
    cases = listed_cases(system, env)
    envs = {e['name']: e for e in sitecfg.build_config(SITE, selected=system, env=env)['environments']}
    for name, params, sysname, part, environ in cases:
        cls, extras = classes[name], parts[part].get('extras') or {}
        where = f'{name} {params} @{sysname}:{part}+{environ}'
        assert sysname == system and environ in parts[part]['environs'], where
        if issubclass(cls, StorageTargetTest):
            target = (extras.get('storage_targets') or {}).get(params['target'])
            assert target is not None, f'{where}: target not declared by the partition'
            if int(params.get('num_nodes', 1)) > 1:
                assert isinstance(target, dict) and target.get('shared'), \
                    f'{where}: several nodes on a target that is not shared'
        if issubclass(cls, ObjectTargetTest):
            target = (extras.get('object_targets') or {}).get(params['target'])
            assert target and target.get('endpoint'), f'{where}: no usable S3 target'
        if 'blas' in (envs[environ].get('extras') or {}):
            assert cls.uses_blas, f'{where}: a check that uses no BLAS in a BLAS environment'

    # and nothing the configuration declares is missing
    for pname, p in parts.items():
        for target in (p.get('extras') or {}).get('storage_targets') or {}:
            fio = {c[1]['workload'] for c in cases
                   if c[0] == 'FioTarget' and c[3] == pname and c[1]['target'] == target}
            assert fio == {'seqread', 'seqwrite', 'randread', 'randwrite'}, (pname, target)
        for environ in p['environs']:
            assert any(c[0] == 'HpccHpl' and c[3] == pname and c[4] == environ for c in cases)


def test_an_s3_target_is_listed_once_it_has_an_endpoint(tmp_path):
    without = listed_cases('mdx2', _env(tmp_path))
    assert not [c for c in without if c[0].startswith('Warp')]
    with_s3ds = listed_cases('mdx2', _env(tmp_path, MDXBENCH_MDX2_S3DS_ENDPOINT='s3ds.example.org:443'))
    warp = [c for c in with_s3ds if c[0].startswith('Warp')]
    assert warp and {c[1]['target'] for c in warp} == {'s3ds'}
    # GET and PUT x 9 concurrencies (1..256), and 2 ops x 8 client counts (1..8), on both
    # partitions
    assert len(warp) == (18 + 16) * 2
