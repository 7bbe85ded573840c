'''``mdxbench acceptance``: per-node verdicts of acceptance measurements already made.'''
import pathlib

from mdxbench.post import exits
from mdxbench.post.commands import options
from mdxbench.post.fleet import jobs, slurm, verdicts
from mdxbench.post.site import text

NAME = 'acceptance'
HELP = 'per-node verdicts of the acceptance checks'


def add_arguments(p):
    options.source(p)
    p.add_argument('--system', type=options.known_system, help='only this system')
    p.add_argument('--partition', help='site-config partition to judge')
    options.refuse(p, options.partition_of())
    p.add_argument('--slurm-partition', help='Slurm partition whose nodes must all be tested '
                   '(default: --partition)')
    p.add_argument('--no-slurm', action='store_true', help='do not ask sinfo for the nodes')
    options.outliers(p)
    p.add_argument('--json', type=options.output_file, help='write the machine-readable verdicts here')


def run(args):
    import polars as pl

    from mdxbench.post.store import rowgroups

    where = pl.lit(True)
    if args.system:
        where &= pl.col('system') == args.system
    if args.partition:
        where &= pl.col('partition') == args.partition
    # each node's latest run of each check, read a row group at a time (what judge reads)
    df = rowgroups.latest(options.files(args, args.system), verdicts.LATEST, 1, where,
                          verdicts.acceptance_records)
    states = {} if args.no_slurm else slurm.node_states(args.slurm_partition or args.partition)
    found = verdicts.judge(df, states, **options.outlier_rule(args))
    print(text.node_verdicts(found))
    if jobs.drain_lines(found):
        print(text.lines(jobs.drain_lines(found)))
    if args.json:
        pathlib.Path(args.json).write_text(verdicts.to_json(found))
    return exits.OK if verdicts.all_pass(found) else exits.FOUND
