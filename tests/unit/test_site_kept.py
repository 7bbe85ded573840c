'''The site a cycle writes from its kept scan, a chunk of series at a time (issue 45), is
the site of the whole history read as one table: the same change points, the same
sensitivity, the same files (index, incident pages, the papers' tables, every trend file),
on the first cycle and on the next night's; the night rewrites a series' file only where
its digest moved. Generated histories (``bench changes``' store) and the real perflogs of
two main jobs (the report's checks, read back by their places in the Parquet files).'''
import json
import os
import pathlib

import polars as pl

from mdxbench.post.analysis import incidents, kept, scan, sensitivity
from mdxbench.post.bench import changes as bench_changes, cycle as bench_cycle
from mdxbench.post.site import publish, trends
from mdxbench.post.store import records

FIXTURES = pathlib.Path(__file__).parents[1] / 'fixtures' / 'perflogs'
SERIES, RUNS = 96, 70
EVENTS = [{'system': 'mdx2', 'partition': None, 'name': 'BIOS update',
           'time': '2025-02-20T12:00:00+00:00'}]


def _files(tmp):
    gen = tmp / 'generated.parquet'
    bench_changes.make_store(gen, SERIES, RUNS, share=0.2, start='2025-01-10T00:00:00')
    real = tmp / 'real.parquet'
    records.to_parquet(records.from_perflogs([FIXTURES / 'main-job-1', FIXTURES / 'main-job-2']),
                       real)
    return [gen, real]


def _table(files):
    return records.nightly(records.with_current_names(pl.concat(
        [records.from_parquet(str(f)).select(records.COLUMNS) for f in files],
        how='vertical_relaxed')))


def _same_tree(a, b):
    '''The files under ``a`` and ``b`` that differ or are in one only (the kept site's
    own state aside).'''
    return bench_cycle.differing(a, b)


def _cycle(files, tmp, sens_cache):
    '''(change points, sensitivity, history) the table way and the kept way.'''
    df = _table(files)
    by_table = scan.find(df, EVENTS)
    by_kept, hist = scan.find_kept([str(f) for f in files], tmp / 'keep', EVENTS,
                                   chunk_rows=1500)
    sens_t, _ = sensitivity.refresh(dict(sens_cache[0]), kept.Table(df), budget=1e9, trials=8)
    sens_k, _ = sensitivity.refresh(dict(sens_cache[1]), hist, budget=1e9, trials=8)
    return (df, by_table, sens_t), (hist, by_kept, sens_k)


def _key(e):
    return json.dumps(e, sort_keys=True, default=str)


def _publish(tmp, name, history, cps, sens):
    state = incidents.update({}, incidents.group(cps), '2026-11-27T00:00:00+00:00')
    publish.write(tmp / name, 'mdx2', state, {'time': 'now', 'exit': 0}, history, EVENTS,
                  sens, cps)
    return state


def _series_stamps(site):
    folder = site / 'report' / 'trends'
    return {p.stem: p.stat().st_mtime_ns for p in folder.glob('*/s*.js')}


