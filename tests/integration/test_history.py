'''The local copy of the store (store.history) against the real Elasticsearch: a read
through it equals the perflogs, it is extended by ingest time (a late record found in its
old month), a broken partition is read again, a mapping that gained fields still reads old
documents, and Elasticsearch restarted in the middle of a cold read.'''
import json
import os
import shutil
import subprocess
import time

import polars as pl

from conftest import FIXTURES_PERFLOG, VENV_BIN, count, mdxbench, run

KEY = ['check', 'perf_var', 'jobid', 'time']


def _lines(first_job, n, month_days=((2026, 9, 30), (2026, 10, 31), (2026, 11, 30))):
    '''n perflog lines made from the captured real line, spread over three months.'''
    line = FIXTURES_PERFLOG.read_text().splitlines()[1]
    out = []
    for i in range(n):
        y, m, days = month_days[i % len(month_days)]
        cols = line.split('|')
        cols[0] = f'{y}-{m:02d}-{1 + (i // 3) % days:02d}T{(i // 90) % 24:02d}:{i % 60:02d}:00+00:00'
        cols[8] = str(first_job + i)
        out.append('|'.join(cols))
    return out


def _write(d, lines, name='HpccStream.log'):
    d.mkdir(parents=True, exist_ok=True)
    header = FIXTURES_PERFLOG.read_text().splitlines()[0]
    with open(d / name, 'a') as fp:
        if fp.tell() == 0:
            fp.write(header + '\n')
        fp.write('\n'.join(lines) + '\n')


def _export(es, hist, out, extra_env=None):
    env = dict(es['env'], MDXBENCH_HISTORY_DIR=str(hist), **(extra_env or {}))
    res = mdxbench('export', '--from-es', '--out', str(out), env=env)
    return res, (pl.read_parquet(out).sort(KEY) if res.returncode == 0 else None)


