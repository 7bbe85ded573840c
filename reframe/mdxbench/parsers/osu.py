'''OSU micro-benchmarks 5.x-7.x: ``osu_latency``, ``osu_bw``, ``osu_bibw``, ``osu_alltoall`` (and other
size/value tables). Returns the whole curve and the figures checks report.'''
import re

from . import require

_TITLE = re.compile(r'^# OSU MPI(?:-\w+)? (.+?) Test v(\S+)\s*$', re.M)
_HEADER = re.compile(r'^# Size\s+(.+?)\s*$', re.M)


def parse(text):
    '''``{'version', 'test', 'quantity', 'unit', 'curve': {size: value}}``.'''
    require(text and text.strip(), 'OSU output is empty')
    m = _TITLE.search(text)
    require(m, 'no "# OSU MPI ... Test vX.Y" title: not OSU micro-benchmarks output')
    test, version = m.group(1), m.group(2)
    h = _HEADER.search(text, m.end())
    require(h, 'no "# Size ..." column header after the title')
    col = h.group(1)
    u = re.search(r'\(([^)]+)\)', col)
    require(u, f'column header {col!r} names no unit')
    curve = {}
    for line in text[h.end():].splitlines():
        line = line.strip()
        if not line or line.startswith('#'):
            continue

        parts = line.split()
        require(len(parts) >= 2 and parts[0].isdigit(),
                f'unexpected line in the OSU table: {line!r}')
        try:
            curve[int(parts[0])] = float(parts[1])
        except ValueError:
            require(False, f'non-numeric value in the OSU table: {line!r}')

    require(curve, 'the OSU table has no rows (the run stopped before the first size)')
    return {'version': version, 'test': test, 'quantity': col.split('(')[0].strip(),
            'unit': u.group(1), 'curve': curve}


def value_at(parsed, size):
    require(size in parsed['curve'],
            f'the OSU curve has no size {size} (sizes {min(parsed["curve"])}..'
            f'{max(parsed["curve"])}): message sizes limited, or output truncated')
    return parsed['curve'][size]


def latency(text, size=8):
    p = parse(text)
    require('Latency' in p['quantity'] and p['unit'] == 'us',
            f'expected a latency table in us, got {p["quantity"]} ({p["unit"]})')
    return {'version': p['version'], 'latency': value_at(p, size),
            'curve': p['curve'], 'max_size': max(p['curve'])}


def bandwidth(text, test='Bandwidth'):
    '''The figures of a bandwidth curve of the OSU test titled ``test`` (``osu_bw``'s
    "Bandwidth"; ``osu_bibw``'s "Bi-Directional Bandwidth": the output of the one is
    refused as the other's).'''
    p = parse(text)
    require(p['test'] == test, f'expected the OSU "{test} Test", got the "{p["test"]} Test"')
    require(p['quantity'] == 'Bandwidth' and p['unit'] == 'MB/s',
            f'expected a bandwidth table in MB/s, got {p["quantity"]} ({p["unit"]})')
    size = max(p['curve'])
    bw = p['curve'][size]
    peak_size = max(p['curve'], key=p['curve'].get)
    peak = p['curve'][peak_size]
    return {'version': p['version'], 'bandwidth': bw, 'bandwidth_gbps': bw * 8 / 1000,
            'peak_bandwidth': peak, 'peak_gbps': peak * 8 / 1000, 'peak_size': peak_size,
            'max_size': size, 'curve': p['curve']}


def bibandwidth(text):
    '''``osu_bibw``: both ranks send a window of messages to each other at once; the
    same figures as :func:`bandwidth`, of the sum of both directions.'''
    return bandwidth(text, test='Bi-Directional Bandwidth')
