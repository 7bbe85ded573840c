'''Vetting one GPU node before it joins Slurm, with no network on the node (issue 56;
docs/checks.md): ci/gpunode-bundle.sh makes the directory an operator copies to the node --
the checks from this tree, ReFrame's wheels without its analytics, the GPU benchmarks that
ci/spack-gpu.sh built for sm_90 (test_spack) -- within 60 MiB; its vet.sh installs ReFrame
from those wheels alone and runs the GPU checks with ReFrame's local scheduler.'''
import os
import pathlib
import shutil
import subprocess

from conftest import ROOT, STATE, run


def test_the_bundle_fits_and_vets_a_node_offline(tmp_path):
    import sys
    sys.path.insert(0, str(ROOT / 'tests'))
    import gpu_stand_ins

    built = STATE / 'spack' / 'gpu-build' / 'binaries.tsv'
    assert built.is_file(), 'test_spack builds the GPU benchmarks first (ci/spack-gpu.sh)'
    bins = tmp_path / 'sm90'
    bins.mkdir()
    for env, _, _, binary in (line.split('\t') for line in built.read_text().splitlines()):
        if env == 'gpunode':
            # the programs of each prefix's bin/ (nccl-tests' three, gpu_burn), as a view's;
            # gpu-burn's compare kernel beside them
            path = pathlib.Path(binary)
            prefix = path.parents[2] if binary.endswith('.fatbin') else path.parents[1]
            for program in (prefix / 'bin').iterdir():
                if program.is_file() and os.access(program, os.X_OK):
                    shutil.copy(program, bins)
            if binary.endswith('.fatbin'):
                shutil.copy(binary, bins)
    bundle = tmp_path / 'bundle'
    res = run(['bash', 'ci/gpunode-bundle.sh', str(bundle), '--binaries', str(bins)],
              timeout=600)
    assert res.returncode == 0, res.stderr[-3000:]
    print(res.stderr.strip().splitlines()[-1])
    size = sum(f.stat().st_size for f in bundle.rglob('*') if f.is_file())
    assert size <= 60 * 2**20, size
    wheels = sorted(p.name for p in (bundle / 'wheels').iterdir())
    assert any(w.startswith('reframe_hpc-4.10.4-') for w in wheels)
    assert not any(w.startswith('polars') for w in wheels), wheels
    assert sorted(p.name for p in (bundle / 'bin').iterdir()) == [
        'all_gather_perf', 'all_reduce_perf', 'compare.fatbin', 'cuda-stream', 'gpu_burn',
        'nvbandwidth', 'p2pBandwidthLatencyTest', 'sendrecv_perf']
    # on the "node": no index to install from but the wheels, the GPU programs stand-ins
    # printing one real H200's outputs (the bundle's own binaries need a GPU)
    shutil.rmtree(bundle / 'bin')
    (bundle / 'bin').mkdir()
    stand_ins = gpu_stand_ins.install(tmp_path / 'stand-ins', gpus=1)
    env = {k: v for k, v in os.environ.items()
           if not k.startswith(('MDXBENCH_', 'RFM_', 'PIP_', 'VIRTUAL_ENV'))}
    env.update(PATH=f'{stand_ins}:/usr/bin:/bin', PIP_NO_INDEX='1',
               MDXBENCH_STATE_DIR=str(tmp_path / 'node-state'))
    res = subprocess.run(['sh', str(bundle / 'vet.sh'), '--nocolor'], capture_output=True,
                         text=True, env=env, cwd=tmp_path, timeout=900)
    # one GPU: nccl-tests' six cases skip (a collective needs two GPUs, or two nodes)
    assert res.returncode == 0 and 'Ran 5/11 test case(s)' in res.stdout, \
        res.stdout[-3000:] + res.stderr[-2000:]
    for check in ('BabelStreamCuda', 'Nvbandwidth', 'GpuP2pBandwidthLatency', 'GpuConformance',
                  'GpuBurn'):
        assert any(line.startswith('[       OK ]') and check in line
                   for line in res.stdout.splitlines()), check
    assert 'gpu0_triad: 3778.652252 GB/s' in res.stdout
