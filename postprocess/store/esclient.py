'''Connection to Elasticsearch, configured from the environment.

=============================  ==========================================================
``MDXBENCH_ES_URL``            the cluster's URL, or several nodes' comma-separated (default:
                               ci/'s local one)
``MDXBENCH_ES_API_KEY``        API key (the base64 ``id:key`` form), or
``MDXBENCH_ES_API_KEY_FILE``   a file holding it, readable by its owner only (0600)
``MDXBENCH_ES_USER``           basic-auth user, with
``MDXBENCH_ES_PASSWORD``       its password, or
``MDXBENCH_ES_PASSWORD_FILE``  a 0600 file holding it
``MDXBENCH_ES_CA_CERTS``       CA bundle to verify the server's certificate
``MDXBENCH_ES_INSECURE``       ``1`` turns certificate verification off (with a warning)
``MDXBENCH_ES_INDEX_PREFIX``   index name prefix
``MDXBENCH_ES_SHARDS``         primary shards of a monthly index
``MDXBENCH_ES_REPLICAS``       its replicas: a number, or a range ``0-1`` / ``1-all`` that
                               Elasticsearch expands to the nodes there are (the default
                               puts none on one node, a copy on a cluster)
``MDXBENCH_ES_PAGE``           documents per search request of a partition read
=============================  ==========================================================

The defaults are the settings table's (:mod:`mdxbench.settings`, docs/settings.md), said
there once.

Secrets are read here and handed to the client; they are never printed or logged.

Several nodes: the client spreads requests over them (round robin) and sends a request
that met a refused or reset connection, or a 429 or 503 (the node busy or leaving), to the
next node -- elasticsearch-py's node pool and retries (``max_retries``: each node once),
with its back-off on a dead node. A timeout is not retried there (the request may have
been carried out: the ingest's own retry settles that), and neither is any other 4xx.
'''
import os
import stat
import sys

from mdxbench import settings

DEFAULT_URL = settings.value('MDXBENCH_ES_URL')
DEFAULT_PREFIX = settings.value('MDXBENCH_ES_INDEX_PREFIX')
#: answers that mean "not carried out, try another node": too many requests, unavailable
RETRY_ON_STATUS = (429, 503)
#: replicas of a monthly index: none on one node, one copy where there is a second node
DEFAULT_REPLICAS = settings.value('MDXBENCH_ES_REPLICAS')


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
    hosts = hosts_of(env, url)
    opts = {'hosts': hosts,
            'request_timeout': float(settings.get('MDXBENCH_ES_TIMEOUT', env, 30)),
            'max_retries': len(hosts) - 1, 'retry_on_status': RETRY_ON_STATUS,
            'retry_on_timeout': False}
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

    if hosts[0].startswith('https://'):
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
    '''The Elasticsearch URL the options and environment name (several nodes': their URLs
    comma-separated, as given).'''
    env = os.environ if env is None else env
    return url or settings.get('MDXBENCH_ES_URL', env)


def hosts_of(env=None, url=None):
    '''The nodes' URLs of :func:`url_of`: one, or several given comma-separated -- all of
    one scheme (TLS is verified for all or none).'''
    given = url_of(env, url)
    hosts = [h.strip() for h in given.split(',') if h.strip()]
    if not hosts:
        raise ConfigError(f'MDXBENCH_ES_URL={given!r} names no node')
    schemes = {h.split('://', 1)[0] if '://' in h else None for h in hosts}
    if None in schemes:
        raise ConfigError(f'MDXBENCH_ES_URL: {next(h for h in hosts if "://" not in h)!r} '
                          f'has no scheme (http:// or https://)')
    if len(schemes) > 1:
        raise ConfigError(f'MDXBENCH_ES_URL mixes {" and ".join(sorted(schemes))} nodes: '
                          f'give one scheme for all')
    return hosts


def index_prefix(env=None):
    env = os.environ if env is None else env
    return settings.get('MDXBENCH_ES_INDEX_PREFIX', env)


def index_settings(env=None):
    '''The monthly indices' settings of ``MDXBENCH_ES_SHARDS`` and ``MDXBENCH_ES_REPLICAS``,
    as the index template takes them.'''
    import re

    env = os.environ if env is None else env
    shards = settings.get('MDXBENCH_ES_SHARDS', env)
    replicas = settings.get('MDXBENCH_ES_REPLICAS', env).strip()
    if not re.fullmatch(r'[1-9]\d*', shards.strip()):
        raise ConfigError(f'MDXBENCH_ES_SHARDS={shards!r}: a number of shards, 1 or more')
    out = {'number_of_shards': int(shards)}
    if re.fullmatch(r'\d+', replicas):
        out['number_of_replicas'] = int(replicas)
    elif re.fullmatch(r'\d+-(\d+|all)', replicas):
        out['auto_expand_replicas'] = replicas
    else:
        raise ConfigError(f'MDXBENCH_ES_REPLICAS={replicas!r}: a number of replicas, or a '
                          f'range such as 0-1 or 1-all')
    return out


def page_size(env=None, default=None):
    '''Documents per search request of a partition read (``MDXBENCH_ES_PAGE``; ``default``
    in place of the setting's own).'''
    import re

    page = settings.get('MDXBENCH_ES_PAGE', env, None if default is None else str(default))
    page = page.strip()
    if not re.fullmatch(r'[1-9]\d*', page) or int(page) > 10000:
        raise ConfigError(f'MDXBENCH_ES_PAGE={page!r}: documents per request, 1 to 10000 '
                          '(Elasticsearch\'s index.max_result_window)')
    return int(page)


def redact(text, env=None):
    '''Remove any secret value of the environment from a text (e.g. an error message).'''
    env = os.environ if env is None else env
    for var in ('MDXBENCH_ES_API_KEY', 'MDXBENCH_ES_PASSWORD'):
        if env.get(var):
            text = text.replace(env[var], '***')

    return text
