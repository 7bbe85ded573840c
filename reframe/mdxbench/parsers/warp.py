'''MinIO warp 1.0.x benchmark reports (``warp get|put ...``), the version the mdx II paper
used (1.0.8). Both forms warp 1.0.8 prints are read, each tested on real outputs:

* the **JSON report** of ``--json`` (progress lines, then one JSON object): what the checks
  ask for, because only it carries the number of failed requests (``errors``), whether an
  operation had too few samples (``skipped``), the measured duration, and the request and
  time-to-first-byte percentiles; the text report has none of these;
* the **text report** (an operator's own run without ``--json``): one block per operation,
  ``Operation: GET. Concurrency: 4``, ``* Average: 764.04 MiB/s, 764.04 obj/s`` and
  ``Throughput, split into 19 x 1s:`` with the fastest / 50% median / slowest second.

A GET run first uploads its objects: warp reports that preparation as a PUT with too few
samples (``Skipping PUT too few samples...`` / ``"skipped": true``). It is recorded as
skipped, never as a figure; asking for a skipped operation is an error. Anything else
(another report format, a cut-off report) is refused with what was expected.
'''
import json
import re

from . import ParseError, require

_MIB = 2 ** 20
_UNITS = {'B': 1 / _MIB, 'KiB': 1 / 2**10, 'MiB': 1.0, 'GiB': 2**10, 'TiB': 2**20}
_ANSI = re.compile(r'\x1b\[[0-9;]*[A-Za-z]')
# urfave/cli's version line (`warp --version`, which the checks run before warp itself)
_VERSION = re.compile(r'^warp version (\S+)', re.M)

# what warp 1.0.x prints when it stops without a report, each seen in a real run: its console's
# errors, fatal or not (minio/pkg's console prints "<ERROR>" for both), urfave/cli's refusal
# of an argument, the Go runtime's own fatal error (out of memory)
_FAILED = re.compile(r'^.*(?:<ERROR>|Incorrect Usage:|fatal error:).*$', re.M)
#: a longer line is said by its beginning and its end (where warp says what is wrong)
_SAID = 240


def _shortened(line):
    return line if len(line) <= _SAID else f'{line[:_SAID // 2]} ... {line[-_SAID // 2:]}'


# --- text report --------------------------------------------------------------------------
_OPERATION = re.compile(r'^Operation: (?P<op>[A-Za-z]+)\. Concurrency: (?P<conc>\d+)\s*$', re.M)
_SKIPPING = re.compile(r'^Skipping (?P<op>[A-Za-z]+) too few samples', re.M)
_AVERAGE = re.compile(r'^\s*\* Average: (?P<mibs>[\d.]+) MiB/s, (?P<objs>[\d.]+) obj/s\s*$', re.M)
_SEGMENTS = re.compile(r'^Throughput, split into (\d+) x 1s:\s*$', re.M)
_SEGMENT = re.compile(r'^\s*\* (?P<which>Fastest|50% Median|Slowest): '
                      r'(?P<rate>[\d.]+)\s*(?P<unit>B|KiB|MiB|GiB|TiB)/s, (?P<objs>[\d.]+) obj/s',
                      re.M)
_WHICH = {'Fastest': 'fastest', '50% Median': 'median', 'Slowest': 'slowest'}


def _text_block(op, conc, body):
    if _SKIPPING.search(body):
        return {'op': op, 'skipped': True}

    avg = _AVERAGE.search(body)
    require(avg, f'warp report {op}: no " * Average: X MiB/s, Y obj/s" line after '
                 f'"Operation: {op}" (cut-off report?)')
    out = {'op': op, 'skipped': False, 'concurrency': int(conc), 'mibs': float(avg['mibs']),
           'obj_s': float(avg['objs']), 'errors': None}
    seg = _SEGMENTS.search(body)
    require(seg, f'warp report {op}: no "Throughput, split into N x 1s:" section (cut-off report?)')
    out['segments'] = int(seg.group(1))
    found = {}
    for m in _SEGMENT.finditer(body, seg.end()):
        key = _WHICH[m['which']]
        found[key] = True
        out[f'{key}_mibs'] = float(m['rate']) * _UNITS[m['unit']]
        out[f'{key}_obj_s'] = float(m['objs'])
    missing = [w for w in _WHICH.values() if w not in found]
    require(not missing, f'warp report {op}: no {", ".join(missing)} second in its throughput '
                         'split (cut-off report?)')
    return out


def _parse_text(text, heads):
    reports = {}
    for i, head in enumerate(heads):
        end = heads[i + 1].start() if i + 1 < len(heads) else len(text)
        op = head['op'].upper()
        require(op not in reports, f'warp output has two "Operation: {op}" blocks')
        reports[op] = _text_block(op, head['conc'], text[head.end():end])
    return reports


