'''``mdxbench bench cycle``: the operator's loop at scale (figures printed; nothing here is
a timed test).

1. Detection, incident grouping and the site over a year of nightly results at each
   scale (default 1x, 3x and 10x of 10,000 series x 365 runs: 3.65 M, 10.95 M, 36.5 M
   records), each record carrying a real record's provenance (``bench changes``' store,
   1% of the series with a 10% step). Per scale, each step in a child process whose peak
   memory is its own: read and detect (``changes.find`` of the Parquet file: the
   bounded-memory scan, which reads as it segments, by both cores), group
   (``incidents.group`` and ``update``), the site (the columns the trend pages draw read
   as one table, then ``trends.write`` with the scan's change points); then the nightly
   cycle after one new run on every series (a second file beside the first): detection
   through the scan copy the first scan kept (it routes the new file and detects again
   only the series whose new runs could move their change points), and the site again.
   With Chromium on the PATH, the nightly site is opened at one series: the time until its
   index is drawn and until the series' chart is drawn (the page says both). Peak memory
   is said per process: the scan's own and its largest worker's. The baseline, in the
   same run at 1x only (at 10x it needs more memory than this machine has): the whole
   store read as one table and scanned in memory. Targets: <= 30 s and <= 4 GiB for
   detection and grouping; the peak at 10x within 1.5x of the peak at 1x; the nightly
   cycle, site included, <= 30 s; publishing the site <= 60 s; the index drawn <= 3 s, a
   chart <= 1 s after it is opened.
2. A cycle with nothing new: the real ``mdxbench cycle --no-ingest`` twice over a perflog
   archive (the captured real perflog line replicated, ``bench ingest``'s archive); the
   first analyses everything (the baseline, same run), the second finds the fingerprint
   unchanged and only reads the state. Target: <= 5 s for the second.
'''
import json
import os
import pathlib
import shutil
import subprocess
import sys
import tempfile
import time

from mdxbench.post.bench import changes as bench_changes
from mdxbench.post.bench import child
from mdxbench.post.bench import ingest as bench_ingest


def _child(path, mode, keep=None, cps_out=None):
    '''Detection and grouping over ``path`` (the Parquet files scanned in bounded memory,
    through the scan copy kept in ``keep`` when given; ``table``: read as one table first,
    the baseline) in a child process; its change points written to ``cps_out`` (JSON)
    when given.'''
    code = child.PEAK + f'''
import datetime as dt, json, resource, time
t0 = time.perf_counter()
from mdxbench.post.analysis import incidents, scan
from mdxbench.post.store import records
if {mode!r} == 'table':
    df = records.from_parquet({str(path[0])!r})
    t1 = time.perf_counter()
    cps = scan.find(df)
    n = df.height
else:
    t1 = time.perf_counter()
    cps = scan.find({[str(p) for p in path]!r}, keep={str(keep) if keep else None!r})
    n = None
t2 = time.perf_counter()
groups = incidents.group(cps)
state = incidents.update({{}}, groups, dt.datetime.now(dt.timezone.utc).isoformat())
t3 = time.perf_counter()
if {str(cps_out) if cps_out else None!r}:
    with open({str(cps_out)!r}, 'w') as f:
        json.dump(cps, f, default=str)
kept = None
if {str(keep) if keep else None!r}:
    from mdxbench.post.analysis.scancopy import ScanCopy
    kept = ScanCopy({str(keep) if keep else None!r}).manifest['last']
print(json.dumps({{'read': t1 - t0, 'detect': t2 - t1, 'group': t3 - t2, 'records': n,
                  'kept': kept,
                  'change_points': len(cps), 'incidents': len(state),
                  'peak_mib': peak_mib(),
                  'worker_mib': resource.getrusage(resource.RUSAGE_CHILDREN).ru_maxrss / 1024}}))
'''
    return child.run(code, 'bench child')


