'''One cycle of the operator's loop on perflogs (``--no-ingest``; with Elasticsearch in
tests/integration/test_cycle_es.py): the real history of SockperfPingPong recorded on
`local` (tests/fixtures/perflogs/history-local), with the latencies of its runs from the
25th on made 1.5x in a copy -- test input derived from a real history, standing for a
slowdown: one incident, one notification, one feed entry; a second cycle tells nobody.'''
import json
import re
import xml.etree.ElementTree as ET

import pytest

from histories import HISTORY, shifted, slowed_sockperf
from mdxbench.post import cli
from mdxbench.post.site import trends

ATOM = '{http://www.w3.org/2005/Atom}'


@pytest.fixture
def slowed(tmp_path, monkeypatch):
    monkeypatch.setenv('MDXBENCH_EVENTS', str(tmp_path / 'events.jsonl'))
    slowed_sockperf(tmp_path)
    shifted(HISTORY / 'local' / 'debug' / 'HpccStream.log',
            tmp_path / 'perflogs' / 'local' / 'debug' / 'HpccStream.log', 0, 1.0)
    return tmp_path


def cycle(base, *extra):
    return cli.main(['cycle', '--system', 'local', '--no-ingest', '--perflogs',
                     str(base / 'perflogs'), '--state', str(base / 'state'), *extra])


def entries(base):
    return ET.parse(base / 'state' / 'site' / 'feed.xml').getroot().findall(f'{ATOM}entry')


def test_a_slowdown_is_one_incident_told_once(slowed, capsys):
    told = slowed / 'told'
    told.mkdir()
    notify = ['--notify-command', f'cat > {told}/$(date +%s%N).json']
    assert cycle(slowed, *notify) == 1
    out = capsys.readouterr().out
    files = list(told.iterdir())
    assert len(files) == 1, out
    inc = json.loads(files[0].read_text())
    assert inc['system'] == 'local' and inc['kind'] == 'unexplained'
    assert {s['perf_var'] for s in inc['series']} == {'mean_rtt', 'p50_rtt'}
    assert all(s['run'] == 25 and 0.4 < s['effect'] < 0.6 for s in inc['series'])
    feed = entries(slowed)
    assert len(feed) == 1 and inc['id'] in feed[0].find(f'{ATOM}id').text
    assert feed[0].find(f'{ATOM}title').text.startswith('[open] local:debug: SockperfPingPong')
    state = json.loads((slowed / 'state' / 'incidents.json').read_text())
    assert [h['state'] for h in state['incidents'][inc['id']]['history']] == ['new', 'open']
    assert state['last_cycle']['reframe_exit'] is None          # no --run: no ReFrame
    # the trend page draws the cycle's change points (handed over, not found again)
    index = trends.index_rows(slowed / 'state' / 'site' / 'report' / 'trends.html')
    slow = [r for r in index if r['verdict'] == 'regression']
    assert len(slow) >= 2, 'the two slowed series listed'
    assert all(re.fullmatch(r'\+\d+\.\d%', r['effect']) and r['since'].endswith('(run 25)')
               for r in slow), slow

    # nothing new: nobody told, no incident changed
    assert cycle(slowed, *notify) == 0
    assert len(list(told.iterdir())) == 1
    again = json.loads((slowed / 'state' / 'incidents.json').read_text())
    assert again['incidents'] == state['incidents']
    assert again['last_cycle']['new'] == [] and again['last_cycle']['notified'] == []


def test_a_failing_notify_command_is_tried_again_next_cycle(slowed, capsys):
    assert cycle(slowed, '--notify-command', 'echo no route to chat >&2; exit 3') == 1
    assert 'notify-command failed' in capsys.readouterr().out
    state = json.loads((slowed / 'state' / 'incidents.json').read_text())
    inc, = state['incidents'].values()
    assert inc['state'] == 'new' and state['last_cycle']['failed'] == [inc['id']]
    told = slowed / 'told.json'
    assert cycle(slowed, '--notify-command', f'cat > {told}') == 0
    assert json.loads(told.read_text())['id'] == inc['id']
    assert cycle(slowed, '--notify-command', f'rm {told}') == 0      # not sent twice
    assert told.exists()


def test_a_notify_command_past_its_time_limit_is_no_notification(slowed, capsys):
    assert cycle(slowed, '--notify-command', 'sleep 5', '--notify-timeout', '0.5') == 1
    assert 'timed out after 0.5s' in capsys.readouterr().out