def test_copy_reads_as_the_perflogs_and_is_extended_by_ingest_time(es, tmp_path):
    from mdxbench.post.store import records

    plogs = tmp_path / 'perflogs' / 'local' / 'debug'
    _write(plogs, _lines(1000, 300))                    # 1,800 records in 3 months
    env = dict(es['env'])
    assert mdxbench('ingest', str(tmp_path / 'perflogs'), '--state', str(tmp_path / 's.json'),
                    env=env).returncode == 0
    hist = tmp_path / 'history'
    res, got = _export(es, hist, tmp_path / 'a.parquet')
    assert res.returncode == 0, res.stderr
    assert '3 read whole' in res.stderr and '1,800 record(s) read' in res.stderr, res.stderr
    want = records.from_perflogs([tmp_path / 'perflogs']).sort(KEY)
    assert got.height == want.height == 1800
    # every column as the perflogs give it, the meta included (its text, typed values)
    assert got.select(records.COLUMNS).equals(want.select(records.COLUMNS))

    # new records, one of them late: completed in September, ingested now
    late = _lines(50000, 1, ((2026, 9, 30),))
    _write(plogs, _lines(9000, 10, ((2026, 11, 30),)) + late)
    assert mdxbench('ingest', str(tmp_path / 'perflogs'), '--state', str(tmp_path / 's.json'),
                    env=env).returncode == 0
    res, got = _export(es, hist, tmp_path / 'b.parquet')
    assert res.returncode == 0, res.stderr
    assert '1 current, 2 extended, 0 read whole' in res.stderr, res.stderr
    assert got.height == 1800 + 66 == count(es)
    assert got.filter(pl.col('jobid') == '50000')['time'].dt.month().to_list() == [9] * 6

    # a partition file broken (same size, garbage): found at read, read again whole
    part = sorted((p for p in hist.rglob('*.parquet')))[0]
    part.write_bytes(b'\0' * part.stat().st_size)
    res, again = _export(es, hist, tmp_path / 'c.parquet')
    assert res.returncode == 0, res.stderr
    assert 'reading it again' in res.stderr and '1 read whole' in res.stderr, res.stderr
    assert again.equals(got)

    # verify: every partition ok; a partition deleted from the copy is reported, repaired
    hist_env = dict(env, MDXBENCH_HISTORY_DIR=str(hist))
    res = mdxbench('history', 'verify', env=hist_env)
    assert res.returncode == 0 and res.stdout.count(' ok') == 3, res.stdout + res.stderr
    part.unlink()
    res = mdxbench('history', 'verify', env=hist_env)
    assert res.returncode == 1 and 'unreadable' in res.stdout, res.stdout + res.stderr
    res = mdxbench('history', 'verify', '--repair', env=hist_env)
    assert res.returncode == 0 and 'unreadable, read again' in res.stdout, res.stdout
    assert mdxbench('history', 'verify', env=hist_env).returncode == 0

    # a partition readable but altered (one value changed in place): its recomputed digest
    # differs from the manifest's -- corrupt, read again by --repair
    part = sorted(hist.rglob('*.parquet'))[1]
    t = pl.read_parquet(part)
    t = t.with_columns(pl.when(pl.int_range(t.height) == 0).then(pl.col('value') * 2)
                       .otherwise(pl.col('value')).alias('value'))
    t.write_parquet(part)
    res = mdxbench('history', 'verify', env=hist_env)
    assert res.returncode == 1 and res.stdout.count(' corrupt') == 1, res.stdout + res.stderr
    res = mdxbench('history', 'verify', '--repair', env=hist_env)
    assert res.returncode == 0 and 'corrupt, read again' in res.stdout, res.stdout
    res, again = _export(es, hist, tmp_path / 'd.parquet')
    assert again.equals(got), 'the repaired copy reads as Elasticsearch'

    # a partition behind Elasticsearch: records ingested after the copy was synced
    _write(plogs, _lines(70000, 3, ((2026, 10, 31),)))
    assert mdxbench('ingest', str(tmp_path / 'perflogs'), '--state', str(tmp_path / 's.json'),
                    env=env).returncode == 0
    res = mdxbench('history', 'verify', env=hist_env)
    assert res.returncode == 1 and res.stdout.count(' behind') == 1, res.stdout + res.stderr
    res = mdxbench('history', 'verify', '--repair', env=hist_env)
    assert res.returncode == 0 and 'behind, read again' in res.stdout, res.stdout
    assert mdxbench('history', 'verify', env=hist_env).returncode == 0


def test_partitions_stored_before_meta_json_and_ingested_at_still_read(es, tmp_path):
    '''Documents of an older mdxbench (no ``meta_json``, no ``ingested_at``, an index made
    before the template had them) beside new ones in the same partition.'''
    from elasticsearch import helpers

    from mdxbench import perflog
    from mdxbench.post.store import documents

    body = documents.template_body(es['prefix'])
    props = body['template']['mappings']['properties']
    old_props = {k: v for k, v in props.items() if k not in ('meta_json', 'ingested_at')}
    es['client'].indices.create(index=f"{es['prefix']}-local-2026.11", mappings={
        'dynamic': 'strict', 'properties': old_props})
    old = [r for ln in _lines(1000, 20, ((2026, 11, 30),)) for r in perflog.parse_line(ln)]
    docs = []
    for r in old:
        d = documents.to_document(r, 'old.log', 1)
        del d['meta_json']
        docs.append({'_op_type': 'create', '_index': documents.index_name(es['prefix'], r),
                     '_id': d['record_id'], '_source': d})
    helpers.bulk(es['client'], docs, refresh=True)

    hist = tmp_path / 'history'
    res, got = _export(es, hist, tmp_path / 'a.parquet')
    assert res.returncode == 0, res.stderr
    assert got.height == 120
    # the meta of old documents is what the flattened field kept: values as text
    assert json.loads(got['meta'][0])['hpl_n'] == '7104'

    # a new ingest into the same partition (the mapping gains the fields) and another month
    plogs = tmp_path / 'perflogs' / 'local' / 'debug'
    _write(plogs, _lines(5000, 10, ((2026, 11, 30), (2026, 10, 31))))
    res = mdxbench('ingest', str(tmp_path / 'perflogs'), '--state', str(tmp_path / 's.json'),
                   env=es['env'])
    assert res.returncode == 0, res.stdout + res.stderr
    res, got = _export(es, hist, tmp_path / 'b.parquet')
    assert res.returncode == 0, res.stderr
    # the partition with old documents has no ingest time to extend from: read whole
    assert '0 current, 0 extended, 2 read whole' in res.stderr, res.stderr
    assert got.height == 180 == count(es)
    new = got.filter(pl.col('jobid').cast(pl.Int64) >= 5000)
    assert {json.loads(m)['hpl_n'] for m in new['meta']} == {7104}


