'''``mdxbench bench store``: the store at the scale of a year of nightly results, against
the real Elasticsearch (figures printed; nothing here is a timed test).

The documents are what ``mdxbench ingest`` stores for the captured real perflog line of
tests/fixtures (HpccStream: six performance variables and the check's meta), replicated as
``series`` series (four systems, the check parameterised by node) x ``runs`` nightly runs,
with distinct job ids, times and values.

1. Ingest: ``mdxbench ingest`` of ``records`` records from perflogs, against raw ``_bulk``
   of the same documents with their bodies built before the clock starts, into the same
   Elasticsearch, three rounds in alternating order (median ratio). Target: >= 0.8x.
2. Cold read: the local copy (:mod:`mdxbench.post.store.history`) built from nothing out
   of ``series x runs`` records (default 10,000 x 365 = 3.65 M), in a child process whose
   peak memory is its own; the baseline is the old row path (a scroll into Python dicts,
   then a table) timed on ``sample`` records in the same run and extrapolated. Targets:
   <= 60 s and <= 4 GiB. The copy alone is read from nothing too; at 36.5 M records (a
   year of 100,000 series) its targets are <= 5 min and <= 4 GiB, and past
   :data:`TABLE_MAX` records the table (with its provenance, 1 KB a record) is not read.
3. Incremental read: ``incremental`` (10,000) new records ingested, then the copy brought
   up to date and read whole. Target: <= 5 s.
4. Long series: the scans of ``mdxbench bench changes`` (100 x 10,000 and 4 x 250,000 runs).

With ``keep`` (``--keep PREFIX``) only the cold read of the copy alone is measured, on the
store kept under that prefix: loaded first when it holds nothing (a year of 100,000 series,
36.5 M records, took 23 minutes here), read as it is when it holds ``series x
runs`` records, never deleted (:func:`drop` it by hand).
'''
import datetime as dt
import time
import uuid

from mdxbench import perflog
from mdxbench.post.bench.ingest import FIXTURE
from mdxbench.post.store import documents as mapping
from mdxbench.post.bench import child

SYSTEMS = ('mdx2', 'laurel', 'aws-pcluster', 'local')
#: records past which the cold read does not build the whole table beside the copy
TABLE_MAX = 10_000_000


def _records():
    '''The records of the fixture's one real perflog line.'''
    return perflog.parse_line(FIXTURE.read_text().splitlines()[1])


