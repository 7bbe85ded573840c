'''The job scripts of the shared-memory compute and memory checks (MklLinpackShm,
BabelStreamOmp) as ReFrame's dry run writes them (no benchmark runs; the binary is pointed
at `env`): one thread per core, and on AWS c7i.4xlarge, whose figures Takahashi et al.
measured on all 16 vCPUs (8 cores x 2 threads, 002 Table 1), and on mdx II's 224-vCPU VM,
measured the same way (000 sec. 3.3.1), every vCPU with Slurm's --hint=multithread (issue
43, item 3; issue 60, item 2).'''
import os
import pathlib
import subprocess
import sys

import pytest

ROOT = pathlib.Path(__file__).resolve().parents[2]


@pytest.mark.parametrize('target, threads, places, hint', [
    ('aws-pcluster:c7i-4xlarge', 16, 'threads', True),       # 8 cores x 2 threads
    # the 224-vCPU VM as the paper measured it, "the same way as the 16 vCPU case": all
    # 224 vCPUs (112 cores x 2 threads; issue 60, item 2)
    ('mdx2:vc224m498g', 224, 'threads', True),
    ('mdx1:gpu', 72, 'cores', False),                         # 72 cores x 2 threads
])
def test_threads_per_core_as_the_partition_says(tmp_path, target, threads, places, hint):
    env = dict(os.environ, RFM_CONFIG_FILES=str(ROOT / 'site-configs' / 'settings.py'),
               MDXBENCH_STATE_DIR=str(tmp_path / 'state'))
    (tmp_path / 'state').mkdir()
    res = subprocess.run(
        [str(pathlib.Path(sys.executable).parent / 'reframe'), '-c', 'checks/compute/linpack.py',
         '-c', 'checks/memory/babelstream.py', '--dry-run', '--system', target,
         '-S', 'bench_binary=env', '--nocolor', '-n', '^(MklLinpackShm|BabelStreamOmp)$'],
        capture_output=True, text=True, env=env, cwd=ROOT, timeout=300)
    out = res.stdout + res.stderr
    assert res.returncode == 0, out
    scripts = {p.parent.name: p.read_text() for p in (tmp_path / 'state').rglob('rfm_job.sh')}
    assert set(scripts) == {'MklLinpackShm', 'BabelStreamOmp'}, out
    for name, text in scripts.items():
        assert f'export OMP_NUM_THREADS={threads}\n' in text, (name, text)
        assert ('#SBATCH --hint=multithread' in text) == hint, (name, text)
    assert f'export OMP_PLACES={places}\n' in scripts['BabelStreamOmp']
