'''The scan's own copy of the history, kept between nightly cycles, so that a cycle's cost
follows what is new (issue 33, item 2).

:func:`mdxbench.post.analysis.chunked.locate` routes every record of the history into
chunks and segments every series, every time. A :class:`ScanCopy` keeps the routed
chunks in a directory, one Arrow IPC file (zstd-compressed: about 15 bytes a record) per
chunk and per share of a source file, with:

* ``manifest.json``: each source file's size and modification time and its stable number
  (the file part of a record's place), the number of chunks, the detector's settings;
* ``<chunk>/state.parquet``: each series' change points after the last scan, its runs
  then and the sum of their values' bits (a series whose earlier runs changed is
  detected again whole);
* ``<chunk>/<file>-<share>.keys``: each series' keys, once; the routed runs carry, besides
  time, value and place, what the site draws (result, job, nodes, reference): the site,
  the sensitivity and the report read the history from here, a chunk at a time
  (:mod:`mdxbench.post.analysis.kept`, :mod:`mdxbench.post.site.kept`);
* ``<chunk>/summary.parquet``: what the trend pages know each series by
  (:data:`mdxbench.post.analysis.chunkfiles.SUMMARY`), made while the chunk is segmented;
* ``<chunk>/past.*``: the chunk's runs before the month of the newest run, sorted once
  (:mod:`mdxbench.post.analysis.past`): a night reads the current month's runs, and a
  series' past only where it has a change point or a bound cannot keep it quiet.

A scan routes only the source files that are new or changed (a history copy's partition
that was extended: in a nightly cycle, the current month's), drops the chunks' files of
source files that are gone or changed, and segments each chunk with
:func:`mdxbench.post.analysis.incremental.update`: a series keeps its change points unless
its new runs could move them. Other settings of the detector, other chunking (the history
grew past twice its chunks' size), a copy kept in another :data:`LAYOUT` or ``full``:
everything is routed and detected again.
'''
import hashlib
import json
import os
import pathlib
import shutil

import numpy as np
import polars as pl

from mdxbench.post.analysis import (changes, chunked, chunkfiles, explain, incremental, past,
                                    processes)

#: the kept copy's layout: a copy of another (1: Parquet chunk files; 2: without the
#: site's columns and series keys) is routed again whole
LAYOUT = 3


def _stamp(path):
    st = os.stat(path)
    return {'size': st.st_size, 'mtime_ns': st.st_mtime_ns}


def _file_id(path):
    return hashlib.sha256(str(path).encode()).hexdigest()[:16]


def _exact(values, locs, starts, ns, sids, old, kw):
    """The scan's own decision for the series laid out in ``values`` (their places in
    ``locs``) at ``starts``/``ns``, ``old`` each one's state or None: (found, each one's
    change points, whether it was detected again, whether its state held, each one's
    ``head``: the sum of its values' bits)."""
    k = len(starts)
    n_old = np.array([o[1] if o else 0 for o in old], dtype=np.int64)
    # a state holds where the runs it was found on are unchanged, only runs added after
    # them: the sum of their values' bits (exact, whatever the order) is the one kept
    usable = np.array([o is not None for o in old], dtype=bool) & (n_old <= ns) & (n_old > 0)
    bits = np.concatenate([np.zeros(1, dtype=np.uint64),
                           np.cumsum(values.view(np.uint64), dtype=np.uint64)])
    head = bits[starts + np.where(usable, n_old, 0)] - bits[starts]
    usable &= head == np.array([o[2] if o else 0 for o in old], dtype=np.uint64)
    tails = np.array([o[0][-1]['index'] if ok and o[0] else 0 for o, ok in zip(old, usable)],
                     dtype=np.int64)
    again = ~usable | incremental.screen(values, starts, ns, tails,
                                         kw.get('penalty', changes.PENALTY),
                                         kw.get('min_size', changes.MIN_SIZE))
    found, cps_all = [], [[] for _ in range(k)]
    # the series detected again, at once: changes.detect_each skips the quiet ones
    redo = np.flatnonzero(again)
    for j, _, _, cp in changes.detect_each(values, starts[redo], ns[redo], kw):
        cps_all[redo[j]].append(cp)
    for i in np.flatnonzero(~again & ((tails > 0) | np.array([bool(o and o[0]) for o in old],
                                                             dtype=bool))):
        cps_all[i], again[i] = incremental.update(values[starts[i]:starts[i] + ns[i]],
                                                  old[i][0], **kw)
    for i in np.flatnonzero([bool(c) for c in cps_all]):
        found.extend((int(sids[i]), cp, locs[starts[i]:starts[i] + ns[i]].copy())
                     for cp in cps_all[i])
    return found, cps_all, again, usable, bits[starts + ns] - bits[starts]


