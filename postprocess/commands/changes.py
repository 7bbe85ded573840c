'''``mdxbench changes``: change points over each series' whole history, explained.'''
import json

from mdxbench.post.analysis import changes
from mdxbench.post.commands import options
from mdxbench.post.site import text
from mdxbench.post.store import events

NAME = 'changes'
HELP = ("change points over each series' whole history, explained by what changed with "
        'them (exit 1 when one is a regression)')

#: a change point to the worse side was found
EXIT_REGRESSION = 1


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
    p.add_argument('--max-pvalue', type=float,
                   help='Mann-Whitney U p-value a change point must reach (default '
                   f'{changes.MAX_PVALUE:g})')


def run(args):
    df = options.load(args)
    if args.system:
        df = df.filter(df['system'] == args.system)
    cps = changes.find(df, events.load(), since=options.since(args.since),
                       **changes.tuning(args.penalty, args.min_effect, args.max_pvalue))
    if args.format == 'json':
        print(json.dumps(changes.summary(df, cps), indent=1, default=str))
    else:
        print(text.change_points(cps))
        print(f'\nchange points {len(cps)}, regressions {changes.regressions(cps)}')
    return EXIT_REGRESSION if changes.regressions(cps) else 0
