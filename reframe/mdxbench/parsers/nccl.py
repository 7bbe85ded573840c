'''NVIDIA nccl-tests (2.x): the standard output of ``all_reduce_perf``, ``all_gather_perf``,
``sendrecv_perf`` and the others of the suite -- the header its ``writeDeviceReport``
prints, one row per size (``writeBenchmarkLinePreamble`` and two ``writeBenchmarkLineBody``:
out of place, in place), the footer of ``writeResultFooter``.

Bandwidths are nccl-tests' own, GB/s of 1e9 B: ``algbw`` (bytes over time) and ``busbw``
(the algorithm bandwidth times the collective's factor, e.g. 2(n-1)/n for all-reduce:
comparable with the hardware's link speed whatever the rank count). ``#wrong`` is the
number of elements the data check found wrong in that measurement (``N/A`` when the check
is off: ``-c 0``); a nonzero count is a GPU, link or library that computes wrong results.'''
import math
import re

from . import ParseError, require

_ROW = re.compile(
    r'^\s*(\d+)\s+(\d+)\s+(\S+)\s+(\S+)\s+(-?\d+)'         # size count type redop root
    r'\s+(\S+)\s+(\S+)\s+(\S+)\s+(\S+)'                    # out of place: time algbw busbw #wrong
    r'\s+(\S+)\s+(\S+)\s+(\S+)\s+(\S+)\s*(.*)$')            # in place, [timestamp]
_RANK = re.compile(r'^#\s+Rank\s+(\d+)\s+Group\s+(\d+)\s+Pid\s+(\d+)\s+on\s+(\S+)\s+device\s+'
                   r'(\d+)\s+\[([0-9a-fA-F]{4}:[0-9a-fA-F]{2}:[0-9a-fA-F]{2})\]\s+(.+?)\s*$')


def _number(text, what, line):
    '''A figure of a row; "nan" or "inf" (printf's of a zero time) is no measurement.'''
    try:
        value = float(text)
    except ValueError:
        value = math.nan
    if not math.isfinite(value):
        raise ParseError(f'nccl-tests row "{line.strip()}": {what} "{text}" is no number')
    return value


def _wrong(text, line):
    if text == 'N/A':
        return None
    value = _number(text, '#wrong', line)
    return int(value)


def parse(text):
    '''``{'version', 'nccl_headers', 'nccl_library', 'program', 'nthreads', 'ngpus',
    'min_bytes', 'max_bytes', 'iters', 'validation', 'ranks': [{'rank', 'host', 'device',
    'bus_id', 'name'}], 'rows': [{'size', 'count', 'type', 'redop', 'root', 'out_of_place':
    {'time_us', 'algbw', 'busbw', 'wrong'}, 'in_place': {...}}], 'out_of_bounds',
    'avg_busbw', 'error'}`` (``wrong`` None where the data check was off; ``error`` the
    library's last error, None when it printed none).'''
    require(text and text.strip(), 'nccl-tests output is empty')
    m = re.search(r'^# nccl-tests version (\S+) nccl-headers=(\d+) nccl-library=(\d+)', text, re.M)
    require(m, 'no "# nccl-tests version V nccl-headers=N nccl-library=N" line: not the '
            'output of nccl-tests 2.x (or the program did not start)')
    out = {'version': m.group(1), 'nccl_headers': int(m.group(2)),
           'nccl_library': int(m.group(3))}
    m = re.search(r'^# Collective test starting: (\S+)', text, re.M)
    require(m, 'no "# Collective test starting:" line')
    out['program'] = m.group(1)
    m = re.search(r'^# nThread (\d+) nGpus (\d+) minBytes (\d+) maxBytes (\d+) step: \S+ '
                  r'warmup iters: (\d+) iters: (\d+) agg iters: (\d+) validation: (\d+)', text, re.M)
    require(m, 'no "# nThread N nGpus N minBytes ... validation: N" line')
    (out['nthreads'], out['ngpus'], out['min_bytes'], out['max_bytes'], _, out['iters'], _,
     out['validation']) = (int(g) for g in m.groups())
    out['ranks'] = [{'rank': int(r.group(1)), 'host': r.group(4), 'device': int(r.group(5)),
                     'bus_id': r.group(6).lower(), 'name': r.group(7)}
                    for r in map(_RANK.match, text.splitlines()) if r]
    require(out['ranks'], 'no "#  Rank N Group N Pid N on HOST device N [bus] NAME" line: '
            'the device report is missing')
    rows = []
    for line in text.splitlines():
        if line.startswith('#') or not line.strip():
            continue
        r = _ROW.match(line)
        if not r:
            continue
        g = r.groups()
        rows.append({
            'size': int(g[0]), 'count': int(g[1]), 'type': g[2], 'redop': g[3],
            'root': int(g[4]),
            'out_of_place': {'time_us': _number(g[5], 'time', line),
                             'algbw': _number(g[6], 'algbw', line),
                             'busbw': _number(g[7], 'busbw', line),
                             'wrong': _wrong(g[8], line)},
            'in_place': {'time_us': _number(g[9], 'time', line),
                         'algbw': _number(g[10], 'algbw', line),
                         'busbw': _number(g[11], 'busbw', line),
                         'wrong': _wrong(g[12], line)}})
    require(rows, 'no result row ("size count type redop root time algbw busbw #wrong ..."): '
            'the run stopped before its first size')
    out['rows'] = rows
    m = re.search(r'^# Out of bounds values : (\d+) (OK|FAILED)', text, re.M)
    avg = re.search(r'^# Avg bus bandwidth\s*: (\S+)', text, re.M)
    done = re.search(r'^# Collective test concluded: (\S+)', text, re.M)
    require(m and avg and done, f'{out["program"]}: no footer ("# Out of bounds values", '
            f'"# Avg bus bandwidth", "# Collective test concluded") after {len(rows)} row(s), '
            f'the last of {rows[-1]["size"]} B: the run stopped before its end')
    out['out_of_bounds'] = int(m.group(1))
    out['avg_busbw'] = _number(avg.group(1), 'the average bus bandwidth', avg.group(0))
    err = re.search(r'^# error: (.+)$', text, re.M)
    out['error'] = err.group(1).strip() if err else None
    return out


def figures(results):
    '''The figures a check keeps: the bus bandwidth at the largest size measured (out of
    place, as nccl-tests' users quote it; ``busbw_largest``, its size ``largest_bytes``),
    nccl-tests' own average over every size and both placements (``busbw_avg``), and the
    wrong elements over all rows (``wrong``; None where the data check was off).'''
    last = max(results['rows'], key=lambda r: r['size'])
    wrongs = [p['wrong'] for r in results['rows'] for p in (r['out_of_place'], r['in_place'])]
    return {'busbw_largest': last['out_of_place']['busbw'], 'largest_bytes': last['size'],
            'busbw_avg': results['avg_busbw'],
            'wrong': None if any(w is None for w in wrongs) else sum(wrongs)}


def wrong_results(results):
    '''Sentences naming every size whose data check found wrong elements, and the footer's
    count; a run with the data check off says it checked nothing. Empty: every result
    right.'''
    out = []
    for r in results['rows']:
        for place in ('out_of_place', 'in_place'):
            w = r[place]['wrong']
            if w is None:
                return [f'{results["program"]} ran without its data check (#wrong N/A, '
                        'validation 0): its results were not checked']
            if w:
                out.append(f'{r["size"]} B {place.replace("_", " ")}: {w} wrong element(s)')
    if results['out_of_bounds'] and not out:
        out.append(f'{results["out_of_bounds"]} measurement(s) out of bounds')
    return out
