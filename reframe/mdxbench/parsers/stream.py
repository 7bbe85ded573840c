'''McCalpin STREAM 5.x (``stream_c.exe`` of Spack's ``stream`` package): best rates of
Copy, Scale, Add and Triad in GB/s (STREAM prints MB/s = 1e6 B/s), array size, threads.

What is read (STREAM 5.10's ``printf`` formats): ``STREAM version $Revision: 5.x $``,
``Array size = N (elements)``, ``Number of Threads counted = T`` (OpenMP builds),
the table headed ``Function    Best Rate MB/s  Avg time     Min time     Max time`` and
``Solution Validates``; a run whose arrays fail validation is an error, not a figure.

Several runs in one output (``StreamOmp.repetitions``, the binary run again: its iterations
are compiled in) give the best rate of each kernel over them all, as STREAM itself takes
the best of its iterations; every run must be complete, validate, and agree with the
others on version, array size and threads.'''
import re

from . import ParseError, require

KERNELS = ('Copy', 'Scale', 'Add', 'Triad')
KERNELS_LOWER = tuple(k.lower() for k in KERNELS)


_BANNER = re.compile(r'^STREAM version ', re.M)


def parse(text):
    '''``{'version', 'array_elements', 'threads', 'runs', 'copy', 'scale', 'add',
    'triad'}``: of one run, or the best of each kernel over the runs of the output.'''
    require(text and text.strip(), 'STREAM output is empty')
    starts = [m.start() for m in _BANNER.finditer(text)]
    if len(starts) <= 1:
        return dict(_parse_one(text), runs=1)
    runs = []
    for i, (a, b) in enumerate(zip(starts, starts[1:] + [len(text)]), 1):
        try:
            runs.append(_parse_one(text[a:b]))
        except ParseError as err:
            raise ParseError(f'STREAM run {i} of {len(starts)}: {err}') from None
    first = runs[0]
    for i, r in enumerate(runs[1:], 2):
        for k in ('version', 'array_elements', 'threads'):
            require(r[k] == first[k], f'STREAM run {i} of {len(runs)}: {k} {r[k]}, run 1 '
                    f'{first[k]}: not repetitions of one run')
    return dict(first, runs=len(runs), **{k: max(r[k] for r in runs) for k in KERNELS_LOWER})


def _parse_one(text):
    m = re.search(r'^STREAM version \$Revision: (\d+\.\d+) \$', text, re.M)
    require(m, 'no "STREAM version $Revision: 5.x $" banner: not McCalpin STREAM output')
    version = m.group(1)
    require(version.startswith('5.'), f'STREAM version {version}: only 5.x is understood')
    size = re.search(r'^Array size = (\d+)', text, re.M)
    require(size, 'no "Array size = N (elements)" line')
    require(re.search(r'^Function\s+Best Rate MB/s\s+Avg time\s+Min time\s+Max time', text, re.M),
            'no "Function  Best Rate MB/s  Avg time  Min time  Max time" table: '
            'the run stopped before its results')
    out = {'version': version, 'array_elements': int(size.group(1))}
    threads = re.search(r'^Number of Threads counted = (\d+)', text, re.M)
    out['threads'] = int(threads.group(1)) if threads else 1
    for k in KERNELS:
        row = re.search(rf'^{k}:\s+([0-9.]+)\s+[0-9.]+\s+[0-9.]+\s+[0-9.]+\s*$', text, re.M)
        require(row, f'no complete "{k}:" row in the STREAM table (truncated output?)')
        out[k.lower()] = float(row.group(1)) / 1000.0

    failed = re.search(r'^Failed Validation.*$', text, re.M)
    if failed:
        raise ParseError(f'STREAM results are wrong: {failed.group(0).strip()}')
    require(re.search(r'^Solution Validates', text, re.M),
            'no "Solution Validates" line: the run stopped before validating its arrays')
    return out