def _processes_with(arg):
    '''PIDs whose command line holds ``arg`` (read from /proc).'''
    import pathlib

    out = []
    for p in pathlib.Path('/proc').glob('[0-9]*'):
        try:
            if arg in (p / 'cmdline').read_bytes().replace(b'\0', b' ').decode():
                out.append(int(p.name))
        except OSError:
            pass
    return out


def test_a_compound_notify_command_past_its_time_limit_leaves_no_child(slowed, capsys):
    '''Issue 28: `sleep; mail` in a shell -- the timeout kills the shell and what it
    started (its process group), and the cycle does not wait for the orphan: the orphan
    would sleep past HANG_S, the cycle ends before it (beside CI's quiet session a cycle
    alone took 81 s: the bound is the orphan's sleep, not the cycle's own time).'''
    import time

    from hang import HANG_S

    marker = f'{HANG_S + 57.3141:.4f}'
    t0 = time.monotonic()
    assert cycle(slowed, '--notify-command', f'sleep {marker}; echo sent',
                 '--notify-timeout', '0.5') == 1
    assert time.monotonic() - t0 < HANG_S
    assert 'timed out after 0.5s' in capsys.readouterr().out
    time.sleep(0.2)
    assert _processes_with(f'sleep {marker}') == []


def test_two_overlapping_cycles_of_a_system_notify_once(slowed):
    '''Issue 28: two cycles of one system started together (a slow nightly cycle and a
    manual one): the lock in the state directory serializes them, and the incident is told
    once -- the second cycle finds it told.'''
    import os
    import subprocess
    import sys

    exe = os.path.join(os.path.dirname(sys.executable), 'mdxbench')
    told = slowed / 'told'
    told.mkdir()
    cmd = [exe, 'cycle', '--system', 'local', '--no-ingest', '--perflogs',
           str(slowed / 'perflogs'), '--state', str(slowed / 'state'),
           '--notify-command', f'sleep 1; cat > {told}/$$.json']
    procs = [subprocess.Popen(cmd, stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True)
             for _ in range(2)]
    outs = [p.communicate(timeout=600)[0] for p in procs]
    rcs = sorted(p.returncode for p in procs)
    assert rcs == [0, 1], (rcs, outs)
    sent = [json.loads(f.read_text()) for f in told.iterdir()]
    assert len(sent) == 1, outs
    state = json.loads((slowed / 'state' / 'incidents.json').read_text())
    inc, = state['incidents'].values()
    assert inc['id'] == sent[0]['id'] and inc['state'] == 'open'


def test_an_acknowledged_incident_is_listed_so(slowed, capsys):
    assert cycle(slowed) == 1
    state = json.loads((slowed / 'state' / 'incidents.json').read_text())
    ident, = state['incidents']
    args = ['--system', 'local', '--state', str(slowed / 'state')]
    assert cli.main(['incident', 'ack', *args, ident[:5], '--note', 'known: noisy neighbour']) == 0
    capsys.readouterr()
    assert cli.main(['incident', 'list', *args]) == 0
    assert re.search(rf'^{ident}\s+acknowledged\s', capsys.readouterr().out, re.M)
    assert cli.main(['incident', 'show', *args, 'nosuch']) == 2
    assert cycle(slowed) == 0


def test_nothing_new_skips_the_analysis_and_a_new_run_does_not(slowed, capsys):
    assert cycle(slowed, '--json', str(slowed / 'c1.json')) == 1
    assert cycle(slowed, '--json', str(slowed / 'c2.json')) == 0
    assert json.loads((slowed / 'c2.json').read_text())['unchanged'] is True
    assert 'nothing new since the last cycle' in capsys.readouterr().out
    # one more run of the check (a real line of its history, written again)
    log = slowed / 'perflogs' / 'local' / 'debug' / 'SockperfPingPong.log'
    log.write_text(log.read_text() + log.read_text().splitlines(keepends=True)[-1])
    assert cycle(slowed, '--json', str(slowed / 'c3.json')) == 0
    c3 = json.loads((slowed / 'c3.json').read_text())
    assert c3['unchanged'] is False and c3['records'] == 108 + 3 + 216


def test_the_default_layout_has_an_index_of_the_systems(slowed, monkeypatch):
    monkeypatch.setenv('MDXBENCH_STATE_DIR', str(slowed / 'mdx'))
    assert cli.main(['cycle', '--system', 'local', '--no-ingest', '--perflogs',
                     str(slowed / 'perflogs')]) == 1
    index = (slowed / 'mdx' / 'cycle' / 'index.html').read_text()
    link = re.search(r'<a href="([^"]+)">local</a>', index).group(1)
    assert (slowed / 'mdx' / 'cycle' / link).is_file()
    assert 'exit 1: a new regression incident' in index
