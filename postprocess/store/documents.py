'''The Elasticsearch documents of perflog records: one document per record (one
performance variable of one perflog line) with a deterministic id, in monthly indices per
system, under an index template whose mapping names every field (``dynamic: strict``).
What ingest sends and what ``mdxbench bench store`` generates are made here alike.'''
import functools
import hashlib
import json
import operator

from mdxbench import perflog

try:
    import orjson

    def _dumps(obj):
        return orjson.dumps(obj)
except ImportError:     # pragma: no cover
    def _dumps(obj):
        return json.dumps(obj, separators=(',', ':')).encode()

_KEYWORDS = ('system', 'partition', 'environ', 'check', 'display_name', 'hashcode', 'jobid',
             'nodelist', 'result', 'perf_var', 'perf_unit', 'perf_better', 'perf_result',
             'record_id', 'source_file')
_DOUBLES = ('perf_value', 'perf_ref', 'perf_lower_thres', 'perf_upper_thres')


#: the index settings when none are given (esclient.index_settings' defaults)
DEFAULT_SETTINGS = {'number_of_shards': 1, 'auto_expand_replicas': '0-1'}


def template_body(prefix, index_settings=None):
    '''The index template of ``prefix``'s monthly indices: their mapping, and their shards
    and replicas (``index_settings``; :data:`DEFAULT_SETTINGS`).'''
    props = {k: {'type': 'keyword'} for k in _KEYWORDS}
    props.update({k: {'type': 'double'} for k in _DOUBLES})
    props.update({
        '@timestamp': {'type': 'date'},
        'ingested_at': {'type': 'date'},
        'source_line': {'type': 'long'},
        'meta': {'type': 'flattened', 'ignore_above': 8191},
        # the same meta as text, kept in _source only (not searchable): what readers
        # load into the records table (mdxbench.post.store.esread) without parsing it
        'meta_json': {'type': 'keyword', 'index': False, 'doc_values': False},
    })
    return {
        'index_patterns': [f'{prefix}-*'],
        'priority': 200,
        'template': {
            'settings': dict(index_settings or DEFAULT_SETTINGS),
            'mappings': {'dynamic': 'strict', 'properties': props},
        },
        '_meta': {'owner': 'mdxbench', 'format': perflog.FORMAT_TAG},
    }


_ID_FIELDS = operator.itemgetter('system', 'partition', 'environ', 'check', 'display_name',
                                 'perf_var', 'jobid', 'completion_time')


def doc_id(rec):
    '''What identifies one measurement: system, partition, environ, check (with its
    parameters), performance variable, job id and completion time.'''
    key = '\x1f'.join(map(str, _ID_FIELDS(rec)))
    return hashlib.sha256(key.encode()).hexdigest()[:40]


def index_name(prefix, rec):
    return _index_name(prefix, rec['system'], rec['completion_time'][:7])


@functools.lru_cache(maxsize=4096)
def _index_name(prefix, system, month):
    system = ''.join(c if c.isalnum() or c in '-_' else '_' for c in system.lower())
    return f"{prefix}-{system}-{month.replace('-', '.')}"


def flat_meta(meta):
    '''The meta object as the flattened field stores it: every value a string.'''
    return {k: (v if isinstance(v, str) else json.dumps(v, sort_keys=True))
            for k, v in meta.items()}


def meta_text(meta):
    '''The meta as the records table holds it: sorted JSON text, values as the perflog
    wrote them.'''
    return json.dumps(meta, sort_keys=True)


#: the fields of a document that are the same for every record of a perflog line
_LINE_KEYS = ('system', 'partition', 'environ', 'check', 'display_name', 'hashcode', 'jobid',
              'nodelist', 'result')
#: and those of each record
_RECORD_KEYS = tuple(k for k in _KEYWORDS if k not in _LINE_KEYS and k not in
                     ('record_id', 'source_file')) + _DOUBLES


def line_documents(prefix, records, path, lineno):
    '''(action bytes, document head, document tail) of each record of one perflog line: the
    document is ``head + b'"ingested_at":"<time>",' + tail``, the fields of
    :func:`to_document`'s document (keys in another order). What the records share (the
    meta above all) is serialised once per line, each record's own fields once.'''
    rec0 = records[0]
    head = {k: rec0[k] for k in _LINE_KEYS if k in rec0}
    head.update({'@timestamp': rec0['completion_time'], 'meta': flat_meta(rec0['meta']),
                 'meta_json': meta_text(rec0['meta']), 'source_file': str(path),
                 'source_line': lineno})
    head = _dumps(head)[:-1] + b','         # '{...,' : the record's fields follow
    out = []
    for rec in records:
        rid = doc_id(rec)
        own = {k: rec[k] for k in _RECORD_KEYS if k in rec}
        own['record_id'] = rid
        out.append((_action(index_name(prefix, rec)) + rid.encode() + b'"}}', head,
                    _dumps(own)[1:]))
    return out


@functools.lru_cache(maxsize=4096)
def _action(index):
    return b'{"create":{"_index":' + _dumps(index) + b',"_id":"'


def to_document(rec, path, lineno, meta=None, meta_json=None):
    '''The document of one record; ``meta``/``meta_json`` are the line's (one line, one
    meta for all its records), made here when not given. ``ingested_at`` is set when the
    document is sent.'''
    doc = {k: rec[k] for k in _KEYWORDS if k in rec}
    doc.update({k: rec[k] for k in _DOUBLES})
    doc['@timestamp'] = rec['completion_time']
    doc['meta'] = meta if meta is not None else flat_meta(rec['meta'])
    doc['meta_json'] = meta_json if meta_json is not None else meta_text(rec['meta'])
    doc['source_file'] = str(path)
    doc['source_line'] = lineno
    doc['record_id'] = doc_id(rec)
    return doc


def create_action(index, doc):
    '''The bulk ``create`` action of ``doc`` in ``index`` (its id: the record's).'''
    return {'create': {'_index': index, '_id': doc['record_id']}}
