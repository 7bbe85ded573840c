import os

import pytest

from mdxbench.post.store import esclient


def test_defaults_to_local_instance():
    opts = esclient.client_options(env={})
    assert opts['hosts'] == [esclient.DEFAULT_URL]
    assert 'api_key' not in opts and 'basic_auth' not in opts


def test_api_key_file_must_be_private(tmp_path):
    f = tmp_path / 'key'
    f.write_text('c2VjcmV0OmtleQ==\n')
    os.chmod(f, 0o644)
    with pytest.raises(esclient.ConfigError, match='chmod 600'):
        esclient.client_options(env={'MDXBENCH_ES_API_KEY_FILE': str(f)})

    os.chmod(f, 0o600)
    opts = esclient.client_options(env={'MDXBENCH_ES_API_KEY_FILE': str(f)})
    assert opts['api_key'] == 'c2VjcmV0OmtleQ=='


def test_user_without_password_is_an_error():
    with pytest.raises(esclient.ConfigError, match='MDXBENCH_ES_PASSWORD'):
        esclient.client_options(env={'MDXBENCH_ES_USER': 'u'})


def test_key_and_user_together_is_an_error():
    with pytest.raises(esclient.ConfigError, match='choose one'):
        esclient.client_options(env={'MDXBENCH_ES_USER': 'u', 'MDXBENCH_ES_API_KEY': 'k'})


def test_tls_verification_is_on_unless_turned_off(capsys):
    opts = esclient.client_options(env={'MDXBENCH_ES_URL': 'https://es:9200',
                                        'MDXBENCH_ES_CA_CERTS': '/ca.pem'})
    assert opts['ca_certs'] == '/ca.pem' and 'verify_certs' not in opts
    opts = esclient.client_options(env={'MDXBENCH_ES_URL': 'https://es:9200',
                                        'MDXBENCH_ES_INSECURE': '1'})
    assert opts['verify_certs'] is False
    assert 'verification is OFF' in capsys.readouterr().err


def test_redact_removes_secrets():
    env = {'MDXBENCH_ES_PASSWORD': 'hunter2'}
    assert esclient.redact('auth hunter2 failed', env) == 'auth *** failed'
