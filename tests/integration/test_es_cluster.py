'''mdxbench against an Elasticsearch cluster of three nodes (ci/es-cluster.sh), as a site
runs one: a node lost in the middle of an ingest loses nothing and stores nothing twice.'''
import os
import subprocess
import time
import uuid

import pytest

from conftest import ROOT, VENV_BIN, run
from hang import HANG_S
from test_ingest import _perflog

CLUSTER = ['bash', str(ROOT / 'ci' / 'es-cluster.sh')]


def es_cluster(*args, timeout=HANG_S):
    # its waits as long as the hang guard: in CI this module runs beside the quiet session
    # at nice 19, where three JVMs start in minutes, not one (tests/hang.py)
    res = run([*CLUSTER, *args], timeout=timeout, env={'MDXBENCH_ES_TIMEOUT': str(HANG_S)})
    assert res.returncode == 0, res.stdout + res.stderr
    return res.stdout.strip()


@pytest.fixture(scope='module')
def cluster():
    '''The three nodes, started for this module and stopped after it; a client of all.'''
    from elasticsearch import Elasticsearch

    es_cluster('start', '3')
    urls = es_cluster('urls').split(',')
    client = Elasticsearch(urls, request_timeout=HANG_S, max_retries=2)
    try:
        yield {'urls': urls, 'client': client}
    finally:
        run([*CLUSTER, 'stop'], timeout=HANG_S)


def _count(client, prefix):
    client.indices.refresh(index=f'{prefix}-*', allow_no_indices=True)
    return client.count(index=f'{prefix}-*', allow_no_indices=True)['count']


def _stored_and_green(client, prefix):
    '''Whether the month's index holds documents and is green (its replica in sync): not
    while it is being made (a search of its unstarted shards answers 503).'''
    from elasticsearch import ApiError

    try:
        return _count(client, prefix) > 0 and client.cluster.health(
            index=f'{prefix}-*')['status'] == 'green'
    except ApiError as err:
        if err.meta.status != 503:
            raise
        return False


def _ingest_until_stored(cluster, tmp_path, prefix, **env):
    '''An ingest of 24,000 records (4,000 perflog lines of six figures) through the three
    nodes' URLs, running in the background until the month's index holds documents and is
    green: (the ingest's process, a node that is not the elected master, when it began).'''
    env = dict(os.environ, MDXBENCH_ES_URL=','.join(cluster['urls']),
               MDXBENCH_ES_INDEX_PREFIX=prefix, MDXBENCH_STATE_DIR=str(tmp_path / 'state'),
               **env)
    proc = subprocess.Popen([str(VENV_BIN / 'mdxbench'), 'ingest',
                             str(_perflog(tmp_path, 4000)), '--state',
                             str(tmp_path / 's.json'), '--retry-seconds', '600'],
                            env=env, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
    master = es_cluster('master')
    victim = next(n for n in ('mdxes1', 'mdxes2', 'mdxes3') if n != master)
    t0 = time.monotonic()
    while not _stored_and_green(cluster['client'], prefix):
        assert proc.poll() is None, proc.communicate()
        assert time.monotonic() - t0 < HANG_S, 'no document stored'
        time.sleep(0.2)
    assert proc.poll() is None, 'the ingest ended before a node could be taken away'
    return proc, victim, t0


def test_a_data_node_killed_in_the_middle_of_an_ingest_loses_nothing(cluster, tmp_path):
    '''4,000 lines of six figures (24,000 records) ingested through the three nodes' URLs;
    once the first documents are stored and the month's index is green (its replica in
    sync: a copy on a second node), a node that is not the elected master is killed
    (SIGKILL). The ingest ends with every record stored -- created, none present, none
    pending -- and says it sent requests again; the index holds 24,000 documents, one per
    record (ids are the records', so none twice); the node started again, the cluster is
    green with the index's replica back.'''
    client, prefix = cluster['client'], f'mdxbench-kill-{uuid.uuid4().hex[:8]}'
    proc, victim, t0 = _ingest_until_stored(cluster, tmp_path, prefix)
    es_cluster('kill', victim)
    out, err = proc.communicate(timeout=HANG_S)
    print(f'{victim} killed after {time.monotonic() - t0:.1f} s; {out.strip()}')
    assert proc.returncode == 0, out + err
    assert 'records 24000, sent 24000, created 24000, present 0, rejected 0, malformed 0, ' \
           'pending 0' in out, out
    retried = int(out.rsplit('retried ', 1)[1].split()[0].rstrip(','))
    assert retried >= 1, out
    es_cluster('restart', victim)
    health = client.cluster.health(index=f'{prefix}-*', wait_for_status='green',
                                   wait_for_nodes=3, timeout=f'{HANG_S}s')
    assert health['status'] == 'green' and health['number_of_nodes'] == 3, health
    assert _count(client, prefix) == 24000
    names = list(client.indices.get(index=f'{prefix}-*'))
    settings = client.indices.get_settings(index=names[0])[names[0]]['settings']['index']
    assert settings['auto_expand_replicas'] == '0-1', settings
    shards = client.cat.shards(index=names[0], format='json')
    assert sorted(s['prirep'] for s in shards) == ['p', 'r'], shards
    client.indices.delete(index=','.join(names))


def test_a_node_cut_off_in_the_middle_of_an_ingest_stores_nothing_unacknowledged(
        cluster, tmp_path):
    '''As above, a node that is not the master cut off instead (every packet of its address
    dropped: no refusal, no reset -- requests to it time out, 10 s here). The cluster drops
    it and promotes its shards' replicas; the ingest sends again what timed out and reads
    back what a lost request stored itself: every record created once, none present,
    none pending. Joined again, the cluster is green with three nodes and holds each
    document once.'''
    client, prefix = cluster['client'], f'mdxbench-cut-{uuid.uuid4().hex[:8]}'
    proc, victim, t0 = _ingest_until_stored(cluster, tmp_path, prefix, MDXBENCH_ES_TIMEOUT='10')
    es_cluster('cut', victim)
    try:
        out, err = proc.communicate(timeout=HANG_S)
    finally:
        es_cluster('join', victim)
    print(f'{victim} cut off after {time.monotonic() - t0:.1f} s; {out.strip()}')
    assert proc.returncode == 0, out + err
    assert 'records 24000, sent 24000, created 24000, present 0, rejected 0, malformed 0, ' \
           'pending 0' in out, out
    health = client.cluster.health(index=f'{prefix}-*', wait_for_status='green',
                                   wait_for_nodes=3, timeout=f'{HANG_S}s')
    assert health['status'] == 'green' and health['number_of_nodes'] == 3, health
    assert _count(client, prefix) == 24000
    client.indices.delete(index=','.join(client.indices.get(index=f'{prefix}-*')))
