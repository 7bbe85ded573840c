'''``mdxbench regress``: the latest runs of each series against a baseline.'''
import json
import pathlib

from mdxbench.post import exits
from mdxbench.post.analysis import regress
from mdxbench.post.commands import options
from mdxbench.post.site import text
from mdxbench.post.store import events

NAME = 'regress'
HELP = 'regressions and improvements against a baseline (exit 1 when any regression)'


def add_arguments(p):
    options.source(p)
    g = p.add_mutually_exclusive_group()
    g.add_argument('--since-event', metavar='NAME', help='cut at the event of that name (per system)')
    g.add_argument('--since', metavar='TIME', type=options.iso_time, help='cut at this ISO time')
    p.add_argument('--baseline-runs', type=options.count, help='runs before the cut that '
                   'form the baseline, at most')
    p.add_argument('--latest-runs', type=options.count, help='latest runs compared')
    p.add_argument('--min-effect', type=options.non_negative, help='relative change (0.05 = 5%%)')
    p.add_argument('--z', type=options.positive, help='robust z-score threshold')
    p.add_argument('--all', action='store_true', help='show unchanged series too')
    p.add_argument('--json', dest='json_file', metavar='JSON', type=options.output_file,
                   help='write the whole table as JSON here')


def run(*, paths=(), from_es=False, parquet=None, es_url=None, since_event=None, since=None,
        baseline_runs=10, latest_runs=3, min_effect=0.05, z=3.0, all=False, json_file=None):
    cut = events.cut_for(since_event) if since_event else options.since(since)
    # of each series only the runs it compares, read a row group at a time
    df = regress.latest_runs(options.files(paths, from_es, parquet, es_url), cut, baseline_runs,
                             latest_runs)
    table = regress.compare(df, cut, baseline_runs=baseline_runs,
                            latest_runs=latest_runs, min_effect=min_effect, z=z)
    counts = regress.counts(table)
    print(text.regressions(table, only_changes=not all))
    print('\n' + text.verdict_counts(counts))
    if json_file:
        pathlib.Path(json_file).write_text(json.dumps(table.to_dicts(), default=str, indent=1))
    return exits.FOUND if counts['regression'] else exits.OK
