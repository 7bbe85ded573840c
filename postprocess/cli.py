'''The mdxbench command: regression tracking, node acceptance and reports over the
perflogs of the suite's ReFrame runs, stored in Elasticsearch.

    mdxbench ingest [PATH ...]     perflogs -> Elasticsearch (lossless, idempotent)
    mdxbench summary [PATH ...]    table of perflog records, and the Elasticsearch count
    mdxbench regress [PATH ...]    regressions against a baseline (exit 1 when any)
    mdxbench changes [PATH ...]    change points over each series' history, explained
    mdxbench event add|list        system events to cut the baseline at
    mdxbench cycle                 one cycle of the operator's loop: run, ingest, change
                                   points, incidents, the site, notify
    mdxbench schedule install|list|remove
                                   cycles as Slurm scrontab entries, one per system
    mdxbench incident list|show|ack|split
                                   the incidents; split: system or software
    mdxbench acceptance [PATH ...] per-node verdicts of the acceptance checks
    mdxbench accept                one job per node with every acceptance check, verdicts
    mdxbench report --out DIR      the papers' tables, figures and trend pages (HTML)
    mdxbench references propose    reference entries from the latest stable measurements
    mdxbench export --out F        the records as Parquet (for --parquet)
    mdxbench history sync|status|verify
                                   the local Parquet copy every Elasticsearch reader uses
    mdxbench session --report F    one ReFrame session: results, skips by reason, minutes
    mdxbench fidelity              memory and compute checks beside direct runs (benchmark)
    mdxbench bench ingest|regress|changes|mde|cycle|accept|suspects|split|store|parsers
                                   speed and memory of mdxbench itself

This module parses and calls: each command's arguments and its one call are in
``mdxbench.post.commands.<command>``; errors the commands raise become exit codes here.
'''
import argparse
import sys

from mdxbench.post import exits
from mdxbench.post.commands import COMMANDS
from mdxbench.post.store import esclient, history
from mdxbench.post.store.ingest import TlsVerificationError


def build_parser():
    '''The whole argument parser (the reference documentation is generated from it).'''
    ap = argparse.ArgumentParser(prog='mdxbench', description=__doc__.split('\n\n')[0],
                                 epilog='Each command has its --help.')
    sub = ap.add_subparsers(dest='cmd', required=True, metavar='COMMAND')
    for mod in COMMANDS:
        p = sub.add_parser(mod.NAME, help=mod.HELP, description=mod.HELP)
        mod.add_arguments(p)
        p.set_defaults(_command=mod.run)
    return ap


def parse(argv=None):
    '''The arguments of ``argv``: what follows the first ``--`` are ReFrame's options
    (``reframe_args``) of the commands that take them, and the command's own options may
    come anywhere before it.'''
    argv = sys.argv[1:] if argv is None else list(argv)
    tail = []
    if '--' in argv:
        argv, tail = argv[:argv.index('--')], argv[argv.index('--') + 1:]
    parser = build_parser()
    args = parser.parse_args(argv)
    if tail and not hasattr(args, 'reframe_args'):
        parser.error(f'{args.cmd} takes no ReFrame options (after --: {" ".join(tail)})')
    if tail:
        args.reframe_args = list(args.reframe_args) + tail
    return args


def main(argv=None):
    args = parse(argv)
    try:
        return args._command(args)
    except esclient.ConfigError as err:
        print(f'mdxbench: configuration: {err}', file=sys.stderr)
        return exits.USAGE
    except history.Unreachable as err:
        print(f'mdxbench: {esclient.redact(str(err))}', file=sys.stderr)
        return exits.PENDING
    except TlsVerificationError as err:
        print(f'mdxbench: {esclient.redact(str(err))}; nothing was sent, the perflogs keep '
              f'every record', file=sys.stderr)
        return exits.USAGE
    except (FileNotFoundError, ValueError) as err:
        print(f'mdxbench: {err}', file=sys.stderr)
        return exits.USAGE
    except Exception as err:
        from elasticsearch import ApiError

        if isinstance(err, ApiError):
            print(f'mdxbench: {describe_api_error(err)}', file=sys.stderr)
            return exits.FOUND
        raise


def describe_api_error(err):
    '''What an Elasticsearch error answer means for the operator.'''
    status = err.meta.status
    hint = {401: 'authentication failed: check MDXBENCH_ES_API_KEY or MDXBENCH_ES_USER/PASSWORD',
            403: 'the credentials lack a privilege (index templates, _bulk)'}.get(status, '')
    return f'Elasticsearch answered {status} {err.error}' + (f': {hint}' if hint else '')


if __name__ == '__main__':
    sys.exit(main())
