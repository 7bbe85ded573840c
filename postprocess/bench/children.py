'''The bench's measurements that run in a child process of their own (so that each peak
memory is its own): each function is called by ``python -m mdxbench.post.bench.child
NAME ARGUMENTS`` (:func:`mdxbench.post.bench.child.run`) and returns its figures; the
child adds its peak memory. Each imports what it measures inside its body, after its
clock starts where the import is part of the work, so that a child holds only what it
measures: nothing heavy is imported at this module's top.'''
import json
import pathlib
import resource
import time


def _workers_mib():
    '''The largest peak memory of this process's children (the scan's workers), MiB.'''
    return resource.getrusage(resource.RUSAGE_CHILDREN).ru_maxrss / 1024


def _dump(path, what):
    if path:
        with open(path, 'w') as f:
            json.dump(what, f, default=str)


def cycle_detect(paths, mode, keep=None, cps_out=None, state_out=None):
    '''``bench cycle``: detection and grouping over the Parquet files ``paths`` (scanned
    in bounded memory, through the scan copy kept in ``keep`` when given; ``table``: the
    first read as one table, the baseline); the change points written to ``cps_out`` and
    the incidents to ``state_out`` (JSON) when given.'''
    import datetime as dt

    t0 = time.perf_counter()
    from mdxbench.post.analysis import incidents, scan
    from mdxbench.post.store import records
    if mode == 'table':
        df = records.from_parquet(paths[0])
        t1 = time.perf_counter()
        cps = scan.find(df)
        n = df.height
    else:
        t1 = time.perf_counter()
        cps = scan.find(paths, keep=keep)
        n = None
    t2 = time.perf_counter()
    groups = incidents.group(cps)
    state = incidents.update({}, groups, dt.datetime.now(dt.timezone.utc).isoformat())
    t3 = time.perf_counter()
    _dump(cps_out, cps)
    _dump(state_out, state)
    last = None
    if keep:
        from mdxbench.post.analysis import kept
        last = kept.Kept(keep).last_scan()
    return {'read': t1 - t0, 'detect': t2 - t1, 'group': t3 - t2, 'records': n, 'kept': last,
            'change_points': len(cps), 'incidents': len(state),
            'worker_mib': _workers_mib()}


def cycle_site(keep, cps, state, out, mde_budget=0.0):
    '''``bench cycle``: the cycle's site (:func:`mdxbench.post.site.publish.write`) written
    into ``out`` from the scan kept in ``keep`` with the change points and incidents of
    the JSON files ``cps`` and ``state``, after the sensitivity bookkeeping of
    ``mde_budget`` seconds (its figures kept between cycles in ``out/sensitivity.json``,
    as a cycle keeps them in its state).'''
    t0 = time.perf_counter()
    from mdxbench.post.analysis import kept, sensitivity
    from mdxbench.post.site import publish
    hist = kept.Kept(keep)
    cps, state = json.load(open(cps)), json.load(open(state))
    cached = pathlib.Path(out) / 'sensitivity.json'
    try:
        cache = json.load(open(cached))
    except OSError:
        cache = {}
    sens, done = sensitivity.refresh(cache, hist, mde_budget)
    pathlib.Path(out).mkdir(parents=True, exist_ok=True)
    json.dump({sensitivity.key_of(e): e for e in sens}, open(cached, 'w'), default=str)
    t1 = time.perf_counter()
    publish.write(out, 'mdx2', state, {'time': 'bench', 'exit': 0}, hist, (), sens, cps)
    return {'sensitivity': t1 - t0, 'site': time.perf_counter() - t1,
            'charts': hist.nseries(), 'mde_computed': done, 'worker_mib': _workers_mib()}


def cycle_table_site(paths, cps, out, mde_budget=0.0):
    '''``bench cycle``'s baseline: the trend pages written the way the cycle wrote them
    before issue 45 -- the columns they read read as one table, then ``trends.write``
    (after the sensitivity bookkeeping of ``mde_budget`` seconds, as the kept site).'''
    t0 = time.perf_counter()
    import polars as pl

    from mdxbench.post.site import trends
    from mdxbench.post.store import records
    lf = records.nightly(records.with_current_names(pl.scan_parquet(paths)))
    have = lf.collect_schema().names()
    df = lf.select([pl.col(c) if c in have else pl.lit(None, pl.Float64).alias(c)
                    for c in trends.COLUMNS]).collect()
    t1 = time.perf_counter()
    from mdxbench.post.analysis import kept, sensitivity
    sens, _ = sensitivity.refresh({}, kept.Table(df), mde_budget)
    n, _ = trends.write(df, str(pathlib.Path(out) / 'trends.html'), sensitivity=sens,
                        change_points=json.load(open(cps)))
    return {'read': t1 - t0, 'site': time.perf_counter() - t1, 'charts': n}


