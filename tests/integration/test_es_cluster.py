'''mdxbench against an Elasticsearch cluster of three nodes (ci/es-cluster.sh), secured as a
site runs one (HTTPS through its CA, a user, TLS between the nodes): a node lost in the middle of an ingest loses nothing and stores nothing twice;
the elected master lost during a cycle's read changes nothing the cycle finds; a rolling
restart under nightly ingests loses nothing; a snapshot restored into an empty cluster
gives the next cycle the same history.'''
import json
import os
import pathlib
import subprocess
import threading
import time
import uuid

import pytest

from conftest import ROOT, VENV_BIN, mdxbench, run
from hang import HANG_S
from histories import slowed_sockperf
from test_ingest import _perflog

CLUSTER = ['bash', str(ROOT / 'ci' / 'es-cluster.sh')]


#: the cluster's admin, as the single node's secured instance has one (test_security): the
#: cluster runs with security on -- HTTPS, this user, TLS between the nodes -- as a site's
USER, PASSWORD = 'mdxadmin', 'mdx-Pw-' + os.urandom(6).hex()
#: set by the fixture: the admin's password file (0600) and the cluster's CA
SECRETS = {}


def es_cluster(*args, timeout=HANG_S):
    # its waits as long as the hang guard: in CI this module runs beside the quiet session
    # at nice 19, where three JVMs start in minutes, not one (tests/hang.py)
    res = run([*CLUSTER, *args], timeout=timeout,
              env={'MDXBENCH_ES_TIMEOUT': str(HANG_S), 'MDXBENCH_ES_SECURITY': '1',
                   'MDXBENCH_ES_ADMIN_USER': USER,
                   'MDXBENCH_ES_ADMIN_PASSWORD_FILE': SECRETS.get('pw', '')})
    assert res.returncode == 0, res.stdout + res.stderr
    return res.stdout.strip()


@pytest.fixture(scope='module')
def cluster(tmp_path_factory):
    '''The three nodes, security on, started for this module and stopped after it; a
    client of all (through the cluster's CA, as the admin).'''
    from elasticsearch import Elasticsearch

    pw = tmp_path_factory.mktemp('es-cluster') / 'admin.pw'
    pw.write_text(PASSWORD + '\n')
    os.chmod(pw, 0o600)
    SECRETS['pw'] = str(pw)
    es_cluster('start', '3')
    SECRETS['ca'] = es_cluster('ca')
    urls = es_cluster('urls').split(',')
    assert all(u.startswith('https://') for u in urls), urls
    client = Elasticsearch(urls, request_timeout=HANG_S, max_retries=2,
                           ca_certs=SECRETS['ca'], basic_auth=(USER, PASSWORD))
    try:
        yield {'urls': urls, 'client': client}
    finally:
        run([*CLUSTER, 'stop'], timeout=HANG_S)


def _secured(env):
    '''``env`` with the cluster's credentials and CA, as a site gives mdxbench them.'''
    return dict(env, MDXBENCH_ES_USER=USER, MDXBENCH_ES_PASSWORD_FILE=SECRETS['pw'],
                MDXBENCH_ES_CA_CERTS=SECRETS['ca'])


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
    env = _secured(dict(os.environ, MDXBENCH_ES_URL=','.join(cluster['urls']),
                        MDXBENCH_ES_INDEX_PREFIX=prefix,
                        MDXBENCH_STATE_DIR=str(tmp_path / 'state'), **env))
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
    assert PASSWORD not in out + err          # the credentials are never shown
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


def _env(cluster, prefix, tmp_path, **extra):
    return _secured(dict(os.environ, MDXBENCH_ES_URL=','.join(cluster['urls']),
                         MDXBENCH_ES_INDEX_PREFIX=prefix,
                         MDXBENCH_STATE_DIR=str(tmp_path / 'state'),
                         MDXBENCH_EVENTS=str(tmp_path / 'events.jsonl'), **extra))


def _cycle(env, plogs, state, *extra):
    return ['cycle', '--system', 'local', '--perflogs', str(plogs), '--state', str(state),
            '--json', str(state) + '.json', '-q', *extra]


