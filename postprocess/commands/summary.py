'''``mdxbench summary``: the perflog records as a table, and what Elasticsearch holds.'''
import sys

from mdxbench.post import exits
from mdxbench.post.commands import options
from mdxbench.post.site import text
from mdxbench.post.store import esclient, records
from mdxbench.post.store.ingest import count_documents

NAME = 'summary'
HELP = 'table of perflog records and the Elasticsearch count'


def add_arguments(p):
    p.add_argument('paths', nargs='*', type=options.existing_path, help='perflog files or directories '
                   '(default: $MDXBENCH_PERFLOG_DIR or <state>/perflogs)')
    p.add_argument('--since', type=options.iso_time, help='only records completed at or after this ISO time')
    options.es_url(p)
    p.add_argument('--no-es', action='store_true', help='do not ask Elasticsearch')
    p.add_argument('--expect-equal', action='store_true',
                   help='fail unless Elasticsearch holds as many documents as the perflogs records')
    p.add_argument('--require-records', action='store_true',
                   help='fail when no record is shown')


def run(*, paths=(), since=None, es_url=None, no_es=False, expect_equal=False,
        require_records=False):
    unfinished = []
    recs, errors = records.read_perflogs(paths, unfinished)
    if errors:
        print(text.lines(errors), file=sys.stderr)
    if unfinished:
        print(text.unfinished_lines(unfinished), file=sys.stderr)
    shown = records.completed_since(recs, since)
    print(text.perflog_records(shown))
    print(f'\nperflog records: {len(recs)} in all ({len(shown)} shown), '
          f'malformed lines: {len(errors)}, unfinished lines: {len(unfinished)}')
    rc = exits.FOUND if errors else 0
    if not no_es:
        try:
            n = count_documents(esclient.make_client(url=es_url), esclient.index_prefix())
        except Exception as err:
            print(f'Elasticsearch documents: unknown ({esclient.redact(str(err))})')
            return exits.FOUND
        print(f'Elasticsearch documents: {n}')
        if expect_equal and n != len(recs):
            print(f'mdxbench summary: Elasticsearch holds {n} documents but the perflogs '
                  f'{len(recs)} records', file=sys.stderr)
            rc = exits.FOUND
    if require_records and not shown:
        print('mdxbench summary: no perflog record to show', file=sys.stderr)
        rc = exits.FOUND
    return rc
