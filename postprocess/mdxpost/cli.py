'''The ``mdxbench`` command.

    mdxbench ingest [PATH ...]     perflogs -> Elasticsearch (lossless, idempotent)
    mdxbench summary [PATH ...]    table of perflog records, and the Elasticsearch count
    mdxbench fidelity              memory and compute checks beside direct runs (benchmark)
'''
import argparse
import os
import pathlib
import sys

from mdxbench import perflog
from mdxbench.sitecfg import state_dir
from mdxpost import esclient
from mdxpost.ingest import (EXIT_NOT_STORED, Ingestor, count_documents, perflog_files)

EXIT_USAGE = 2


def default_perflog_dir():
    return pathlib.Path(os.environ.get('MDXBENCH_PERFLOG_DIR') or state_dir() / 'perflogs')


def _paths(args):
    return args.paths or [default_perflog_dir()]


def cmd_ingest(args):
    client = esclient.make_client(url=args.es_url)
    ing = Ingestor(client, esclient.index_prefix(),
                   args.state or state_dir() / 'ingest' / 'state.json',
                   args.dead_letter or state_dir() / 'ingest' / 'dead-letter.jsonl',
                   batch_size=args.batch_size, retry_seconds=args.retry_seconds)
    counts = ing.run(_paths(args))
    print(f'mdxbench ingest: {counts.line()}')
    if counts.rejected or counts.malformed:
        print(f'mdxbench ingest: not stored: see {ing.dead_letter_path}', file=sys.stderr)

    return counts.exit_code()


def read_records(paths):
    '''(records, errors) of every perflog line under paths; errors as "file:line: why".'''
    records, errors = [], []
    for f in perflog_files(paths):
        with open(f, errors='replace') as fp:
            for lineno, line in enumerate(fp, 1):
                if perflog.is_header(line):
                    continue

                try:
                    records += perflog.parse_line(line)
                except perflog.PerflogError as err:
                    errors.append(f'{f}:{lineno}: {err}')

    return records, errors


def _fmt(v):
    if v is None:
        return '-'

    return f'{v:.4g}' if isinstance(v, float) else str(v)


def cmd_summary(args):
    records, errors = read_records(_paths(args))
    for e in errors:
        print(e, file=sys.stderr)

    shown = [r for r in records if not args.since or r['completion_time'] >= args.since]
    rows = [('system:partition', 'check', 'perf variable', 'value', 'unit', 'reference',
             'result')]
    for r in sorted(shown, key=lambda r: (r['completion_time'], r['display_name'])):
        ref = 'no reference' if not r['perf_ref'] else _fmt(r['perf_ref'])
        rows.append((f"{r['system']}:{r['partition']}", r['display_name'], r['perf_var'],
                     _fmt(r['perf_value']), r['perf_unit'], ref, r['perf_result']))

    widths = [max(len(str(row[i])) for row in rows) for i in range(len(rows[0]))]
    for k, row in enumerate(rows):
        print('  '.join(str(c).ljust(w) for c, w in zip(row, widths)).rstrip())
        if k == 0:
            print('  '.join('-' * w for w in widths))

    print(f'\nperflog records: {len(records)} in all ({len(shown)} shown), '
          f'malformed lines: {len(errors)}')
    rc = EXIT_NOT_STORED if errors else 0
    if not args.no_es:
        try:
            n = count_documents(esclient.make_client(url=args.es_url), esclient.index_prefix())
        except Exception as err:
            print(f'Elasticsearch documents: unknown ({esclient.redact(str(err))})')
            return EXIT_NOT_STORED

        print(f'Elasticsearch documents: {n}')
        if args.expect_equal and n != len(records):
            print(f'mdxbench summary: Elasticsearch holds {n} documents but the perflogs '
                  f'{len(records)} records', file=sys.stderr)
            rc = EXIT_NOT_STORED

    if args.require_records and not shown:
        print('mdxbench summary: no perflog record to show', file=sys.stderr)
        rc = EXIT_NOT_STORED

    return rc


def cmd_fidelity(args):
    from mdxpost import fidelity

    return fidelity.main(args.repeats)


def build_parser():
    ap = argparse.ArgumentParser(prog='mdxbench', description=__doc__,
                                 formatter_class=argparse.RawDescriptionHelpFormatter)
    sub = ap.add_subparsers(dest='cmd', required=True)
    p = sub.add_parser('ingest', help='send perflogs to Elasticsearch')
    p.add_argument('paths', nargs='*', help='perflog files or directories '
                   '(default: $MDXBENCH_PERFLOG_DIR or <state>/perflogs)')
    p.add_argument('--es-url', help='Elasticsearch URL (default: $MDXBENCH_ES_URL or '
                   f'{esclient.DEFAULT_URL})')
    p.add_argument('--state', help='ingest state file (default: <state>/ingest/state.json)')
    p.add_argument('--dead-letter', help='dead-letter file (default: '
                   '<state>/ingest/dead-letter.jsonl)')
    p.add_argument('--batch-size', type=int, default=1000)
    p.add_argument('--retry-seconds', type=float, default=60.0,
                   help='how long to retry an unreachable or overloaded Elasticsearch')
    p.set_defaults(fn=cmd_ingest)
    p = sub.add_parser('summary', help='table of perflog records and the Elasticsearch count')
    p.add_argument('paths', nargs='*')
    p.add_argument('--since', help='only records completed at or after this ISO time')
    p.add_argument('--es-url')
    p.add_argument('--no-es', action='store_true', help='do not ask Elasticsearch')
    p.add_argument('--expect-equal', action='store_true',
                   help='fail unless Elasticsearch holds as many documents as the perflogs records')
    p.add_argument('--require-records', action='store_true',
                   help='fail when no record is shown')
    p.set_defaults(fn=cmd_summary)
    p = sub.add_parser('fidelity', help='checks beside hand-tuned direct runs (benchmark)')
    p.add_argument('--repeats', type=int, default=1)
    p.set_defaults(fn=cmd_fidelity)
    return ap


def main(argv=None):
    args = build_parser().parse_args(argv)
    try:
        return args.fn(args)
    except esclient.ConfigError as err:
        print(f'mdxbench: configuration: {err}', file=sys.stderr)
        return EXIT_USAGE
    except FileNotFoundError as err:
        print(f'mdxbench: {err}', file=sys.stderr)
        return EXIT_USAGE
    except Exception as err:
        from elasticsearch import ApiError

        if isinstance(err, ApiError):
            status = err.meta.status
            hint = {401: 'authentication failed: check MDXBENCH_ES_API_KEY or '
                         'MDXBENCH_ES_USER/PASSWORD',
                    403: 'the credentials lack a privilege (index templates, _bulk)'}.get(status, '')
            print(f'mdxbench: Elasticsearch answered {status} {err.error}'
                  + (f': {hint}' if hint else ''), file=sys.stderr)
            return EXIT_NOT_STORED

        raise


if __name__ == '__main__':
    sys.exit(main())