def _found(state):
    '''What a cycle found: its records and change points, and each incident's series.'''
    rec = json.loads(pathlib.Path(str(state) + '.json').read_text())
    incidents = json.loads((pathlib.Path(state) / 'incidents.json').read_text())['incidents']
    return {'records': rec['records'], 'change_points': rec['change_points'],
            'incidents': {i: sorted(json.dumps(s, sort_keys=True) for s in inc['series'])
                          for i, inc in incidents.items()}}


def _readers(client):
    stats = client.nodes.stats(metric='indices', index_metric='search')['nodes']
    return {n['name'] for n in stats.values() if n['indices']['search']['open_contexts']}


def _reader(client):
    '''The name of the node that holds a read's point in time, or None: a node with an open
    search context in three looks 0.2 s apart (a plain search -- the aggregation before the
    read -- holds one only while it runs).'''
    held = _readers(client)
    for _ in range(2):
        if not held:
            return None
        time.sleep(0.2)
        held &= _readers(client)
    return min(held) if held else None


def _make_master(client, name, nodes):
    '''Have ``name`` elected master: the others excluded from the voting configuration
    (the master steps down, ``name`` alone can win), then the exclusions cleared and the
    voting configuration back to all the nodes.'''
    others = ','.join(n for n in nodes if n != name)
    client.cluster.post_voting_config_exclusions(node_names=others, timeout='60s')
    client.cluster.delete_voting_config_exclusions(wait_for_removal=False)
    t0 = time.monotonic()
    while True:
        state = client.cluster.state(metric='metadata')
        voters = state['metadata']['cluster_coordination']['last_committed_config']
        master = es_cluster('master')
        if len(voters) == len(nodes) and master == name:
            return
        assert time.monotonic() - t0 < HANG_S, (voters, master)
        time.sleep(0.2)


def test_the_master_killed_during_a_cycles_read_changes_nothing_it_finds(cluster, tmp_path):
    '''A history of 12,108 records of `local` (2,000 runs of HpccStream's six figures, and
    the real SockperfPingPong history slowed from its 25th run: one incident) ingested and
    read by an undisturbed cycle. A second cycle, with a local copy of the history of its
    own (so it reads the whole history again) and pages of 10 documents (so the read lasts
    tens of seconds), has its read's node -- the one holding the point in time, made the elected
    master once the read began -- killed. The read is started again on the nodes left
    (said on standard error), and the cycle ends with the same records, change points and
    incident as the undisturbed one; or, if Elasticsearch did not come back within its
    wait, with the pending status (75) and a message naming the partition, and the next
    cycle finds them.'''
    client, prefix = cluster['client'], f'mdxbench-master-{uuid.uuid4().hex[:8]}'
    plogs = _perflog(tmp_path, 2000)
    slowed_sockperf(tmp_path)
    env = _env(cluster, prefix, tmp_path)
    calm = mdxbench(*_cycle(env, plogs, tmp_path / 'calm'), env=env, timeout=HANG_S)
    assert calm.returncode == 1, calm.stdout + calm.stderr       # a new incident
    assert 'created 12108' in calm.stdout, calm.stdout
    want = _found(tmp_path / 'calm')
    assert want['records'] == 12108 and len(want['incidents']) == 1, want

    storm_env = dict(env, MDXBENCH_ES_PAGE='10',
                     MDXBENCH_HISTORY_DIR=str(tmp_path / 'storm-history'))
    storm = [str(VENV_BIN / 'mdxbench'), *_cycle(env, plogs, tmp_path / 'storm')]
    proc = subprocess.Popen(storm, env=storm_env, stdout=subprocess.PIPE,
                            stderr=subprocess.PIPE, text=True)
    t0 = time.monotonic()
    while (reader := _reader(client)) is None:
        assert proc.poll() is None, proc.communicate()
        assert time.monotonic() - t0 < HANG_S, 'the cycle opened no point in time'
        time.sleep(0.05)
    t1 = time.monotonic()
    _make_master(client, reader, ['mdxes1', 'mdxes2', 'mdxes3'])
    elected = time.monotonic() - t1
    # the read still open on that node: else the kill would test nothing
    assert proc.poll() is None and reader in _readers(client), \
        f'the read ended in the {elected:.1f} s its node took to be elected'
    es_cluster('kill', reader)
    out, err = proc.communicate(timeout=HANG_S)
    print(f'{reader} (the master, holding the read; elected in {elected:.1f} s) '
          f'killed after {time.monotonic() - t0:.1f} s: exit {proc.returncode}; '
          f'{err.strip()[-600:]}')
    try:
        if proc.returncode == 75:
            assert 'did not recover within' in out + err, out + err
            es_cluster('restart', reader)
            proc = subprocess.run(storm, env=storm_env, capture_output=True, text=True,
                                  timeout=HANG_S)
        else:
            assert 'again in 1 s' in err, err       # the read was lost, and started again
        assert proc.returncode == 1, out + err
        assert _found(tmp_path / 'storm') == want
    finally:
        # as an operator restarts a node: without the admin's password (the node keeps its
        # user); if it is running, this only waits for it
        again = run([*CLUSTER, 'restart', reader], timeout=HANG_S)
        assert again.returncode == 0, again.stdout + again.stderr
    health = client.cluster.health(wait_for_status='green', wait_for_nodes=3,
                                   timeout=f'{HANG_S}s')
    assert health['number_of_nodes'] == 3, health
    client.indices.delete(index=','.join(client.indices.get(index=f'{prefix}-*')))


