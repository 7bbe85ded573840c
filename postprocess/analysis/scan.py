'''The one way in to change points over a history: :func:`find` picks the scan.

* a records table in memory (:func:`mdxbench.post.analysis.changes.scan`): tests, a
  history read from perflogs;
* Parquet files (the history copy, ``mdxbench export``), in memory bounded by a chunk
  (:func:`mdxbench.post.analysis.chunked.scan`);
* Parquet files with a directory ``keep`` where the scan is kept between cycles
  (:class:`mdxbench.post.analysis.scancopy.ScanCopy`): what a nightly cycle reads costs
  what is new.

Each change point is then explained (:mod:`mdxbench.post.analysis.explain`) and the list
ordered, regressions first.'''
import polars as pl

from mdxbench.post.analysis import changes, chunked, explain, scancopy
from mdxbench.post.store import events as events_store


def find(source, events=(), since=None, nproc=None, keep=None, full=False, **kw):
    '''Explained change points, regressions first, then by size of the change; only
    those whose first run is at or after ``since`` (a datetime) when given.

    ``source``: the records table, or Parquet files (a path, a directory, a list), scanned
    in bounded memory by ``nproc`` processes; with ``keep``, from the scan kept there
    (``full``: routed and detected again whole). ``kw``: the detector's settings
    (:func:`mdxbench.post.analysis.changes.tuning`), and for files ``chunk_rows``,
    ``context`` and ``where`` (a Polars expression selecting records).'''
    evs = events_store.timed(events)
    if isinstance(source, pl.DataFrame):
        if keep is not None:
            raise ValueError('changes: a kept scan reads Parquet files, not a table')
        d, cps = changes.scan(source, **kw)
    elif keep is None:
        d, cps = chunked.scan(source, nproc, **kw)
    else:
        return explain.ordered(scancopy.ScanCopy(keep).scan(source, nproc, full=full,
                                                            events=evs, **kw), since)
    context = kw.get('context', 3)
    return explain.ordered([explain.explain(d, cp, evs, context) for cp in cps], since)
