'''Elasticsearch stopped in the middle of an ingest, restarted, the ingest run again: every
record stored exactly once.'''
import subprocess
import time

from conftest import VENV_BIN, count, mdxbench, run
from test_ingest import _perflog


def test_es_stopped_mid_ingest_then_replayed(es, tmp_path):
    plogs = _perflog(tmp_path, 6000)          # 36,000 records
    total = 36000
    state = tmp_path / 'state.json'
    proc = subprocess.Popen(
        [str(VENV_BIN / 'mdxbench'), 'ingest', str(plogs), '--state', str(state),
         '--batch-size', '500', '--retry-seconds', '5'],
        stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True,
        env=dict(__import__('os').environ, **es['env']))
    try:
        deadline = time.monotonic() + 120
        while time.monotonic() < deadline:
            try:
                if count(es) > 0:
                    break
            except Exception:
                pass
            time.sleep(0.2)

        stop = run(['bash', 'ci/elasticsearch.sh', 'stop'], timeout=180)
        assert stop.returncode == 0, stop.stderr
        out, err = proc.communicate(timeout=180)
    finally:
        start = run(['bash', 'ci/elasticsearch.sh', 'start'], timeout=300)
        assert start.returncode == 0, start.stderr

    assert proc.returncode == 75, out + err
    assert 'pending' in out and 'run ingest again' in err
    first = dict(kv.rsplit(' ', 1) for kv in out.strip().splitlines()[-1]
                 .split(': ', 1)[1].split(', '))
    assert int(first['pending']) > 0 and int(first['created']) > 0

    res = mdxbench('ingest', str(plogs), '--state', str(state), env=es['env'], timeout=600)
    assert res.returncode == 0, res.stdout + res.stderr
    second = dict(kv.rsplit(' ', 1) for kv in res.stdout.strip().splitlines()[-1]
                  .split(': ', 1)[1].split(', '))
    # only what was not acknowledged is sent again, plus at most the batch in flight (500):
    # what was acknowledged before the stop is not sent twice
    pending, sent = int(first['pending']), int(second['sent'])
    assert pending <= sent <= pending + 500, (first, second)
    assert int(second['present']) <= 500, second
    assert int(first['created']) + int(second['created']) == total
    assert count(es) == total