def _night(base, night, lines=500):
    '''The perflog of one night: ``lines`` runs of HpccStream (the captured real line, six
    figures each), each its own job id and completion time (a minute apart).'''
    import datetime as dt

    from conftest import FIXTURES_PERFLOG

    header, line = FIXTURES_PERFLOG.read_text().splitlines()[:2]
    t0 = dt.datetime(2026, 11, 1, tzinfo=dt.timezone.utc) + dt.timedelta(hours=12 * night)
    out = [header]
    for i in range(lines):
        cols = line.split('|')
        cols[0] = (t0 + dt.timedelta(minutes=i)).isoformat()
        cols[8] = str(night * 100000 + i)
        out.append('|'.join(cols))
    d = base / 'perflogs' / 'local' / 'debug'
    d.mkdir(parents=True)
    (d / 'HpccStream.log').write_text('\n'.join(out) + '\n')
    return base / 'perflogs'


def test_a_rolling_restart_under_nightly_ingests_loses_nothing(cluster, tmp_path):
    '''Nightly ingests (each 500 runs of six figures: 3,000 records) one after the other,
    while every node of the cluster is restarted in turn (ci/es-cluster.sh roll: replica
    allocation off, the node stopped and started, allocation on, green before the next).
    Each ingest ends with its 3,000 records created -- none present (a retried request
    whose first try landed is read back as its own), none pending -- and the indices hold
    3,000 documents a night, each once.'''
    client, prefix = cluster['client'], f'mdxbench-roll-{uuid.uuid4().hex[:8]}'
    env = dict(_env(cluster, prefix, tmp_path), MDXBENCH_ES_TIMEOUT='30')
    rolled, results = threading.Event(), []

    def nights():
        for night in range(1, 200):     # bounded: a roll takes minutes, a night seconds
            if night > 1:
                rolled.wait(3)          # a night every few seconds, not back to back
            plogs = _night(tmp_path / f'night{night}', night)
            results.append(mdxbench('ingest', str(plogs), '--state',
                                    str(tmp_path / f'night{night}.json'), '--retry-seconds',
                                    '600', env=env, timeout=HANG_S))
            if rolled.is_set() or results[-1].returncode != 0:
                return

    ingests = threading.Thread(target=nights)
    ingests.start()
    try:
        t0 = time.monotonic()
        es_cluster('roll')
        print(f'rolling restart in {time.monotonic() - t0:.0f} s, {len(results)} nights '
              'ingested meanwhile')
    finally:
        rolled.set()
        ingests.join(HANG_S)
    assert len(results) >= 3, [r.stdout for r in results]
    for r in results:
        assert r.returncode == 0, r.stdout + r.stderr
        assert 'records 3000, sent 3000, created 3000, present 0, rejected 0, malformed 0, ' \
               'pending 0' in r.stdout, r.stdout
    health = client.cluster.health(index=f'{prefix}-*', wait_for_status='green',
                                   timeout=f'{HANG_S}s')
    assert health['status'] == 'green', health
    assert _count(client, prefix) == 3000 * len(results)
    client.indices.delete(index=','.join(client.indices.get(index=f'{prefix}-*')))