def segment_kept(part, kw, cut=None, fresh=None):
    ''':func:`mdxbench.post.analysis.chunked.segment_part` of a kept chunk: each series'
    change points updated from those of its state; the state rewritten, and with ``cut``
    the site's ``chunkfiles.SUMMARY`` of its series. The runs before ``cut`` are read from the
    chunk's kept past (:mod:`mdxbench.post.analysis.past`) only for the series that need
    them; ``fresh``: the ids of the source files this scan routed again (their routed
    files are new; the others unchanged: none is looked at). (found, series detected
    again, series, the series numbers whose earlier runs changed or that are new, the
    times of its earliest and latest runs or Nones, the series whose runs were read
    whole).'''
    part = pathlib.Path(part)
    chunkfiles.keep_keys(part, fresh)
    state_path = part / 'state.parquet'
    before = {}
    if state_path.exists():
        st = pl.read_parquet(state_path)
        before = {sid: (json.loads(c), n, head) for sid, c, n, head in
                  zip(st['_sid'].to_list(), st['cps'], st['n'], st['head'])}
    kept, recent = past.open_chunk(part, cut, list(chunkfiles.CHUNK_SCHEMA) +
                                   (list(chunkfiles.SITE) if cut is not None else []), fresh)
    r, rsids, rstarts, rns = chunked.laid_out(recent)
    if cut is not None:
        tmp = part / 'summary.parquet.tmp'
        past.summary(kept.series, r, cut).write_parquet(tmp)
        tmp.replace(part / 'summary.parquet')
        # the runs the trend pages draw as the latest month, for the site: one file
        chunkfiles.keep_latest(part, r.filter(pl.col('time') >= cut), cut)
    # every series of the chunk: its past (p runs) then its recent runs
    psids = kept.series['_sid'].to_numpy()
    sids = np.union1d(psids, rsids[rstarts]).astype(np.uint64)

    has_p, (p_start, p_n, p_bits) = past.align(
        sids, psids, kept.series['start'].to_numpy(),
        kept.series['n'].to_numpy().astype(np.int64), kept.series['bits'].to_numpy())
    _, (r_start, r_n) = past.align(sids, rsids[rstarts], rstarts, rns)
    n = p_n + r_n
    rvalues, rlocs = r['value'].to_numpy(), r['_loc'].to_numpy()
    rbits = np.concatenate([np.zeros(1, dtype=np.uint64),
                            np.cumsum(rvalues.view(np.uint64), dtype=np.uint64)])
    old = [before.get(int(sid)) for sid in sids]
    n_old = np.array([o[1] if o else 0 for o in old], dtype=np.int64)
    head_old = np.array([o[2] if o else 0 for o in old], dtype=np.uint64)
    had = np.array([bool(o and o[0]) for o in old], dtype=bool)
    # a series needs nothing of its past where its state holds (its past and its recent
    # runs then, summed), it had no change point and the bound keeps it quiet
    seen = np.clip(n_old - p_n, 0, r_n)
    holds = has_p & (n_old > 0) & (n_old <= n) & (n_old >= p_n) & ~had & \
        (p_bits + rbits[r_start + seen] - rbits[r_start] == head_old)
    calm = np.zeros(len(sids), dtype=bool)
    at = np.flatnonzero(holds)
    calm[at] = past.quiet(kept.series[np.searchsorted(psids, sids[at])], rvalues, r_start[at],
                          r_n[at], incremental.KAPPA, kw.get('penalty', changes.PENALTY),
                          kw.get('min_size', changes.MIN_SIZE))
    head = p_bits + rbits[r_start + r_n] - rbits[r_start]
    cps_all = [[] for _ in sids]
    again = np.zeros(len(sids), dtype=bool)
    usable = np.ones(len(sids), dtype=bool)
    need = np.flatnonzero(~calm)
    values, starts = past.interleave(kept.values, p_start[need], p_n[need], rvalues,
                                     r_start[need], r_n[need])
    locs, _ = past.interleave(kept.locs, p_start[need], p_n[need], rlocs, r_start[need],
                              r_n[need])
    found, cps, redone, held, heads = _exact(values, locs, starts, n[need], sids[need],
                                             [old[i] for i in need], kw)
    for j, i in enumerate(need):
        cps_all[i] = cps[j]
    again[need], usable[need], head[need] = redone, held, heads
    state = {'_sid': sids, 'cps': [json.dumps(c) for c in cps_all], 'n': n, 'head': head}
    tmp = state_path.with_name('state.parquet.tmp')
    pl.DataFrame(state, schema={'_sid': pl.UInt64, 'cps': pl.Utf8, 'n': pl.Int64,
                                'head': pl.UInt64}).write_parquet(tmp)
    tmp.replace(state_path)
    times = [x for x in (kept.series['first'].min() if kept.series.height else None,
                         kept.series['last'].max() if kept.series.height else None,
                         r['time'].min(), r['time'].max()) if x is not None]
    span = (min(times), max(times)) if times else (None, None)
    return found, int(again.sum()), len(sids), [int(x) for x in sids[~usable]], span, \
        len(need)


