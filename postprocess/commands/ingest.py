'''``mdxbench ingest``: perflogs into Elasticsearch, lossless and idempotent.'''
import sys

from mdxbench.post import exits
from mdxbench.sitecfg import state_dir
from mdxbench.post.commands import options
from mdxbench.post.store import esclient
from mdxbench.post.store.ingest import Ingestor
from mdxbench.post.store.locks import LockBusy

NAME = 'ingest'
HELP = 'send perflogs to Elasticsearch'


def add_arguments(p):
    p.add_argument('paths', nargs='*', type=options.existing_path, help='perflog files or directories '
                   '(default: $MDXBENCH_PERFLOG_DIR or <state>/perflogs)')
    options.es_url(p)
    p.add_argument('--state', help='ingest state file (default: <state>/ingest/state.json)')
    p.add_argument('--dead-letter', help='dead-letter file (default: '
                   '<state>/ingest/dead-letter.jsonl)')
    p.add_argument('--batch-size', type=options.count, help='records per _bulk request')
    p.add_argument('--retry-seconds', type=options.non_negative,
                   help='how long to retry an unreachable or overloaded Elasticsearch')
    p.add_argument('--lock-wait', type=options.non_negative,
                   help='how long to wait for another ingest of the same state file to '
                   f'finish (seconds; exit {exits.LOCKED} past it)')


def run(*, paths=(), es_url=None, state=None, dead_letter=None, batch_size=2000,
        retry_seconds=60.0, lock_wait=300.0):
    from mdxbench.post.store.records import default_perflog_dir

    ing = Ingestor(esclient.make_client(url=es_url), esclient.index_prefix(),
                   state or state_dir() / 'ingest' / 'state.json',
                   dead_letter or state_dir() / 'ingest' / 'dead-letter.jsonl',
                   batch_size=batch_size, retry_seconds=retry_seconds,
                   lock_wait=lock_wait)
    try:
        counts = ing.run(paths or [default_perflog_dir()])
    except LockBusy as err:
        print(f'mdxbench ingest: {err}', file=sys.stderr)
        return exits.LOCKED
    print(f'mdxbench ingest: {counts.line()}')
    if counts.rejected or counts.malformed:
        print(f'mdxbench ingest: not stored: see {ing.dead_letter_path}', file=sys.stderr)
    return counts.exit_code()
