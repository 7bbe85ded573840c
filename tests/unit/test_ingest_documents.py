'''The documents ``mdxbench ingest`` sends, made a line at a time (what the records of a
perflog line share serialised once), are the documents of ``to_document``: on the real
perflog lines of tests/fixtures.'''
import pathlib

import orjson
import pytest

from mdxbench import perflog
from mdxbench.post.store import documents, esclient

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


IDENTITY = ('system', 'partition', 'environ', 'check', 'display_name', 'perf_var', 'jobid',
            'completion_time')


def _records(name='local-debug-HpccStream.log'):
    lines = [ln for ln in (FIX / name).read_text().splitlines() if not perflog.is_header(ln)]
    return [r for ln in lines for r in perflog.parse_line(ln)]


def test_each_figure_of_a_run_is_a_document_of_its_own():
    '''The records of one run (one perflog line: HPCC's STREAM figures) differ only in
    their performance variable; each must have its own id, or Elasticsearch's ``create``
    takes the first and drops the others as duplicates.'''
    line = _records()
    one_run = [r for r in line if r['jobid'] == line[0]['jobid']]
    assert len({r['perf_var'] for r in one_run}) == len(one_run) > 1
    assert len({documents.doc_id(r) for r in one_run}) == len(one_run)


@pytest.mark.parametrize('field', IDENTITY)
def test_a_measurement_is_identified_by_each_of_its_fields_and_nothing_else(field):
    '''A record changed in one identifying field is another measurement; changed in
    anything else (its value, its meta: a re-ingest of the same line) the same one.'''
    rec = _records()[0]
    other = dict(rec, **{field: str(rec[field]) + 'x'})
    assert documents.doc_id(other) != documents.doc_id(rec)
    same = dict(rec, perf_value=-1.0, result='fail', meta={'x': 1}, nodelist='elsewhere')
    assert documents.doc_id(same) == documents.doc_id(rec)


def test_the_id_is_the_one_every_earlier_ingest_gave():
    '''An id that changed between two versions of mdxbench would store every record of a
    perflog ingested again as a second document: the recipe (docs/storage.md), computed
    here by itself -- SHA-256 of the identifying fields joined by the unit separator
    (0x1f), its first 40 hex digits.'''
    import hashlib

    rec = _records()[0]
    key = '\x1f'.join(str(rec[k]) for k in IDENTITY)
    assert documents.doc_id(rec) == hashlib.sha256(key.encode()).hexdigest()[:40]


def test_every_field_of_a_document_is_mapped_with_the_type_of_its_values():
    '''The index template is strict (a field it does not name makes Elasticsearch refuse
    the document): every field of the documents of real perflogs is in it, with a type
    that holds its values -- text ids as keywords, figures as doubles, times as dates.'''
    import datetime as dt

    props = documents.template_body('pfx')['template']['mappings']['properties']
    assert documents.template_body('pfx')['template']['mappings']['dynamic'] == 'strict'
    assert documents.template_body('pfx')['index_patterns'] == ['pfx-*']
    seen = set()
    for name in ('local-debug-HpccStream.log', 'nscluster-nodes-FftwMpi2d.log'):
        for n, rec in enumerate(_records(name), 2):
            doc = documents.to_document(rec, FIX / name, n)
            doc['ingested_at'] = '2026-11-24T00:00:00.000+00:00'
            for k, v in doc.items():
                assert k in props, f'{k} is not in the template'
                seen.add(k)
                kind = props[k]['type']
                if kind == 'keyword':       # a keyword field holds a string or a list of them
                    assert v is None or isinstance(v, str) or (isinstance(v, list) and v and all(
                        isinstance(x, str) for x in v)), (k, v)
                elif kind == 'double':
                    assert v is None or isinstance(v, float), (k, v)
                elif kind == 'date':
                    dt.datetime.fromisoformat(v)
                elif kind == 'long':
                    assert isinstance(v, int), (k, v)
                else:
                    assert kind == 'flattened' and isinstance(v, dict) and \
                        all(isinstance(x, str) for x in v.values()), (k, v)
    # and nothing the template names is never filled
    assert seen == set(props), set(props) - seen
    # meta_json is kept to be read back, not searched
    assert props['meta_json'] == {'type': 'keyword', 'index': False, 'doc_values': False}


