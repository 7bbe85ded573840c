'''The trend pages written from the cycle's kept scan copy, a chunk of series at a time
(issue 45), by the scan's processes, each holding one chunk (about
``mdxbench.post.analysis.chunked.CHUNK_ROWS`` runs, read through
:class:`mdxbench.post.analysis.kept.Chunk`): every series' summary and digest is computed in its chunk,
a series' file built only where its digest moved (:func:`mdxbench.post.site.trends.charts`'
``build``), the chunk's latest month handed back as text; this process writes the index,
the 256 files of latest runs and the digests (:func:`mdxbench.post.site.trends.finish`).
The same files as :func:`mdxbench.post.site.trends.write` of the whole history as one
table (``tests/unit/test_site_kept.py`` compares them).
'''
import functools
import pathlib
import uuid

import polars as pl

from mdxbench.post.analysis import changes, kept
from mdxbench.post.analysis.kept import Chunk, Kept, Table, chunk_of
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


def _seen(folder, token):
    '''(digests as last written, the series files present) of the site ``folder``, read
    once per publish and worker process.'''
    if token not in _SEEN:
        _SEEN.clear()
        _SEEN[token] = trends.previous(folder)
    return _SEEN[token]


def _state_path(folder, chunks, chunk):
    return pathlib.Path(folder) / STATE / f'{chunks}-{chunk}.parquet'


#: where the site keeps, per kept chunk, what it knew each series by at the last publish
#: (id, signature, digest): a series whose signature holds is not looked at again
STATE = '.kept'


def _signature(g, cps_of, evs):
    '''Each series' signature (a string) of the summary ``g`` (with keys): what its chart
    file depends on besides its keys: its runs before the cut, its latest reference,
    whether it has later runs, the events it is drawn with, its change points.'''
    import hashlib
    import json

    flags = [((pl.col('system') == e['system'])
              & (pl.lit(e.get('partition') is None) | (pl.col('partition') == e.get('partition')))
              & (pl.col('first') <= e['_time']) & (pl.col('last') >= e['_time']))
             .cast(pl.Utf8).fill_null('0') for e in evs]
    events = hashlib.blake2b(json.dumps(evs, sort_keys=True, default=str).encode(),
                             digest_size=8).hexdigest()
    sig = g.select(pl.concat_str([pl.lit(events),
        pl.struct('_n0', '_h', '_t', 'ref', 'lower', 'upper',
                  (pl.col('n') > pl.col('_n0')).alias('latest')).hash(seed=3).cast(pl.Utf8),
        *flags], separator=':'))[:, 0].to_list()
    if cps_of:
        keys = g.select(changes.SERIES).iter_rows()
        for i, k in enumerate(keys):
            if k in cps_of:
                sig[i] += ':' + hashlib.blake2b(json.dumps(
                    cps_of[k], sort_keys=True, default=str).encode(), digest_size=8).hexdigest()
    return sig


def _old_points(folder, ident):
    '''The points (JSON text) the file of series ``ident`` holds, or None.'''
    import json

    try:
        text = trends.series_file(folder, ident).read_text()
    except OSError:
        return None
    head = f'mdxbenchChart({json.dumps(ident)}, '
    if not text.startswith(head):
        return None
    try:
        _, end = json.JSONDecoder().raw_decode(text, len(head))
    except ValueError:
        return None
    return text[len(head):end]


def _from_summary(part, folder, token, cut, cps_of, mdes, evs, recent_ids, chunks):
    '''One kept chunk's part of the trend pages from its summary (None where there is
    none for ``cut``): a series is looked at only where its signature moved; its file
    built from its old one's points where only what is drawn beside them changed, from
    the chunk's runs where they did; the latest month's runs read from the chunk files of
    the history's files that have runs after ``cut`` only.'''
    import json

    g = part.summary()
    if g is None or not g.height or g['cut'][0] != cut:
        return None
    before, present = _seen(folder, token)
    g = g.sort('_sid').join(part.keys(), on='_sid', how='left', maintain_order='left')
    sig = _signature(g, cps_of, evs)
    state = _state_path(folder, chunks, part.number)
    old = {}
    if state.exists():
        st = pl.read_parquet(state)
        old = dict(zip(st['_sid'].to_list(), st.select('ident', 'sig', 'known', '_n0', '_h', '_t')
                       .iter_rows()))
    rows, need = [], {}
    for i, row in enumerate(g.iter_rows(named=True)):
        key = {k: row[k] for k in changes.SERIES}
        was = old.get(row['_sid'])
        ident = was[0] if was else trends.series_id(key)
        here = ident in present
        if was and was[1] == sig[i] and here and before.get(ident) == was[2]:
            rows.append([row, key, ident, was[2], None])
            continue
        latest = row['n'] > row['_n0']
        extras = json.dumps(trends.chart_extras(
            key, row, cps_of.get(tuple(key[k] for k in changes.SERIES), []),
            trends.series_events(evs, key, row['first'], row['last'], True),
            f'latest-{trends.bucket(ident)}.js' if latest else None), default=str)
        known = trends.text_digest(trends.known_key(row['_n0'], row['_h'], row['_t']) + extras)
        text = None
        if before.get(ident) != known or not here:
            pts = _old_points(folder, ident) if here and was and \
                (was[3], was[4], was[5]) == (row['_n0'], row['_h'], row['_t']) else None
            if pts is None:
                need[row['_sid']] = len(rows)
            text = (ident, pts, extras)
        rows.append([row, key, ident, known, text])
    cols = ['_sid', 'time', 'value', *kept.SITE]
    if need:        # runs before the cut that the kept files do not hold: from the chunk
        d = part.runs(cols).filter(
            pl.col('_sid').is_in(list(need)) & (pl.col('time') < cut))
        pts = trends.points_json(d.sort(['_sid', 'time', 'value']))
        for sid, at in need.items():
            ident, _, extras = rows[at][4]
            rows[at][4] = (ident, pts.get(sid, 'null'), extras)
    # the latest month as the scan kept it this cycle, else from the chunk's files
    d = part.latest_month(cut)
    if d is None:
        d = part.runs(cols, files=recent_ids).filter(pl.col('time') >= cut) \
            .sort(['_sid', 'time', 'value'])
    recent = trends.points_json(d)

    def items():
        for row, key, ident, known, text in rows:
            chart = (f'mdxbenchChart({json.dumps(ident)}, {text[1]}, {text[2]});\n'
                     if text is not None else None)
            yield key, row['n'], ident, chart, known, recent.get(row['_sid'])

    out = trends.pages(folder, items(), cps_of, mdes, present)
    state.parent.mkdir(exist_ok=True)
    pl.DataFrame({'_sid': g['_sid'], 'ident': [r[2] for r in rows], 'sig': sig,
                  'known': [r[3] for r in rows], '_n0': g['_n0'], '_h': g['_h'],
                  '_t': g['_t']}).write_parquet(state)
    return out


