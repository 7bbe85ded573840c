'''``mdxbench history sync|status|verify [--repair]``: the local copy of the store
(:mod:`mdxbench.post.store.history`), which every reader of Elasticsearch goes through.'''
from mdxbench.post import exits
from mdxbench.post.commands import options

NAME = 'history'
HELP = 'the local Parquet copy of the Elasticsearch store: sync, status, verify (--repair)'


def add_arguments(p):
    p.add_argument('action', choices=['sync', 'status', 'verify'],
                   help='sync: bring the copy up to date; status: its partitions as the '
                   'manifest lists them; verify: each partition against Elasticsearch (count '
                   'and content digest) and its own file (exit 1 when any differs)')
    p.add_argument('--system', type=options.known_system, help='only the partitions of this system')
    p.add_argument('--repair', action='store_true',
                   help='verify: read again whole every partition that is not ok')
    p.add_argument('--retry-seconds', type=options.non_negative, default=60.0,
                   help='how long a partition read waits for Elasticsearch to come back')
    p.add_argument('--page', type=options.count, default=None,
                   help='documents per search request (default 10000)')
    options.es_url(p)


def run(args):
    import sys

    from mdxbench.post.site import text
    from mdxbench.post.store import esclient, history

    copy = history.open_copy(args.es_url)
    copy.page = args.page or copy.page
    if args.action == 'status':
        print(text.history_status(copy, args.system))
        return 0
    client = esclient.make_client(url=args.es_url, raw=True)
    if args.action == 'sync':
        rep = copy.sync(client, args.system, retry_seconds=args.retry_seconds)
        print(f'mdxbench history: {rep.line(copy.url, copy.root)}')
        return exits.PENDING if rep.offline else exits.OK
    rows = copy.verify(client, repair=args.repair, system=args.system,
                       retry_seconds=args.retry_seconds)
    print(text.history_verify(rows))
    bad = text.history_bad(rows)
    print(f'mdxbench history verify: {len(rows)} partition(s), {bad} not ok'
          + (' (repaired)' if args.repair and bad else ''), file=sys.stderr)
    return exits.FOUND if bad and not args.repair else exits.OK
