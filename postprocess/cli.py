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
    mdxbench site serve            the cycles' published sites over HTTP
    mdxbench references propose    reference entries from the latest stable measurements
    mdxbench export --out F        the records as Parquet (for --parquet)
    mdxbench history sync|status|verify|snapshot|restore
                                   the local Parquet copy every Elasticsearch reader uses;
                                   the store's backup (Elasticsearch snapshots)
    mdxbench session --report F    one ReFrame session: results, skips by reason, minutes
    mdxbench fidelity              memory and compute checks beside direct runs (benchmark)
    mdxbench bench ingest|regress|changes|mde|cycle|accept|suspects|split|store|parsers
                                   speed and memory of mdxbench itself

This module parses and calls: each command's arguments and its one call are in
``mdxbench.post.commands.<command>``; errors the commands raise become exit codes here.
'''
import argparse
import sys

from mdxbench.post import arguments, exits
from mdxbench.post.commands import COMMANDS
from mdxbench.post.store import esclient, history
from mdxbench.post.store.ingest import TlsVerificationError


class Parser(argparse.ArgumentParser):
    '''argparse's parser whose usage errors are one line, naming the option and where the
    help is, and exit :data:`~mdxbench.post.exits.USAGE`; ``--help`` shows each option's
    default.'''

    def __init__(self, *args, **kwargs):
        kwargs.setdefault('formatter_class', Formatter)
        super().__init__(*args, **kwargs)

    def error(self, message):
        self.exit(exits.USAGE, f'{self.prog}: error: {message} (see {self.prog} --help)\n')


class Formatter(argparse.ArgumentDefaultsHelpFormatter):
    '''Each option's default in ``--help``, unless its help says it already.'''

    def _get_help_string(self, action):
        text = action.help or ''
        if '(default' in text or action.default in (None, False, argparse.SUPPRESS, [], ()) or \
                action.option_strings == [] or '%(default)' in text:
            return text
        return f'{text} (default: %(default)s)'


def debug_option(p, default):
    p.add_argument('-v', '--debug', '--verbose', dest='debug', action='store_true',
                   default=default, help='on an error, show its traceback, not one line')


def build_parser():
    '''The whole argument parser (the reference documentation is generated from it).'''
    ap = Parser(prog='mdxbench', description=__doc__.split('\n\n')[0],
                epilog='Each command has its --help.')
    debug_option(ap, False)
    sub = ap.add_subparsers(dest='cmd', required=True, metavar='COMMAND')
    for mod in COMMANDS:
        p = sub.add_parser(mod.NAME, help=mod.HELP, description=mod.HELP)
        debug_option(p, argparse.SUPPRESS)
        mod.add_arguments(p)
        arguments.defaults(p, mod.run)
        p.set_defaults(_command=mod.run, _parser=p)
    return ap


def parse(argv=None):
    '''The arguments of ``argv``: what follows the first ``--`` are ReFrame's options
    (``reframe_args``) of the commands that take them, and the command's own options may
    come anywhere before it. Options that contradict each other are refused here, before
    any work (the checks :func:`mdxbench.post.arguments.refuse` registered).'''
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
    problem = arguments.contradiction(args)
    if problem:
        args._parser.error(problem)
    return args


def main(argv=None):
    '''The command's exit code: a usage error is one line and USAGE, as its other errors
    (:func:`describe`).'''
    try:
        args = parse(argv)
    except SystemExit as stop:          # argparse: --help (0) or a usage error (USAGE)
        return stop.code
    try:
        return args._command(**arguments.keywords(args))
    except Exception as err:
        if args.debug:
            raise
        code, message = describe(err)
        print(f'mdxbench {args.cmd}: {esclient.redact(message)}', file=sys.stderr)
        return code


def describe(err):
    '''(exit code, one line) for an error a command raised: what the operator can act on
    is a usage error (:data:`~mdxbench.post.exits.USAGE`), an unreachable Elasticsearch
    :data:`~mdxbench.post.exits.PENDING`, anything else a fault of mdxbench
    (:data:`~mdxbench.post.exits.INTERNAL`).'''
    from elasticsearch import ApiError, ConnectionError, ConnectionTimeout

    from mdxbench.references import ReferenceError
    from mdxbench.sitecfg import SiteConfigError

    if isinstance(err, esclient.ConfigError):
        return exits.USAGE, f'configuration: {err}'
    if isinstance(err, history.Unreachable):
        return exits.PENDING, str(err)
    if isinstance(err, (ConnectionError, ConnectionTimeout)):
        # Elasticsearch stopped answering in the middle of a command (a node lost, a
        # cluster too busy to answer in time): not now, not a fault -- the next run takes up
        # what this one could not (the perflogs keep every record)
        return exits.PENDING, (f'Elasticsearch did not answer: {type(err).__name__}: '
                               f'{" ".join(str(err).split())[:200]}; run again')
    if isinstance(err, TlsVerificationError):
        return exits.USAGE, f'{err}; nothing was sent, the perflogs keep every record'
    if isinstance(err, ApiError):
        return exits.FOUND, describe_api_error(err)
    if isinstance(err, (exits.UsageError, SiteConfigError, ReferenceError, OSError,
                        ValueError)):
        return exits.USAGE, ' '.join(str(err).split()) or type(err).__name__
    return exits.INTERNAL, (f'internal error: {type(err).__name__}: {" ".join(str(err).split())}'
                            ' (rerun with --debug for the traceback, and please report it)')


def describe_api_error(err):
    '''What an Elasticsearch error answer means for the operator.'''
    status = err.meta.status
    hint = {401: 'authentication failed: check MDXBENCH_ES_API_KEY or MDXBENCH_ES_USER/PASSWORD',
            403: 'the credentials lack a privilege (index templates, _bulk)'}.get(status, '')
    return f'Elasticsearch answered {status} {err.error}' + (f': {hint}' if hint else '')


if __name__ == '__main__':
    sys.exit(main())
