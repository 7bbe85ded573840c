'''``mdxbench references propose``: reference entries from the latest stable measurements.'''
from mdxbench import references
from mdxbench.post.analysis import proposals
from mdxbench.post.commands import options
from mdxbench.post.site import text

NAME = 'references'
HELP = 'reference entries proposed from measurements'


def add_arguments(p):
    sub = p.add_subparsers(dest='action', required=True)
    pr = sub.add_parser('propose', help='for every series of a system: the median of its '
                        'latest stable segment, with a tolerance from its noise')
    options.source(pr)
    pr.add_argument('--system', required=True, type=options.known_system, help='the system whose series are proposed')
    pr.add_argument('--since', metavar='TIME', type=options.iso_time, help='only runs at or after this ISO time')
    pr.add_argument('--out', type=options.output_file, help='references file to write (default: '
                    '<references dir>/measured-<system>.yaml)')
    pr.add_argument('--reference-dir', help='directory of the references whose paper '
                    'figures are kept (default: $MDXBENCH_REFERENCE_DIR or site-configs/references)')
    pr.add_argument('--dry-run', action='store_true', help='print the diff, write nothing')


def run(*, action='propose', system, paths=(), from_es=False, parquet=None, es_url=None,
        since=None, out=None, reference_dir=None, dry_run=False):
    import polars as pl

    from mdxbench.post.store import rowgroups

    since = options.since(since)
    # the system's records since the time only, read a row group at a time
    where = pl.col('system') == system
    if since is not None:
        where &= pl.col('time') >= since
    df = rowgroups.select(options.files(paths, from_es, parquet, es_url, system), where)
    out = out or references.reference_dir() / f'measured-{system}.yaml'
    entries, notes = proposals.propose(df, system, since=since)
    new, old, kept = proposals.merge(entries, out, reference_dir)
    if notes:
        print(text.lines(notes, prefix='no proposal: '))
    if kept:
        print(text.lines(kept, prefix='paper figure kept: '))
    change = proposals.diff(old, new, out)
    print(change or f'{out}: no change')
    if change and not dry_run:
        proposals.write(out, new)
    print(f'{len(entries)} series proposed, {len(kept)} kept paper figures, {len(notes)} '
          f'without a proposal; {"not written (--dry-run)" if dry_run else out}')
    return 0
