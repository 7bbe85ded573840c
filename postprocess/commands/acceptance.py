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
    p.add_argument('--json', dest='json_file', metavar='JSON', type=options.output_file,
                   help='write the machine-readable verdicts here')


def run(*, paths=(), from_es=False, parquet=None, es_url=None, system=None,
        partition=None, slurm_partition=None, no_slurm=False, z=3.0, min_effect=None,
        gross=None, json_file=None):
    import polars as pl

    from mdxbench.post.store import rowgroups

    where = pl.lit(True)
    if system:
        where &= pl.col('system') == system
    if partition:
        where &= pl.col('partition') == partition
    # each node's latest run of each check, read a row group at a time (what judge reads)
    df = rowgroups.latest(options.files(paths, from_es, parquet, es_url, system),
                          verdicts.LATEST, 1, where, verdicts.acceptance_records)
    states = {} if no_slurm else slurm.node_states(slurm_partition or partition)
    found = verdicts.judge(df, states, z=z, min_effect=min_effect, gross=gross)
    print(text.node_verdicts(found))
    if jobs.drain_lines(found):
        print(text.lines(jobs.drain_lines(found)))
    if json_file:
        pathlib.Path(json_file).write_text(verdicts.to_json(found))
    return exits.OK if verdicts.all_pass(found) else exits.FOUND