class ScanCopy:
    def __init__(self, root):
        self.root = pathlib.Path(root)
        #: ``last``: what the last :meth:`locate` did (files routed, series detected
        #: again, series)
        self.manifest = self._load()

    def _load(self):
        try:
            return json.loads((self.root / 'manifest.json').read_text())
        except (OSError, ValueError):
            return {}

    def _save(self):
        self.root.mkdir(parents=True, exist_ok=True)
        tmp = self.root / 'manifest.json.tmp'
        tmp.write_text(json.dumps(self.manifest, indent=1, sort_keys=True))
        tmp.replace(self.root / 'manifest.json')

    def parts(self):
        '''The kept chunks' directories, in order.'''
        return sorted((d for d in self.root.iterdir() if d.is_dir()), key=lambda d: int(d.name)) \
            if self.root.is_dir() else []

    def latest(self):
        '''The time of the newest run the last :meth:`locate` found (a datetime), or None.'''
        import datetime as dt

        t = self.manifest.get('last', {}).get('latest')
        return dt.datetime.fromisoformat(t) if t else None

    def _reset(self, chunks, kw):
        shutil.rmtree(self.root, ignore_errors=True)
        self.manifest = {'chunks': chunks, 'detector': kw, 'files': {}, 'numbers': [],
                         'layout': LAYOUT}

    def locate(self, paths, pool=None, nproc=1, chunk_rows=chunked.CHUNK_ROWS, full=False,
               where=None, **kw):
        '''As :func:`mdxbench.post.analysis.chunked.locate` (``paths``: the history's
        files), from the kept chunks brought up to date; (found, the file list the places
        of ``found`` number).'''
        total = sum(r for _, _, r in chunked.row_groups(paths))
        chunks = self.manifest.get('chunks')
        selects = None if where is None else str(where)
        if full or not chunks or self.manifest.get('detector') != kw \
                or self.manifest.get('layout') != LAYOUT \
                or self.manifest.get('where') != selects \
                or total > 2 * chunks * chunk_rows:
            self._reset(max(1, -(-total // chunk_rows)), kw)
            self.manifest['where'] = selects
        files = self.manifest['files']
        current = {str(p): _stamp(p) for p in paths}
        changed = [p for p in current if files.get(p, {}).get('stamp') != current[p]]
        for p in list(files):
            if p not in current or p in changed:
                for f in [*self.root.glob(f'*/{files[p]["id"]}-*{chunkfiles.SUFFIX}'),
                          *self.root.glob(f'*/{files[p]["id"]}-*{chunkfiles.KEYS}')]:
                    f.unlink()
                if p not in current:
                    del files[p]
        numbers = self.manifest['numbers']
        for p in changed:
            if p not in numbers:
                numbers.append(p)
        if len(numbers) >= 2 ** 16:
            raise ValueError('changes: the kept scan copy numbers 65,536 files: scan with '
                             '--full')
        groups = [(numbers.index(changed[fi]), g, r) for fi, g, r in chunked.row_groups(changed)]
        shares = processes.shares([(fi, g) for fi, g, _ in groups], nproc)
        run = pool.map if pool else map
        self.root.mkdir(parents=True, exist_ok=True)
        tasks = []
        for i, share in enumerate(shares):
            by_file = {}
            for fi, g in share:
                by_file.setdefault(fi, []).append((fi, g))
            tasks.extend((numbers, part, self.manifest['chunks'], str(self.root),
                          f'{_file_id(numbers[fi])}-{i}', where, 'zstd', True)
                         for fi, part in by_file.items())
        list(run(chunked.route, tasks))
        for p in changed:
            files[p] = {'stamp': current[p], 'id': _file_id(p)}
        parts = sorted(d for d in self.root.iterdir() if d.is_dir())
        # the site's summaries are made on the way, cut at the month of the newest record
        # the files' statistics say (a cut found otherwise: the site reads the chunks)
        stats = [chunked.latest_time(p) for p in current]
        cut = None if not stats or None in stats else chunkfiles.month_of(max(stats))
        for p, t in zip(current, stats):
            files[p]['latest'] = t.isoformat() if t else None
        found, again, nseries, self.fresh, spans, whole = [], 0, 0, set(), [], 0
        routed = {files[p]['id'] for p in changed}
        for got, redone, n, fresh, span, read in run(segment_kept, parts, [kw] * len(parts),
                                                     [cut] * len(parts),
                                                     [routed] * len(parts)):
            found.extend(got)
            again += redone
            whole += read
            nseries += n
            self.fresh.update(fresh)
            if span[0] is not None:
                spans.append(span)
        self.manifest['last'] = {
            'routed': len(changed), 'detected': again, 'series': nseries, 'read': whole,
            'cut': cut.isoformat() if cut else None,
            'earliest': min(a for a, _ in spans).isoformat() if spans else None,
            'latest': max(b for _, b in spans).isoformat() if spans else None}
        self._save()
        return found, numbers

    def scan(self, source, nproc=None, chunk_rows=chunked.CHUNK_ROWS, context=3, full=False,
             events=(), where=None, **kw):
        '''The explained change points of the Parquet files of ``source``, from this copy
        brought up to date (``full``: routed and detected again whole): only new or changed
        files are routed, only the series whose new runs could move their change points are
        detected again, and records are read only for change points not explained before
        with the same ``events`` (the timed events; others change every explanation).
        ``where``: a Polars expression selecting the records kept (another one: routed
        again whole).'''
        paths = chunked.files(source)
        nproc = nproc or processes.workers()
        with processes.Pool(nproc) as pool:
            found, paths = self.locate(paths, pool, nproc, chunk_rows, full, where, **kw)
            cache = self.explanations(events)
            cached = [f for f in found if (f[0], f[1]['index']) in cache]
            found = [f for f in found if (f[0], f[1]['index']) not in cache]
            d, cps = chunked.read_changed(paths, found, pool, nproc, context) if found \
                else (None, [])
        cps = [explain.explain(d, cp, events, context) for cp in cps]
        for sid, cp, locs in cached:
            one = dict(cache[(sid, cp['index'])], **cp, series_n=len(locs), _sid=sid)
            one['verdict'] = explain.verdict(one['better'], one['effect'])
            one['explanation'] = explain.sentence(one)
            cps.append(one)
        self.keep_explanations(events, cps, context, read=len(found))
        return cps

    # --- explanations ---------------------------------------------------------------
    #: what a change point's explanation keeps besides its figures (which move with the
    #: runs and are taken from today's detection)
    EXPLAINED = changes.SERIES + ['run', 'jobid', 'nodes', 'time', 'previous_time',
                                  'changed', 'unchanged', 'events', 'variables',
                                  'run_seconds']

    @staticmethod
    def _digest(events):
        return hashlib.sha256(json.dumps(list(events), sort_keys=True, default=str)
                              .encode()).hexdigest()

    def explanations(self, events):
        '''{(series number, run index): the kept part of its explanation} of the change
        points explained with these ``events``; none when the events changed, none of the
        series whose earlier runs changed in the last :meth:`locate`.'''
        try:
            kept = json.loads((self.root / 'explained.json').read_text())
        except (OSError, ValueError):
            return {}
        if kept.get('events') != self._digest(events) or \
                kept.get('detector') != self.manifest.get('detector'):
            return {}
        out = {(int(k.split(':')[0]), int(k.split(':')[1])): v
               for k, v in kept['entries'].items()}
        return {k: v for k, v in out.items() if k[0] not in getattr(self, 'fresh', ())}

    def keep_explanations(self, events, cps, context, read=0):
        '''Keep the explanations of ``cps`` (explained, with ``_sid``) whose runs after them
        fill the context (later runs no longer change them); ``read``: how many of them
        were explained from the records (the others from what was kept), said in the
        manifest's ``last``.'''
        entries = {f"{c['_sid']}:{c['index']}": {k: c[k] for k in self.EXPLAINED}
                   for c in cps if c['series_n'] - c['index'] >= context}
        tmp = self.root / 'explained.json.tmp'
        tmp.write_text(json.dumps({'events': self._digest(events),
                                   'detector': self.manifest.get('detector'),
                                   'entries': entries}, default=str))
        tmp.replace(self.root / 'explained.json')
        self.manifest.setdefault('last', {}).update(explained=read, kept=len(cps) - read)
        self._save()
