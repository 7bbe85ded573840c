'''``mdxbench bench ingest|regress|changes|mde|cycle|accept|suspects|split|store|parsers``: speed and memory of mdxbench itself
(figures printed beside a baseline measured in the same run; not timed tests).'''

from mdxbench.post.commands import options

NAME = 'bench'
HELP = ('benchmarks of mdxbench itself (ingest, regress, changes, mde, cycle, accept, '
        'suspects, split, store, parsers)')


def add_arguments(p):
    p.add_argument('what', choices=['ingest', 'regress', 'changes', 'mde', 'cycle',
                                           'accept', 'suspects', 'split', 'store', 'parsers'],
                   help='what to measure')
    p.add_argument('--system', help='accept: the system of the cluster (default nscluster)')
    p.add_argument('--partition', help='accept: its partition (default nodes)')
    p.add_argument('--max-jobs', type=int, help='accept: jobs in the queue at once')
    p.add_argument('--series', type=int, default=10000, help='changes, store: series in '
                   'the store')
    p.add_argument('--runs', type=int, default=365, help='changes, store: runs per series')
    p.add_argument('--scales', default='1,3,10', help='cycle: multiples of --series measured '
                   '(default 1,3,10)')
    p.add_argument('--decade', metavar='DIR',
                   help='cycle: add the 100x row, a decade (10x the series, 10x the runs), '
                   'its store generated once into DIR and kept with its scan and site; '
                   'each run measures one more night on it')
    p.add_argument('--mde-budget', type=float, default=0.0,
                   help='cycle: seconds of minimum detectable effects computed in each '
                   'measured cycle (default 0: the bookkeeping alone)')
    p.add_argument('--naive-series', type=int, default=200,
                   help='changes: series the one-at-a-time baseline is timed on')
    p.add_argument('--trials', type=int, default=None,
                   help='changes: generated histories per quality row (default 1000); mde: '
                   'fresh histories per step size of the empirical threshold (default 400)')
    p.add_argument('--records', type=int, help='ingest, store: records sent (default '
                   '100000); '
                   'regress: records scanned (default 1000000)')
    p.add_argument('--keep', metavar='PREFIX',
                   help='store: the store under this index prefix, loaded if it holds '
                   'nothing and kept afterwards; only the cold read of the copy alone is '
                   'measured (a year of 100,000 series took 23 minutes to load here)')
    p.add_argument('--out', metavar='DIR', help='suspects: keep each pass\'s perflogs, '
                   'report and verdicts (JSON) in DIR (default: a temporary directory)')
    p.add_argument('--sample', type=int, default=5000,
                   help='ingest: records sent one per request for the baseline rate')
    p.add_argument('--cluster-url', metavar='URLS',
                   help='ingest: also ingest the same records into this cluster (its nodes\' '
                   'URLs comma-separated; ci/es-cluster.sh urls), one replica, and print '
                   'both rates')
    options.es_url(p, 'ingest: ')
    p.add_argument('reframe_args', nargs='*', metavar='REFRAME_OPTION',
                   help='accept: after --, the ReFrame options of every run (default: '
                   'short runs of the acceptance checks)')


def run(args):
    if args.what == 'accept':
        from mdxbench.post.bench import accept

        return accept.main(args.system or 'nscluster', args.partition or 'nodes',
                           options.reframe_args(args.reframe_args) or None, args.max_jobs)
    if args.what == 'suspects':
        from mdxbench.post.bench import suspects

        return suspects.main(reframe_args=options.reframe_args(args.reframe_args) or None,
                             out=args.out)
    if args.what == 'split':
        from mdxbench.post.bench import split

        return split.main()
    if args.what == 'parsers':
        from mdxbench.post.bench import parsers

        return parsers.main()
    if args.what == 'changes':
        from mdxbench.post.bench import changes

        return changes.main(series=args.series, runs=args.runs,
                            naive_series=args.naive_series, trials=args.trials or 1000)
    if args.what == 'mde':
        from mdxbench.post.bench import mde

        return mde.main(trials=args.trials or 400)
    if args.what == 'cycle':
        from mdxbench.post.bench import cycle

        return cycle.main(series=args.series, runs=args.runs,
                          scales=cycle.scales(args.scales), decade=args.decade,
                          mde_budget=args.mde_budget)
    if args.what == 'store':
        from mdxbench.post.bench import store
        from mdxbench.post.store import esclient

        return store.main(esclient.url_of(url=args.es_url), series=args.series,
                          runs=args.runs, records=args.records or 100000, keep=args.keep)
    if args.what == 'ingest':
        from mdxbench.post.bench import ingest
        from mdxbench.post.store import esclient

        return ingest.bench_ingest(args.records or 100000, args.sample,
                                   esclient.url_of(url=args.es_url), args.cluster_url)
    from mdxbench.post.bench import regress

    return regress.bench_regress(args.records or 1000000)
