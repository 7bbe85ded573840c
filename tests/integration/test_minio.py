'''The S3 target of `local`: ci/'s MinIO (built by ci/install.sh from the Go module proxy),
its credentials kept out of sight, and a warp case against a server that does not answer
failing at once with the reason.'''
import os
import socket
import stat
import pytest

from conftest import ROOT, STATE, VENV_BIN, run
from hang import HANG_S


@pytest.fixture(scope='module')
def minio(services):
    if not (VENV_BIN / 'minio').exists():
        pytest.fail('MinIO is not installed: ci/install.sh builds it with the Go toolchain '
                    '(go on PATH or /usr/local/go) -- see its log line "MinIO and warp"')
    res = run(['bash', 'ci/minio.sh', 'status'])
    assert res.returncode == 0, res.stdout + res.stderr
    return run(['bash', 'ci/minio.sh', 'credentials']).stdout.strip()


def test_minio_runs_unprivileged_with_its_keys_in_a_0600_file_only(minio):
    creds = dict(line.split('=', 1) for line in open(minio).read().split())
    assert stat.S_IMODE(os.stat(minio).st_mode) == 0o600
    pid = int((STATE / 'minio' / 'run' / 'minio.pid').read_text())
    assert os.stat(f'/proc/{pid}').st_uid != 0                   # not root
    args = open(f'/proc/{pid}/cmdline', 'rb').read().decode()
    assert creds['secret_key'] not in args and creds['access_key'] not in args
    log = (STATE / 'minio' / 'logs' / 'minio.out').read_text()
    assert creds['secret_key'] not in log
    # the versions ci/install.sh pinned: warp says which one it is
    out = run([str(VENV_BIN / 'warp'), '--version']).stdout
    assert out.startswith('warp version 1.0.0'), out


def test_a_server_that_is_down_fails_the_case_at_once_with_the_reason(minio, tmp_path):
    with socket.socket() as s:                  # a port nobody listens on
        s.bind(('127.0.0.1', 0))
        port = s.getsockname()[1]
    res = run([str(VENV_BIN / 'reframe'), '-c', 'checks/storage/warp.py', '-n',
               r'WarpObjectStorage%target=minio%op=get%concurrency=1$', '-r', '--system',
               'local', '--prefix', str(tmp_path / 'rfm'), '--nocolor'],
              env={'MDXBENCH_LOCAL_S3_ENDPOINT': f'127.0.0.1:{port}',
                   'MDXBENCH_PERFLOG_DIR': str(tmp_path / 'perflogs'),
                   'RFM_CONFIG_FILES': str(ROOT / 'site-configs' / 'settings.py')}, timeout=HANG_S)
    assert res.returncode != 0, res.stdout[-3000:]
    said = (f'S3 endpoint 127.0.0.1:{port} of object target minio does not accept '
            'connections')
    assert said in res.stdout, res.stdout[-3000:]
    # "at once": the job ended at the check of the endpoint, before warp -- its error output
    # is that one line, and its output only the credentials' source (warp against a closed
    # port retries and prints each try). Not a wall-clock bound: this session runs at
    # nice 19 beside the measurements (CI, 2026-12-02, failed one of 120 s).
    job = [d for d in (tmp_path / 'rfm' / 'stage').rglob('rfm_job.err')]
    assert len(job) == 1, job
    assert job[0].read_text().strip().splitlines() == [f'mdxbench: {said} (server down?)']
    assert job[0].with_name('rfm_job.out').read_text().strip().splitlines() == [
        f"mdxbench: S3 credentials of minio from {STATE / 'minio-credentials'}"]
