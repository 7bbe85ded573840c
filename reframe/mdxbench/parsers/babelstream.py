'''BabelStream 5.0 (any model): the default table or the ``--csv`` output. GB/s (1e9 B/s).'''
import csv
import io
import re

from . import ParseError, require

KERNELS = ('Copy', 'Mul', 'Add', 'Triad', 'Dot')


def parse(text):
    '''``{'version', 'implementation', 'copy', 'mul', 'add', 'triad', 'dot'}`` in GB/s
    (``--triad-only``: ``triad`` alone), and ``device`` where the model names the device it
    ran on (CUDA: "Using CUDA device NAME").'''
    require(text and text.strip(), 'BabelStream output is empty')
    # check_solution (src/main.cpp) compares the arrays with the reference loop and writes
    # on stderr -- the exit status stays 0 -- where they differ: a wrong result is no
    # figure (the checks read stderr with stdout, scripts/per-gpu.sh)
    failed = re.findall(r'^Validation failed on (.+)$', text, re.M)
    require(not failed, 'BabelStream: the results are wrong, "Validation failed on '
            + '"; "'.join(f.strip() for f in failed) + '": the bandwidth of a device that '
            'computes wrong results is no figure')
    if text.lstrip().startswith('phase,') or '\nfunction,' in text:
        return _parse_csv(text)

    m = re.search(r'^BabelStream\s*\nVersion:\s*(\S+)', text, re.M)
    require(m, 'no "BabelStream" banner with "Version:": not BabelStream 5.x output')
    version = m.group(1)
    require(version.startswith(('4.', '5.')), f'BabelStream version {version}: only 4.x/5.x understood')
    impl = re.search(r'^Implementation:\s*(.+)$', text, re.M)
    require(re.search(r'^Function\s+MBytes/sec\s+Min \(sec\)', text, re.M),
            'no "Function  MBytes/sec  Min (sec) ..." table: truncated, or --mibibytes output')
    out = {'version': version, 'implementation': impl.group(1).strip() if impl else 'unknown'}
    dev = re.search(r'^Using \S+ device (.+)$', text, re.M)
    if dev:
        out['device'] = dev.group(1).strip()
    if re.search(r'^Running triad \d+ times', text, re.M):
        # --triad-only: no table rows, one bandwidth line (GB/s of 1e9 B, as printed)
        m = re.search(r'^Bandwidth \(GB/s\):\s*([0-9.]+)\s*$', text, re.M)
        require(m, 'BabelStream --triad-only output without its "Bandwidth (GB/s):" line '
                '(truncated?)')
        out['triad'] = float(m.group(1))
        return out
    for k in KERNELS:
        m = re.search(rf'^{k}\s+([0-9.]+)\s+[0-9.]+\s+[0-9.]+\s+[0-9.]+\s*$', text, re.M)
        require(m, f'no complete {k} row in the BabelStream table (truncated output?)')
        out[k.lower()] = float(m.group(1)) / 1000.0

    return out


def _parse_csv(text):
    lines = text.strip().splitlines()
    try:
        start = next(i for i, ln in enumerate(lines) if ln.startswith('function,'))
    except StopIteration:
        raise ParseError('BabelStream CSV output has no "function,..." header: truncated?') from None

    rows = list(csv.DictReader(io.StringIO('\n'.join(lines[start:]))))
    out = {'version': 'unknown (csv output)', 'implementation': 'unknown (csv output)'}
    for row in rows:
        if row.get('function') in KERNELS:
            try:
                out[row['function'].lower()] = float(row['max_mbytes_per_sec']) / 1000.0
            except (TypeError, ValueError, KeyError):
                raise ParseError(f'BabelStream CSV row {row}: no numeric max_mbytes_per_sec') from None

    missing = [k for k in KERNELS if k.lower() not in out]
    require(not missing, f'BabelStream CSV output lacks {", ".join(missing)} (truncated?)')
    return out
