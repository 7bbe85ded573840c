'''gpu-burn (wilicc/gpu-burn): a DGEMM (``-d``) or SGEMM load on every GPU for a time, each
result compared with the first GPU-side (``compare.cu``), as its ``listenClients`` prints
it: a progress report per GPU whenever one finishes a batch -- ``proc'd: N (G Gflop/s) -
...  errors: E - ...  temps: T C - ...``, each report starting with a carriage return --,
a "Summary at:" line every 10% of the run (errors counted since the last summary), and at
the end ``Tested N GPUs:`` with ``GPU i: OK`` or ``FAULTY`` (any error seen). gpu-burn
exits 0 either way: the verdict is in the text.

Gflop/s is what gpu-burn prints: the operations of the batch a GPU just finished over the
time since its previous report; every report repeats each GPU's latest batch. A GPU's
figure here is the median of its batches after the first (the first includes the start);
``proc'd: -1`` is a GPU whose process died.'''
import re
import statistics

from . import ParseError, require

_REPORT = re.compile(r"(?P<pct>\d+(?:\.\d+)?)%\s+proc'd: (?P<procd>.*?)\s+errors: (?P<errors>.*?)"
                     r'\s+temps: (?P<temps>.*?)\s*$')
_PROCD = re.compile(r'^(-?\d+) \((\d+(?:\.\d+)?) Gflop/s\)$')
_ERRORS = re.compile(r'^(\d+)\s*(\(WARNING!\)|\(DIED!\))?$')


def _split(field):
    return [p.strip() for p in field.split(' - ')]


def _report(segment):
    m = _REPORT.match(segment.strip())
    if not m:
        return None
    procd = [_PROCD.match(p) for p in _split(m.group('procd'))]
    errors = [_ERRORS.match(p) for p in _split(m.group('errors'))]
    if not all(procd) or not all(errors) or len(procd) != len(errors):
        raise ParseError(f'gpu-burn report "{segment.strip()}": not "N (G Gflop/s)" and '
                         '"E" for every GPU')
    temps = [int(t.split()[0]) if t[:1].isdigit() else None for t in _split(m.group('temps'))]
    return {'percent': float(m.group('pct')),
            'procd': [int(p.group(1)) for p in procd],
            'gflops': [float(p.group(2)) for p in procd],
            'errors': [int(e.group(1)) for e in errors],
            'died': [e.group(2) == '(DIED!)' for e in errors],
            'temps': temps}


def parse(text):
    '''``{'seconds', 'doubles', 'gpus': [{'index', 'verdict', 'gflops', 'reports',
    'errors', 'died', 'temp_c'}]}``: per GPU its verdict (``OK`` or ``FAULTY``), the median
    Gflop/s of its batches after the first, how many, the errors summed over the
    run's summaries, whether its process died, its last temperature.'''
    require(text and text.strip(), 'gpu-burn output is empty')
    m = re.search(r'^Burning for (\d+) seconds\.', text, re.M)
    require(m, 'no "Burning for N seconds." line: not gpu-burn output (or it did not start)')
    out = {'seconds': int(m.group(1)),
           'doubles': bool(re.search(r'using DOUBLES', text))}
    reports, windows = [], [[]]
    for line in text.split('\n'):
        if 'Summary at:' in line:
            windows.append([])
        for segment in line.split('\r'):
            r = _report(segment)
            if r:
                reports.append(r)
                windows[-1].append(r)
    require(reports, "gpu-burn: no progress report (\"proc'd: ... errors: ... temps: ...\"): "
            'no GPU finished a batch')
    n = len(reports[-1]['procd'])
    require(all(len(r['procd']) == n for r in reports),
            'gpu-burn: its reports name different numbers of GPUs')
    verdicts = dict((int(i), v) for i, v in re.findall(r'^\s*GPU (\d+): (OK|FAULTY)\s*$',
                                                         text, re.M))
    tested = re.search(r'^Tested (\d+) GPUs:', text, re.M)
    require(tested, f'gpu-burn: no "Tested N GPUs:" verdict after {len(reports)} report(s), '
            f'the last at {reports[-1]["percent"]}%: the run stopped before its end')
    require(int(tested.group(1)) == n and sorted(verdicts) == list(range(n)),
            f'gpu-burn: "Tested {tested.group(1)} GPUs" with verdicts for GPUs '
            f'{sorted(verdicts)}, its reports name {n}')
    gpus = []
    for i in range(n):
        # errors are counted from the last summary on: each window's last report holds its
        # count (a died GPU's stays at what it had)
        errors = sum(w[-1]['errors'][i] for w in windows if w)
        # a report shows every GPU's latest batch: a GPU's own are those where its count
        # grew; its first includes the start
        batches, before = [], 0
        for r in reports:
            if r['procd'][i] > before:
                batches.append(r['gflops'][i])
                before = r['procd'][i]
        later = batches[1:] or batches
        temps = [r['temps'][i] for r in reports if r['temps'][i] is not None]
        gpus.append({'index': i, 'verdict': verdicts[i],
                     'gflops': statistics.median(later) if later else None,
                     'reports': len(later), 'errors': errors,
                     'died': any(r['died'][i] or r['procd'][i] < 0 for r in reports),
                     'temp_c': temps[-1] if temps else None})
    out['gpus'] = gpus
    return out


def faults(results, bus_ids=None):
    '''Sentences naming each GPU gpu-burn found wrong -- FAULTY (an error in any report), an
    error count, or a process that died -- by its index and, where ``bus_ids`` (index
    order) gives it, its bus id; empty where every GPU passed.'''
    out = []
    bus_ids = list(bus_ids or [])
    for g in results['gpus']:
        why = []
        if g['verdict'] != 'OK':
            why.append(g['verdict'])
        if g['errors']:
            why.append(f'{g["errors"]} wrong result(s)')
        if g['died']:
            why.append('its process died')
        if why:
            bus = f' ({bus_ids[g["index"]]})' if g['index'] < len(bus_ids) else ''
            out.append(f'GPU {g["index"]}{bus}: ' + ', '.join(why))
    return out