def test_the_bulk_action_creates_the_document_under_its_id():
    rec = _records()[0]
    doc = documents.to_document(rec, 'f', 2)
    action = documents.create_action('pfx-local-2026.11', doc)
    assert action == {'create': {'_index': 'pfx-local-2026.11', '_id': doc['record_id']}}
    # the bytes a line's documents are sent with say the same
    [(raw, _, _)] = documents.line_documents('pfx', [rec], 'f', 2)
    assert orjson.loads(raw) == {'create': {'_index': documents.index_name('pfx', rec),
                                            '_id': doc['record_id']}}


def test_meta_as_stored_strings_stay_strings_and_json_is_sorted():
    '''The flattened field holds strings: a string value as it is (not quoted again), any
    other value as JSON with its keys sorted, so one meta is one text whatever order the
    perflog wrote it in; ``meta_json`` likewise.'''
    meta = {'node_kernel': '6.1.0-25', 'binary': {'version': '5.10', 'path': '/x'},
            'tags': ['b', 'a'], 'n': 3}
    assert documents.flat_meta(meta) == {'node_kernel': '6.1.0-25',
                                         'binary': '{"path": "/x", "version": "5.10"}',
                                         'tags': '["b", "a"]', 'n': '3'}
    assert documents.meta_text(meta) == (
        '{"binary": {"path": "/x", "version": "5.10"}, "n": 3, "node_kernel": "6.1.0-25", '
        '"tags": ["b", "a"]}')


def test_a_record_goes_to_its_systems_index_of_its_month():
    rec = _records()[0]
    assert rec['completion_time'].startswith('2026-') and rec['system'] == 'local'
    want = f"pfx-local-{rec['completion_time'][:4]}.{rec['completion_time'][5:7]}"
    assert documents.index_name('pfx', rec) == want
    assert documents.index_name('pfx', dict(rec, system='Mdx2 VMs')) == \
        want.replace('local', 'mdx2_vms')


def test_a_lines_meta_made_once_is_the_documents_meta():
    rec = _records()[0]
    doc = documents.to_document(rec, 'f', 2, meta={'k': 'v'}, meta_json='{"k": "v"}')
    assert doc['meta'] == {'k': 'v'} and doc['meta_json'] == '{"k": "v"}'


def test_the_index_template_wins_its_indices_and_keeps_meta_searchable():
    '''What the template settles besides the fields: it is ours (``_meta``, what an operator
    sees in ``GET _index_template``), it wins over Elasticsearch's own templates (priority
    100) where patterns overlap, a month's index is one shard whose replicas expand to the
    nodes there are, 0 to 1, unless the site says otherwise (MDXBENCH_ES_SHARDS,
    MDXBENCH_ES_REPLICAS), and a meta value is searchable up to the longest
    keyword Lucene keeps (32,766 bytes: 8,191 characters of four bytes each).'''
    body = documents.template_body('pfx')
    assert body['_meta'] == {'owner': 'mdxbench', 'format': perflog.FORMAT_TAG}
    assert body['priority'] > 100
    assert body['template']['settings'] == {'number_of_shards': 1, 'auto_expand_replicas': '0-1'}
    assert documents.template_body('pfx', esclient.index_settings({}))['template'][
        'settings'] == {'number_of_shards': 1, 'auto_expand_replicas': '0-1'}
    site = esclient.index_settings({'MDXBENCH_ES_SHARDS': '3', 'MDXBENCH_ES_REPLICAS': '2'})
    assert documents.template_body('pfx', site)['template']['settings'] == {
        'number_of_shards': 3, 'number_of_replicas': 2}
    assert esclient.index_settings({'MDXBENCH_ES_REPLICAS': '1-all'}) == {
        'number_of_shards': 1, 'auto_expand_replicas': '1-all'}
    for var, value, said in (
            ('MDXBENCH_ES_SHARDS', '0', "MDXBENCH_ES_SHARDS='0': a number of shards, 1 or more"),
            ('MDXBENCH_ES_REPLICAS', 'two', "MDXBENCH_ES_REPLICAS='two': a number of replicas, "
                                            "or a range such as 0-1 or 1-all")):
        with pytest.raises(esclient.ConfigError) as err:
            esclient.index_settings({var: value})
        assert str(err.value) == said
    meta = body['template']['mappings']['properties']['meta']
    assert meta == {'type': 'flattened', 'ignore_above': 32766 // 4}
