'''The documents ``mdxbench ingest`` sends, made a line at a time (what the records of a
perflog line share serialised once), are the documents of ``to_document``: on the real
perflog lines of tests/fixtures.'''
import pathlib

import orjson
import pytest

from mdxbench import perflog
from mdxbench.post.store import documents

FIX = pathlib.Path(__file__).resolve().parents[1] / 'fixtures' / 'perflogs'


@pytest.mark.parametrize('name', ['local-debug-HpccStream.log', 'nscluster-nodes-FftwMpi2d.log',
                                  'local-debug-LikwidCacheSweep.log'])
def test_line_documents_are_to_document(name):
    lines = [ln for ln in (FIX / name).read_text().splitlines() if not perflog.is_header(ln)]
    checked = 0
    for n, line in enumerate(lines, 2):
        recs = perflog.parse_line(line)
        for (action, head, tail), rec in zip(documents.line_documents('pfx', recs, FIX / name, n),
                                             recs):
            got = orjson.loads(head + b'"ingested_at":"2026-11-24T00:00:00.000+00:00",' + tail)
            want = documents.to_document(rec, FIX / name, n)
            want['ingested_at'] = '2026-11-24T00:00:00.000+00:00'
            assert got == want
            assert orjson.loads(action) == {'create': {'_index': documents.index_name('pfx', rec),
                                                       '_id': want['record_id']}}
            checked += 1
    assert checked == sum(len(perflog.parse_line(ln)) for ln in lines) > 0


def test_an_index_prefix_with_a_quote_stays_valid_json():
    rec = perflog.parse_line((FIX / 'local-debug-HpccStream.log').read_text().splitlines()[1])
    action, _, _ = documents.line_documents('odd"prefix', rec, 'f', 2)[0]
    assert orjson.loads(action)['create']['_index'].startswith('odd"prefix-local-')


def test_meta_json_keeps_the_perflog_types():
    rec = perflog.parse_line((FIX / 'local-debug-HpccStream.log').read_text().splitlines()[1])[0]
    doc = documents.to_document(rec, 'f', 2)
    assert orjson.loads(doc['meta_json'])['hpl_n'] == 7104       # a number, as written
    assert doc['meta']['hpl_n'] == '7104'                        # the flattened field: text
