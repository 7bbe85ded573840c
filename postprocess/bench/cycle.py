'''``mdxbench bench cycle``: the operator's loop at scale (figures printed; nothing here is
a timed test).

1. Detection and incident grouping over a year of nightly results at each scale (default
   1x, 3x and 10x of 10,000 series x 365 runs: 3.65 M, 10.95 M, 36.5 M records), each
   record carrying a real record's provenance (``bench changes``' store, 1% of the series
   with a 10% step). Per scale, each in a child process whose peak memory is its own:
   read and detect (``changes.find`` of the Parquet file: the bounded-memory scan, which
   reads as it segments, by both cores), group (``incidents.group`` and ``update``), and
   the nightly cycle's detection after one new run on every series (a second file beside
   the first; today a full scan again). Peak memory is said per process: the scan's own
   and its largest worker's. The baseline, in the same run at 1x only (at 10x it needs
   more memory than this machine has): the whole store read as one table and scanned in
   memory. Targets: <= 30 s and <= 4 GiB for detection and grouping; the peak at 10x within
   1.5x of the peak at 1x.
2. A cycle with nothing new: the real ``mdxbench cycle --no-ingest`` twice over a perflog
   archive (the captured real perflog line replicated, ``bench ingest``'s archive); the
   first analyses everything (the baseline, same run), the second finds the fingerprint
   unchanged and only reads the state. Target: <= 5 s for the second.
'''
import json
import os
import pathlib
import subprocess
import sys
import tempfile
import time

from mdxbench.post.bench import changes as bench_changes
from mdxbench.post.bench import child
from mdxbench.post.bench import ingest as bench_ingest


def _child(path, mode):
    '''Detection and grouping over ``path`` (the Parquet files scanned in bounded memory;
    ``table``: read as one table first, the baseline) in a child process.'''
    code = child.PEAK + f'''
import datetime as dt, json, resource, time
t0 = time.perf_counter()
from mdxbench.post.analysis import changes, incidents
from mdxbench.post.store import records
if {mode!r} == 'table':
    df = records.from_parquet({str(path[0])!r})
    t1 = time.perf_counter()
    cps = changes.find(df)
    n = df.height
else:
    t1 = time.perf_counter()
    cps = changes.find({[str(p) for p in path]!r})
    n = None
t2 = time.perf_counter()
groups = incidents.group(cps)
state = incidents.update({{}}, groups, dt.datetime.now(dt.timezone.utc).isoformat())
t3 = time.perf_counter()
print(json.dumps({{'read': t1 - t0, 'detect': t2 - t1, 'group': t3 - t2, 'records': n,
                  'change_points': len(cps), 'incidents': len(state),
                  'peak_mib': peak_mib(),
                  'worker_mib': resource.getrusage(resource.RUSAGE_CHILDREN).ru_maxrss / 1024}}))
'''
    return child.run(code, 'bench child')


def _scale(tmp, series, runs):
    '''One scale's figures: the scan, the nightly after one new run, the store's size.'''
    store = tmp / f'store-{series}.parquet'
    stepped = bench_changes.make_store(store, series, runs, meta=bench_changes.real_meta())
    full = _child([store], 'files')
    bench_changes.make_store(tmp / f'next-{series}.parquet', series, runs + 1,
                             meta=bench_changes.real_meta(), first_run=runs)
    nightly = _child([store, tmp / f'next-{series}.parquet'], 'files')
    for f in (store, tmp / f'next-{series}.parquet'):
        f.unlink()
    return {'series': series, 'records': series * runs, 'stepped': stepped, 'full': full,
            'nightly': nightly}


def scales(text):
    '''``1,3,10`` -> (1, 3, 10): the multiples of the series measured.'''
    try:
        return tuple(int(k) for k in text.split(','))
    except ValueError:
        raise ValueError(f'bench cycle: --scales {text!r}: give whole multiples, as 1,3,10') \
            from None


def _mib(r):
    return f"{r['peak_mib']:.0f} + {r['worker_mib']:.0f} MiB"


