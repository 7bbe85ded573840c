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
    p.add_argument('--system', type=options.known_system, help='only this system')
    p.add_argument('--since', metavar='TIME', type=options.iso_time, help='report only change points whose first run '
                   'is at or after this ISO time (the whole history is still analysed)')
    p.add_argument('--format', choices=['table', 'json'], help='output format')
    p.add_argument('--penalty', type=options.positive,
                   help='segmentation penalty per change point, x ln(runs), in noise units '
                   f'(default {changes.PENALTY:g})')
    p.add_argument('--min-effect', type=options.fraction,
                   help='smallest relative change of the median kept (default '
                   f'{changes.MIN_EFFECT:g} = {changes.MIN_EFFECT * 100:g}%%)')
    p.add_argument('--mde', action='store_true', help='also each series\' minimum detectable '
                   'effect (simulated on its own residuals) and the repetitions per run that '
                   'would bring it under --mde-target')
    p.add_argument('--mde-target', type=options.fraction,
                   help=f'the MDE wanted (default {sensitivity.TARGET:g} = '
                   f'{sensitivity.TARGET * 100:g}%%)')
    p.add_argument('--max-pvalue', type=options.fraction,
                   help='Mann-Whitney U p-value a change point must reach (default '
                   f'{changes.MAX_PVALUE:g})')


def run(*, paths=(), from_es=False, parquet=None, es_url=None, system=None, since=None,
        format='table', penalty=None, min_effect=None, mde=False,
        mde_target=sensitivity.TARGET, max_pvalue=None):
    import sys
    import tempfile

    import polars as pl

    from mdxbench.post.analysis import kept
    from mdxbench.post.store import source as history_source

    tuning = changes.tuning(penalty, min_effect, max_pvalue)
    # whatever the source, its Parquet files (an export, the local copy of Elasticsearch,
    # the perflogs copied a file at a time), scanned in memory bounded by a chunk
    files, errors = history_source.files(paths, from_es, parquet, es_url, system)
    if errors:
        print(text.lines(errors), file=sys.stderr)
    where = pl.col('system') == system if system else None
    evs, since = events.load(), options.since(since)
    if mde:
        # the scan kept for the run: each series' runs read from its chunk for its MDE
        with tempfile.TemporaryDirectory(prefix='mdxbench-changes-') as keep:
            cps, hist = scan.find_kept(files, keep, evs, since=since, where=where, **tuning)
            nseries, effects = hist.nseries(), sensitivity.of_series(hist, mde_target)
    else:
        cps = scan.find(files, evs, since=since, where=where, **tuning)
        nseries, effects = kept.series_count(files, where), None
    if format == 'json':
        out = changes.summary(nseries, cps)
        if effects is not None:
            out['sensitivity'] = effects
        print(json.dumps(out, indent=1, default=str))
    else:
        print(text.change_points(cps))
        print(f'\nchange points {len(cps)}, regressions {changes.regressions(cps)}')
        if effects is not None:
            print('\n' + text.sensitivity(effects))
    return exits.FOUND if changes.regressions(cps) else exits.OK
