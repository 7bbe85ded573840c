'''mdxbench schedule on the real Slurm of ci/slurm.sh (ScronParameters=enable) with the
scrontab ci/install.sh builds: an entry due in the next minute runs a short cycle by
itself (a real check, its records in Elasticsearch, the incident state and the site
written), Slurm queues its next run, and `remove` gives the user's own lines back as they
were. With scrontab disabled in slurm.conf, the refusal names ScronParameters=enable.'''
import datetime as dt
import json
import os
import pathlib
import re
import shutil
import subprocess
import time

import pytest

from conftest import count, mdxbench, run

OWN = '# an operator\'s own line, which mdxbench must leave alone\n#SCRON --time=1\n@yearly true\n'


@pytest.fixture
def crontab(services, tmp_path):
    '''The calling user's crontab emptied for the test, and given back afterwards.'''
    if not shutil.which('scrontab'):
        pytest.fail('scrontab not on PATH: ci/install.sh builds it from Debian\'s source package')
    before = run(['scrontab', '-l'])
    run(['scrontab', '-r'])
    yield
    if before.returncode == 0:
        (tmp_path / 'before.crontab').write_text(before.stdout)
        run(['scrontab', str(tmp_path / 'before.crontab')])
    else:
        run(['scrontab', '-r'])


def due_in_the_next_minute():
    '''(the entry's time spec, the minute it is due at): 45 s away at least -- its
    install and first listing, two commands, must come before it (on CI's busy machine
    they once took longer than 15 s, and the listing found the job running).'''
    now = dt.datetime.now()
    t = (now + dt.timedelta(minutes=1 if now.second < 15 else 2)).replace(second=0,
                                                                          microsecond=0)
    return f'{t.minute} {t.hour} * * *', t


def test_a_scrontab_entry_runs_a_cycle_by_itself(crontab, es, tmp_path):
    own = tmp_path / 'own.crontab'
    own.write_text(OWN)
    assert run(['scrontab', str(own)]).returncode == 0
    state = tmp_path / 'state'
    cycle = state / 'cycle' / 'local'
    env = dict(es['env'], MDXBENCH_STATE_DIR=str(state),
               MDXBENCH_EVENTS=str(tmp_path / 'events.jsonl'),
               MDXBENCH_LOCAL_SLURM_CONF=os.environ['SLURM_CONF'])
    for attempt in range(3):
        at, due = due_in_the_next_minute()
        res = mdxbench('schedule', 'install', '--system', 'local', '--at', at, '--time',
                       '00:15:00', '--', '-n', 'SockperfPingPong%placement=loopback', '-S',
                       'duration=2', env=env)
        assert res.returncode == 0, res.stdout + res.stderr
        listed = json.loads(mdxbench('schedule', 'list', '--json', env=env).stdout)
        assert [(e['system'], e['at'], e['disabled']) for e in listed] == [('local', at, False)]
        first_job, first_start = listed[0]['next_job']['id'], listed[0]['next_job']['start']
        assert listed[0]['next_job']['state'] == 'PENDING'
        # an install that ended past the minute it named (a busy machine: CI, 2026-12-01,
        # the 45 s were not enough) has Slurm queue it for that minute tomorrow, rightly:
        # then once more, a minute later
        if first_start != (due + dt.timedelta(days=1)).isoformat() or dt.datetime.now() < due:
            break
        print(f'the install ended past {due:%H:%M} (attempt {attempt + 1}): once more')
        assert mdxbench('schedule', 'remove', '--system', 'local', env=env).returncode == 0
    # the minute it is due, or N/A until the scheduler's first pass over it (seen in CI on a
    # busy machine)
    assert first_start in (due.isoformat(), 'N/A'), first_start

    # Slurm starts it at the minute (its scheduler pass may add some seconds)
    deadline = time.monotonic() + 300
    out = cycle / f'scron-{first_job}.out'
    # until the cycle's last line (its summary ends with its exit code): its first lines
    # come while it still ingests, reads and writes its site
    while time.monotonic() < deadline and not re.search(
            r'^mdxbench cycle: .*; exit \d+$', out.read_text() if out.exists() else '', re.M):
        time.sleep(5)
    log = out.read_text() if out.exists() else '(no output file)'
    assert 'records 3, sent 3, created 3' in log and 'exit 0' in log, log[-3000:]
    assert count(es) == 3
    last = json.loads((cycle / 'incidents.json').read_text())['last_cycle']
    assert last['records'] == 3 and last['source'] == 'Elasticsearch' and last['exit'] == 0
    assert (cycle / 'site' / 'feed.xml').is_file() and (cycle / 'site' / 'index.html').is_file()

    # and Slurm has queued the next one (the same job, requeued for tomorrow, same time),
    # once the job has ended: its last line is written before its script exits, and on a
    # busy machine it is still running or completing a few seconds later
    deadline = time.monotonic() + 120
    while True:
        again = json.loads(mdxbench('schedule', 'list', '--json', env=env).stdout)
        state = (again[0]['next_job'] or {}).get('state') if again else None
        if state == 'PENDING' or time.monotonic() > deadline:
            break
        time.sleep(3)
    assert state == 'PENDING', again
    assert again[0]['next_job']['id'] == first_job
    assert again[0]['next_job']['start'] == (due + dt.timedelta(days=1)).isoformat()

    gone = mdxbench('schedule', 'remove', '--system', 'local', env=env)
    assert gone.returncode == 0, gone.stdout + gone.stderr
    assert subprocess.run(['scrontab', '-l'], capture_output=True, text=True).stdout == OWN
    assert mdxbench('schedule', 'remove', '--system', 'local', env=env).returncode == 1


def test_scrontab_disabled_is_refused_naming_the_parameter(services, tmp_path):
    conf = tmp_path / 'slurm.conf'
    conf.write_text(''.join(line for line in pathlib.Path(os.environ['SLURM_CONF']).read_text()
                            .splitlines(keepends=True) if not line.startswith('ScronParameters')))
    res = mdxbench('schedule', 'install', '--system', 'local', '--at', '0 2 * * *',
                   env={'SLURM_CONF': str(conf)})
    assert res.returncode == 2
    assert 'scrontab is disabled on this cluster' in res.stderr
    assert 'ScronParameters=enable' in res.stderr and 'systemd timer' in res.stderr
