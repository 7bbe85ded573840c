'''Stand-ins for the GPU programs of a node, for running the GPU checks through ReFrame
on a machine without a GPU: each prints a real output (tests/fixtures/gpu, or one derived
from a real one by tests/fixtures/gpu/derive.py) for what it is asked, as the program
would, and nothing else. The checks' own logic -- what they ask, how they parse and judge
-- is what runs.'''
import pathlib
import stat

FIXTURES = pathlib.Path(__file__).parent / 'fixtures' / 'gpu'

# nvidia-smi: the count a configuration detects, the job's GPU list, and -q -x
_SMI = '''#!/bin/sh
case "$*" in
  *--query-gpu=index\\ --format=csv,noheader*|*--query-gpu=index,*noheader*)
      tail -n +2 "{listing}" | awk '{{print NR - 1}}' ;;
  *--query-gpu=*) cat "{listing}" ;;
  *-q*-x*) cat "{xml}" ;;
  *) echo "stand-in nvidia-smi: not asked for: $*" >&2; exit 2 ;;
esac
'''
# BabelStream's cuda-stream: --device i is the last argument; the GPU named in
# MDXBENCH_TEST_BAD_GPU prints its "Validation failed" output, on stderr as BabelStream does
_STREAM = '''#!/bin/sh
for a; do dev=$a; done
if [ "$dev" = "${{MDXBENCH_TEST_BAD_GPU:-none}}" ]; then
    grep -v '^Validation failed' "{bad}"
    grep '^Validation failed' "{bad}" >&2
else
    cat "{good}"
fi
'''


def _script(path, text):
    path.write_text(text)
    path.chmod(path.stat().st_mode | stat.S_IXUSR | stat.S_IXGRP | stat.S_IXOTH)


def install(bindir, gpus=8):
    '''Stand-ins for a node of ``gpus`` (1 or 8) H200 GPUs in ``bindir``: nvidia-smi,
    nvbandwidth, cuda-stream, gpu_burn, with 8 GPUs nccl-tests' three programs (derived
    outputs), with one GPU p2pBandwidthLatencyTest (the only real output of it is of
    one GPU).'''
    bindir = pathlib.Path(bindir)
    bindir.mkdir(parents=True, exist_ok=True)
    one = gpus == 1
    _script(bindir / 'nvidia-smi', _SMI.format(
        listing=FIXTURES / ('nvidia-smi-query-h200.csv' if one else 'nvidia-smi-list-8gpu.csv'),
        xml=FIXTURES / ('nvidia-smi-q-h200.xml' if one else 'nvidia-smi-q-8gpu.xml')))
    nvb = FIXTURES / ('nvbandwidth-0.8-1gpu-check-cases.out' if one else
                      'nvbandwidth-0.8-8gpu-no-p2p.out')
    _script(bindir / 'nvbandwidth', f'#!/bin/sh\ncat "{nvb}"\n')
    _script(bindir / 'cuda-stream', _STREAM.format(
        good=FIXTURES / 'babelstream-5.0-cuda-h200.out',
        bad=FIXTURES / 'babelstream-5.0-cuda-h200-validation-failed.out'))
    # gpu-burn: the run of its GPUs; the GPU named in MDXBENCH_TEST_BAD_GPU (3 of 8) FAULTY
    burn = FIXTURES / f'gpu-burn-a113ce7-{gpus}gpu-60s.out'
    faulty = FIXTURES / 'gpu-burn-a113ce7-8gpu-60s-faulty-gpu3.out'
    _script(bindir / 'gpu_burn', f'#!/bin/sh\nif [ "${{MDXBENCH_TEST_BAD_GPU:-none}}" = 3 ] '
            f'&& [ -f "{faulty}" ] && [ {gpus} = 8 ]; then cat "{faulty}"; else cat "{burn}"; fi\n')
    if not one:
        # nccl-tests on 8 GPUs: one process (-g 8) prints the node's run; in a job step of
        # two nodes (srun's SLURM_NNODES) the run of 16 GPU ranks, printed by rank 0 alone
        # as MPI's rank 0 prints it; MDXBENCH_TEST_NCCL_WRONG makes the all-reduce wrong
        for coll in ('all_reduce', 'all_gather', 'sendrecv'):
            node = FIXTURES / f'nccl-tests-2.17.6-{coll}-8gpu-no-p2p.out'
            wrong = FIXTURES / 'nccl-tests-2.17.6-all_reduce-8gpu-wrong.out'
            nodes = FIXTURES / f'nccl-tests-2.17.6-{coll}-2x8gpu.out'
            _script(bindir / f'{coll}_perf', f'''#!/bin/sh
if [ "${{SLURM_NNODES:-1}}" -gt 1 ]; then
    [ "${{SLURM_PROCID:-0}}" = 0 ] && cat "{nodes}"; exit 0
fi
if [ -n "${{MDXBENCH_TEST_NCCL_WRONG:-}}" ] && [ {coll} = all_reduce ]; then cat "{wrong}"
else cat "{node}"; fi
''')
    if one:
        _script(bindir / 'p2pBandwidthLatencyTest',
                f'#!/bin/sh\ncat "{FIXTURES / "p2pBandwidthLatencyTest-h200-1gpu.out"}"\n')
    return bindir
