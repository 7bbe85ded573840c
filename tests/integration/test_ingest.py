'''mdxbench ingest against the real Elasticsearch: nothing lost, nothing duplicated.'''
import json
import pathlib
import re
import socket
import threading
import time

from hang import HANG_S
from conftest import FIXTURES_PERFLOG, count, mdxbench


def _perflog(tmp_path, nlines, extra_lines=()):
    '''A perflog of nlines records made from the captured real line, each with its own
    job id and completion time (as many runs of the check would give).'''
    header, line = FIXTURES_PERFLOG.read_text().splitlines()[:2]
    d = tmp_path / 'perflogs' / 'local' / 'debug'
    d.mkdir(parents=True)
    out = [header]
    for i in range(nlines):
        cols = line.split('|')
        cols[0] = f'2026-11-{1 + i // 1440:02d}T{(i // 60) % 24:02d}:{i % 60:02d}:00+00:00'
        cols[8] = str(1000 + i)
        out.append('|'.join(cols))

    out += list(extra_lines)
    (d / 'HpccStream.log').write_text('\n'.join(out) + '\n')
    return tmp_path / 'perflogs'


def test_unreachable_elasticsearch_spools_and_replays(es, tmp_path):
    plogs = _perflog(tmp_path, 50)
    state = tmp_path / 'state.json'
    with socket.socket() as s:
        s.bind(('127.0.0.1', 0))
        port = s.getsockname()[1]   # closed again when the block ends: nothing listens

    env = dict(es['env'], MDXBENCH_ES_URL=f'http://127.0.0.1:{port}')
    res = mdxbench('ingest', str(plogs), '--state', str(state), '--retry-seconds', '2', env=env)
    assert res.returncode == 75, res.stdout + res.stderr
    assert 'pending 300' in res.stdout
    assert 'run ingest again' in res.stderr

    res = mdxbench('ingest', str(plogs), '--state', str(state), env=es['env'])
    assert res.returncode == 0, res.stdout + res.stderr
    assert 'records 300, sent 300, created 300' in res.stdout
    assert count(es) == 300


def test_elasticsearch_that_never_answers_times_out(es, tmp_path):
    plogs = _perflog(tmp_path, 3)
    srv = socket.socket()
    srv.bind(('127.0.0.1', 0))
    srv.listen(16)
    accepted = []
    stop = threading.Event()

    def _accept():
        srv.settimeout(0.2)
        while not stop.is_set():
            try:
                accepted.append(srv.accept()[0])   # accept, never answer
            except OSError:
                pass

    t = threading.Thread(target=_accept, daemon=True)
    t.start()
    try:
        env = dict(es['env'], MDXBENCH_ES_URL=f'http://127.0.0.1:{srv.getsockname()[1]}',
                   MDXBENCH_ES_TIMEOUT='1')
        t0 = time.monotonic()
        res = mdxbench('ingest', str(plogs), '--state', str(tmp_path / 's.json'),
                       '--retry-seconds', '3', env=env, timeout=HANG_S)
        elapsed = time.monotonic() - t0
    finally:
        stop.set()
        t.join()
        for c in accepted:
            c.close()

        srv.close()

    assert res.returncode == 75, res.stdout + res.stderr
    assert 'pending 18' in res.stdout
    assert accepted, 'ingest never connected'
    assert elapsed < 30


class _SlowFirstBulk:
    '''A TCP relay to the real Elasticsearch that holds back the answer to the first
    ``_bulk`` request for ``hold`` seconds: Elasticsearch has stored the documents, the
    client has timed out and sends the request again (a busy Elasticsearch in CI).'''

    def __init__(self, url, hold):
        host, port = url.split('//')[1].rstrip('/').split(':')
        self.target, self.hold = (host, int(port)), hold
        self.held = threading.Event()
        self.srv = socket.create_server(('127.0.0.1', 0))
        self.url = f'http://127.0.0.1:{self.srv.getsockname()[1]}'
        self.stop = threading.Event()
        threading.Thread(target=self._accept, daemon=True).start()

    def _accept(self):
        self.srv.settimeout(0.2)
        while not self.stop.is_set():
            try:
                client = self.srv.accept()[0]
            except OSError:
                continue
            upstream = socket.create_connection(self.target)
            state = {'hold': False}
            threading.Thread(target=self._pump, args=(client, upstream, state, True),
                             daemon=True).start()
            threading.Thread(target=self._pump, args=(upstream, client, state, False),
                             daemon=True).start()

    def _pump(self, src, dst, state, request):
        try:
            while data := src.recv(65536):
                if request and b'/_bulk' in data and not self.held.is_set():
                    self.held.set()
                    state['hold'] = True
                if not request and state['hold']:
                    state['hold'] = False
                    time.sleep(self.hold)
                dst.sendall(data)
        except OSError:
            pass
        finally:
            for s in (src, dst):
                try:
                    s.shutdown(socket.SHUT_RDWR)
                except OSError:
                    pass

    def close(self):
        self.stop.set()
        self.srv.close()