def _cycle(archive, state):
    exe = pathlib.Path(sys.executable).parent / 'mdxbench'
    env = dict(os.environ, MDXBENCH_STATE_DIR=str(state),
               MDXBENCH_EVENTS=str(pathlib.Path(state) / 'events.jsonl'))
    t0 = time.perf_counter()
    res = subprocess.run([str(exe), 'cycle', '--system', 'local', '--no-ingest', '--perflogs',
                          str(archive), '--json', str(pathlib.Path(state) / 'cycle.json')],
                         capture_output=True, text=True, env=env)
    secs = time.perf_counter() - t0
    if res.returncode not in (0, 1):
        raise RuntimeError(f'mdxbench cycle failed (exit {res.returncode}): {res.stderr[-2000:]}')
    return secs, json.loads((pathlib.Path(state) / 'cycle.json').read_text())


def main(series=10000, runs=365, scales=(1, 3, 10), archive_records=100000):
    from mdxbench.post.site import text as textable

    with tempfile.TemporaryDirectory() as tmp:
        tmp = pathlib.Path(tmp)
        store = tmp / 'baseline.parquet'
        bench_changes.make_store(store, series, runs, meta=bench_changes.real_meta())
        base = _child([store], 'table')
        store.unlink()
        found = [_scale(tmp, series * k, runs) for k in scales]
        n = bench_ingest.make_archive(tmp / 'perflogs', archive_records)
        first, rec1 = _cycle(tmp / 'perflogs', tmp / 'state')
        second, rec2 = _cycle(tmp / 'perflogs', tmp / 'state')
    rows = []
    for k, f in zip(scales, found):
        full, nightly = f['full'], f['nightly']
        rows.append((f'{k}x', f"{f['series']:,} x {runs}", f"{f['records']:,}",
                     f"{full['detect']:.1f} s", f"{full['group']:.2f} s", _mib(full),
                     f"{full['change_points']} ({f['stepped']} stepped)",
                     f"{nightly['detect'] + nightly['group']:.1f} s", _mib(nightly)))
    print('detection (reading as it scans, both cores) and incident grouping over a year of '
          'nightly runs, each record with a real provenance; peak: the scan + its largest '
          'worker (of 2):')
    print(textable.render(('scale', 'series x runs', 'records', 'read + detect', 'group',
                           'peak', 'change points', 'nightly: one new run per series (a full '
                           'scan today)', 'its peak'), rows))
    print(f"baseline, same run, 1x: the store read as one table ({base['read']:.1f} s) and "
          f"scanned in memory: detect {base['detect']:.1f} s, group {base['group']:.2f} s, "
          f"peak {base['peak_mib']:.0f} MiB; {base['change_points']} change points")
    print('site: not measured by this bench yet (the trend pages are per series; their '
          'writing at 1,000 series is in the docs, issue 33 item 3)')
    print(f'cycle over {n:,} records of perflogs: first (analyses everything, the baseline) '
          f'{first:.2f} s, then nothing new {second:.2f} s (unchanged: {rec2["unchanged"]}); '
          f'ratio {first / second:.1f}x')
    top = found[-1]['full']
    work = top['detect'] + top['group']
    peak = {f['series']: f['full']['peak_mib'] + 2 * f['full']['worker_mib'] for f in found}
    growth = peak[found[-1]['series']] / peak[found[0]['series']]
    checks = [(f'detection and grouping at {found[-1]["records"]:,} records <= 30 s',
               work <= 30, f'{work:.1f} s'),
              ('<= 4096 MiB (the scan and both workers together)',
               peak[found[-1]['series']] <= 4096, f"{peak[found[-1]['series']]:.0f} MiB"),
              (f'peak at {scales[-1]}x within 1.5x of {scales[0]}x', growth <= 1.5,
               f'{growth:.2f}x'),
              ('nothing-new cycle <= 5 s', second <= 5 and rec2['unchanged'], f'{second:.2f} s')]
    print('targets: ' + '; '.join(f'{what}: {"met" if ok else "MISSED"} ({fig})'
                                  for what, ok, fig in checks))
    return 0 if all(ok for _, ok, _ in checks) else 1
