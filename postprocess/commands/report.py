'''``mdxbench report``: the papers' tables, figures and trend pages as HTML.'''
from mdxbench.post.commands import options

NAME = 'report'
HELP = "the papers' tables and figures as HTML and PNG, and the trend pages"


def add_arguments(p):
    options.source(p)
    p.add_argument('--out', required=True, help='directory for index.html and the PNG files')


def run(args):
    from mdxbench.post.site import report

    df = options.load(args)
    page, tables, figs = report.write(df, args.out)
    print(f'mdxbench report: {page} ({len(tables)} tables, {len(figs)} figures, '
          f'{df.height} records)')
    return 0
