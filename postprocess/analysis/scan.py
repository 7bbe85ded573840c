'''The one way in to change points over a history: :func:`find` picks the scan.

* a records table in memory (:func:`mdxbench.post.analysis.changes.scan`): tests, a
  history read from perflogs;
* Parquet files (the history copy, ``mdxbench export``), in memory bounded by a chunk
  (:func:`mdxbench.post.analysis.chunked.scan`);
* Parquet files with a directory ``keep`` where the scan is kept between cycles
  (:class:`mdxbench.post.analysis.scancopy.ScanCopy`): what a nightly cycle reads costs
  what is new; :func:`find_kept` gives its change points with the history it kept
  (:class:`mdxbench.post.analysis.kept.Kept`), which every later reader goes through.

Each change point is then explained (:mod:`mdxbench.post.analysis.explain`) and the list
ordered, regressions first.'''
import functools
import typing

import polars as pl

from mdxbench.post.analysis import changes, chunked, explain, kept, scancopy
from mdxbench.post.store import events as events_store


@functools.singledispatch
def find(source, events=(), since=None, nproc=None, keep=None, full=False, **kw):
    '''Explained change points, regressions first, then by size of the change; only
    those whose first run is at or after ``since`` (a datetime) when given.

    ``source``: Parquet files (a path, a directory, a list), scanned in bounded memory by
    ``nproc`` processes; with ``keep``, from the scan kept there (``full``: routed and
    detected again whole) -- or a records table (below). ``kw``: the detector's settings
    (:func:`mdxbench.post.analysis.changes.tuning`), and for files ``chunk_rows``,
    ``context`` and ``where`` (a Polars expression selecting records).'''
    evs = events_store.timed(events)
    if keep is not None:
        return explain.ordered(scancopy.ScanCopy(keep).scan(source, nproc, full=full,
                                                            events=evs, **kw), since)
    d, cps = chunked.scan(source, nproc, **kw)
    return _explained(d, cps, evs, kw.get('context', 3), since)


@find.register
def _(source: pl.DataFrame, events=(), since=None, nproc=None, keep=None, full=False, **kw):
    '''The change points of a records table, in memory (tests, a history read from
    perflogs): :func:`mdxbench.post.analysis.changes.scan`.'''
    if keep is not None:
        raise ValueError('changes: a kept scan reads Parquet files, not a table')
    d, cps = changes.scan(source, **kw)
    return _explained(d, cps, events_store.timed(events), kw.get('context', 3), since)


def _explained(d, cps, evs, context, since):
    return explain.ordered([explain.explain(d, cp, evs, context) for cp in cps], since)


class Found(typing.NamedTuple):
    '''What a scan kept between cycles gives: its change points, and the history it kept,
    which the site, the sensitivity and the commands read (a chunk of series at a time).'''
    change_points: list
    history: kept.Kept


def find_kept(files, keep, events=(), since=None, nproc=None, full=False, **kw):
    ''':func:`find` of the Parquet files ``files`` through the scan kept in ``keep``
    (brought up to date; ``full``: routed and detected again whole): the change points
    and the kept history, opened once the scan is done (:class:`Found`).'''
    cps = find(files, events, since=since, nproc=nproc, keep=keep, full=full, **kw)
    return Found(cps, kept.Kept(keep))