def documents(prefix, nseries, runs, start=0, ingested_at=None, seed=5):
    '''Yield (action, document) of ``nseries`` series x ``runs`` runs: run r of a series
    completes on day ``start + r`` of 2025; the records of one run of a node share a line
    (like a real perflog line), so a series is one (system, node, performance variable).'''
    import numpy as np

    recs = _records()
    per_line = len(recs)
    lines = -(-nseries // per_line)
    rng = np.random.default_rng(seed + start)
    scale = rng.uniform(0.5, 1.5, lines)
    t0 = dt.datetime(2025, 1, 1, tzinfo=dt.timezone.utc)
    meta = mapping.flat_meta(recs[0]['meta'])
    meta_json = mapping.meta_text(recs[0]['meta'])
    ingested_at = ingested_at or dt.datetime.now(dt.timezone.utc).isoformat()
    for r in range(start, start + runs):
        noise = 1 + 0.02 * rng.standard_normal((lines, per_line))
        day = t0 + dt.timedelta(days=r)
        for ln in range(lines):
            system = SYSTEMS[ln % len(SYSTEMS)]
            node = f'n{ln // len(SYSTEMS):04d}'
            when = (day + dt.timedelta(seconds=ln)).isoformat()
            for k, rec in enumerate(recs):
                if ln * per_line + k >= nseries:
                    break
                rec = dict(rec, system=system, completion_time=when, nodelist=[node],
                           jobid=str(1000000 + r * lines + ln),
                           display_name=f'HpccStream %node={node}',
                           perf_value=round(float(rec["perf_value"] * scale[ln] * noise[ln, k]), 4))
                doc = mapping.to_document(rec, f'bench/{system}.log', r + 1, meta,
                                               meta_json)
                doc['ingested_at'] = ingested_at
                yield mapping.create_action(mapping.index_name(prefix, rec), doc), doc


def bulk_bodies(docs, per_request=2000):
    '''NDJSON bodies of ``per_request`` documents each.'''
    import orjson

    lines, n = [], 0
    for action, doc in docs:
        lines += [orjson.dumps(action), orjson.dumps(doc)]
        n += 1
        if n == per_request:
            yield b'\n'.join(lines) + b'\n'
            lines, n = [], 0
    if lines:
        yield b'\n'.join(lines) + b'\n'


def send(es, bodies, retry_seconds=300.0):
    '''Raw ``_bulk`` of prepared bodies; the number of documents created. Documents
    refused with 429 or 5xx (Elasticsearch busy, a new index's shard not yet started) are
    sent again alone, with backoff, for up to ``retry_seconds``; any other refusal, or one
    that lasts, raises naming the document.'''
    created = 0
    for body in bodies:
        deadline = time.monotonic() + retry_seconds
        delay = 0.5
        while True:
            resp = es.bulk(operations=body)
            lines = body.split(b'\n')
            again = []
            for k, it in enumerate(resp['items']):
                res = next(iter(it.values()))
                status = res.get('status', 0)
                if status in (200, 201):
                    created += 1
                elif (status == 429 or status >= 500) and \
                        time.monotonic() + delay <= deadline:
                    again += lines[2 * k:2 * k + 2]
                else:
                    raise RuntimeError(f'bulk refused a document: {it}')
            if not again:
                break
            time.sleep(delay)
            delay = min(delay * 2, 10)
            body = b'\n'.join(again) + b'\n'
    return created


def load(es, prefix, nseries, runs, start=0):
    '''Store the generated documents with raw ``_bulk`` (two requests in flight); the
    number stored. The indices are not refreshed while they are loaded (a bulk load's
    usual setting), then refreshed once.'''
    import concurrent.futures
    import copy

    pattern = f'{prefix}-*'
    template = mapping.template_body(prefix)
    loading = copy.deepcopy(template)
    loading['template'].setdefault('settings', {})['refresh_interval'] = '-1'
    es.indices.put_index_template(name=prefix, **loading)
    n = 0
    try:
        with concurrent.futures.ThreadPoolExecutor(2) as ex:
            futs = []
            for body in bulk_bodies(documents(prefix, nseries, runs, start)):
                futs.append(ex.submit(send, es, [body]))
                if len(futs) > 4:
                    n += futs.pop(0).result()
            n += sum(f.result() for f in futs)
    finally:
        es.indices.put_index_template(name=prefix, **template)
        es.indices.put_settings(index=pattern, allow_no_indices=True,
                                settings={'refresh_interval': None})
    es.indices.refresh(index=pattern)
    return n


def bench_ingest_vs_bulk(es, nrecords, rounds=3):
    '''[(ingest s, raw s)] of ``rounds`` rounds, records: ``mdxbench ingest`` of a perflog
    archive, and raw ``_bulk`` of the same documents (bodies built before the clock
    starts), each into a new index; the order alternates round by round (raw first, then
    ingest first), so neither always meets a warmer Elasticsearch.'''
    import pathlib
    import tempfile

    from mdxbench.post.bench import ingest as bench_ingest
    from mdxbench.post.store.ingest import Ingestor

    out = []
    with tempfile.TemporaryDirectory() as tmp:
        tmp = pathlib.Path(tmp)
        total = bench_ingest.make_archive(tmp / 'perflogs', nrecords)
        f = tmp / 'perflogs' / 'local' / 'debug' / 'HpccStream.log'
        for r in range(rounds):
            a = f'mdxbench-bench-{uuid.uuid4().hex[:6]}'
            b = f'mdxbench-bench-{uuid.uuid4().hex[:6]}'
            try:
                docs = []
                for n, line in enumerate(f.read_text().splitlines()[1:], 2):
                    recs = perflog.parse_line(line)
                    meta = mapping.flat_meta(recs[0]['meta'])
                    mj = mapping.meta_text(recs[0]['meta'])
                    for rec in recs:
                        d = mapping.to_document(rec, f, n, meta, mj)
                        d['ingested_at'] = dt.datetime.now(dt.timezone.utc).isoformat()
                        docs.append((mapping.create_action(mapping.index_name(b, rec), d),
                                     d))
                bodies = list(bulk_bodies(docs, 2000))
                del docs
                es.indices.put_index_template(name=b, **mapping.template_body(b))

                def raw():
                    t0 = time.perf_counter()
                    n = send(es, bodies)
                    return time.perf_counter() - t0, n

                def ing():
                    (tmp / 'state.json').unlink(missing_ok=True)
                    i = Ingestor(es, a, tmp / 'state.json', tmp / 'dead.jsonl',
                                 batch_size=2000)
                    t0 = time.perf_counter()
                    counts = i.run([tmp / 'perflogs'])
                    return time.perf_counter() - t0, counts.created

                if r % 2 == 0:
                    (raw_s, n_raw), (ing_s, n_ing) = raw(), ing()
                else:
                    (ing_s, n_ing), (raw_s, n_raw) = ing(), raw()
                assert n_raw == n_ing == total, (n_raw, n_ing, total)
                out.append((ing_s, raw_s))
            finally:
                drop(es, a)
                drop(es, b)
    return out, total


def drop(es, prefix):
    names = list(es.indices.get(index=f'{prefix}-*', allow_no_indices=True))
    if names:
        es.indices.delete(index=','.join(names))
    es.options(ignore_status=404).indices.delete_index_template(name=prefix)


def _child(url, prefix, base, mode):
    ''':func:`mdxbench.post.bench.children.store_read` in a child process.'''
    return child.run('store_read', 'bench child', url=url, prefix=prefix, base=str(base),
                     mode=mode)


def cold_only(es, url, prefix, series, runs):
    '''The cold read of the copy alone, from the store kept under ``prefix`` (loaded
    first when it holds nothing); 0 when its targets are met.'''
    import tempfile

    want = series * runs
    have = es.count(index=f'{prefix}-*', allow_no_indices=True)['count']
    if have == 0:
        t0 = time.perf_counter()
        have = load(es, prefix, series, runs)
        print(f'store: {have:,} records ({series:,} series x {runs} nightly runs) stored '
              f'under {prefix} with raw _bulk in {time.perf_counter() - t0:.0f} s (kept)')
    elif have != want:
        raise SystemExit(f'mdxbench bench store: {prefix}-* holds {have:,} records, not '
                         f'{series:,} x {runs} = {want:,}: give another --keep, or delete '
                         f'its indices')
    else:
        print(f'store: {have:,} records under {prefix} (kept from an earlier run)')
    with tempfile.TemporaryDirectory() as alone:
        only = _child(url, prefix, alone, 'sync')
    print(f"cold read into the local copy: {only['records']:,} records from "
          f"Elasticsearch in {only['seconds']:.1f} s, peak {only['peak_mib']:.0f} MiB "
          f"(targets at 36.5 M records: <= 300 s, <= 4096 MiB)")
    ok = only['records'] == have and only['peak_mib'] <= 4096 and \
        (only['seconds'] <= 300 or have < 36_500_000)
    return 0 if ok else 1


def main(url, series=10000, runs=365, records=100000, sample_runs=20, incremental=10000,
         long=True, keep=None):
    import tempfile

    from elasticsearch import Elasticsearch

    from mdxbench.post.bench import changes as bench_changes
    from mdxbench.post.site import text

    es = Elasticsearch(url, request_timeout=300)
    if keep:
        return cold_only(es, url, keep, series, runs)
    ok = True
    import statistics

    rounds, n = bench_ingest_vs_bulk(es, records)
    for k, (ing_s, raw_s) in enumerate(rounds, 1):
        print(f'ingest round {k} ({"raw" if k % 2 else "ingest"} first): mdxbench ingest '
              f'{n:,} records in {ing_s:.2f} s = {n / ing_s:,.0f}/s; raw _bulk of the same '
              f'documents (bodies built beforehand) {raw_s:.2f} s = {n / raw_s:,.0f}/s; '
              f'{raw_s / ing_s:.2f}x')
    ratio = statistics.median(raw_s / ing_s for ing_s, raw_s in rounds)
    print(f'ingest: median ratio {ratio:.2f}x of raw _bulk (target >= 0.8x): '
          f'{"met" if ratio >= 0.8 else "MISSED"}')
    ok &= ratio >= 0.8

    prefix = f'mdxbench-bench-{uuid.uuid4().hex[:6]}'
    sample = f'mdxbench-bench-{uuid.uuid4().hex[:6]}'
    try:
        es.indices.put_index_template(name=prefix, **mapping.template_body(prefix))
        t0 = time.perf_counter()
        total = load(es, prefix, series, runs)
        print(f'store: {total:,} records ({series:,} series x {runs} nightly runs) stored '
              f'with raw _bulk in {time.perf_counter() - t0:.0f} s')
        es.indices.put_index_template(name=sample, **mapping.template_body(sample))
        nsample = load(es, sample, series, sample_runs)
        # the table itself (with its provenance, about 1 KB a record) is read too up to
        # TABLE_MAX records: past that it would not fit here, and the cycle does not read it
        mode = 'copy' if total <= TABLE_MAX else 'sync'
        with tempfile.TemporaryDirectory() as base, \
                tempfile.TemporaryDirectory() as alone:
            only = _child(url, prefix, alone, 'sync')
            print(f"cold read into the local copy: {only['records']:,} records from "
                  f"Elasticsearch in {only['seconds']:.1f} s, peak {only['peak_mib']:.0f} MiB "
                  f"(targets at 36.5 M records: <= 300 s, <= 4096 MiB)")
            ok &= only['peak_mib'] <= 4096 and (only['seconds'] <= 300 or total < 36_500_000)
            if mode == 'copy':
                cold = _child(url, prefix, base, 'copy')
                rows = _child(url, sample, base, 'rows')
                per = rows['seconds'] / nsample
                print(f"cold read: {cold['records']:,} records from Elasticsearch into the "
                      f"local copy and the table: {cold['seconds']:.1f} s, peak "
                      f"{cold['peak_mib']:.0f} MiB (targets <= 60 s, <= 4096 MiB)")
                print(f"  the old row path (scroll into Python dicts, then the table) on "
                      f"{nsample:,} records: {rows['seconds']:.1f} s, peak "
                      f"{rows['peak_mib']:.0f} MiB; extrapolated to {total:,} (an estimate, "
                      f"not measured at that scale): {per * total:.0f} s "
                      f"(x{per * total / cold['seconds']:.1f} the new path), about "
                      f"{rows['peak_mib'] * total / nsample / 1024:.1f} GiB")
                ok &= cold['seconds'] <= 60 and cold['peak_mib'] <= 4096
            else:
                base = alone
                print(f'  (past {TABLE_MAX:,} records the table is not read: the copy alone, '
                      'here and below)')
            new = load(es, prefix, incremental, 1, start=runs)
            inc = _child(url, prefix, base, mode)
            held = f"{inc['records']:,} in the table" if mode == 'copy' else 'the copy alone'
            print(f"incremental read after {new:,} new records: {inc['seconds']:.2f} s, "
                  f"{inc['read']:,} read from Elasticsearch, {held} (target <= 5 s)")
            ok &= inc['seconds'] <= 5 and inc['read'] == new and \
                (mode == 'sync' or inc['records'] == total + new)
            warm = _child(url, prefix, base, mode)
            print(f"a read with nothing new: {warm['seconds']:.2f} s")
    finally:
        drop(es, prefix)
        drop(es, sample)

    if long:
        rows, same = bench_changes.long_series()
        print('long series (2% CV, a quarter of the series with a 10% step):')
        print(text.render(('series', 'records', 'wall', 'peak', 'change points'), rows))
        first = float(rows[0][2].split()[0])
        ok &= first <= 10
        print(f'target: 100 x 10,000-run series <= 10 s: {"met" if first <= 10 else "MISSED"}')
    return 0 if ok else 1