def _trends_of_chunk(task):
    '''One kept chunk's part of the trend pages: its series files built where their
    digest moved (written here); (index rows, digests, latest runs by bucket).'''
    part, folder, token, cut, cps_of, mdes, evs, recent_ids, chunks = task
    part = Chunk(part)
    got = _from_summary(part, folder, token, cut, cps_of, mdes, evs, recent_ids, chunks) \
        if cut is not None else None
    if got is not None:
        return got
    before, present = _seen(folder, token)
    _state_path(folder, chunks, part.number).unlink(missing_ok=True)
    d = part.runs(['_sid', 'time', 'value', *kept.SITE])

    def build(ident, known):
        return before.get(ident) != known or ident not in present

    return trends.pages(folder, trends.charts(d, lambda k: cps_of.get(k, []), evs, cut=cut,
                                              build=build, keys=part.keys()),
                        cps_of, mdes, present)


def write_trends(path, history, change_points, events=(), sensitivity=None, nproc=None):
    ''':func:`mdxbench.post.site.trends.write` of the kept ``history`` (a
    :class:`mdxbench.post.analysis.kept.Kept`, brought up to date by the cycle's scan,
    whose ``change_points`` these are), a chunk at a time by ``nproc`` processes; the
    number of charts.'''
    folder = trends.start(path)
    evs = events_store.timed(events)
    cps_of = trends.by_series(change_points)
    mdes = {tuple(e[k] for k in changes.SERIES): e for e in sensitivity or ()}
    parts = history.chunks()
    chunks = history.nchunks()
    latest = history.last_time()
    cut = trends.month_of(latest) if latest is not None else None
    # the history's files with runs from the cut on
    recent_ids = history.files_since(cut)
    cps_by, mdes_by = _split(cps_of, chunks), _split(mdes, chunks)
    token = uuid.uuid4().hex
    tasks = [(str(p.path), str(folder), token, cut, cps_by.get(p.number, {}),
              mdes_by.get(p.number, {}), evs, recent_ids, chunks) for p in parts]
    for old in (folder / STATE).glob('*.parquet') if (folder / STATE).is_dir() else ():
        if not old.name.startswith(f'{chunks}-'):
            old.unlink()
    _, present = trends.previous(folder)
    index, digests, latest_runs = [], {}, {}
    nproc = nproc or kept.workers()
    with kept.Pool(min(nproc, max(1, len(tasks)))) as pool:
        for rows, dig, lat in (pool.map(_trends_of_chunk, tasks) if pool
                               else map(_trends_of_chunk, tasks)):
            index.extend(rows)
            digests.update(dig)
            for b, got in lat.items():
                latest_runs.setdefault(b, []).extend(got)
    _SEEN.clear()
    return trends.finish(path, index, digests, latest_runs, present, len(change_points))


@functools.singledispatch
def write(history, path, events, sensitivity, change_points):
    '''(charts, change points) of the trend pages of ``history`` (a
    :mod:`mdxbench.post.analysis.kept` history) written to ``path``: by the kind of history
    it is, the one place the site tells them apart (a kept scan's, a chunk at a time by
    the scan's processes; a table's, whole).'''
    raise TypeError(f'not a history of mdxbench.post.analysis.kept: {type(history).__name__}')


@write.register
def _(history: Kept, path, events, sensitivity, change_points):
    return write_trends(path, history, change_points, events, sensitivity), \
        list(change_points)


@write.register
def _(history: Table, path, events, sensitivity, change_points):
    return trends.write(history.df, path, events, sensitivity, change_points)
