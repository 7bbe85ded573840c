'''mdxbench cycle with the real Elasticsearch: the slowed real history (see
tests/unit/test_cycle.py) ingested and read back from Elasticsearch gives the same one
incident as the perflogs; a webhook on a loopback HTTP server of the test's own is told
once; with Elasticsearch unreachable the records stay pending, the cycle reads the
perflogs and exits 75, and the next cycle sends them.'''
import http.server
import json
import threading

from conftest import count, mdxbench
from histories import slowed_sockperf


class Hook(http.server.BaseHTTPRequestHandler):
    received = []

    def do_POST(self):
        Hook.received.append(json.loads(self.rfile.read(int(self.headers['Content-Length']))))
        self.send_response(204)
        self.end_headers()

    def log_message(self, *a):
        pass


def test_cycle_from_elasticsearch_tells_a_webhook_once(es, tmp_path):
    plogs = slowed_sockperf(tmp_path)
    server = http.server.ThreadingHTTPServer(('127.0.0.1', 0), Hook)
    threading.Thread(target=server.serve_forever, daemon=True).start()
    Hook.received.clear()
    url = f'http://127.0.0.1:{server.server_address[1]}/hook'
    env = dict(es['env'], MDXBENCH_STATE_DIR=str(tmp_path / 'state'),
               MDXBENCH_EVENTS=str(tmp_path / 'events.jsonl'))
    args = ['cycle', '--system', 'local', '--perflogs', str(plogs), '--json',
            str(tmp_path / 'cycle.json'), '--notify-command',
            f'curl -sf -m 10 -H "Content-Type: application/json" --data-binary @- {url}']
    try:
        first = mdxbench(*args, env=env)
        assert first.returncode == 1, first.stdout + first.stderr
        record = json.loads((tmp_path / 'cycle.json').read_text())
        assert record['source'] == 'Elasticsearch' and record['records'] == count(es) == 108
        assert len(record['new']) == 1 and record['notified'] == record['new']
        assert [h['id'] for h in Hook.received] == record['new']
        assert {s['perf_var'] for s in Hook.received[0]['series']} == {'mean_rtt', 'p50_rtt'}

        # found by the scan over the local copy's files, which it keeps for the next cycle
        kept = json.loads((tmp_path / 'state' / 'cycle' / 'local' / 'scan' /
                           'manifest.json').read_text())['last']
        assert kept['routed'] >= 1 and kept['series'] == 3 and kept['explained'] == 2, kept

        # the same answer from the perflogs alone (one table in memory)
        alone = mdxbench('cycle', '--system', 'local', '--no-ingest', '--perflogs', str(plogs),
                         '--state', str(tmp_path / 'perflog-cycle'), env=env)
        assert alone.returncode == 1 and record['new'][0] in alone.stdout, alone.stdout

        again = mdxbench(*args, env=env)
        assert again.returncode == 0, again.stdout + again.stderr
        assert len(Hook.received) == 1
    finally:
        server.shutdown()


def test_cycle_with_elasticsearch_unreachable_exits_75_and_catches_up(es, tmp_path):
    plogs = slowed_sockperf(tmp_path)
    env = dict(es['env'], MDXBENCH_STATE_DIR=str(tmp_path / 'state'),
               MDXBENCH_EVENTS=str(tmp_path / 'events.jsonl'))
    down = mdxbench('cycle', '--system', 'local', '--perflogs', str(plogs), '--retry-seconds',
                    '1', '--es-url', 'http://127.0.0.1:9', env=env)
    assert down.returncode == 75, down.stdout + down.stderr
    assert 'perflogs (Elasticsearch did not take every record)' in down.stdout
    assert 'pending 108' in down.stdout and count(es) == 0
    up = mdxbench('cycle', '--system', 'local', '--perflogs', str(plogs), env=env)
    assert up.returncode == 0, up.stdout + up.stderr      # the incident was told already
    assert count(es) == 108 and 'created 108' in up.stdout
