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


def test_several_nodes_are_one_client_that_tries_each_once_on_a_lost_node():
    '''MDXBENCH_ES_URL names a cluster's nodes comma-separated: the client knows each, and a
    request a node refused, reset or answered 429/503 goes to the next -- each node once; a
    timeout is not retried there, nor any other 4xx (client_options' retry settings).'''
    env = {'MDXBENCH_ES_URL': 'http://es1:9200, http://es2:9200,http://es3:9200,'}
    opts = esclient.client_options(env=env)
    assert opts['hosts'] == ['http://es1:9200', 'http://es2:9200', 'http://es3:9200']
    assert opts['max_retries'] == 2 and opts['retry_on_status'] == (429, 503)
    assert opts['retry_on_timeout'] is False
    client = esclient.make_client(env=env)
    assert len(client.transport.node_pool.all()) == 3
    one = esclient.client_options(env={})
    assert one['hosts'] == [esclient.DEFAULT_URL] and one['max_retries'] == 0


@pytest.mark.parametrize('url, said', [
    (' , ', "MDXBENCH_ES_URL=' , ' names no node"),
    ('http://es1:9200,es2:9200',
     "MDXBENCH_ES_URL: 'es2:9200' has no scheme (http:// or https://)"),
    ('https://es1:9200,http://es2:9200',
     'MDXBENCH_ES_URL mixes http and https nodes: give one scheme for all'),
])
def test_a_hosts_list_that_names_no_node_or_mixes_schemes_is_refused(url, said):
    with pytest.raises(esclient.ConfigError) as err:
        esclient.client_options(env={'MDXBENCH_ES_URL': url})
    assert str(err.value) == said


def test_tls_options_apply_to_every_node_of_a_https_cluster(tmp_path):
    opts = esclient.client_options(env={'MDXBENCH_ES_URL': 'https://es1:9200,https://es2:9200',
                                        'MDXBENCH_ES_CA_CERTS': '/etc/ca.pem'})
    assert opts['ca_certs'] == '/etc/ca.pem' and 'verify_certs' not in opts


@pytest.mark.parametrize('value,page', [(None, 10000), ('50', 50), (' 20 ', 20),
                                        ('10000', 10000)])
def test_the_page_of_a_partition_read_is_a_setting(value, page):
    env = {} if value is None else {'MDXBENCH_ES_PAGE': value}
    assert esclient.page_size(env) == page


@pytest.mark.parametrize('value', ['0', '-5', '10001', 'many', '1.5'])
def test_a_page_outside_one_to_ten_thousand_is_refused_naming_the_setting(value):
    with pytest.raises(esclient.ConfigError, match=f'MDXBENCH_ES_PAGE=.{value}'):
        esclient.page_size({'MDXBENCH_ES_PAGE': value})