def test_a_request_answered_too_late_stores_once_and_counts_as_created(es, tmp_path):
    '''The first bulk request times out after Elasticsearch stored it; the retry meets
    the documents it stored itself (409). They count as created, not as already present:
    only documents stored before this ingest are "present".'''
    plogs = _perflog(tmp_path, 20)
    relay = _SlowFirstBulk(es['url'], hold=4)
    try:
        env = dict(es['env'], MDXBENCH_ES_URL=relay.url, MDXBENCH_ES_TIMEOUT='2')
        res = mdxbench('ingest', str(plogs), '--state', str(tmp_path / 's.json'),
                       '--retry-seconds', '30', env=env, timeout=HANG_S)
    finally:
        relay.close()
    assert relay.held.is_set(), 'the relay never saw a bulk request'
    assert res.returncode == 0, res.stdout + res.stderr
    assert 'records 120, sent 120, created 120, present 0' in res.stdout, res.stdout
    assert count(es) == 120

    # the same perflogs again with a new state file: now every record was there before
    res = mdxbench('ingest', str(plogs), '--state', str(tmp_path / 's2.json'), env=es['env'])
    assert res.returncode == 0, res.stdout + res.stderr
    assert 'records 120, sent 120, created 0, present 120' in res.stdout, res.stdout
    assert count(es) == 120


def test_malformed_line_is_reported_and_the_rest_ingested(es, tmp_path):
    header, line = FIXTURES_PERFLOG.read_text().splitlines()[:2]
    plogs = _perflog(tmp_path, 2, extra_lines=[line[:-7], line.replace('|debug|', '|deb|ug|')])
    res = mdxbench('ingest', str(plogs), '--state', str(tmp_path / 's.json'),
                   '--dead-letter', str(tmp_path / 'dead.jsonl'), env=es['env'])
    assert res.returncode == 1, res.stdout + res.stderr
    assert 'HpccStream.log:4: ' in res.stderr and 'HpccStream.log:5: ' in res.stderr
    assert 'records 12, sent 12, created 12' in res.stdout and 'malformed 2' in res.stdout
    assert count(es) == 12
    dead = [json.loads(x) for x in (tmp_path / 'dead.jsonl').read_text().splitlines()]
    assert [d['line'] for d in dead] == [4, 5]
    assert all(d['kind'] == 'malformed' and d['raw'] for d in dead)


def test_rejected_records_go_to_the_dead_letter_file(es, tmp_path):
    plogs = _perflog(tmp_path, 2)
    # An index whose mapping conflicts with ours: perf_value is not a number there
    es['client'].indices.create(index=f"{es['prefix']}-local-2026.11",
                                mappings={'properties': {'perf_value': {'type': 'boolean'}}})
    res = mdxbench('ingest', str(plogs), '--state', str(tmp_path / 's.json'),
                   '--dead-letter', str(tmp_path / 'dead.jsonl'), env=es['env'])
    assert res.returncode == 1, res.stdout + res.stderr
    assert 'rejected 12' in res.stdout
    assert 'rejected by Elasticsearch' in res.stderr and 'document_parsing_exception' in res.stderr
    dead = [json.loads(x) for x in (tmp_path / 'dead.jsonl').read_text().splitlines()]
    assert len(dead) == 12 and all(d['kind'] == 'rejected' for d in dead)
    assert dead[0]['doc']['perf_var'] == 'copy'