def _site(paths, cps, out):
    '''The trend pages of the records of ``paths`` written into ``out`` with the change
    points of the file ``cps`` (a cycle hands its own over), in a child process: the
    columns the pages read, read as one table (read), and the pages written (site).'''
    code = child.PEAK + f'''
import json, time
t0 = time.perf_counter()
import polars as pl
from mdxbench.post.site import trends
lf = pl.scan_parquet({[str(p) for p in paths]!r})
have = lf.collect_schema().names()
df = lf.select([pl.col(c) if c in have else pl.lit(None, pl.Float64).alias(c)
                for c in trends.COLUMNS]).collect()
t1 = time.perf_counter()
n, _ = trends.write(df, {str(out / 'trends.html')!r},
                    change_points=json.load(open({str(cps)!r})))
print(json.dumps({{'read': t1 - t0, 'site': time.perf_counter() - t1, 'charts': n,
                  'peak_mib': peak_mib()}}))
'''
    return child.run(code, 'bench child (site)')


def _browse(page):
    '''(ms from navigation until the index is drawn, ms from opening a series until its
    chart is drawn) of the trend page ``page`` in headless Chromium, the series opened
    being the middle one of the index; None without Chromium.'''
    import re
    from mdxbench.post.site import trends

    exe = shutil.which('chromium')
    if exe is None:
        return None
    rows = trends.index_rows(page)
    with tempfile.TemporaryDirectory() as profile:
        res = subprocess.run([exe, '--headless', '--no-sandbox', '--disable-gpu', '--no-first-run',
                              '--disable-background-networking', f'--user-data-dir={profile}',
                              '--dump-dom', pathlib.Path(page).as_uri() + '#' +
                              rows[len(rows) // 2]['id']],
                             capture_output=True, text=True, timeout=300)
    index = re.search(r'data-index-ms="(\d+)"', res.stdout)
    chart = re.search(r'data-ms="(\d+)"', res.stdout)
    if not index or not chart:
        raise RuntimeError(f'bench cycle: the trend page did not draw in Chromium: '
                           f'{res.stderr[-2000:]}')
    return int(index.group(1)), int(chart.group(1))


#: the generated year starts on the 10th: its next night is in the same month. On the
#: first night of a month every series' file is written again (as the first publish)
START = '2025-01-10T00:00:00'


def _scale(tmp, series, runs):
    '''One scale's figures: the scan and the site, then the nightly after one new run
    (detection through the kept scan copy and the site again).'''
    store = tmp / f'store-{series}.parquet'
    stepped = bench_changes.make_store(store, series, runs, meta=bench_changes.real_meta(),
                                       start=START)
    keep = tmp / f'scan-{series}'
    full = _child([store], 'files', keep, tmp / 'cps.json')    # from nothing: builds the copy
    site = _site([store], tmp / 'cps.json', tmp / f'site-{series}')
    nxt = tmp / f'next-{series}.parquet'
    bench_changes.make_store(nxt, series, runs + 1, meta=bench_changes.real_meta(),
                             first_run=runs, start=START)
    nightly = _child([store, nxt], 'files', keep, tmp / 'cps.json')
    nightly_site = _site([store, nxt], tmp / 'cps.json', tmp / f'site-{series}')
    browse = _browse(tmp / f'site-{series}' / 'trends.html')
    for f in (store, nxt):
        f.unlink()
    shutil.rmtree(keep)
    shutil.rmtree(tmp / f'site-{series}')
    return {'series': series, 'records': series * runs, 'stepped': stepped, 'full': full,
            'site': site, 'nightly': nightly, 'nightly_site': nightly_site, 'browse': browse}


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
    rows, nights = [], []
    for k, f in zip(scales, found):
        full, nightly, site, nsite = f['full'], f['nightly'], f['site'], f['nightly_site']
        rows.append((f'{k}x', f"{f['series']:,} x {runs}", f"{f['records']:,}",
                     f"{full['detect']:.1f} s", f"{full['group']:.2f} s", _mib(full),
                     f"{full['change_points']} ({f['stepped']} stepped)",
                     f"{site['read']:.1f} s", f"{site['site']:.1f} s",
                     f"{site['peak_mib']:.0f} MiB"))
        night = nightly['detect'] + nightly['group'] + nsite['read'] + nsite['site']
        nights.append((f'{k}x', f"{nightly['detect'] + nightly['group']:.1f} s "
                       f"({nightly['kept']['detected']:,} of {nightly['kept']['series']:,})",
                       _mib(nightly), f"{nsite['read']:.1f} s", f"{nsite['site']:.1f} s",
                       f"{nsite['peak_mib']:.0f} MiB", f'{night:.1f} s',
                       '{} ms, {} ms'.format(*f['browse']) if f['browse'] else
                       'no chromium'))
    print('a year of nightly runs, each record with a real provenance. Detection reads as it '
          'scans, on both cores (peak: the scan + its largest worker of 2); the site reads '
          'the columns its pages draw as one table and writes the trend pages with the '
          "scan's change points:")
    print(textable.render(('scale', 'series x runs', 'records', 'read + detect', 'group',
                           'peak', 'change points', 'site: read', 'site: write',
                           'site: peak'), rows))
    print('the nightly cycle after one new run on every series: detection through the kept '
          'scan copy (series detected again), then the site (its series files unchanged '
          'but where change points moved; the latest month in 256 files); in Chromium, '
          'the index drawn after navigation and a series\' chart after it is opened:')
    print(textable.render(('scale', 'detect + group', 'peak', 'site: read', 'site: write',
                           'site: peak', 'nightly total', 'Chromium: index, chart'), nights))
    print(f"baseline, same run, 1x: the store read as one table ({base['read']:.1f} s) and "
          f"scanned in memory: detect {base['detect']:.1f} s, group {base['group']:.2f} s, "
          f"peak {base['peak_mib']:.0f} MiB; {base['change_points']} change points")
    print(f'cycle over {n:,} records of perflogs: first (analyses everything, the baseline) '
          f'{first:.2f} s, then nothing new {second:.2f} s (unchanged: {rec2["unchanged"]}); '
          f'ratio {first / second:.1f}x')
    top = found[-1]['full']
    work = top['detect'] + top['group']
    last = found[-1]
    night = last['nightly']['detect'] + last['nightly']['group'] + \
        last['nightly_site']['read'] + last['nightly_site']['site']
    peak = {f['series']: f['full']['peak_mib'] + 2 * f['full']['worker_mib'] for f in found}
    growth = peak[found[-1]['series']] / peak[found[0]['series']]
    checks = [(f'detection and grouping at {found[-1]["records"]:,} records <= 30 s',
               work <= 30, f'{work:.1f} s'),
              ('<= 4096 MiB (the scan and both workers together)',
               peak[found[-1]['series']] <= 4096, f"{peak[found[-1]['series']]:.0f} MiB"),
              (f'peak at {scales[-1]}x within 1.5x of {scales[0]}x', growth <= 1.5,
               f'{growth:.2f}x'),
              ('nothing-new cycle <= 5 s', second <= 5 and rec2['unchanged'], f'{second:.2f} s'),
              (f'nightly cycle at {scales[-1]}x, site included, <= 30 s', night <= 30,
               f'{night:.1f} s'),
              (f"publishing the site at {last['series']:,} series <= 60 s",
               last['site']['site'] <= 60, f"{last['site']['site']:.1f} s")]
    if last['browse']:
        checks += [('the index drawn in Chromium <= 3 s', last['browse'][0] <= 3000,
                    f"{last['browse'][0]} ms"),
                   ("a series' chart <= 1 s after it is opened", last['browse'][1] <= 1000,
                    f"{last['browse'][1]} ms")]
    print('targets: ' + '; '.join(f'{what}: {"met" if ok else "MISSED"} ({fig})'
                                  for what, ok, fig in checks))
    return 0 if all(ok for _, ok, _ in checks) else 1
