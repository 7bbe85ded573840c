'''Elasticsearch into columns: the store read one partition (one index: a system and a
month) at a time, without Python objects per record.

* A partition is read under a point in time (PIT) with ``search_after`` on ``_shard_doc``:
  a consistent snapshot, pages of :data:`PAGE` documents, and the number read checked
  against the snapshot's total (a partition is whole or an error, never partial).
* Every search refuses partial results: a shard copy lost under the read (its node
  killed, or cut off from the cluster) fails the request instead of answering without that
  shard's documents -- a page, a total or a digest that silently left a shard out would
  make a partition look whole, or gone.
* Each document's ``_source`` comes back whole, and the answer unfiltered: Elasticsearch
  copies a stored source's bytes as they are, while ``_source`` filtering or a
  ``filter_path`` makes it parse and write every document again. Measured on a partition of
  77,562 bench records: 0.30 s of Elasticsearch's time whole, 1.03 s filtered (both), for
  97 MB of answer instead of 61 MB. Each page's bytes go straight into Polars' JSON reader
  with a fixed schema that picks the fields the records table needs (no dict per record,
  and outside Python's lock, so two partitions read in parallel overlap Elasticsearch's
  work with ours).
* The check's meta comes as the text ``meta_json`` that ``mdxbench ingest`` stores beside
  the searchable ``meta`` field. Documents stored before that field existed are read from
  ``meta`` itself (a slower path taken only for the partitions that hold such documents):
  a mapping that gained a field never breaks reading older partitions.
* :func:`digests` is one aggregation: per partition its count, sum of values, time range
  and last ingest time, what the local copy (:mod:`mdxbench.post.store.history`) compares.

Core APIs only (_search with PIT, aggregations): no ES|QL, no scripts.
'''
import dataclasses
import io
import json

from mdxbench.post.store import records

#: documents per page of a partition read
PAGE = 10000

#: the ``_source`` fields of a document the table is made of (the page schema's; of
#: ``meta``, the fields :data:`META` names)
SOURCE = ('@timestamp', 'ingested_at', 'record_id', 'system', 'partition', 'environ',
          'display_name', 'perf_var', 'perf_value', 'perf_unit', 'perf_better', 'perf_ref',
          'perf_lower_thres', 'perf_upper_thres', 'perf_result', 'jobid', 'nodelist',
          'meta_json')
#: the fields of a document's ``meta`` the table reads
META = ('tags', 'params', 'job_host')


class Interrupted(Exception):
    '''A partition read that did not finish: Elasticsearch went away or lost the point in
    time. Nothing of the partition is returned.'''


def _page_schema():
    import polars as pl

    doubles = ('perf_value', 'perf_ref', 'perf_lower_thres', 'perf_upper_thres')
    fields = {f: (pl.Float64 if f in doubles else pl.List(pl.String) if f == 'nodelist'
                  else pl.String) for f in SOURCE}
    fields['meta'] = pl.Struct({f: pl.String for f in META})
    hit = pl.Struct({'_source': pl.Struct(fields), 'sort': pl.List(pl.Int64)})
    return {'hits': pl.Struct({'total': pl.Struct({'value': pl.Int64}),
                               'hits': pl.List(hit)})}


def parse_page(raw):
    '''One search answer (bytes) -> (columns of its hits, the last hit's sort values, the
    total of hits when the answer counts them, else None).'''
    import polars as pl

    page = pl.read_json(io.BytesIO(raw), schema=_page_schema())
    total = page.select(pl.col('hits').struct.field('total').struct.field('value')).item()
    df = (page.select(pl.col('hits').struct.field('hits'))
          .explode('hits', empty_as_null=False).drop_nulls('hits').unnest('hits'))
    if df.height == 0:        # no hits
        return _empty_source(), None, total
    return df.drop('sort').unnest('_source'), df['sort'][-1].to_list(), total


def _legacy_meta(raw):
    '''The meta of each hit as sorted JSON text, from the ``meta`` object (documents stored
    before ``meta_json``): the slow path, one Python object per hit.'''
    import orjson

    return [json.dumps((h['_source'].get('meta') or {}), sort_keys=True)
            for h in orjson.loads(raw)['hits']['hits']]


def to_table(df):
    '''Columns as Elasticsearch holds them -> the records table (``records.COLUMNS``) plus
    ``record_id`` and ``ingested_at``. Tags and parameters are decoded once per distinct
    value, not per record.'''
    import polars as pl

    meta = pl.col('meta')
    tags = _decode(df['meta'].struct.field('tags'),
                   lambda v: ','.join(json.loads(v) if v.startswith('[') else [v]))
    params = _decode(df['meta'].struct.field('params'),
                     lambda v: records.canonical_params({'params': v}), default='{}')
    host = meta.struct.field('job_host')
    nodes = pl.col('nodelist').list.join(',').fill_null('')
    out = df.with_columns(
        time=pl.col('@timestamp').str.to_datetime(time_zone='UTC', strict=False),
        ingested_at=pl.col('ingested_at').str.to_datetime(time_zone='UTC', strict=False),
        check=pl.col('display_name').str.replace_all(r' %\.repeat_no=\d+', ''),
        value=pl.col('perf_value'), unit=pl.col('perf_unit'), better=pl.col('perf_better'),
        ref=pl.col('perf_ref'), lower=pl.col('perf_lower_thres'),
        upper=pl.col('perf_upper_thres'), result=pl.col('perf_result'),
        nodes=pl.when(nodes != '').then(nodes)
        .when(host.is_not_null() & (host != 'unknown')).then(host).otherwise(pl.lit('')),
        tags=tags, params=params, meta=pl.col('meta_json'))
    return out.select(*records.COLUMNS, 'record_id', 'ingested_at')


