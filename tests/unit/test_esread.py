'''The columnar Elasticsearch reader on real answers of ci/'s Elasticsearch 8.19.21 (the
captured fixture perflog line, ingested, read under a point in time 4 documents a page,
whole sources as the reader asks for them, and filtered as it asked before): the table it
makes equals the one the perflogs give. And the local copy's behaviour when
Elasticsearch cannot be reached (no server needed: a closed port).'''
import json
import pathlib
import socket

import polars as pl
import pytest

from mdxbench.post.store import esread, history, records

FIX = pathlib.Path(__file__).resolve().parents[1] / 'fixtures'
#: the reader's answers: whole ``_source``, unfiltered (what esread asks for)
PAGES = [FIX / 'es' / f'search-pit-whole-page{i}-8.19.21.json' for i in (1, 2, 3)]
#: the same read as esread asked for it before: ``_source`` filtered to the fields of the
#: table and a ``filter_path``
FILTERED = [FIX / 'es' / f'search-pit-page{i}-8.19.21.json' for i in (1, 2, 3)]
PERFLOG = FIX / 'perflogs' / 'local-debug-HpccStream.log'


def _table(pages=PAGES):
    frames = []
    for p in pages:
        df, after, _ = esread.parse_page(p.read_bytes())
        if after is None:
            assert df.height == 0
            break
        frames.append(esread.to_table(df))
    return pl.concat(frames)


@pytest.mark.parametrize('pages', [PAGES, FILTERED], ids=['whole', 'filtered'])
def test_pages_of_a_point_in_time_read_as_the_perflog_gives(pages):
    got = _table(pages).sort('perf_var')
    want = records.from_perflogs([PERFLOG]).sort('perf_var')
    assert got.height == want.height == 6
    assert got.select(records.COLUMNS).equals(want.select(records.COLUMNS))
    assert got['record_id'].n_unique() == 6 and got['ingested_at'].null_count() == 0


@pytest.mark.parametrize('pages', [PAGES, FILTERED], ids=['whole', 'filtered'])
def test_search_after_is_the_last_hit_and_the_last_page_is_empty(pages):
    df, after, total = esread.parse_page(pages[0].read_bytes())
    raw = json.loads(pages[0].read_text())
    assert df.height == 4 and after == raw['hits']['hits'][-1]['sort'] and total == 6
    df, after, total = esread.parse_page(pages[1].read_bytes())
    assert df.height == 2 and total is None      # counted on the first page only
    df, after, total = esread.parse_page(pages[2].read_bytes())
    assert df.height == 0 and after is None
    assert set(esread.to_table(df).columns) >= set(records.COLUMNS)


def test_digest_of_a_table_counts_sums_and_times():
    t = _table()
    d = esread.Digest.of_table(t)
    assert d.count == 6 and d.value_sum == pytest.approx(t['value'].sum())
    assert d.first_ms == d.last_ms == int(t['time'][0].timestamp() * 1000)
    other = esread.Digest(6, d.value_sum * (1 + 1e-12), d.first_ms, d.last_ms, d.ingested_ms)
    assert d.same(other)
    assert not d.same(esread.Digest(7, d.value_sum, d.first_ms, d.last_ms, d.ingested_ms))
    assert not d.same(esread.Digest(6, d.value_sum + 1, d.first_ms, d.last_ms, d.ingested_ms))
    assert not d.same(None)


def _closed_url():
    with socket.socket() as s:
        s.bind(('127.0.0.1', 0))
        return f'http://127.0.0.1:{s.getsockname()[1]}'


def test_unreachable_without_a_copy_names_the_url(tmp_path):
    from mdxbench.post.store import esclient

    url = _closed_url()
    copy = history.Copy(tmp_path, url, 'p')
    with pytest.raises(history.Unreachable, match=url.replace('.', r'\.')):
        copy.sync(esclient.make_client(url=url, raw=True))


def test_unreachable_with_a_copy_uses_it_and_says_so(tmp_path):
    from mdxbench.post.store import esclient

    url = _closed_url()
    copy = history.Copy(tmp_path, url, 'p')
    copy._write_part('p-local-2026.11', _table())
    rep = copy.sync(esclient.make_client(url=url, raw=True))
    assert rep.offline == 'ConnectionError'
    assert 'unreachable' in rep.line(url, copy.root) and url in rep.line(url, copy.root)
    assert copy.load('local').height == 6 and copy.load('other').height == 0
    # a manifest of another store is not this one's
    assert history.Copy(tmp_path, url, 'q').indices() == []
