'''``mdxbench bench parsers``: the GPU parsers' time on the real outputs of
tests/fixtures/gpu (one NVIDIA H200), each beside its baseline measured in the same run:
reading the same file from disk, which every check does before it parses.'''
import pathlib
import time

from mdxbench import REPO_ROOT
from mdxbench.parsers import babelstream, nvbandwidth, nvsmi, p2p

FIXTURES = REPO_ROOT / 'tests' / 'fixtures' / 'gpu'
CASES = [
    ('p2pBandwidthLatencyTest-h200-1gpu.out', 'p2p.parse + summary',
     lambda t: p2p.summary(p2p.parse(t))),
    ('nvbandwidth-0.8-h200-vm.out', 'nvbandwidth.parse + per_gpu',
     lambda t: nvbandwidth.per_gpu(nvbandwidth.parse(t))),
    ('nvbandwidth-0.8-h200-vm-subset.json', 'nvbandwidth.parse (-j)', nvbandwidth.parse),
    ('babelstream-5.0-cuda-h200.out', 'babelstream.parse', babelstream.parse),
    ('nvidia-smi-query-h200.csv', 'nvsmi.parse_query + conformance',
     lambda t: nvsmi.conformance(nvsmi.parse_query(t), {'count': 1, 'ecc': True})),
]


def _per_call(func, repeat):
    t0 = time.perf_counter()
    for _ in range(repeat):
        func()
    return (time.perf_counter() - t0) / repeat


def main(repeat=2000, log=print):
    log(f'mdxbench bench parsers: {repeat} calls each, on {FIXTURES}')
    log(f"{'output':40} {'parser':34} {'parse':>9} {'read file':>10} {'ratio':>6}")
    for name, what, func in CASES:
        path = pathlib.Path(FIXTURES / name)
        text = path.read_text()
        parse = _per_call(lambda: func(text), repeat)
        read = _per_call(path.read_text, repeat)
        log(f'{name:40} {what:34} {parse * 1e6:7.1f}us {read * 1e6:8.1f}us '
            f'{parse / read:5.1f}x')
    return 0