def test_the_kept_site_is_the_tables_site_first_and_next_night(tmp_path):
    files = _files(tmp_path)
    (df, cps_t, sens_t), (hist, cps_k, sens_k) = _cycle(files, tmp_path, ({}, {}))
    assert len(hist.copy.parts()) > 3                 # several chunks, not one
    assert sorted(map(_key, cps_k)) == sorted(map(_key, cps_t)) and len(cps_t) >= 10
    assert sorted(map(_key, sens_k)) == sorted(map(_key, sens_t))
    assert hist.span()[0] == df.filter(pl.col('value').is_not_null()).height
    assert hist.nseries() == kept.Table(df).nseries() == SERIES + kept.Table(
        df.filter(~pl.col('check').str.starts_with('Check'))).nseries()
    state = _publish(tmp_path, 'table', kept.Table(df), cps_t, sens_t)
    assert _publish(tmp_path, 'kept', hist, cps_k, sens_k) == state
    assert any(i['system'] == 'mdx2' for i in state.values())
    assert _same_tree(tmp_path / 'table', tmp_path / 'kept') == []
    # the report's tables drew the real records (read back by place), not nothing
    tables = json.loads((tmp_path / 'kept' / 'report' / 'tables.json').read_text())
    assert any(c['measured'] is not None for t in tables for r in t['rows'] for c in r['cells'])
    assert len(list((tmp_path / 'kept').glob('incident-*.html'))) == len(state)

    # the next night: one more run on every generated series, a file beside the first
    digests = json.loads((tmp_path / 'kept' / 'report' / 'trends' / trends.DIGESTS).read_text())
    stamps = _series_stamps(tmp_path / 'kept')
    nxt = tmp_path / 'next.parquet'
    bench_changes.make_store(nxt, SERIES, RUNS + 1, share=0.2, first_run=RUNS, span=RUNS,
                             start='2025-01-10T00:00:00')
    cache = ({sensitivity.key_of(e): e for e in sens_t}, {sensitivity.key_of(e): e for e in sens_k})
    (df, cps_t, sens_t), (hist, cps_k, sens_k) = _cycle(files + [nxt], tmp_path, cache)
    assert hist.copy.manifest['last']['routed'] == 1          # the new file only
    assert sorted(map(_key, cps_k)) == sorted(map(_key, cps_t))
    assert sorted(map(_key, sens_k)) == sorted(map(_key, sens_t))
    _publish(tmp_path, 'table', kept.Table(df), cps_t, sens_t)
    _publish(tmp_path, 'kept', hist, cps_k, sens_k)
    assert _same_tree(tmp_path / 'table', tmp_path / 'kept') == []
    # the night went by the chunks' summaries: each chunk's site state is there
    assert len(list((tmp_path / 'kept' / 'report' / 'trends' / '.kept').glob('*.parquet'))) \
        == len(hist.copy.parts())
    after = json.loads((tmp_path / 'kept' / 'report' / 'trends' / trends.DIGESTS).read_text())
    moved = {i for i in after if after[i] != digests.get(i)}
    rewritten = {i for i, t in _series_stamps(tmp_path / 'kept').items() if stamps.get(i) != t}
    assert rewritten == moved and len(moved) < len(after) // 2
    # the new night's runs are in the latest month's files
    latest = trends.latest_data(next((tmp_path / 'kept' / 'report' / 'trends')
                                     .glob('latest-*.js')).read_text())
    assert latest and all(len(p['v']) >= 1 for p in latest.values())


def test_the_history_from_perflogs_is_copied_a_file_at_a_time(tmp_path):
    from mdxbench.post.store import history

    logs = tmp_path / 'perflogs'
    logs.mkdir()
    src = sorted((FIXTURES / 'main-job-1').rglob('*.log'))[:3]
    for i, f in enumerate(src):
        (logs / f'{i}.log').write_bytes(f.read_bytes())
    errors = []
    files = history.perflog_copy([logs], 'local', tmp_path / 'copy', errors)
    assert len(files) == 3 and errors == []
    want = records.from_perflogs([logs]).filter(pl.col('system') == 'local')
    got = pl.concat([pl.read_parquet(f) for f in files])
    assert got.height == want.height > 0
    stamps = {f: os.stat(f).st_mtime_ns for f in files}
    (logs / '0.log').write_text((logs / '0.log').read_text() + 'not a perflog line\n')
    (logs / '2.log').unlink()
    again = history.perflog_copy([logs], 'local', tmp_path / 'copy', errors)
    assert len(again) == 2 and not pathlib.Path(files[2]).exists()
    # the changed file read again (its bad line reported, file and line), the other not
    assert os.stat(again[1]).st_mtime_ns == stamps[again[1]]
    assert os.stat(again[0]).st_mtime_ns != stamps[again[0]]
    assert len(errors) == 1 and '0.log' in errors[0], errors


def test_a_kept_scan_keeps_the_records_its_selection_names(tmp_path):
    files = [str(f) for f in _files(tmp_path)]
    mdx2 = pl.col('system') == 'mdx2'
    by_table = scan.find(_table(files).filter(mdx2))
    got = scan.find(files, keep=tmp_path / 'keep', where=mdx2, chunk_rows=1500)
    hist = kept.Kept(tmp_path / 'keep')
    assert set(hist.counts()['system']) == {'mdx2'} and sorted(map(_key, got)) == \
        sorted(map(_key, by_table))
    # another selection is another copy: routed again whole
    scan.find(files, keep=tmp_path / 'keep', chunk_rows=1500)
    hist = kept.Kept(tmp_path / 'keep')          # a history is read as it was when opened
    assert set(hist.counts()['system']) >= {'mdx2', 'laurel', 'aws-pcluster', 'local'}
    assert hist.copy._load()['last']['routed'] == 2