def _spawn_ingests(n, plogs, state, env, tmp_path):
    """Start ``n`` ingests on one state file while the test holds its lock, as a running
    ingest would (started one after another, a loaded machine could let the first finish
    before the next asks for the lock: then nothing here is concurrent); let go once every
    one of them says it waits, and return their (exit status, stdout, stderr)."""
    import fcntl
    import os
    import subprocess

    from conftest import VENV_BIN, ROOT

    full = dict(os.environ, **env)
    outs = [(tmp_path / f'ingest{i}.out', tmp_path / f'ingest{i}.err') for i in range(n)]
    lock = pathlib.Path(str(state) + '.lock')
    lock.parent.mkdir(parents=True, exist_ok=True)
    with open(lock, 'a+') as held:
        fcntl.flock(held, fcntl.LOCK_EX)
        procs = []
        for out, err in outs:
            with open(out, 'w') as o, open(err, 'w') as e:
                procs.append(subprocess.Popen(
                    [str(VENV_BIN / 'mdxbench'), 'ingest', str(plogs), '--state', str(state)],
                    stdout=o, stderr=e, text=True, env=full, cwd=ROOT))
        deadline = time.monotonic() + 300
        while not all('waiting up to' in err.read_text() for _, err in outs):
            assert time.monotonic() < deadline and all(p.poll() is None for p in procs), \
                [err.read_text() for _, err in outs]
            time.sleep(0.2)
    return [(p.wait(timeout=600), out.read_text(), err.read_text())
            for p, (out, err) in zip(procs, outs)]


def test_four_concurrent_ingests_store_everything_once(es, tmp_path):
    '''Four real processes on the same perflogs and state file, all waiting for its lock
    together: one gets it and sends; the others wait on it, then find everything already
    acknowledged. 0 lost, 0 duplicated, 0 crashed, every exit 0.'''
    plogs = _perflog(tmp_path, 2000)              # 2000 lines x 6 records
    state = tmp_path / 'ingest' / 'state.json'
    results = _spawn_ingests(4, plogs, state, es['env'], tmp_path)
    for code, out, err in results:
        assert code == 0, out + err
        assert 'Traceback' not in err, err
    assert count(es) == 12000
    created = [int(re.search(r'created (\d+)', out).group(1)) for _, out, _ in results]
    present = [int(re.search(r'present (\d+)', out).group(1)) for _, out, _ in results]
    assert sum(created) == 12000, results
    # the waiting runs read the state the first left: they sent nothing again
    assert sum(present) == 0, results
    assert sorted(created) == [0, 0, 0, 12000]
    assert json.loads(state.read_text())                # one valid state, no stray temps
    assert sorted(p.name for p in state.parent.iterdir()) == ['state.json', 'state.json.lock']


def test_an_ingest_that_cannot_get_the_lock_exits_73(es, tmp_path):
    import fcntl

    plogs = _perflog(tmp_path, 5)
    state = tmp_path / 'state.json'
    with open(str(state) + '.lock', 'a+') as held:
        fcntl.flock(held, fcntl.LOCK_EX)            # as a running ingest holds it
        res = mdxbench('ingest', str(plogs), '--state', str(state), '--lock-wait', '1',
                       env=es['env'])
    assert res.returncode == 73, res.stdout + res.stderr
    assert 'another mdxbench ingest holds' in res.stderr and 'nothing was sent' in res.stderr
    assert count(es) == 0 and not state.exists()
    res = mdxbench('ingest', str(plogs), '--state', str(state), env=es['env'])
    assert res.returncode == 0 and count(es) == 30, res.stdout + res.stderr