# --- JSON report (--json) -----------------------------------------------------------------
def _json_op(i, op):
    where = f'warp JSON report, operations[{i}]'
    try:
        name = str(op['type']).upper()
        if op.get('skipped'):
            return name, {'op': name, 'skipped': True}

        thr = op['throughput']
        seg = thr['segmented']
        out = {
            'op': name, 'skipped': False, 'concurrency': int(op['concurrency']),
            'mibs': thr['average_bps'] / _MIB, 'obj_s': float(thr['average_ops']),
            'errors': int(op['errors']) + int(thr.get('errors') or 0),
            'ran_s': thr['measure_duration_millis'] / 1000, 'requests': int(thr['operations']),
            'hosts': int(op['hosts']), 'clients': int(op['clients']),
            'segments': len(seg['segments']),
        }
        for w in _WHICH.values():
            out[f'{w}_mibs'] = seg[f'{w}_bps'] / _MIB
            out[f'{w}_obj_s'] = float(seg[f'{w}_ops'])
        # the request percentiles, over the requests wholly inside the time every thread
        # ran (warp's aggregate/requests.go): none where it found none ("requests": 0,
        # which it also says "skipped", every percentile written as 0)
        req = op.get('single_sized_requests')
        if req and req.get('requests'):
            out['reqs_ms'] = {k: req[f'{k}_millis'] for k in
                              ('dur_avg', 'dur_median', 'dur_90', 'dur_99', 'fastest', 'slowest')}
            if req.get('first_byte'):
                out['ttfb_ms'] = {k: req['first_byte'][f'{k}_millis']
                                  for k in ('average', 'median', 'p90', 'p99')}
        if op.get('first_errors'):
            out['first_errors'] = [str(e)[:200] for e in op['first_errors'][:3]]
    except (KeyError, TypeError, ValueError) as err:
        raise ParseError(f'{where}: missing or malformed field {err} (not a warp 1.0.x '
                         'report?)') from None
    return name, out


def _parse_json(text, start):
    try:
        doc, _ = json.JSONDecoder().raw_decode(text, start)
    except json.JSONDecodeError as err:
        raise ParseError(f'warp JSON report is incomplete or malformed ({err.msg} at '
                         f'line {err.lineno}): the run was cut off?') from None
    require(isinstance(doc, dict) and isinstance(doc.get('operations'), list),
            'warp JSON report has no "operations" list')
    require(not doc.get('mixed'), 'warp JSON report of a mixed benchmark: only get/put '
                                  'reports are read')
    reports = {}
    for i, op in enumerate(doc['operations']):
        name, rep = _json_op(i, op)
        require(name not in reports, f'warp JSON report has two {name} operations')
        reports[name] = rep
    return reports


def parse(text):
    '''``{'version', 'format': 'json'|'text', 'reports': {OP: {...}}}``. Per operation:
    ``skipped`` (too few samples: no other key) or ``concurrency``, ``mibs`` (average
    MiB/s), ``obj_s``, ``errors`` (failed requests; None in the text report, which does not
    say), ``segments`` and the ``fastest``/``median``/``slowest`` second's ``*_mibs`` and
    ``*_obj_s``; the JSON report adds ``ran_s``, ``requests``, ``hosts``, ``clients``,
    ``reqs_ms`` and ``ttfb_ms`` (request duration and time-to-first-byte percentiles).'''
    require(text and text.strip(), 'warp output is empty')
    text = _ANSI.sub('', text)
    ver = _VERSION.search(text)
    version = ver.group(1) if ver else 'unknown'
    js = re.search(r'^\{\s*$', text, re.M)
    if js:
        return {'version': version, 'format': 'json', 'reports': _parse_json(text, js.start())}

    heads = list(_OPERATION.finditer(text))
    if not heads:
        err = _FAILED.search(text)
        raise ParseError('no warp 1.0.x report (neither the --json report nor "Operation: OP. '
                         'Concurrency: N" blocks): warp did not finish'
                         + (f' (it said: {_shortened(err.group(0).strip())})' if err else ''))
    return {'version': version, 'format': 'text', 'reports': _parse_text(text, heads)}


def select(parsed, op):
    '''The figures of operation ``op`` as flat results. An operation warp did not report,
    one it skipped for too few samples, and one with failed requests are errors.'''
    op = op.upper()
    reports = parsed['reports']
    require(op in reports, f'warp reported no {op} operation (it reported: '
                           f'{", ".join(sorted(reports)) or "nothing"})')
    rep = reports[op]
    require(not rep['skipped'], f'warp {op}: too few samples, warp skipped it (run longer: '
                                'raise duration, or lower concurrency)')
    require(not rep['errors'], f'warp {op}: {rep["errors"]} requests failed'
                               + (f' (first: {rep["first_errors"][0]})' if rep.get('first_errors') else ''))
    return dict(rep, version=parsed['version'])