def changes_scan(path, mode, naive_series=0):
    '''``bench changes``: the change points of the Parquet file ``path`` -- ``scan``: the
    scan of the whole table; ``naive``: a filter and a ``detect`` per series, of the
    first ``naive_series`` series (the baseline).'''
    t0 = time.perf_counter()
    from mdxbench.post.analysis import changes, scan
    from mdxbench.post.store import records
    df = records.from_parquet(path)
    if mode == 'scan':
        t1 = time.perf_counter()
        cps = scan.find(df)
        out = {'found': len(cps), 'series': None, 'scan_seconds': time.perf_counter() - t1}
    else:
        import polars as pl
        keys = df.select(changes.SERIES).unique().sort(changes.SERIES).head(naive_series)
        found = 0
        t0 = time.perf_counter()
        for key in keys.iter_rows(named=True):
            sel = df
            for k, v in key.items():
                sel = sel.filter(pl.col(k) == v)
            vals = [r['value'] for r in sel.sort('time').iter_rows(named=True)]
            found += len(changes.detect(vals))
        out = {'found': found, 'series': keys.height}
    out['seconds'] = time.perf_counter() - t0
    return out


def regress_scan(path, mode):
    '''``bench regress``: the regressions of the Parquet file ``path`` -- ``polars``:
    ``regress.compare``; ``python``: the same rule in plain Python over rows (the
    baseline).'''
    t0 = time.perf_counter()
    if mode == 'polars':
        from mdxbench.post.analysis import regress
        from mdxbench.post.store import records
        df = records.from_parquet(path)
        t = regress.compare(df, latest_runs=3, baseline_runs=10)
        n = t.filter(t['verdict'] == 'regression').height
    else:
        import statistics

        import pyarrow.parquet as pq
        rows = pq.read_table(path, columns=['system', 'partition', 'check', 'perf_var', 'unit',
                                            'time', 'value']).to_pylist()
        series = {}
        for r in rows:
            series.setdefault((r['system'], r['partition'], r['check'], r['perf_var'],
                               r['unit']), []).append((r['time'], r['value']))
        n = 0
        for v in series.values():
            v.sort()
            vals = [x for _, x in v]
            base, new = vals[-13:-3], vals[-3:]
            med = statistics.median(base)
            mad = statistics.median(abs(x - med) for x in base)
            eff = (statistics.median(new) - med) / med
            if -eff >= 0.05 and (mad == 0 or -(statistics.median(new) - med) / (1.4826 * mad) >= 3):
                n += 1
    return {'seconds': time.perf_counter() - t0, 'regressions': n}


def store_read(url, prefix, base, mode):
    '''``bench store``: the history under ``prefix`` of the Elasticsearch at ``url`` --
    ``rows``: every document scrolled into rows (the baseline); ``sync``: the local copy
    under ``base`` brought up to date; ``copy``: that, then the copy loaded as a table.'''
    from mdxbench.post.store import esclient, history, records
    t0 = time.perf_counter()
    if mode == 'rows':
        from elasticsearch import helpers
        rows = []
        es = esclient.make_client(url=url)
        for hit in helpers.scan(es, index=prefix + '-*', size=5000, preserve_order=False):
            d = hit['_source']
            meta = d.get('meta') or {}
            rows.append({'time': d['@timestamp'], 'system': d['system'],
                         'partition': d['partition'], 'environ': d['environ'],
                         'check': records.series_name(d['display_name']),
                         'perf_var': d['perf_var'], 'value': d['perf_value'],
                         'unit': d['perf_unit'], 'better': d.get('perf_better'),
                         'ref': d.get('perf_ref'), 'lower': d.get('perf_lower_thres'),
                         'upper': d.get('perf_upper_thres'), 'result': d.get('perf_result'),
                         'jobid': d['jobid'],
                         'nodes': records.node_names(d.get('nodelist'), meta),
                         'tags': ','.join(json.loads(meta.get('tags') or '[]')),
                         'params': records.canonical_params(meta),
                         'meta': json.dumps(meta, sort_keys=True)})
        df = records.frame(rows)
        out = {'records': df.height}
    else:
        copy = history.Copy(base, url, prefix)
        rep = copy.sync(esclient.make_client(url=url, raw=True))
        if mode == 'sync':
            out = {'records': rep.new_records, 'read': rep.new_records,
                   'line': rep.line(copy.url, copy.root)}
        else:
            df = copy.load()
            out = {'records': df.height, 'read': rep.new_records,
                   'line': rep.line(copy.url, copy.root)}
    out['seconds'] = time.perf_counter() - t0
    return out
