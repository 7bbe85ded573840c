'''A secured Elasticsearch (HTTPS with its own CA, a file-realm user), started through
ci/elasticsearch.sh: credentials, TLS verification, and secrets never shown.'''
import os
import pathlib
import shutil
import socket

import pytest

from hang import HANG_S
from conftest import FIXTURES_PERFLOG, ROOT, mdxbench, run

PASSWORD = 'mdx-Pw-' + os.urandom(6).hex()


def _free_port():
    with socket.socket() as s:
        s.bind(('127.0.0.1', 0))
        return s.getsockname()[1]


@pytest.fixture(scope='module')
def secured(services, tmp_path_factory):
    tmp = tmp_path_factory.mktemp('secured')
    pw = tmp / 'admin.pw'
    pw.write_text(PASSWORD + '\n')
    os.chmod(pw, 0o600)
    main_state = pathlib.Path(os.environ.get('MDXBENCH_STATE_DIR') or ROOT / '.mdxbench')
    env = {'MDXBENCH_STATE_DIR': str(tmp / 'state'), 'MDXBENCH_ES_SECURITY': '1',
           'MDXBENCH_ES_PORT': str(_free_port()), 'MDXBENCH_ES_ADMIN_USER': 'mdxadmin',
           'MDXBENCH_ES_ADMIN_PASSWORD_FILE': str(pw),
           'MDXBENCH_ES_HOME': os.path.realpath(main_state / 'es' / 'elasticsearch-8.19.21')}
    res = run(['bash', 'ci/elasticsearch.sh', 'start'], env=env, timeout=300)
    if res.returncode != 0:
        pytest.fail(f'secured Elasticsearch did not start:\n{res.stderr[-4000:]}')

    info = {'env': env, 'pw': pw, 'tmp': tmp,
            'url': run(['bash', 'ci/elasticsearch.sh', 'url'], env=env).stdout.strip(),
            'ca': run(['bash', 'ci/elasticsearch.sh', 'ca'], env=env).stdout.strip()}
    yield info
    run(['bash', 'ci/elasticsearch.sh', 'stop'], env=env, timeout=HANG_S)
    link = tmp / 'state' / 'es'
    if link.is_symlink():      # the instance lived outside the private tmp dir
        shutil.rmtree(os.path.realpath(link), ignore_errors=True)


def _ingest(secured, tmp_path, **env):
    base = {'MDXBENCH_ES_URL': secured['url'], 'MDXBENCH_ES_USER': 'mdxadmin',
            'MDXBENCH_ES_INDEX_PREFIX': 'mdxbench-sectest', 'MDXBENCH_ES_TIMEOUT': '10'}
    base.update(env)
    return mdxbench('ingest', str(FIXTURES_PERFLOG), '--state', str(tmp_path / 's.json'),
                    '--dead-letter', str(tmp_path / 'dead.jsonl'), '--retry-seconds', '3',
                    env=base)


def _no_secret(res, tmp_path):
    text = res.stdout + res.stderr
    for f in tmp_path.glob('*'):
        text += f.read_text()

    assert PASSWORD not in text


def test_right_credentials_and_ca(secured, tmp_path):
    res = _ingest(secured, tmp_path, MDXBENCH_ES_PASSWORD_FILE=str(secured['pw']),
                  MDXBENCH_ES_CA_CERTS=secured['ca'])
    assert res.returncode == 0, res.stdout + res.stderr
    assert 'records 6, sent 6' in res.stdout
    _no_secret(res, tmp_path)


def test_wrong_password_is_refused_with_its_reason(secured, tmp_path):
    res = _ingest(secured, tmp_path, MDXBENCH_ES_PASSWORD='not-' + PASSWORD,
                  MDXBENCH_ES_CA_CERTS=secured['ca'])
    assert res.returncode == 1, res.stdout + res.stderr
    assert 'answered 401' in res.stderr and 'authentication failed' in res.stderr
    assert 'not-' + PASSWORD not in res.stdout + res.stderr


def test_unverifiable_certificate_is_not_retried_and_sends_nothing(secured, tmp_path):
    res = _ingest(secured, tmp_path, MDXBENCH_ES_PASSWORD_FILE=str(secured['pw']))
    assert res.returncode == 2, res.stdout + res.stderr
    assert 'set MDXBENCH_ES_CA_CERTS' in res.stderr
    _no_secret(res, tmp_path)


def test_verification_off_only_when_asked_and_with_a_warning(secured, tmp_path):
    res = _ingest(secured, tmp_path, MDXBENCH_ES_PASSWORD_FILE=str(secured['pw']),
                  MDXBENCH_ES_INSECURE='1')
    assert res.returncode == 0, res.stdout + res.stderr
    assert 'TLS certificate verification is OFF' in res.stderr


def test_readable_password_file_is_refused(secured, tmp_path):
    loose = tmp_path / 'loose.pw'
    loose.write_text(PASSWORD)
    os.chmod(loose, 0o644)
    res = _ingest(secured, tmp_path, MDXBENCH_ES_PASSWORD_FILE=str(loose),
                  MDXBENCH_ES_CA_CERTS=secured['ca'])
    assert res.returncode == 2 and 'chmod 600' in res.stderr
    assert PASSWORD not in res.stdout + res.stderr