def _trend_pages(state):
    '''{file: bytes} of the trend pages of the cycle's site (one script per series).'''
    root = pathlib.Path(state) / 'site' / 'report' / 'trends'
    return {str(f.relative_to(root)): f.read_bytes() for f in sorted(root.rglob('*.js'))}


def test_a_snapshot_restored_into_an_empty_cluster_gives_the_next_cycle_the_same_history(
        cluster, tmp_path):
    '''The real SockperfPingPong history slowed from its 25th run (108 records, one
    incident) ingested by a cycle; `mdxbench history snapshot` to a filesystem repository
    under the nodes' path.repo. The history then lost (its indices deleted, the
    repository's registration too), `mdxbench history restore` registers the repository
    again and restores the monthly indices. The next cycle, with no perflog left to ingest, reads
    108 records from the restored cluster and gives the same change points, the same one
    incident (nothing new) and the same trend pages; the local copy verifies against
    the restored indices partition by partition.'''
    client, prefix = cluster['client'], f'mdxbench-snap-{uuid.uuid4().hex[:8]}'
    plogs = slowed_sockperf(tmp_path)
    env = _env(cluster, prefix, tmp_path)
    state = tmp_path / 'cycle'
    first = mdxbench(*_cycle(env, plogs, state), env=env, timeout=HANG_S)
    assert first.returncode == 1, first.stdout + first.stderr
    before, pages = _found(state), _trend_pages(state)
    assert before['records'] == 108 and len(before['incidents']) == 1 and pages, before
    assert _count(client, prefix) == 108

    location = f"{es_cluster('snapshots')}/{prefix}"
    snap = mdxbench('history', 'snapshot', '--location', location, '--keep', '1', env=env,
                    timeout=HANG_S)
    assert snap.returncode == 0, snap.stdout + snap.stderr
    assert f'snapshot {prefix}-' in snap.stdout and ': 1 indices' in snap.stdout, snap.stdout
    oldest = snap.stdout.split('snapshot ', 1)[1].split()[0]
    time.sleep(1.1)             # the next second: a snapshot's name is its time
    snap = mdxbench('history', 'snapshot', '--keep', '1', env=env, timeout=HANG_S)
    assert snap.returncode == 0, snap.stdout + snap.stderr
    assert f'deleted 1 older: {oldest}' in snap.stdout, snap.stdout

    # the history lost: its indices deleted and the repository's registration with them
    # (what a cluster rebuilt from nothing lacks; `ci/es-cluster.sh wipe` makes one such,
    # at the price of three node starts)
    client.indices.delete(index=','.join(client.indices.get(index=f'{prefix}-*')))
    client.snapshot.delete_repository(name='mdxbench')
    assert client.indices.get(index=f'{prefix}-*', allow_no_indices=True) == {}
    restored = mdxbench('history', 'restore', '--location', location, env=env, timeout=HANG_S)
    assert restored.returncode == 0, restored.stdout + restored.stderr
    assert 'restored 1 indices' in restored.stdout, restored.stdout
    assert _count(client, prefix) == 108
    again = mdxbench('history', 'restore', env=env, timeout=HANG_S)
    assert again.returncode == 1 and 'never overwrites' in again.stderr, again.stderr

    nothing = tmp_path / 'rotated'
    (nothing / 'local').mkdir(parents=True)
    nxt = mdxbench(*_cycle(env, nothing, state), env=env, timeout=HANG_S)
    assert nxt.returncode == 0, nxt.stdout + nxt.stderr         # the incident told already
    assert _found(state) == before
    assert _trend_pages(state) == pages
    verify = mdxbench('history', 'verify', env=env, timeout=HANG_S)
    assert verify.returncode == 0, verify.stdout + verify.stderr
    client.indices.delete(index=','.join(client.indices.get(index=f'{prefix}-*')))
