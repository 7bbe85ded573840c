'''ci/ service scripts: idempotent start, harmless stop, failures shown with the log tail.'''
import socket
import time

from hang import HANG_S
from conftest import run


def test_start_again_is_harmless(services):
    res = run(['bash', 'ci/services.sh', 'start'], timeout=300)
    assert res.returncode == 0, res.stdout + res.stderr
    assert 'already run' in res.stderr and 'already running' in res.stderr


def test_status_says_what_runs(services):
    res = run(['bash', 'ci/services.sh', 'status'])
    assert res.returncode == 0, res.stdout + res.stderr
    for name in ('slurmctld: running (PID', 'slurmd: running (PID',
                 'elasticsearch: running (PID'):
        assert name in res.stdout
    assert '"status" : "green"' in res.stdout or '"status" : "yellow"' in res.stdout


def test_stop_when_nothing_runs_is_harmless(tmp_path):
    env = {'MDXBENCH_STATE_DIR': str(tmp_path)}
    for _ in range(2):
        res = run(['bash', 'ci/services.sh', 'stop'], env=env)
        assert res.returncode == 0, res.stdout + res.stderr
        assert 'elasticsearch: not running' in res.stderr
        assert 'slurmctld: not running' in res.stderr

    res = run(['bash', 'ci/services.sh', 'status'], env=env)
    assert res.returncode == 3 and 'not running' in res.stdout


def test_failed_start_shows_the_log_tail_in_bounded_time(services, tmp_path):
    '''A second cluster whose slurm.conf slurmctld refuses (a partition name with a
    space): the script must fail within its timeout and show slurmctld's own words.'''
    with socket.socket() as s:
        s.bind(('127.0.0.1', 0))
        port = s.getsockname()[1]

    env = {'MDXBENCH_STATE_DIR': str(tmp_path), 'MDXBENCH_SLURMCTLD_PORT': str(port),
           'MDXBENCH_SLURM_PARTITION': 'bro ken', 'MDXBENCH_SLURM_TIMEOUT': '10',
           'SLURM_CONF': ''}
    t0 = time.monotonic()
    try:
        res = run(['bash', 'ci/slurm.sh', 'start'], env=env, timeout=HANG_S)
        elapsed = time.monotonic() - t0
        assert res.returncode != 0
        assert 'timed out after 10s waiting for slurmctld to answer' in res.stderr
        assert '----- last' in res.stderr and 'slurmctld.out' in res.stderr
        assert 'ken' in res.stderr.split('----- last', 1)[1]   # slurmctld's complaint
        assert elapsed < 60
    finally:
        stop = run(['bash', 'ci/slurm.sh', 'stop'], env=env)
        assert stop.returncode == 0, stop.stderr

    # the real cluster is untouched: up, its node in service (idle, or running a job of
    # another session's module)
    assert run(['sinfo', '-h', '-o', '%T']).stdout.split() in (['idle'], ['mixed'],
                                                               ['allocated'])
