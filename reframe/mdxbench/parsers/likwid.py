'''likwid-bench 5.x sweeps (``mdxbench/scripts/likwid-sweep.sh``): one core's bandwidth
against the working-set size, as CacheBench's memcpy sweep of Guidi et al.

Each run is headed by ``### mdxbench likwid size=SIZE rep=I`` and must report
``Size (Byte):`` and ``MByte/s:`` (likwid's MB = 1e6 B); the curve holds, per size in
bytes, the median GB/s of its repetitions.'''
import re
import statistics

from . import require

_HEAD = re.compile(r'^### mdxbench likwid size=(\S+) rep=(\d+)\s*$', re.M)


def parse_sweep(text):
    '''``{'version', 'kernel', 'curve': {bytes: median GB/s}, 'spread': {bytes: (min, max)},
    'repeats': {bytes: n}, 'runs', 'sizes': {requested size: bytes likwid used}}`` (likwid
    rounds a working set to whole vector blocks: 524kB may run as 523776 bytes).'''
    require(text and text.strip(), 'likwid-bench output is empty')
    ver = re.search(r'^Threaded Memory Hierarchy Benchmark --\s+Version\s+(\S+)', text, re.M)
    require(ver, 'no "Threaded Memory Hierarchy Benchmark -- Version" banner: not a likwid-bench sweep')
    require(ver.group(1).startswith('5.'), f'likwid-bench version {ver.group(1)}: only 5.x is understood')
    parts = _HEAD.split(text)
    require(len(parts) >= 4, 'no "### mdxbench likwid size=... rep=..." run in the output')
    err = re.search(r'^Error: .*$', parts[0], re.M)
    require(not err, f'likwid-bench failed: {err.group(0) if err else ""}')

    rates, kernels, sizes = {}, set(), {}
    for k in range(1, len(parts), 3):
        size, rep, body = parts[k], parts[k + 1], parts[k + 2]
        where = f'run size={size} rep={rep}'
        err = re.search(r'^(?:Error|ERROR)\b.*$', body, re.M)
        require(not err, f'{where}: likwid-bench failed: {err.group(0) if err else ""}')
        test = re.search(r'^Test: (\S+)', body, re.M)
        nbytes = re.search(r'^Size \(Byte\):\s+(\d+)\s*$', body, re.M)
        mbs = re.search(r'^MByte/s:\s+([0-9.]+)\s*$', body, re.M)
        require(test and nbytes and mbs,
                f'{where}: no complete result ("Test:", "Size (Byte):", "MByte/s:"): '
                'likwid-bench stopped or its output was cut off')
        kernels.add(test.group(1))
        require(sizes.setdefault(size, int(nbytes.group(1))) == int(nbytes.group(1)),
                f'{where}: likwid-bench used {nbytes.group(1)} bytes, {sizes[size]} before')
        rates.setdefault(int(nbytes.group(1)), []).append(float(mbs.group(1)) / 1000.0)

    require(len(kernels) == 1, f'one kernel per sweep expected, found {sorted(kernels)}')
    return {
        'version': ver.group(1), 'kernel': kernels.pop(),
        'curve': {s: statistics.median(v) for s, v in sorted(rates.items())},
        'spread': {s: (min(v), max(v)) for s, v in sorted(rates.items())},
        'repeats': {s: len(v) for s, v in sorted(rates.items())},
        'runs': sum(len(v) for v in rates.values()),
        'sizes': sizes,
    }
