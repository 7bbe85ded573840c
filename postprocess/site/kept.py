'''The trend pages written from the cycle's kept scan copy, a chunk of series at a time
(issue 45), by the scan's processes, each holding one chunk (about
``chunked.CHUNK_ROWS`` runs): every series' summary and digest is computed in its chunk,
a series' file built only where its digest moved (:func:`mdxbench.post.site.trends.charts`'
``build``), the chunk's latest month handed back as text; this process writes the index,
the 256 files of latest runs and the digests (:func:`mdxbench.post.site.trends.finish`).
The same files as :func:`mdxbench.post.site.trends.write` of the whole history as one
table (``tests/unit/test_site_kept.py`` compares them).
'''
import pathlib
import uuid

from mdxbench.post.analysis import changes, chunked
from mdxbench.post.analysis.kept import Kept, Table, chunk_of
from mdxbench.post.analysis.scancopy import ScanCopy
from mdxbench.post.site import trends
from mdxbench.post.store import events as events_store

#: what a worker process read of the site as the last publish left it (the digests and
#: the series files present), once per publish (keyed by its token)
_SEEN = {}


def _split(items, chunks):
    '''{chunk: {key: item}} of the dict ``items`` keyed by series key tuples.'''
    out = {}
    for k, c in chunk_of(items, chunks).items():
        out.setdefault(c, {})[k] = items[k]
    return out


def _trends_of_chunk(task):
    '''One kept chunk's part of the trend pages: its series files built where their
    digest moved (written here); (index rows, digests, latest runs by bucket).'''
    part, folder, token, cut, cps_of, mdes, evs = task
    if token not in _SEEN:
        _SEEN.clear()
        _SEEN[token] = trends.previous(folder)
    before, present = _SEEN[token]
    files = sorted(pathlib.Path(part).glob('*' + chunked.SUFFIX))
    d = chunked.read_chunk(files, ['_sid', 'time', 'value', *chunked.SITE])

    def build(ident, known):
        return before.get(ident) != known or ident not in present

    return trends.pages(folder, trends.charts(d, lambda k: cps_of.get(k, []), evs, cut=cut,
                                              build=build, keys=chunked.read_keys(part)),
                        cps_of, mdes, present)


def write_trends(path, keep, change_points, events=(), sensitivity=None, nproc=None):
    ''':func:`mdxbench.post.site.trends.write` of the history the scan kept in ``keep``
    (brought up to date by the cycle's scan, whose ``change_points`` these are), a chunk
    at a time by ``nproc`` processes; the number of charts.'''
    copy = ScanCopy(keep)
    folder = trends.start(path)
    evs = events_store.timed(events)
    cps_of = trends.by_series(change_points)
    mdes = {tuple(e[k] for k in changes.SERIES): e for e in sensitivity or ()}
    parts = copy.parts()
    chunks = copy.manifest.get('chunks') or 1
    latest = copy.latest()
    cut = trends._month(latest) if latest is not None else None
    cps_by, mdes_by = _split(cps_of, chunks), _split(mdes, chunks)
    token = uuid.uuid4().hex
    tasks = [(str(p), str(folder), token, cut, cps_by.get(int(p.name), {}),
              mdes_by.get(int(p.name), {}), evs) for p in parts]
    _, present = trends.previous(folder)
    index, digests, latest_runs = [], {}, {}
    nproc = nproc or chunked.workers()
    with chunked.Pool(min(nproc, max(1, len(tasks)))) as pool:
        for rows, dig, lat in (pool.map(_trends_of_chunk, tasks) if pool
                               else map(_trends_of_chunk, tasks)):
            index.extend(rows)
            digests.update(dig)
            for b, got in lat.items():
                latest_runs.setdefault(b, []).extend(got)
    _SEEN.clear()
    return trends.finish(path, index, digests, latest_runs, present, len(change_points))


def write(history, path, events, sensitivity, change_points):
    '''(charts, change points) of the trend pages of ``history`` (a
    :mod:`mdxbench.post.analysis.kept` history) written to ``path``.'''
    if isinstance(history, Table):
        return trends.write(history.df, path, events, sensitivity, change_points)
    assert isinstance(history, Kept)
    return write_trends(path, history.keep, change_points, events, sensitivity), \
        list(change_points)
