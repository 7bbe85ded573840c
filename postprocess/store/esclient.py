'''Connection to Elasticsearch, configured from the environment.

=============================  ==========================================================
``MDXBENCH_ES_URL``            cluster URL (default ``http://127.0.0.1:9200``, ci/'s local one)
``MDXBENCH_ES_API_KEY``        API key (the base64 ``id:key`` form), or
``MDXBENCH_ES_API_KEY_FILE``   a file holding it, readable by its owner only (0600)
``MDXBENCH_ES_USER``           basic-auth user, with
``MDXBENCH_ES_PASSWORD``       its password, or
``MDXBENCH_ES_PASSWORD_FILE``  a 0600 file holding it
``MDXBENCH_ES_CA_CERTS``       CA bundle to verify the server's certificate
``MDXBENCH_ES_INSECURE``       ``1`` turns certificate verification off (with a warning)
``MDXBENCH_ES_INDEX_PREFIX``   index name prefix (default ``mdxbench-perf``)
=============================  ==========================================================

Secrets are read here and handed to the client; they are never printed or logged.
'''
import os
import stat
import sys

from mdxbench import settings

DEFAULT_URL = 'http://127.0.0.1:9200'
DEFAULT_PREFIX = 'mdxbench-perf'


class ConfigError(Exception):
    pass


def read_secret_file(path, var):
    try:
        st = os.stat(path)
    except OSError as err:
        raise ConfigError(f'{var}={path}: cannot read: {err.strerror}') from None

    if st.st_mode & (stat.S_IRWXG | stat.S_IRWXO):
        raise ConfigError(
            f'{var}={path}: permissions {stat.filemode(st.st_mode)} let others read it; '
            f'run chmod 600 {path}'
        )

    with open(path) as fp:
        value = fp.read().strip()

    if not value:
        raise ConfigError(f'{var}={path}: the file is empty')

    return value


def _secret(env, var):
    if settings.get(var, env):
        return settings.get(var, env)

    if settings.get(f'{var}_FILE', env):
        return read_secret_file(settings.get(f'{var}_FILE', env), f'{var}_FILE')

    return None


def client_options(env=None, url=None):
    '''Keyword arguments for ``elasticsearch.Elasticsearch``, from the environment.'''
    env = os.environ if env is None else env
    url = url_of(env, url)
    opts = {'hosts': [url], 'request_timeout': float(settings.get('MDXBENCH_ES_TIMEOUT', env, 30)),
            'max_retries': 0, 'retry_on_timeout': False}
    api_key = _secret(env, 'MDXBENCH_ES_API_KEY')
    user = settings.get('MDXBENCH_ES_USER', env)
    if api_key and user:
        raise ConfigError('both MDXBENCH_ES_API_KEY and MDXBENCH_ES_USER are set: choose one')

    if api_key:
        opts['api_key'] = api_key
    elif user:
        password = _secret(env, 'MDXBENCH_ES_PASSWORD')
        if password is None:
            raise ConfigError('MDXBENCH_ES_USER is set but neither MDXBENCH_ES_PASSWORD '
                              'nor MDXBENCH_ES_PASSWORD_FILE is')

        opts['basic_auth'] = (user, password)

    if url.startswith('https://'):
        if settings.get('MDXBENCH_ES_CA_CERTS', env):
            opts['ca_certs'] = settings.get('MDXBENCH_ES_CA_CERTS', env)

        if settings.get('MDXBENCH_ES_INSECURE', env) == '1':
            print('mdxbench: WARNING: TLS certificate verification is OFF '
                  '(MDXBENCH_ES_INSECURE=1)', file=sys.stderr)
            opts['verify_certs'] = False
            opts['ssl_show_warn'] = False

    return opts


def make_client(env=None, url=None, raw=False):
    '''The client; with ``raw``, search answers stay bytes (``resp.body``) for a columnar
    reader to parse in one pass (:mod:`mdxbench.post.store.esread`).'''
    from elasticsearch import Elasticsearch
    from elasticsearch.serializer import JsonSerializer

    class RawJson(JsonSerializer):
        def loads(self, data):
            return data

    opts = client_options(env, url)
    if raw:
        opts['serializers'] = {'application/json': RawJson(),
                               'application/vnd.elasticsearch+json': RawJson()}
    return Elasticsearch(**opts)


def url_of(env=None, url=None):
    '''The Elasticsearch URL the options and environment name.'''
    env = os.environ if env is None else env
    return url or settings.get('MDXBENCH_ES_URL', env) or DEFAULT_URL


def index_prefix(env=None):
    env = os.environ if env is None else env
    return settings.get('MDXBENCH_ES_INDEX_PREFIX', env) or DEFAULT_PREFIX


def redact(text, env=None):
    '''Remove any secret value of the environment from a text (e.g. an error message).'''
    env = os.environ if env is None else env
    for var in ('MDXBENCH_ES_API_KEY', 'MDXBENCH_ES_PASSWORD'):
        if env.get(var):
            text = text.replace(env[var], '***')

    return text