def test_a_line_still_being_written_is_unfinished_then_sent(es, tmp_path):
    '''ReFrame writes a perflog line while ingest reads: the torn last line is left
    (exit 0, "unfinished 1"), and the run after ReFrame finished the line sends it once.'''
    header, line = FIXTURES_PERFLOG.read_text().splitlines()[:2]
    plogs = _perflog(tmp_path, 3)
    log = next(plogs.rglob('*.log'))
    cols = line.split('|')
    cols[8] = '99999'
    last = '|'.join(cols) + '\n'
    with open(log, 'a') as fp:
        fp.write(last[:len(last) // 2])
    state = tmp_path / 's.json'
    res = mdxbench('ingest', str(plogs), '--state', str(state), env=es['env'])
    assert res.returncode == 0, res.stdout + res.stderr
    assert 'created 18' in res.stdout and 'malformed 0' in res.stdout
    assert 'unfinished 1' in res.stdout and 'HpccStream.log:5: last line not finished' in res.stderr
    with open(log, 'a') as fp:
        fp.write(last[len(last) // 2:])
    res = mdxbench('ingest', str(plogs), '--state', str(state), env=es['env'])
    assert res.returncode == 0, res.stdout + res.stderr
    assert 'records 6, sent 6, created 6' in res.stdout and 'unfinished 0' in res.stdout
    assert count(es) == 24


def test_an_older_template_is_upgraded_in_place_and_its_indices_take_the_replicas(es, tmp_path):
    '''An index template and a monthly index as the previous version made them (no replica,
    fixed): the next ingest replaces the template, says what changed, and the index it made
    now expands its replicas to the nodes there are (0-1: none on this one node, so it
    stays green); MDXBENCH_ES_REPLICAS=1 then fixes one copy (yellow on one node).'''
    from mdxbench.post.store import documents

    client, prefix = es['client'], es['prefix']
    old = documents.template_body(prefix, {'number_of_shards': 1, 'number_of_replicas': 0})
    client.indices.put_index_template(name=prefix, **old)
    client.indices.create(index=f'{prefix}-local-2026.10')
    res = mdxbench('ingest', str(_perflog(tmp_path, 2)), '--state', str(tmp_path / 's.json'),
                   env=es['env'])
    assert res.returncode == 0, res.stdout + res.stderr
    assert (f'index template {prefix}: settings number_of_replicas 0, number_of_shards 1 -> '
            'auto_expand_replicas 0-1, number_of_shards 1') in res.stderr, res.stderr
    assert f'indices {prefix}-*: auto_expand_replicas 0-1' in res.stderr
    tpl = client.indices.get_index_template(name=prefix)['index_templates'][0]
    assert tpl['index_template']['template']['settings']['index'] == {
        'number_of_shards': '1', 'auto_expand_replicas': '0-1'}
    for index in (f'{prefix}-local-2026.10', f'{prefix}-local-2026.11'):
        s = client.indices.get_settings(index=index)[index]['settings']['index']
        assert s['auto_expand_replicas'] == '0-1', (index, s)
    health = client.cluster.health(index=f'{prefix}-*')
    assert health['status'] == 'green', health
    # the same settings again: nothing said
    res = mdxbench('ingest', str(tmp_path / 'perflogs'), '--state', str(tmp_path / 's.json'),
                   env=es['env'])
    assert 'index template' not in res.stderr, res.stderr
    res = mdxbench('ingest', str(tmp_path / 'perflogs'), '--state', str(tmp_path / 's.json'),
                   env=dict(es['env'], MDXBENCH_ES_REPLICAS='1'))
    assert res.returncode == 0, res.stdout + res.stderr
    assert f'indices {prefix}-*: auto_expand_replicas false, number_of_replicas 1' in res.stderr
    s = client.indices.get_settings(index=f'{prefix}-local-2026.11')[
        f'{prefix}-local-2026.11']['settings']['index']
    assert (s['number_of_replicas'], s['auto_expand_replicas']) == ('1', 'false'), s


def test_a_node_of_the_hosts_list_that_is_down_is_passed_over(es, tmp_path):
    '''MDXBENCH_ES_URL names a node where nothing listens before the real one: the client
    sends each request the refused node could not take to the next, and every record is
    stored once (300 records: 50 lines of six figures).'''
    with socket.socket() as s:
        s.bind(('127.0.0.1', 0))
        port = s.getsockname()[1]
    env = dict(es['env'], MDXBENCH_ES_URL=f'http://127.0.0.1:{port},{es["url"]}')
    res = mdxbench('ingest', str(_perflog(tmp_path, 50)), '--state', str(tmp_path / 's.json'),
                   '--retry-seconds', '5', env=env, timeout=HANG_S)
    assert res.returncode == 0, res.stdout + res.stderr
    assert 'records 300, sent 300, created 300' in res.stdout, res.stdout
    assert count(es) == 300
    # sent again (the state lost): with several nodes every 409 is read back -- stored
    # before this run, so present, not created
    (tmp_path / 's.json').unlink()
    res = mdxbench('ingest', str(tmp_path / 'perflogs'), '--state', str(tmp_path / 's.json'),
                   '--retry-seconds', '5', env=env, timeout=HANG_S)
    assert res.returncode == 0, res.stdout + res.stderr
    assert 'records 300, sent 300, created 0, present 300' in res.stdout, res.stdout
    assert count(es) == 300
