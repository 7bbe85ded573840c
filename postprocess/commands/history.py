'''``mdxbench history sync|status|verify [--repair]``: the local copy of the store
(:mod:`mdxbench.post.store.history`), which every reader of Elasticsearch goes through;
``mdxbench history snapshot|restore``: the store's backup
(:mod:`mdxbench.post.store.snapshots`).'''
from mdxbench.post import exits
from mdxbench.post.commands import options
from mdxbench.post.store import snapshots

NAME = 'history'
HELP = ('the local Parquet copy of the Elasticsearch store: sync, status, verify (--repair); '
        'its backup: snapshot, restore')


def add_arguments(p):
    p.add_argument('action', choices=['sync', 'status', 'verify', 'snapshot', 'restore'],
                   help='sync: bring the copy up to date; status: its partitions as the '
                   'manifest lists them; verify: each partition against Elasticsearch (count '
                   'and content digest) and its own file (exit 1 when any differs); '
                   'snapshot: an Elasticsearch snapshot of every monthly index; restore: '
                   'them from a snapshot into a cluster that lacks them')
    p.add_argument('--system', type=options.known_system, help='only the partitions of this system')
    p.add_argument('--repair', action='store_true',
                   help='verify: read again whole every partition that is not ok')
    p.add_argument('--retry-seconds', type=options.non_negative,
                   help='how long a partition read waits for Elasticsearch to come back')
    p.add_argument('--page', type=options.count,
                   help='documents per search request (default 10000)')
    p.add_argument('--repository',
                   help='snapshot, restore: the snapshot repository (default: '
                   f'$MDXBENCH_ES_SNAPSHOT_REPOSITORY or {snapshots.DEFAULT_REPOSITORY})')
    p.add_argument('--location',
                   help='snapshot, restore: register the repository first, of type fs at '
                   'this directory (under every node\'s path.repo)')
    p.add_argument('--keep', type=options.count,
                   help='snapshot: then delete this prefix\'s snapshots but the newest KEEP')
    p.add_argument('--snapshot',
                   help='restore: the snapshot to restore (default: the newest successful)')
    options.es_url(p)


def run(*, action, system=None, repair=False, retry_seconds=60.0, page=None,
        repository=None, location=None, keep=None, snapshot=None, es_url=None):
    import sys

    from mdxbench.post.site import text
    from mdxbench.post.store import esclient, history

    if action in ('snapshot', 'restore'):
        return backup(action=action, repository=repository, location=location, keep=keep,
                      snapshot=snapshot, es_url=es_url)
    copy = history.open_copy(es_url)
    copy.page = page or copy.page
    if action == 'status':
        print(text.history_status(copy, system))
        return 0
    client = esclient.make_client(url=es_url, raw=True)
    if action == 'sync':
        rep = copy.sync(client, system, retry_seconds=retry_seconds)
        print(f'mdxbench history: {rep.line(copy.url, copy.root)}')
        return exits.PENDING if rep.offline else exits.OK
    rows = copy.verify(client, repair=repair, system=system,
                       retry_seconds=retry_seconds)
    print(text.history_verify(rows))
    bad = text.history_bad(rows)
    print(f'mdxbench history verify: {len(rows)} partition(s), {bad} not ok'
          + (' (repaired)' if repair and bad else ''), file=sys.stderr)
    return exits.FOUND if bad and not repair else exits.OK


def backup(*, action, repository=None, location=None, keep=None, snapshot=None,
           es_url=None):
    '''``snapshot`` or ``restore``: one line on what was done; a failure is a clear error
    (exit 1), never a traceback.'''
    import sys

    from elasticsearch import ConnectionError, ConnectionTimeout

    from mdxbench.post.store import esclient

    repo = repository or snapshots.repository_name()
    prefix = esclient.index_prefix()
    # a snapshot or a restore is waited for: longer than one request's usual limit
    client = esclient.make_client(url=es_url).options(request_timeout=3600)
    try:
        if location:
            snapshots.register(client, repo, location)
        if action == 'snapshot':
            t = snapshots.take(client, repo, prefix, keep=keep)
            print(f'mdxbench history: snapshot {t.name} in {repo}: {t.indices} indices, '
                  f'{t.shards} shards, {t.seconds:.1f} s'
                  + (f'; deleted {len(t.deleted)} older: {", ".join(t.deleted)}'
                     if t.deleted else ''))
            return exits.OK
        name, indices = snapshots.restore(client, repo, prefix, snapshot)
        print(f'mdxbench history: restored {len(indices)} indices of {name} from {repo}; '
              'the next cycle or `mdxbench history sync` reads them')
        return exits.OK
    except snapshots.SnapshotError as err:
        print(f'mdxbench history {action}: {err}', file=sys.stderr)
        return exits.FOUND
    except (ConnectionError, ConnectionTimeout) as err:
        print(f'mdxbench history {action}: Elasticsearch at '
              f'{esclient.url_of(url=es_url)} is unreachable ({type(err).__name__})',
              file=sys.stderr)
        return exits.PENDING
