'''``mdxbench cycle``: one cycle of the operator's loop for one system.'''
import pathlib

from mdxbench.post.commands import options
from mdxbench.post.cycle import loop
from mdxbench.post.site import text

NAME = 'cycle'
HELP = ('one cycle of the loop: run the suite (--run), ingest, change points, incidents, '
        'feed, notify (exit 0 nothing new, 1 a new regression incident, 2 configuration, '
        '75 Elasticsearch did not take every record)')


def add_arguments(p):
    p.add_argument('--system', required=True, type=options.known_system, help='the system whose history is analysed')
    p.add_argument('--run', action='store_true', help='run the suite first: reframe -c '
                   'checks/ -r --system SYSTEM with the options after --')
    p.add_argument('--perflogs', nargs='+', type=options.existing_path, help='perflog files or directories (default: '
                   '$MDXBENCH_PERFLOG_DIR or <state>/perflogs)')
    p.add_argument('--no-ingest', action='store_true', help='do not ingest: analyse the '
                   'perflogs (a site without Elasticsearch)')
    options.es_url(p)
    p.add_argument('--retry-seconds', type=options.non_negative,
                   help='how long ingest retries an unreachable Elasticsearch')
    p.add_argument('--notify-command', metavar='CMD', help='run (by the shell) once per new '
                   'or reopened incident, its JSON on standard input; a failure is retried '
                   'next cycle')
    p.add_argument('--notify-timeout', type=options.positive,
                   help='seconds the notify command may take')
    p.add_argument('--window-days', type=options.positive,
                   help='change points after the same provenance change this many days apart '
                   'at most are one incident')
    p.add_argument('--mde-budget', type=options.non_negative,
                   help='seconds a cycle may spend computing the series\' minimum detectable '
                   'effects (new series first; the rest in later cycles)')
    p.add_argument('--split', action='store_true', help='split each new incident whose '
                   'benchmark binary changed with it: the previous build installed again by '
                   'Spack and run beside the new one through Slurm (mdxbench incident split)')
    p.add_argument('--split-max-rounds', type=options.count, metavar='N',
                   help='with --split: rounds (one run of each build) at most per check '
                   '(default: the split\'s, as mdxbench incident split --max-rounds); a split '
                   'stops sooner where the series\' noise allows')
    p.add_argument('--state', type=options.output_dir, help='state directory of the cycles (default: '
                   '<state>/cycle/<system>)')
    p.add_argument('--site', type=options.output_dir, help='directory of the published site (default: '
                   '<cycle state>/site)')
    p.add_argument('--json', dest='json_file', metavar='JSON', type=options.output_file,
                   help='write the cycle\'s record here')
    p.add_argument('--full', action='store_true',
                   help='route and detect the whole history again, not only what is new '
                   '(the kept scan copy of the history is rebuilt; other detector settings '
                   'do it by themselves)')
    p.add_argument('-q', '--quiet', action='store_true', help='print the cycle\'s lines '
                   'only, not the table of incidents (the site and --json have it)')
    p.add_argument('reframe_args', nargs='*', metavar='REFRAME_OPTION',
                   help='after --: options for ReFrame with --run (e.g. -t acceptance)')


def run(*, system, run=False, perflogs=None, no_ingest=False, es_url=None,
        retry_seconds=60.0, notify_command=None, notify_timeout=60.0,
        window_days=loop.incidents.WINDOW.days, mde_budget=loop.Options.mde_budget,
        split=False, split_max_rounds=None, state=None, site=None, json_file=None,
        full=False, quiet=False, reframe_args=()):
    res = loop.run(loop.Options(
        system=system, run=run, reframe_args=options.reframe_args(reframe_args),
        perflogs=perflogs, es_url=es_url, notify_command=notify_command,
        notify_timeout=notify_timeout, site=site, state=state,
        window_days=window_days, ingest=not no_ingest,
        retry_seconds=retry_seconds, mde_budget=mde_budget, split=split,
        split_max_rounds=split_max_rounds, full=full))
    if not quiet:
        print(text.incident_table(res.incidents) + '\n')
    print(f'mdxbench cycle: {res.records} records ({res.source}), {res.change_points} change '
          f'points, {len(res.incidents)} incidents ({text.state_counts(res.incidents)}); new '
          f'{len(res.new)}, notified {len(res.notified)}, notify failed {len(res.failed)}; '
          f'feed {res.feed}; exit {res.exit_code}')
    if res.splits:
        print(f'mdxbench cycle: split {text.splits(res.splits)}')
    if json_file:
        pathlib.Path(json_file).write_text(loop.summary(res))
    return res.exit_code
