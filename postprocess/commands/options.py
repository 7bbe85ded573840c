'''Options several commands share; the argument types that refuse a bad value before any
work are :mod:`mdxbench.post.arguments`' (named here too, for the commands).'''
import datetime as dt
import sys

from mdxbench.post.arguments import (count, count_or_none, existing_path, fraction, iso_time,  # noqa: F401
                                     known_system, non_negative, output_dir, output_file,
                                     partition_of, port, positive, readable_file, refuse)

from mdxbench.post.site import text
from mdxbench.post.store import esclient, source as history_source



def source(p):
    '''Where the records come from: perflogs (default), Elasticsearch or a Parquet file --
    one of them: perflog paths with --from-es or --parquet are refused.'''
    p.add_argument('paths', nargs='*', type=existing_path, help='perflog files or directories '
                   '(default: $MDXBENCH_PERFLOG_DIR or <state>/perflogs)')
    g = p.add_mutually_exclusive_group()
    g.add_argument('--from-es', action='store_true', help='read the records from Elasticsearch')
    g.add_argument('--parquet', type=readable_file, help='read the records from a Parquet export')
    es_url(p)
    refuse(p, lambda a: (a.from_es or a.parquet) and a.paths and
           f'perflog paths ({" ".join(a.paths)}) and --{"from-es" if a.from_es else "parquet"} '
           'name two sources: give one')


def es_url(p, what=''):
    '''The Elasticsearch URL option, its default said once (``esclient.DEFAULT_URL``).'''
    p.add_argument('--es-url', help=f'{what}Elasticsearch URL, or several nodes\' '
                   f'comma-separated (default: $MDXBENCH_ES_URL or {esclient.DEFAULT_URL})')


def outliers(p):
    '''The outlier rule of ``fleet.verdicts.judge``, for ``accept`` and ``acceptance`` alike.'''
    p.add_argument('--z', type=positive, help='robust standard deviations '
                   '(1.4826 x MAD) below the nodes\' median that make an outlier')
    p.add_argument('--min-effect', type=fraction, help='an outlier is also this '
                   'fraction of the nodes\' median worse (default 0.10)')
    p.add_argument('--gross', type=fraction, help='this fraction of the nodes\' '
                   'median worse is an outlier whatever their spread (default 0.5)')


def files(paths, from_es=False, parquet=None, es_url=None, system=None):
    '''The Parquet files of the history the options of :func:`source` name
    (:func:`mdxbench.post.store.source.files`: the one way in, whatever the source), read
    a row group at a time by the commands that need a few runs per series; unreadable
    perflog lines are reported on standard error.'''
    found, errors = history_source.files(paths, from_es, parquet, es_url, system)
    if errors:
        print(text.lines(errors), file=sys.stderr)
    return found


def since(value, option='--since'):
    '''An ISO time with its zone, or None; a time without zone is a usage error.'''
    if not value:
        return None
    t = dt.datetime.fromisoformat(value)
    if t.tzinfo is None:
        raise ValueError(f'{option} {value!r} needs a time zone (e.g. 2026-11-01T00:00:00+00:00)')
    return t


def reframe_args(values):
    '''ReFrame's options: those after ``--`` (:func:`mdxbench.post.cli.parse`; a ``--``
    left first is dropped).'''
    return values[1:] if values[:1] == ['--'] else list(values)
