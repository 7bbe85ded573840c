'''The bounded-memory scan of Parquet histories (``scan.find`` given files) finds and
explains what the scan of the same records as one table finds: on ``mdxbench bench``'s
generated histories (test input for the statistics, not benchmark output; every record
carries a real BabelStream run's provenance), split in chunks, by one and by two
processes, and on records that ``records.from_parquet`` renames or leaves out.'''
import datetime as dt
import json

import polars as pl
import pytest

from mdxbench.post.analysis import chunked, scan
from mdxbench.post.bench import changes as bench_changes
from mdxbench.post.store import records

from test_changes import gauss, rows, stepped


@pytest.fixture(scope='module')
def store(tmp_path_factory):
    path = tmp_path_factory.mktemp('store') / 'store.parquet'
    stepped_n = bench_changes.make_store(path, 120, 60, seed=3, share=0.2,
                                         meta=bench_changes.real_meta(), chunk=50)
    return path, stepped_n


def _same(a, b):
    return json.dumps(a, sort_keys=True, default=str) == json.dumps(b, sort_keys=True,
                                                                      default=str)


@pytest.mark.parametrize('nproc, chunk_rows', [(1, 1000), (2, 1500), (1, 10 ** 9)])
def test_chunks_find_and_explain_what_one_table_does(store, nproc, chunk_rows):
    '''120 series x 60 runs, 20% of them with a 10% step, in chunks of 1,000 or 1,500
    records (5 to 8 chunks, each series in one) or in one: the same explained change points,
    sentence for sentence, as ``find`` over the whole table.'''
    path, stepped_n = store
    whole = scan.find(records.from_parquet(path))
    assert stepped_n >= 15 and len(whole) >= stepped_n - 2
    got = scan.find(path, nproc=nproc, chunk_rows=chunk_rows)
    assert _same(got, whole), (len(got), len(whole))
    # the provenance was read for the runs either side: what changed is said, not blank
    assert all('binary' in c['unchanged'] and 'kernel' in c['unchanged'] for c in got)


def test_the_scan_of_files_reads_records_as_from_parquet_does(tmp_path):
    '''A run of ``mdxbench incident split`` (tag ``split``) is no run of the series, and a
    renamed performance variable goes on as one series: a split run 30% low in the middle
    of a stable history and a rename at run 20 give no change point, from the table or from
    the file; ``where`` keeps one system out.'''
    rs = rows(gauss(100, 40), var='percent_peak')
    for r in rs[20:]:
        r['perf_var'] = 'percent_nominal_peak'
    split = dict(rs[25], value=70.0, tags='split', jobid='999')
    other = rows(stepped(50, 40, 20, 0.7), system='laurel')
    path = tmp_path / 'h.parquet'
    records.to_parquet(records.frame(rs + [split] + other), path)
    whole = scan.find(records.from_parquet(path))
    assert [c['system'] for c in whole] == ['laurel']
    assert _same(scan.find(path, nproc=1, chunk_rows=30), whole)
    assert scan.find(path, nproc=1, chunk_rows=30, where=pl.col('system') == 'mdx2') == []


def test_a_directory_of_files_is_one_history(tmp_path):
    '''The history copy keeps one file per system and month: a series across two files
    (its step in the second) is one series.'''
    rs = rows(stepped(383, 60, 40, 0.78))
    df = records.frame(rs)
    cut = T = rs[30]['time']
    (tmp_path / 'parts').mkdir()
    records.to_parquet(df.filter(pl.col('time') < dt.datetime.fromisoformat(T)),
                       tmp_path / 'parts' / 'a.parquet')
    records.to_parquet(df.filter(pl.col('time') >= dt.datetime.fromisoformat(cut)),
                       tmp_path / 'parts' / 'b.parquet')
    got = scan.find(tmp_path / 'parts', nproc=1, chunk_rows=40)
    assert [(c['run'], round(c['effect'], 2)) for c in got] == [(41, -0.22)]
    assert _same(got, scan.find(df))


def test_two_series_sharing_a_series_number_fail_the_scan_naming_the_files(tmp_path,
                                                                           monkeypatch):
    '''A 64-bit hash shared by two series (forced here: every series gets one number) is
    not a merged series: the scan fails and says to scan the records as one table.'''
    path = tmp_path / 'store.parquet'
    records.frame(rows(stepped(100, 40, 20, 0.8)) +
                  rows(stepped(100, 40, 20, 0.8), var='copy')).write_parquet(path)
    assert len(scan.find(path, nproc=1)) == 2
    monkeypatch.setattr(chunked, 'series_hash', lambda: pl.lit(7, dtype=pl.UInt64))
    with pytest.raises(RuntimeError, match='share a series hash in .*store.parquet'):
        scan.find(path, nproc=1)
