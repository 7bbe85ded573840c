'''``mdxbench bench regress [--records 1000000]``: the regression scan (Polars) over
1,000,000 stored records, wall time and peak memory, against a pure-Python row loop over
the same records, in one run (figures printed, not a timed test). Targets: <= 10 s,
<= 2 GiB.
'''
import datetime as dt
import pathlib
import random
import tempfile

from mdxbench.post.bench import child


def make_store(path, nrecords, seed=7):
    '''A Parquet store of nrecords: 1,000 series (systems x checks x perf vars) of runs.'''
    import polars as pl

    rnd = random.Random(seed)
    nseries = 1000
    runs = nrecords // nseries
    systems = ['mdx2', 'laurel', 'aws-pcluster', 'local']
    t0 = dt.datetime(2025, 1, 1, tzinfo=dt.timezone.utc)
    cols = {k: [] for k in ('time', 'system', 'partition', 'environ', 'check', 'perf_var',
                            'value', 'unit', 'better', 'ref', 'result', 'jobid', 'nodes',
                            'tags', 'meta')}
    for s in range(nseries):
        center = rnd.uniform(10, 1000)
        drop = 0.8 if s % 50 == 0 else 1.0     # 2% of the series regress at the end
        for i in range(runs):
            v = center * (1 + rnd.uniform(-0.02, 0.02)) * (drop if i >= runs - 3 else 1.0)
            cols['time'].append(t0 + dt.timedelta(hours=i))
            cols['system'].append(systems[s % 4])
            cols['partition'].append('p')
            cols['environ'].append('spack')
            cols['check'].append(f'Check{s // 8} %param={s % 8}')
            cols['perf_var'].append('value')
            cols['value'].append(v)
            cols['unit'].append('GB/s')
            cols['better'].append('higher')
            cols['tags'].append('memory')
            cols['ref'].append(None)
            cols['result'].append('pass')
            cols['jobid'].append(str(s * runs + i))
            cols['nodes'].append('n1')
            cols['meta'].append('{}')

    pl.DataFrame(cols).with_columns(pl.col('time').cast(pl.Datetime('us', 'UTC'))) \
        .write_parquet(path)
    return nseries * runs


def _scan_child(path, mode):
    ''':func:`mdxbench.post.bench.children.regress_scan` in a child process, so that its
    peak memory is its own.'''
    return child.run('regress_scan', f'bench child ({mode})', path=str(path), mode=mode)


def bench_regress(nrecords):
    with tempfile.TemporaryDirectory() as tmp:
        path = pathlib.Path(tmp) / 'store.parquet'
        total = make_store(path, nrecords)
        fast = _scan_child(path, 'polars')
        slow = _scan_child(path, 'python')

    print(f'regression scan (Polars, lazy group-by) over {total:,} records: '
          f'{fast["seconds"]:.2f} s, peak {fast["peak_mib"]:.0f} MiB, '
          f'{fast["regressions"]} regressions found')
    print(f'baseline, Python row loop over the same records: {slow["seconds"]:.2f} s, '
          f'peak {slow["peak_mib"]:.0f} MiB, {slow["regressions"]} regressions found')
    print(f'ratio: {slow["seconds"] / fast["seconds"]:.1f}x faster; targets <= 10 s: '
          f'{"met" if fast["seconds"] <= 10 else "MISSED"}, <= 2048 MiB: '
          f'{"met" if fast["peak_mib"] <= 2048 else "MISSED"}')
    return 0 if fast['seconds'] <= 10 and fast['peak_mib'] <= 2048 else 1
