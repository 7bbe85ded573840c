'''``mdxbench bench ingest [--records 100000] [--sample 5000] [--cluster-url URLS]``:
mdxbench ingest (_bulk, 2000 per request) against one HTTP request per record (what
ReFrame's httpjson handler does), on the same local Elasticsearch, in one run (figures
printed, not a timed test). Target: bulk at least 20x the per-record rate. With
``--cluster-url``, the same records also into a cluster (ci/es-cluster.sh), where the
default ``auto_expand_replicas: 0-1`` gives each index one replica: the price of the copy
is the cluster's rate beside the one node's.

The perflog archive is the captured real perflog line of tests/fixtures replicated with
distinct job ids and times (as many runs of the check would write).
'''
import datetime as dt
import pathlib
import tempfile
import time
import uuid

from mdxbench import REPO_ROOT, perflog

FIXTURE = REPO_ROOT / 'tests' / 'fixtures' / 'perflogs' / 'local-debug-HpccStream.log'


def make_archive(directory, nrecords):
    header, line = FIXTURE.read_text().splitlines()[:2]
    per_line = len(perflog.parse_line(line))
    nlines = -(-nrecords // per_line)
    d = pathlib.Path(directory) / 'local' / 'debug'
    d.mkdir(parents=True, exist_ok=True)
    t0 = dt.datetime(2026, 1, 1, tzinfo=dt.timezone.utc)
    with open(d / 'HpccStream.log', 'w') as fp:
        fp.write(header + '\n')
        for i in range(nlines):
            cols = line.split('|')
            cols[0] = (t0 + dt.timedelta(minutes=i)).isoformat()
            cols[8] = str(100000 + i)
            fp.write('|'.join(cols) + '\n')

    return nlines * per_line


def _bulk(es, prefix, archive, tmp, target):
    '''(seconds, records created, replicas of the month's index) of ``mdxbench ingest``'s
    Ingestor sending ``archive`` into ``es`` under ``prefix`` (its state its own, named by
    ``target``: each target is sent everything).'''
    from mdxbench.post.store.ingest import Ingestor

    ing = Ingestor(es, prefix, tmp / f'{target}.json', tmp / f'{target}.dead.jsonl',
                   batch_size=2000)
    t0 = time.perf_counter()
    counts = ing.run([archive])
    seconds = time.perf_counter() - t0
    shards = es.cat.shards(index=f'{prefix}-*', format='json')
    return seconds, counts.created, sum(1 for s in shards if s['prirep'] == 'r')


def _drop(es, prefix):
    names = list(es.indices.get(index=f'{prefix}*'))
    if names:
        es.indices.delete(index=','.join(names))
    es.options(ignore_status=404).indices.delete_index_template(name=prefix)


def bench_ingest(nrecords, sample, url, cluster_url=None):
    from elasticsearch import Elasticsearch

    from mdxbench.post.store import esclient
    from mdxbench.post.store.documents import doc_id, index_name, to_document

    es = Elasticsearch(url, request_timeout=60)
    prefix = f'mdxbench-bench-{uuid.uuid4().hex[:6]}'
    with tempfile.TemporaryDirectory() as tmp:
        tmp = pathlib.Path(tmp)
        total = make_archive(tmp / 'perflogs', nrecords)
        bulk_s, created, _ = _bulk(es, prefix, tmp / 'perflogs', tmp, 'node')
        assert created == total, (created, total)

        # Baseline: one HTTP request per record, as httpjson does, into another index
        recs = []
        for ln in (tmp / 'perflogs' / 'local' / 'debug' / 'HpccStream.log').read_text().splitlines()[1:]:
            recs += perflog.parse_line(ln)
            if len(recs) >= sample:
                break

        t0 = time.perf_counter()
        for r in recs[:sample]:
            doc = to_document(r, 'bench', 0)
            es.index(index=index_name(prefix + '-single', r), id=doc_id(r), document=doc)
        single_s = time.perf_counter() - t0

        cluster = None
        if cluster_url:
            ces = Elasticsearch(esclient.hosts_of(url=cluster_url), request_timeout=60)
            nodes = ces.cluster.health()['number_of_nodes']
            cluster = (*_bulk(ces, prefix, tmp / 'perflogs', tmp, 'cluster'), nodes)
            _drop(ces, prefix)

    _drop(es, prefix)
    bulk_rate = total / bulk_s
    single_rate = sample / single_s
    print(f'mdxbench ingest (_bulk, 2000/request): {total} records in {bulk_s:.2f} s = '
          f'{bulk_rate:,.0f} records/s')
    print(f'baseline, one request per record (ReFrame httpjson style): {sample} records in '
          f'{single_s:.2f} s = {single_rate:,.0f} records/s')
    ratio = bulk_rate / single_rate
    print(f'ratio: {ratio:.1f}x (target >= 20x): {"met" if ratio >= 20 else "MISSED"}')
    if cluster:
        seconds, created, replicas, nodes = cluster
        assert created == total, (created, total)
        print(f'the same records into a cluster of {nodes} nodes ({replicas} replica shard(s) '
              f'of the month\'s index): {total} records in {seconds:.2f} s = '
              f'{total / seconds:,.0f} records/s, {bulk_s / seconds:.2f}x the one node\'s rate')
    return 0 if ratio >= 20 else 1