def test_es_restarted_in_the_middle_of_a_cold_read(es, tmp_path):
    plogs = tmp_path / 'perflogs' / 'local' / 'debug'
    _write(plogs, _lines(1000, 3000))                   # 18,000 records in 3 months
    assert mdxbench('ingest', str(tmp_path / 'perflogs'), '--state', str(tmp_path / 's.json'),
                    env=es['env']).returncode == 0
    total = count(es)
    hist = tmp_path / 'history'
    env = dict(os.environ, **es['env'], MDXBENCH_HISTORY_DIR=str(hist))
    sync = subprocess.Popen([str(VENV_BIN / 'mdxbench'), 'history', 'sync', '--page', '200',
                             '--retry-seconds', '240'], stdout=subprocess.PIPE,
                            stderr=subprocess.PIPE, text=True, env=env)
    manifest = None
    try:
        deadline = time.monotonic() + 120
        while time.monotonic() < deadline and sync.poll() is None:
            found = list(hist.glob('*/manifest.json'))
            if found and json.loads(found[0].read_text())['parts']:
                break
            time.sleep(0.05)
        assert sync.poll() is None, 'the sync ended before Elasticsearch could be stopped'
        stop = run(['bash', 'ci/elasticsearch.sh', 'stop'], timeout=180)
        assert stop.returncode == 0, stop.stderr
        # the copy holds whole partitions only: each as many records as Elasticsearch has
        manifest = json.loads(found[0].read_text())
        assert 1 <= len(manifest['parts']) < 3, manifest
        snapshot = tmp_path / 'snapshot'
        shutil.copytree(hist, snapshot)

        # readers while Elasticsearch is down: the copy, said; no copy: exit 75 naming it
        res, got = _export(es, snapshot, tmp_path / 'x.parquet')
        assert res.returncode == 0, res.stderr
        assert 'records from the local copy' in res.stderr and 'unreachable' in res.stderr
        res, _ = _export(es, tmp_path / 'none', tmp_path / 'y.parquet')
        assert res.returncode == 75 and es['url'] in res.stderr, res.stderr
    finally:
        start = run(['bash', 'ci/elasticsearch.sh', 'start'], timeout=300)
        assert start.returncode == 0, start.stderr
        out, err = sync.communicate(timeout=300)

    # the same sync waited for Elasticsearch and read the rest
    assert sync.returncode == 0, out + err
    assert '3 partition(s)' in out, out
    whole = {i: p['digest']['count'] for i, p in manifest['parts'].items()}
    from mdxbench.post.store import esclient, esread

    es_now = esread.digests(esclient.make_client(url=es['url'], raw=True), es['prefix'])
    assert all(es_now[i].count == n for i, n in whole.items()), (whole, es_now)
    res = mdxbench('history', 'verify', env=dict(es['env'], MDXBENCH_HISTORY_DIR=str(hist)))
    assert res.returncode == 0 and res.stdout.count(' ok') == 3, res.stdout + res.stderr
    res, got = _export(es, hist, tmp_path / 'z.parquet')
    assert got.height == total == 18000
    assert got.select(KEY).is_unique().all()