def _decode(col, fn, default=''):
    '''``fn`` of each distinct non-null value of a text column (``default`` for null).'''
    import polars as pl

    uniq = col.drop_nulls().unique().to_list()
    return col.replace_strict(uniq, [fn(v) for v in uniq], default=default,
                              return_dtype=pl.String)


@dataclasses.dataclass(frozen=True)
class Digest:
    '''What identifies a partition's content: count, sum of values, first and last
    measurement time and last ingest time (epoch milliseconds; None where no record has
    one). Records are never changed once stored (``create`` with deterministic ids), so a
    partition whose digest is unchanged holds the same records.'''
    count: int
    value_sum: float
    first_ms: int | None
    last_ms: int | None
    ingested_ms: int | None

    def same(self, other):
        return (other is not None and self.count == other.count
                and (self.first_ms, self.last_ms, self.ingested_ms)
                == (other.first_ms, other.last_ms, other.ingested_ms)
                and abs(self.value_sum - other.value_sum)
                <= 1e-9 * max(1.0, abs(self.value_sum)))

    def as_json(self):
        return dataclasses.asdict(self)

    @classmethod
    def of_json(cls, d):
        return cls(**d) if d else None

    @classmethod
    def of_table(cls, df):
        '''The digest of a partition's table as :func:`to_table` makes it.'''
        import polars as pl

        def ms(expr):
            v = df.select(expr.dt.epoch('ms')).item()
            return None if v is None else int(v)

        return cls(df.height, float(df['value'].fill_null(0).sum()),
                   ms(pl.col('time').min()), ms(pl.col('time').max()),
                   ms(pl.col('ingested_at').max()))


def _ms(agg):
    v = (agg or {}).get('value')
    return None if v is None else int(v)


def digests(client, prefix, pattern=None):
    '''{index: Digest} of every partition of the store (of the indices ``pattern`` names
    when given), from one aggregation.'''
    import orjson

    resp = client.search(
        index=pattern or f'{prefix}-*', size=0, allow_no_indices=True,
        allow_partial_search_results=False,
        aggs={'part': {'terms': {'field': '_index', 'size': 100000},
                       'aggs': {'sum': {'sum': {'field': 'perf_value'}},
                                'first': {'min': {'field': '@timestamp'}},
                                'last': {'max': {'field': '@timestamp'}},
                                'ingested': {'max': {'field': 'ingested_at'}}}}})
    body = orjson.loads(resp.body) if isinstance(resp.body, bytes) else resp.body
    buckets = (body.get('aggregations') or {}).get('part', {}).get('buckets', [])
    return {b['key']: Digest(b['doc_count'], float(b['sum']['value'] or 0.0),
                             _ms(b['first']), _ms(b['last']), _ms(b['ingested']))
            for b in buckets}


def _legacy_count(client, index, query):
    r = client.count(index=index, query={'bool': {
        'filter': [query], 'must_not': [{'exists': {'field': 'meta_json'}}]}})
    body = r.body if not isinstance(r.body, bytes) else json.loads(r.body)
    return body['count']


def read_partition(client, index, query=None, page=PAGE):
    '''Every record of one index matching ``query`` as the table of :func:`to_table`.
    Raises :class:`Interrupted` when the read cannot finish; a read that finishes holds
    exactly the point in time's total.'''
    import orjson
    import polars as pl
    from elasticsearch import ApiError, ConnectionError, ConnectionTimeout

    query = query or {'match_all': {}}
    frames, after, total, pit = [], None, None, None
    try:
        legacy = _legacy_count(client, index, query) > 0
        pit = orjson.loads(client.open_point_in_time(index=index, keep_alive='5m').body)['id']
        while True:
            body = {'size': page, 'query': query, 'pit': {'id': pit, 'keep_alive': '5m'},
                    'sort': ['_shard_doc'], 'track_total_hits': total is None}
            if after is not None:
                body['search_after'] = after
            raw = client.search(**body, allow_partial_search_results=False).body
            df, after, counted = parse_page(raw)
            if total is None:
                total = counted or 0
            if after is None:
                break
            if legacy and df['meta_json'].null_count():
                df = df.with_columns(meta_json=pl.when(pl.col('meta_json').is_null())
                                     .then(pl.Series(_legacy_meta(raw)))
                                     .otherwise(pl.col('meta_json')))
            frames.append(to_table(df))
    except (ConnectionError, ConnectionTimeout) as err:
        raise Interrupted(f'{index}: connection lost after {sum(f.height for f in frames)} '
                          f'of {total if total is not None else "?"} records '
                          f'({type(err).__name__})') from None
    except ApiError as err:
        if err.meta.status in (404, 429) or err.meta.status >= 500:
            raise Interrupted(f'{index}: Elasticsearch answered {err.meta.status} after '
                              f'{sum(f.height for f in frames)} of '
                              f'{total if total is not None else "?"} records '
                              f'({_error_type(err)})') from None
        raise
    finally:
        if pit is not None:
            try:
                client.close_point_in_time(id=pit)
            except Exception:       # the PIT expires by itself (keep_alive)
                pass

    out = pl.concat(frames) if frames else to_table(_empty_source())
    if out.height != total:
        raise Interrupted(f'{index}: read {out.height} records of the {total} of its point '
                          f'in time')
    return out


def _empty_source():
    '''The page columns of no hit.'''
    import polars as pl

    hits = {f.name: f.dtype for f in _page_schema()['hits'].fields}['hits']
    src = hits.inner.fields[0].dtype
    return pl.DataFrame(schema={f.name: f.dtype for f in src.fields})


def _error_type(err):
    try:
        body = json.loads(err.body) if isinstance(err.body, (bytes, str)) else err.body
        return body['error']['type']
    except Exception:
        return str(err.error)
