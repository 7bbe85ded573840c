'''``mdxbench export``: the records table as a Parquet file.'''
from mdxbench.post.commands import options

NAME = 'export'
HELP = 'the records table (from perflogs or Elasticsearch) as a Parquet file, for --parquet'


def add_arguments(p):
    options.source(p)
    p.add_argument('--out', required=True, type=options.output_file, help='Parquet file to write')


def run(*, out, paths=(), from_es=False, parquet=None, es_url=None):
    from mdxbench.post.store import rowgroups

    # copied a row group at a time: the history is never one table here
    n = rowgroups.copy(options.files(paths, from_es, parquet, es_url), out)
    print(f'mdxbench export: {n} records to {out}')
    return 0
