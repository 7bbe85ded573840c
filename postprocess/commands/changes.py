'''``mdxbench changes``: change points over each series' whole history, explained.'''
import json

from mdxbench.post import exits
from mdxbench.post.analysis import changes, scan, sensitivity
from mdxbench.post.commands import options
from mdxbench.post.site import text
from mdxbench.post.store import events

NAME = 'changes'
HELP = ("change points over each series' whole history, explained by what changed with "
        'them (exit 1 when one is a regression)')

#: a change point to the worse side was found


def add_arguments(p):
    options.source(p)
    p.add_argument('--system', help='only this system')
    p.add_argument('--since', metavar='TIME', help='report only change points whose first run '
                   'is at or after this ISO time (the whole history is still analysed)')
    p.add_argument('--format', choices=['table', 'json'], default='table', help='output format')
    p.add_argument('--penalty', type=float,
                   help='segmentation penalty per change point, x ln(runs), in noise units '
                   f'(default {changes.PENALTY:g})')
    p.add_argument('--min-effect', type=float,
                   help='smallest relative change of the median kept (default '
                   f'{changes.MIN_EFFECT:g} = {changes.MIN_EFFECT * 100:g}%%)')
    p.add_argument('--mde', action='store_true', help='also each series\' minimum detectable '
                   'effect (simulated on its own residuals) and the repetitions per run that '
                   'would bring it under --mde-target')
    p.add_argument('--mde-target', type=float, default=sensitivity.TARGET,
                   help=f'the MDE wanted (default {sensitivity.TARGET:g} = '
                   f'{sensitivity.TARGET * 100:g}%%)')
    p.add_argument('--max-pvalue', type=float,
                   help='Mann-Whitney U p-value a change point must reach (default '
                   f'{changes.MAX_PVALUE:g})')


def run(args):
    tuning = changes.tuning(args.penalty, args.min_effect, args.max_pvalue)
    if (args.parquet or args.from_es) and not args.mde:
        # a Parquet export, or the local copy of Elasticsearch (one Parquet file per
        # partition), is scanned in memory bounded by a chunk, not read as one table
        import polars as pl

        from mdxbench.post.analysis import chunked
        from mdxbench.post.store import history

        source = args.parquet or history.files(args.system, args.es_url)[0]
        where = pl.col('system') == args.system if args.system else None
        cps = scan.find(source, events.load(), since=options.since(args.since),
                           where=where, **tuning)
        df, mde = chunked.series_count(source, where), None
    else:
        df = options.load(args)
        if args.system:
            df = df.filter(df['system'] == args.system)
        cps = scan.find(df, events.load(), since=options.since(args.since), **tuning)
        mde = sensitivity.of_series(df, args.mde_target) if args.mde else None
    if args.format == 'json':
        out = changes.summary(df, cps)
        if mde is not None:
            out['sensitivity'] = mde
        print(json.dumps(out, indent=1, default=str))
    else:
        print(text.change_points(cps))
        print(f'\nchange points {len(cps)}, regressions {changes.regressions(cps)}')
        if mde is not None:
            print('\n' + text.sensitivity(mde))
    return exits.FOUND if changes.regressions(cps) else exits.OK
