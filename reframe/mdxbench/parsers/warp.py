'''MinIO warp 1.x benchmark reports (``warp get|put ...`` as printed when a run ends).

warp 1.x prints one block per operation type, in this shape (format strings of warp's
``pkg/aggregate``; figures are whatever the run measured)::

    Report: <OP>. Concurrency: <N>. Ran: <Go duration>
     * Average: <x.xx> MiB/s, <y.yy> obj/s[, <E> errors]
     * Errors: <E>                                  (only when there were errors)
     * Reqs: Avg: ..., 50%: ..., 90%: ..., 99%: ..., Fastest: ..., Slowest: ..., StdDev: ...
     * TTFB: ...                                    (GET only)

    Throughput, split into <S> x 1s:
     * Fastest: <rate>, <y.yy> obj/s
     * 50% Median: <rate>, <y.yy> obj/s
     * Slowest: <rate>, <y.yy> obj/s

Blocks are separated by a rule; a run with several operation types (a GET run also
uploads) has one block each. warp 0.x printed ``Operation: <OP>`` blocks instead: that
older format is refused with a message, not guessed at.
'''
import re

from . import ParseError, require

_UNITS = {'B': 1 / 2**20, 'KiB': 1 / 2**10, 'MiB': 1.0, 'GiB': 2**10, 'TiB': 2**20}
_REPORT = re.compile(r'^Report: (?P<op>[A-Za-z]+)\. Concurrency: (?P<conc>\d+)\. '
                     r'Ran: (?P<ran>\S+)\s*$', re.M)
_AVERAGE = re.compile(r'^\s*\* Average: (?:(?P<mibs>[\d.]+) MiB/s, )?(?P<objs>[\d.]+) obj/s'
                      r'(?:, (?P<errors>\d+) errors)?', re.M)
_ERRORS = re.compile(r'^\s*\* Errors: (\d+)\s*$', re.M)
_SEGMENTS = re.compile(r'^Throughput, split into (\d+) x (\S+):\s*$', re.M)
_SEGMENT = re.compile(r'^\s*\* (?P<which>Fastest|50% Median|Slowest): '
                      r'(?:(?P<rate>[\d.]+)\s*(?P<unit>B|KiB|MiB|GiB|TiB)/s, )?'
                      r'(?P<objs>[\d.]+) obj/s', re.M)
_REQS = re.compile(r'^\s*\* Reqs: (.*)$', re.M)
_ANSI = re.compile(r'\x1b\[[0-9;]*[A-Za-z]')
_VERSION = re.compile(r'^warp version (\S+)', re.M)
_GO_DURATION = re.compile(r'(\d+(?:\.\d+)?)(h|ms|us|µs|ns|m|s)')
_SECONDS = {'h': 3600, 'm': 60, 's': 1, 'ms': 1e-3, 'us': 1e-6, 'µs': 1e-6, 'ns': 1e-9}


def go_duration(text):
    '''Seconds of a Go ``time.Duration`` string such as ``9m57s`` or ``374.5ms``.'''
    parts = _GO_DURATION.findall(text)
    require(parts and ''.join(n + u for n, u in parts) == text,
            f'expected a Go duration such as "1m30s", got {text!r}')
    return sum(float(n) * _SECONDS[u] for n, u in parts)


def _mib(rate, unit):
    return float(rate) * _UNITS[unit] if rate else None


def _block(op, conc, ran, body):
    avg = _AVERAGE.search(body)
    require(avg, f'warp report {op}: no " * Average: ... obj/s" line after "Report: {op}"')
    errors = int(avg['errors'] or 0)
    extra = _ERRORS.search(body)
    if extra:
        errors = max(errors, int(extra.group(1)))
    out = {
        'op': op, 'concurrency': int(conc), 'ran_s': go_duration(ran),
        'mibs': float(avg['mibs']) if avg['mibs'] else None,
        'obj_s': float(avg['objs']), 'errors': errors,
    }
    seg = _SEGMENTS.search(body)
    if seg:
        out['segments'] = int(seg.group(1))
        for m in _SEGMENT.finditer(body, seg.end()):
            key = {'Fastest': 'fastest', '50% Median': 'median', 'Slowest': 'slowest'}[m['which']]
            out[f'{key}_mibs'] = _mib(m['rate'], m['unit'])
            out[f'{key}_obj_s'] = float(m['objs'])
    reqs = _REQS.search(body)
    if reqs:
        out['reqs_ms'] = {}
        for item in reqs.group(1).split(', '):
            name, _, val = item.partition(': ')
            try:
                out['reqs_ms'][name.strip()] = go_duration(val.strip()) * 1000
            except ParseError:
                continue
    return out


def parse(text):
    '''``{'version', 'reports': {OP: {...}}}`` with, per operation: ``concurrency``,
    ``ran_s``, ``mibs`` (average MiB/s; None for operations without payload), ``obj_s``,
    ``errors``, and when printed ``median_mibs``/``fastest_mibs``/``slowest_mibs`` (of the
    one-second segments), their ``*_obj_s``, and ``reqs_ms`` (request duration statistics).'''
    require(text and text.strip(), 'warp output is empty')
    text = _ANSI.sub('', text)
    heads = list(_REPORT.finditer(text))
    if not heads:
        if re.search(r'^Operation: [A-Z]+', text, re.M):
            raise ParseError('this is warp 0.x output ("Operation: ..." blocks); expected the '
                             'warp 1.x "Report: OP. Concurrency: N. Ran: T" blocks')
        err = re.search(r'^.*(?:<ERROR>|<FATAL>|FATAL|Error).*$', text, re.M)
        raise ParseError('no "Report: OP. Concurrency: N. Ran: T" block: warp did not finish'
                         + (f' (it said: {err.group(0).strip()[:200]})' if err else ''))

    reports = {}
    for i, head in enumerate(heads):
        end = heads[i + 1].start() if i + 1 < len(heads) else len(text)
        op = head['op'].upper()
        require(op not in reports, f'warp output has two "Report: {op}" blocks')
        reports[op] = _block(op, head['conc'], head['ran'], text[head.end():end])

    ver = _VERSION.search(text)
    return {'version': ver.group(1) if ver else 'unknown', 'reports': reports}


def select(parsed, op):
    '''The figures of operation ``op`` as flat results; a missing report or a run with
    failed requests is an error naming what warp did report.'''
    op = op.upper()
    reports = parsed['reports']
    require(op in reports, f'warp printed no "Report: {op}" block (it reported: '
                           f'{", ".join(sorted(reports)) or "nothing"})')
    rep = reports[op]
    require(rep['errors'] == 0, f'warp {op}: {rep["errors"]} requests failed')
    require(rep['mibs'] is not None, f'warp {op}: the report has no MiB/s figure')
    return dict(rep, version=parsed['version'])
