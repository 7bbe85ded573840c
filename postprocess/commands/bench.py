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
    p.add_argument('--series', type=int, help='changes, store: series in '
                   'the store')
    p.add_argument('--runs', type=int, help='changes, store: runs per series')
    p.add_argument('--scales', help='cycle: multiples of --series measured '
                   '(default 1,3,10)')
    p.add_argument('--decade', metavar='DIR',
                   help='cycle: add the 100x row, a decade (10x the series, 10x the runs), '
                   'its store generated once into DIR and kept with its scan and site; '
                   'each run measures one more night on it')
    p.add_argument('--mde-budget', type=float,
                   help='cycle: seconds of minimum detectable effects computed in each '
                   'measured cycle (default 0: the bookkeeping alone)')
    p.add_argument('--naive-series', type=int,
                   help='changes: series the one-at-a-time baseline is timed on')
    p.add_argument('--trials', type=int,
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
    p.add_argument('--sample', type=int,
                   help='ingest: records sent one per request for the baseline rate')
    p.add_argument('--cluster-url', metavar='URLS',
                   help='ingest: also ingest the same records into this cluster (its nodes\' '
                   'URLs comma-separated; ci/es-cluster.sh urls), one replica, and print '
                   'both rates')
    options.es_url(p, 'ingest: ')
    p.add_argument('reframe_args', nargs='*', metavar='REFRAME_OPTION',
                   help='accept: after --, the ReFrame options of every run (default: '
                   'short runs of the acceptance checks)')


def run(*, what, system=None, partition=None, max_jobs=None, series=10000, runs=365,
        scales='1,3,10', decade=None, mde_budget=0.0, naive_series=200, trials=None,
        records=None, keep=None, out=None, sample=5000, cluster_url=None, es_url=None,
        reframe_args=()):
    if what == 'accept':
        from mdxbench.post.bench import accept

        return accept.main(system or 'nscluster', partition or 'nodes',
                           options.reframe_args(reframe_args) or None, max_jobs)
    if what == 'suspects':
        from mdxbench.post.bench import suspects

        return suspects.main(reframe_args=options.reframe_args(reframe_args) or None,
                             out=out)
    if what == 'split':
        from mdxbench.post.bench import split

        return split.main()
    if what == 'parsers':
        from mdxbench.post.bench import parsers

        return parsers.main()
    if what == 'changes':
        from mdxbench.post.bench import changes

        return changes.main(series=series, runs=runs,
                            naive_series=naive_series, trials=trials or 1000)
    if what == 'mde':
        from mdxbench.post.bench import mde

        return mde.main(trials=trials or 400)
    if what == 'cycle':
        from mdxbench.post.bench import cycle

        return cycle.main(series=series, runs=runs,
                          scales=cycle.scales(scales), decade=decade,
                          mde_budget=mde_budget)
    if what == 'store':
        from mdxbench.post.bench import store
        from mdxbench.post.store import esclient

        return store.main(esclient.url_of(url=es_url), series=series,
                          runs=runs, records=records or 100000, keep=keep)
    if what == 'ingest':
        from mdxbench.post.bench import ingest
        from mdxbench.post.store import esclient

        return ingest.bench_ingest(records or 100000, sample,
                                   esclient.url_of(url=es_url), cluster_url)
    from mdxbench.post.bench import regress

    return regress.bench_regress(records or 1000000)
