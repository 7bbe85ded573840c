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
   cycle after one new run on every series (the nights in one file beside the store's, extended
   each night as the current month's partition is): detection
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
   At 1x-10x (not the kept decade), the first night of the next month too: the rest of the
   month scanned first, then the night that moves the cut (every chunk's past extended,
   every series' file written again); its figures printed, no target.
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


def _child(path, mode, keep=None, cps_out=None, state_out=None):
    '''Detection and grouping over ``path`` (the Parquet files scanned in bounded memory,
    through the scan copy kept in ``keep`` when given; ``table``: read as one table first,
    the baseline) in a child process (:func:`mdxbench.post.bench.children.cycle_detect`);
    its change points written to ``cps_out`` and the incidents to ``state_out`` (JSON)
    when given.'''
    return child.run('cycle_detect', 'bench child', paths=[str(p) for p in path], mode=mode,
                     keep=str(keep) if keep else None,
                     cps_out=str(cps_out) if cps_out else None,
                     state_out=str(state_out) if state_out else None)


def _site(keep, cps, state, out, mde_budget=0.0):
    '''The cycle's site written into ``out`` from the scan kept in ``keep``, as ``mdxbench
    cycle`` writes it, in a child process (:func:`mdxbench.post.bench.children.cycle_site`).'''
    return child.run('cycle_site', 'bench child (site)', keep=str(keep), cps=str(cps),
                     state=str(state), out=str(out), mde_budget=mde_budget)


def _table_site(paths, cps, out, mde_budget=0.0):
    '''The baseline: the trend pages written the way the cycle wrote them before issue 45,
    in a child process (:func:`mdxbench.post.bench.children.cycle_table_site`).'''
    return child.run('cycle_table_site', 'bench child (table site)',
                     paths=[str(p) for p in paths], cps=str(cps), out=str(out),
                     mde_budget=mde_budget)


def differing(a, b, ignore=('.kept',)):
    '''The files under the directories ``a`` and ``b`` that differ or are in one only,
    but those named in ``ignore`` (the kept site's own bookkeeping).'''
    import filecmp

    out = []

    def walk(d, pre=''):
        out.extend(pre + f for f in d.diff_files + d.left_only + d.right_only + d.funny_files)
        for name, sub in d.subdirs.items():
            walk(sub, f'{pre}{name}/')
    walk(filecmp.dircmp(a, b, ignore=filecmp.DEFAULT_IGNORES + list(ignore)))
    return out


def _same_points(a, b):
    '''Whether the change point files ``a`` and ``b`` hold the same change points.'''
    def key(c):
        return json.dumps(c, sort_keys=True, default=str)
    return sorted(map(key, json.loads(pathlib.Path(a).read_text()))) == \
        sorted(map(key, json.loads(pathlib.Path(b).read_text())))


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
#: series generated at once: a store is one file per month (as the local copy of
#: Elasticsearch), a row group per month and this many series (50,000 records a decade)
CHUNK = 1700


def _months(store):
    return sorted(pathlib.Path(store).glob('*.parquet'))


def _scale(work, series, runs, compare=False, kept=None, mde_budget=0.0):
    '''One scale's figures: the cold cycle (the store generated, detected and grouped, the
    whole site published), then the nightly after one new run on every series (detection
    through the kept scan copy, grouping, the site again); with ``compare``, the nightly's
    trend pages written the old way too (one table), the files compared. ``kept``: a
    directory where the store, its scan and site are kept between runs of the bench: the
    cold cycle is measured once (its figures kept), each run adds one night.'''
    root = pathlib.Path(kept) if kept else work / f'scale-{series}'
    root.mkdir(parents=True, exist_ok=True)
    store, keep, site = root / 'store', root / 'scan', root / 'site'
    cps, state = root / 'cps.json', root / 'state.json'
    if kept and (root / 'cold.json').exists():
        cold = dict(json.loads((root / 'cold.json').read_text()), again=True)
    else:
        t0 = time.perf_counter()
        stepped = bench_changes.make_store(store, series, runs, meta=bench_changes.real_meta(),
                                           start=START, chunk=CHUNK, monthly=True)
        made = time.perf_counter() - t0
        full = _child(_months(store), 'files', keep, cps, state)  # from nothing: the copy
        shutil.copy(cps, root / 'cps-cold.json')
        first = _site(keep, cps, state, site, mde_budget)
        cold = {'stepped': stepped, 'generated': made, 'full': full, 'site': first,
                'bytes': sum(f.stat().st_size for f in _months(store)), 'again': False}
        if kept:
            (root / 'cold.json').write_text(json.dumps(cold))
    # the nights since the store, in one file extended each night (as the local copy of
    # Elasticsearch keeps the current month: one partition, routed again each night); a
    # file a night, the earlier layout, is folded into it
    nights = root / 'nights.parquet'
    for old in sorted(root.glob('next-*.parquet'), key=lambda p: int(p.stem.split('-')[1])):
        _append(nights, old)
    k = _runs(nights) // series
    night = root / 'night.parquet'
    bench_changes.make_store(night, series, runs + k + 1, meta=bench_changes.real_meta(),
                             first_run=runs + k, start=START, chunk=CHUNK, span=runs)
    _append(nights, night)
    paths = [*_months(store), nights]
    nightly = _child(paths, 'files', keep, cps, state)
    nightly_site = _site(keep, cps, state, site, mde_budget)
    same = None
    if compare:
        table = _table_site(paths, cps, work / 'table-site', mde_budget)
        same = {'site': table, 'differ': differing(site / 'report' / 'trends',
                                                   work / 'table-site' / 'trends')}
    browse = _browse(site / 'report' / 'trends.html')
    roll = None if kept else _month_roll(root, series, runs, runs + k + 1, paths, keep, cps,
                                         state, site, mde_budget)
    out = {'series': series, 'runs': runs, 'records': series * runs, 'cold': cold,
           'cold_cps': str(work / f'cold-cps-{series}.json'),
           'nightly': nightly, 'nightly_site': nightly_site, 'browse': browse, 'same': same,
           'roll': roll, 'root': str(root)}
    if (root / 'cps-cold.json').exists():
        shutil.copy(root / 'cps-cold.json', out['cold_cps'])
    if not kept:
        shutil.rmtree(root)
    return out


def _runs(path):
    import pyarrow.parquet as pq

    return pq.ParquetFile(path).metadata.num_rows if pathlib.Path(path).exists() else 0


#: records per row group of the nights' file (a night's file has one per CHUNK series:
#: routed as they are, a month of them cost the scan a write per row group and chunk)
NIGHT_GROUP = 200_000


def _append(dest, src):
    '''The Parquet file ``src``'s records added to ``dest``, in row groups of about
    :data:`NIGHT_GROUP` records (as a partition of the local copy of Elasticsearch has
    them); ``src`` removed.'''
    import pyarrow as pa
    import pyarrow.parquet as pq

    dest, src = pathlib.Path(dest), pathlib.Path(src)
    tmp = dest.with_name(dest.name + '.tmp')
    files = [pq.ParquetFile(p) for p in (dest, src) if p.exists()]
    schema = files[0].schema_arrow
    buf, held = [], 0
    try:
        with pq.ParquetWriter(str(tmp), schema) as writer:
            for f in files:
                for g in range(f.metadata.num_row_groups):
                    buf.append(f.read_row_group(g).cast(schema))
                    held += buf[-1].num_rows
                    if held >= NIGHT_GROUP:
                        writer.write_table(pa.concat_tables(buf), row_group_size=held)
                        buf, held = [], 0
            if buf:
                writer.write_table(pa.concat_tables(buf), row_group_size=held)
    finally:
        for f in files:
            f.close()
    tmp.replace(dest)
    src.unlink()


def _month_roll(root, series, runs, done, paths, keep, cps, state, site, mde_budget):
    '''The first night of the next month, measured as a night (detection and grouping, the
    sensitivity, the site): the rest of this month's nights (runs ``done`` on) scanned
    first, unmeasured. That night the cut moves: every chunk's past is extended by the
    month that ended, and every series' file is written again (its earlier runs moved).'''
    import datetime as dt

    day = dt.datetime.fromisoformat(START)
    first = next(i for i in range(done, done + 32)
                 if (day + dt.timedelta(days=i)).month != (day + dt.timedelta(days=done - 1)).month)
    rest, roll = root / 'rest-of-month.parquet', root / 'month-roll.parquet'
    bench_changes.make_store(rest, series, first, meta=bench_changes.real_meta(),
                             first_run=done, start=START, chunk=CHUNK, span=runs)
    _child([*paths, rest], 'files', keep, cps, state)
    _site(keep, cps, state, site, mde_budget)
    bench_changes.make_store(roll, series, first + 1, meta=bench_changes.real_meta(),
                             first_run=first, start=START, chunk=CHUNK, span=runs)
    return {'nights': first - done, 'night': _child([*paths, rest, roll], 'files', keep, cps,
                                                     state),
            'site': _site(keep, cps, state, site, mde_budget)}


def scales(text):
    '''``1,3,10`` -> (1, 3, 10): the multiples of the series measured.'''
    try:
        return tuple(int(k) for k in text.split(','))
    except ValueError:
        raise ValueError(f'bench cycle: --scales {text!r}: give whole multiples, as 1,3,10') \
            from None


def _mib(r):
    return f"{r['peak_mib']:.0f} + {r['worker_mib']:.0f} MiB"


def _worst(r):
    '''A child's largest process: itself or its largest worker (MiB).'''
    return max(r['peak_mib'], r['worker_mib'])


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


def main(series=10000, runs=365, scales=(1, 3, 10), archive_records=100000, decade=None,
         mde_budget=0.0):
    '''The figures and targets (see the module); ``decade``: a directory where the 100x
    store (a decade: ``10 * series`` x ``10 * runs``) is generated once and kept, with its
    scan and site, its nightly cycle measured on each run (None: no 100x row).'''
    from mdxbench.post.site import text as textable

    with tempfile.TemporaryDirectory() as tmp:
        tmp = pathlib.Path(tmp)
        store = tmp / 'baseline.parquet'
        bench_changes.make_store(store, series, runs, meta=bench_changes.real_meta(),
                                 start=START, chunk=CHUNK)
        base = _child([store], 'table', cps_out=tmp / 'baseline-cps.json')
        store.unlink()
        found = [_scale(tmp, series * k, runs, compare=(i == 0), mde_budget=mde_budget)
                 for i, k in enumerate(scales)]
        # the baseline's store is the first scale's when that is 1x
        same_cps = _same_points(tmp / 'baseline-cps.json', found[0]['cold_cps']) \
            if scales[0] == 1 else None
        for f in found:
            f.pop('cold_cps')
        labels = [f'{k}x' for k in scales]
        if decade:
            found.append(_scale(tmp, series * 10, runs * 10, kept=decade,
                                mde_budget=mde_budget))
            found[-1].pop('cold_cps')
            labels.append('100x (decade)')
        n = bench_ingest.make_archive(tmp / 'perflogs', archive_records)
        first, rec1 = _cycle(tmp / 'perflogs', tmp / 'state')
        second, rec2 = _cycle(tmp / 'perflogs', tmp / 'state')
    rows, nights = [], []
    for label, f in zip(labels, found):
        cold, nightly, nsite = f['cold'], f['nightly'], f['nightly_site']
        full, site = cold['full'], cold['site']
        rows.append((label, f"{f['series']:,} x {f['runs']:,}", f"{f['records']:,}",
                     f"{full['detect']:.1f} s", f"{full['group']:.2f} s", _mib(full),
                     f"{full['change_points']} ({cold['stepped']} stepped)",
                     f"{site['site']:.1f} s", _mib(site),
                     'kept from an earlier run' if cold['again'] else 'this run'))
        night = nightly['detect'] + nightly['group'] + nsite['sensitivity'] + nsite['site']
        f['night'] = night
        nights.append((label, f"{nightly['detect'] + nightly['group']:.1f} s "
                       f"({nightly['kept']['detected']:,} of {nightly['kept']['series']:,})",
                       _mib(nightly), f"{nsite['sensitivity']:.1f} s", f"{nsite['site']:.1f} s",
                       _mib(nsite), f'{night:.1f} s',
                       '{} ms, {} ms'.format(*f['browse']) if f['browse'] else
                       'no chromium'))
    print('the cold cycle on a store of nightly runs, each record with a real provenance: '
          'detection reads as it scans, on both cores, keeping its scan copy; the whole site '
          '(index, incident pages, the papers\' tables, the trend pages) is written from '
          'that copy a chunk of series at a time (peak: the process + its largest worker):')
    print(textable.render(('scale', 'series x runs', 'records', 'read + detect', 'group',
                           'peak', 'change points', 'site: publish', 'site: peak',
                           'measured'), rows))
    print('the nightly cycle after one new run on every series: detection through the kept '
          'scan copy (series detected again), the sensitivity bookkeeping (MDE budget '
          f'{mde_budget:g} s: a cycle spends its own, 30 s by default, on stale figures), '
          'the site (series files rewritten only where their digest moved; the latest '
          'month in 256 files); in Chromium, the index drawn and a series\' chart opened:')
    print(textable.render(('scale', 'detect + group', 'peak', 'sensitivity', 'site',
                           'site: peak', 'nightly total', 'Chromium: index, chart'), nights))
    rolls = []
    for label, f in zip(labels, found):
        r = f.get('roll')
        if r:
            night = r['night']['detect'] + r['night']['group']
            rolls.append((label, str(r['nights']), f'{night:.1f} s',
                          f"{r['site']['sensitivity']:.1f} s", f"{r['site']['site']:.1f} s",
                          f"{night + r['site']['sensitivity'] + r['site']['site']:.1f} s",
                          f"{max(_worst(r['night']), _worst(r['site'])):.0f} MiB"))
    if rolls:
        print('the first night of the next month (the rest of this month scanned first): every '
              "chunk's past extended by the month that ended, every series' file written again "
              '(no target: one night a month):')
        print(textable.render(('scale', 'nights before it', 'detect + group', 'sensitivity',
                               'site', 'total', 'peak'), rolls))
    if decade:
        d = found[-1]
        print(f"100x is a decade of the 10x site ({d['series']:,} series x {d['runs']:,} "
              f"nightly runs): kept in {d['root']} ({d['cold']['bytes'] / 2**30:.1f} GiB "
              f"store, generated in {d['cold']['generated']:.0f} s)")
    base_site = found[0]['same']
    print(f"baseline, same run, 1x: the store read as one table ({base['read']:.1f} s) and "
          f"scanned in memory: detect {base['detect']:.1f} s, peak {base['peak_mib']:.0f} "
          f"MiB, {base['change_points']} change points; the nightly trend pages the old "
          f"way (the columns read as one table): read {base_site['site']['read']:.1f} s, "
          f"write {base_site['site']['site']:.1f} s, peak {base_site['site']['peak_mib']:.0f}"
          f" MiB; files that differ from the kept site's: {len(base_site['differ'])}"
          + (f" ({', '.join(base_site['differ'][:5])})" if base_site['differ'] else ''))
    print(f'cycle over {n:,} records of perflogs: first (analyses everything, the baseline) '
          f'{first:.2f} s, then nothing new {second:.2f} s (unchanged: {rec2["unchanged"]}); '
          f'ratio {first / second:.1f}x')
    checks = [('nothing-new cycle <= 5 s', second <= 5 and rec2['unchanged'],
               f'{second:.2f} s'),
              (f"{labels[0]}: the kept site's trend files are the table path's",
               not base_site['differ'], f"{len(base_site['differ'])} differ")]
    if same_cps is not None:
        checks.append(("1x: the kept scan's change points are the table scan's", same_cps,
                       'same' if same_cps else 'differ'))
    for label, f in zip(labels, found):
        procs = [f['nightly'], f['nightly_site']] + ([] if f['cold']['again'] else
                                                     [f['cold']['full'], f['cold']['site']])
        worst = max(_worst(r) for r in procs)
        limit = 30 if label.startswith('100x') else 15
        checks.append((f'{label}: nightly cycle, site included, <= {limit} s',
                       f['night'] <= limit, f"{f['night']:.1f} s"))
        checks.append((f'{label}: every process <= 4096 MiB', worst <= 4096,
                       f'{worst:.0f} MiB'))
        if not label.startswith('100x') and label == labels[len(scales) - 1]:
            checks.append((f"{label}: first full publish <= 60 s",
                           f['cold']['site']['site'] <= 60,
                           f"{f['cold']['site']['site']:.1f} s"))
        if f['browse']:
            checks += [(f'{label}: the index drawn in Chromium <= 3 s', f['browse'][0] <= 3000,
                        f"{f['browse'][0]} ms"),
                       (f"{label}: a series' chart <= 1 s after it is opened",
                        f['browse'][1] <= 1000, f"{f['browse'][1]} ms")]
    print('targets: ' + '; '.join(f'{what}: {"met" if ok else "MISSED"} ({fig})'
                                  for what, ok, fig in checks))
    return 0 if all(ok for _, ok, _ in checks) else 1
