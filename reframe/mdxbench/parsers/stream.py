'''McCalpin STREAM 5.x (``stream_c.exe`` of Spack's ``stream`` package): best rates of
Copy, Scale, Add and Triad in GB/s (STREAM prints MB/s = 1e6 B/s), array size, threads.

What is read (STREAM 5.10's ``printf`` formats): ``STREAM version $Revision: 5.x $``,
``Array size = N (elements)``, ``Number of Threads counted = T`` (OpenMP builds),
the table headed ``Function    Best Rate MB/s  Avg time     Min time     Max time`` and
``Solution Validates``; a run whose arrays fail validation is an error, not a figure.'''
import re

from . import ParseError, require

KERNELS = ('Copy', 'Scale', 'Add', 'Triad')
KERNELS_LOWER = tuple(k.lower() for k in KERNELS)


def parse(text):
    '''``{'version', 'array_elements', 'threads', 'copy', 'scale', 'add', 'triad'}``.'''
    require(text and text.strip(), 'STREAM output is empty')
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
