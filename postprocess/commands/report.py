'''``mdxbench report``: the papers' tables, figures and trend pages as HTML.'''
from mdxbench.post.commands import options

NAME = 'report'
HELP = "the papers' tables and figures as HTML and PNG, and the trend pages"


def add_arguments(p):
    options.source(p)
    p.add_argument('--out', required=True, type=options.output_dir, help='directory for index.html and the PNG files')


def run(*, out, paths=(), from_es=False, parquet=None, es_url=None):
    import sys
    import tempfile

    from mdxbench.post.analysis import scan
    from mdxbench.post.site import report, text
    from mdxbench.post.store import events, source as history_source

    # whatever the source, its Parquet files, kept by series for the run: every page is
    # written a chunk of series at a time, as a cycle's site
    files, errors = history_source.files(paths, from_es, parquet, es_url)
    if errors:
        print(text.lines(errors), file=sys.stderr)
    with tempfile.TemporaryDirectory(prefix='mdxbench-report-') as keep:
        cps, hist = scan.find_kept(files, keep, events.load())
        page, tables, figs = report.write(hist, out, None, cps)
        n = hist.span()[0]
    print(f'mdxbench report: {page} ({len(tables)} tables, {len(figs)} figures, '
          f'{n} records)')
    return 0
