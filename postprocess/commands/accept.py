'''``mdxbench accept``: one job per node running every acceptance check, verdicts.'''
import dataclasses
import pathlib
import sys

from mdxbench.post import exits
from mdxbench.post.commands import options
from mdxbench.post.fleet import accept, jobs, verdicts
from mdxbench.post.site import text

NAME = 'accept'
HELP = ('node acceptance with one job per node (all acceptance checks inside it), bounded '
        'jobs in the queue, verdicts')


def add_arguments(p):
    p.add_argument('--system', required=True, type=options.known_system, help='site-config system')
    p.add_argument('--partition', required=True, help='site-config partition')
    options.refuse(p, options.partition_of())
    p.add_argument('--slurm-partition', help='Slurm partition (default: --partition)')
    p.add_argument('--max-jobs', type=options.count, help='jobs in the queue at once (default: one '
                   'per node to test)')
    p.add_argument('--nodes', help='only these nodes of the partition (comma-separated)')
    p.add_argument('--time-limit', help='of each node\'s job')
    p.add_argument('-q', '--quiet', action='store_true', help='print no job ids nor '
                   'progress: the verdicts, drain lines and figures only')
    p.add_argument('--poll', type=options.positive, metavar='SECONDS',
                   help='seconds between two looks at the queue (squeue)')
    p.add_argument('--out', type=options.output_dir, help='directory for job scripts, outputs and perflogs '
                   '(default: <state>/accept/<time>)')
    options.outliers(p)
    p.add_argument('--retests', type=options.count_or_none, help='measure a failed node again this '
                   'many times; it fails only on what failed the time before too (default 1)')
    p.add_argument('--alpha', type=options.fraction, help='suspects: the chance of '
                   'failing a healthy node that the sequential test accepts (default 0.01)')
    p.add_argument('--beta', type=options.fraction, help='suspects: the chance of passing '
                   'a node short by --min-effect (default 0.05)')
    p.add_argument('--max-extra-jobs', type=options.count_or_none, help='suspects: at most this many jobs to '
                   'measure them again, a paired round (every undecided suspect and a '
                   'healthy node) one job (default: half as many as the nodes to test)')
    p.add_argument('--no-suspects', action='store_true', help='pass nodes that are worse '
                   'than the median by --min-effect but no outliers, without measuring again')
    p.add_argument('--history', nargs='+', type=options.existing_path, metavar='PATH',
                   help="earlier records of these nodes (perflog files or directories, or a "
                   ".parquet): each node's own earlier level, and the noise from its repeated runs")
    p.add_argument('--history-es', action='store_true', help='earlier records from '
                   'Elasticsearch (MDXBENCH_ES_URL), as --history')
    p.add_argument('--json', dest='json_file', metavar='JSON', type=options.output_file,
                   help='write the verdicts (and job figures) here')
    p.add_argument('--drain', action='store_true', help='run the printed scontrol lines')
    p.add_argument('--dry-run', action='store_true',
                   help='print the nodes and job counts (ours and --distribute\'s), submit nothing')
    p.add_argument('reframe_args', nargs='*', metavar='REFRAME_OPTION',
                   help='after --: options for ReFrame in each job (e.g. -n, -S)')


def run(*, system, partition, slurm_partition=None, max_jobs=None, nodes=None,
        time_limit='30:00', quiet=False, poll=jobs.Plan.poll, out=None, z=3.0,
        min_effect=None, gross=None, retests=1, alpha=0.01, beta=0.05,
        max_extra_jobs=None, no_suspects=False, history=(), history_es=False,
        json_file=None, drain=False, dry_run=False, reframe_args=()):
    plan = dataclasses.replace(
        jobs.plan(system, partition, slurm_partition, max_jobs,
                  nodes=nodes.split(',') if nodes else None), poll=poll)
    rf_args = options.reframe_args(reframe_args)
    cases, files, pairs = jobs.acceptance_cases(system, partition, rf_args)
    if not cases:
        print(f'mdxbench accept: no acceptance check selected for {system}:'
              f'{partition} with {" ".join(rf_args) or "no options"}', file=sys.stderr)
        return exits.USAGE
    if dry_run:
        print(accept.dry_run(plan, cases, pairs))
        return 0
    out = accept.new_out_dir(out)
    seq = None if no_suspects else accept.sequential(
        alpha, beta, max_extra_jobs, history, history_es,
        plan.system, plan.partition)
    progress = text.JobProgress(quiet=quiet)
    try:
        res = accept.run(plan, out, rf_args, time_limit, files,
                         dict(z=z, min_effect=min_effect, gross=gross), retests, sequential=seq,
                         progress=progress, pairs=bool(pairs),
                         log=(lambda line: None) if quiet else print)
    finally:
        progress.close()
    print(f'mdxbench accept: {res.jobs} jobs for {len(plan.testable)} nodes, at most '
          f'{res.max_in_queue} in the queue, {res.seconds:.1f} s wall')
    print(text.node_verdicts(res.verdicts))
    if res.noise:
        print(text.noise_table(res.noise))
    lines = jobs.drain_lines(res.verdicts)
    if lines:
        print(text.lines(lines))
    if drain:
        jobs.drain(res.verdicts)
    if json_file:
        pathlib.Path(json_file).write_text(verdicts.to_json(
            res.verdicts, extra=dict(res.figures(), drain=lines, noise=res.noise_json())))
    result = verdicts.outcome(res.verdicts)
    if result == 'undecided':
        print(f"mdxbench accept: undecided: {', '.join(verdicts.undecided(res.verdicts))} "
              f"(not drained; each verdict says what would decide it)")
    return exit_status(result)


def exit_status(result):
    '''The exit of ``mdxbench accept`` for the run's outcome (:func:`verdicts.outcome`): 0
    where every node passed, UNDECIDED (3) where none failed but one stayed undecided, and
    FOUND (1) where one failed -- or none was tested, which accepts nothing.'''
    return {'pass': exits.OK, 'undecided': exits.UNDECIDED}.get(result, exits.FOUND)
