'''A kept chunk's past (issue 45): the bound that spares a quiet series' past never spares
one the scan's exact screen would detect again; the site's summary from the past and the
recent runs is the one of all runs; a scan copy over monthly files reads the past of few
series on the next night and finds what a scan from nothing finds; a month rewritten, or
runs on both sides of the cut, make the past again or keep none (generated histories:
test input for the statistics, not benchmark output).'''
import datetime as dt
import json

import numpy as np
import pyarrow as pa
import polars as pl
import pytest

from mdxbench.post.analysis import changes, chunked, chunkfiles, incremental, past, scan
from mdxbench.post.analysis.scancopy import ScanCopy
from mdxbench.post.bench import changes as bench_changes

#: the screen and the past's figures divide by runs and noise that may be zero on purpose
#: (a series of one run, a flat one): they say nothing of it on the cycle's error output
pytestmark = pytest.mark.filterwarnings('error::RuntimeWarning')


def _series(rng, k):
    '''k generated series (past, recent): noise of several sizes, levels, drifts and steps
    in the recent runs or late in the past, a few flat or one run long.'''
    out = []
    for i in range(k):
        p, q = int(rng.integers(1, 800)), int(rng.integers(0, 40))
        level, noise = rng.uniform(1, 1e4), rng.choice([1e-3, 0.01, 0.05])
        x = level * (1 + noise * rng.standard_normal(p + q))
        kind = i % 6
        if kind == 1:                               # a step among the recent runs
            x[p + q // 2:] *= 1 + rng.choice([-1, 1]) * rng.uniform(0.5, 4) * noise
        elif kind == 2:                             # a step late in the past
            x[max(0, p - int(rng.integers(1, 100))):] *= 1 + rng.uniform(0.5, 3) * noise
        elif kind == 3:                             # a drift
            x *= 1 + np.linspace(0, rng.uniform(0, 3) * noise, p + q)
        elif kind == 4 and i % 12 == 4:
            x[:] = level                            # flat
        out.append((x[:p], x[p:]))
    return out


def _frame(parts):
    '''The past frame of the series' past runs, as Past.make keeps it (figures only).'''
    values = np.concatenate([a for a, _ in parts])
    ns = np.array([len(a) for a, _ in parts], dtype=np.int64)
    starts = np.cumsum(ns) - ns
    return pl.DataFrame({'_sid': np.arange(len(parts), dtype=np.uint64), 'start': starts,
                         'n': ns.astype(np.uint32), **past.figures(values, starts, ns)},
                        schema_overrides=past.FRAME)


@pytest.mark.parametrize('seed', [0, 1, 2])
def test_the_bound_never_spares_a_series_the_exact_screen_would_detect_again(seed):
    rng = np.random.default_rng(seed)
    parts = _series(rng, 600)
    recent = np.concatenate([b for _, b in parts] + [np.zeros(0)])
    r_n = np.array([len(b) for _, b in parts], dtype=np.int64)
    spared = past.quiet(_frame(parts), recent, np.cumsum(r_n) - r_n, r_n, incremental.KAPPA,
                        6.0)
    whole = np.concatenate([np.concatenate([a, b]) for a, b in parts])
    ns = np.array([len(a) + len(b) for a, b in parts], dtype=np.int64)
    again = incremental.screen(whole, np.cumsum(ns) - ns, ns, np.zeros(len(ns), np.int64),
                               6.0)
    assert not (spared & again).any(), np.flatnonzero(spared & again)
    # and it spares most of those the screen lets be: the quiet ones' reads are saved. The
    # bound's tightness is the night's work: 86% on these series (seeds 0-2: 329/382,
    # 332/382, 328/383); a bound that spares fewer than 85% reads more than it must
    assert spared.sum() >= 0.85 * (~again).sum(), (spared.sum(), (~again).sum())
    assert again.sum() >= 50                # the steps are there to be caught


def test_the_summary_of_past_and_recent_is_the_summary_of_all_runs(tmp_path):
    rng = np.random.default_rng(3)
    n = 5000
    t0 = dt.datetime(2025, 3, 1, tzinfo=dt.timezone.utc)
    d = pl.DataFrame({'_sid': rng.integers(0, 50, n).astype(np.uint64),
                      'time': [t0 + dt.timedelta(hours=int(h)) for h in rng.integers(0, 2000, n)],
                      'value': rng.uniform(1, 2, n), '_loc': np.arange(n, dtype=np.uint64),
                      'ref': rng.uniform(1, 2, n), 'lower': rng.uniform(-0.1, 0, n),
                      'upper': rng.uniform(0, 0.1, n)},
                     schema_overrides={'time': pl.Datetime('us', 'UTC')}).with_columns(
        pl.when(pl.col('value') < 1.3).then(None).otherwise(pl.col('ref')).alias('ref'))
    cut = dt.datetime(2025, 5, 1, tzinfo=dt.timezone.utc)
    # series 45-49 only recent (new), series 7 only past (no new run), the others both
    old = d.filter((pl.col('time') < cut) & (pl.col('_sid') < 45))
    new = d.filter((pl.col('time') >= cut) & (pl.col('_sid') != 7))
    kept = past.Past.make(tmp_path, old, [], cut)
    assert (tmp_path / past.META).is_file()
    got = past.summary(kept.series, chunked.laid_out(new)[0], cut)
    want = chunkfiles.summarize(chunked.laid_out(pl.concat([old, new]))[0], cut)
    assert got.height == 50 and got.equals(want), (got, want)


@pytest.fixture
def months(tmp_path):
    '''Ten months of 240 series (10% with a step) as monthly files, then two more nights
    of the last month in files of their own (as the bench's store).'''
    meta = bench_changes.real_meta()
    store = tmp_path / 'store'
    bench_changes.make_store(store, 240, 300, seed=8, share=0.1, meta=meta, chunk=80,
                             start='2025-01-10T00:00:00', monthly=True)
    nights = []
    for k in range(2):
        f = tmp_path / f'next-{k}.parquet'
        bench_changes.make_store(f, 240, 300 + k + 1, seed=8, share=0.1, meta=meta, chunk=80,
                                 first_run=300 + k, start='2025-01-10T00:00:00', span=300)
        nights.append(f)
    return sorted(store.glob('*.parquet')), nights


def _same(a, b):
    return json.dumps(a, sort_keys=True, default=str) == json.dumps(b, sort_keys=True,
                                                                      default=str)


def test_the_next_night_reads_the_past_of_few_series_and_finds_what_a_full_scan_finds(
        months, tmp_path):
    files, nights = months
    keep = tmp_path / 'scan'
    kw = dict(nproc=1, chunk_rows=20_000, keep=keep)
    scan.find(files + nights[:1], **kw)
    first = ScanCopy(keep).manifest['last']
    pasts = sorted(keep.glob(f'*/{past.META}'))
    assert len(pasts) == ScanCopy(keep).manifest['chunks'] >= 3
    made = [p.stat().st_mtime_ns for p in pasts]            # the first night's
    assert first['read'] == first['series'] == 240          # a first scan reads them all
    # one record batch each: read through a memory map, not copied
    assert all(pa.ipc.open_file(pa.memory_map(str(p.with_name(past.RUNS))))
               .num_record_batches == 1 for p in pasts)
    got = scan.find(files + nights, **kw)
    last = ScanCopy(keep).manifest['last']
    assert _same(got, scan.find(files + nights, nproc=1, chunk_rows=20_000))
    stepped = len({tuple(c[k] for k in changes.SERIES) for c in got})
    # the series with a change point, and a few the bound could not spare
    assert stepped <= last['read'] <= stepped + 24, (last, stepped)
    _keys_are_gathered(keep)
    _latest_is_kept(keep)
    assert [p.stat().st_mtime_ns for p in sorted(keep.glob(f'*/{past.META}'))] == made, \
        'the past was made again'
    # an old month written again: its chunks' past is made again, the answer the same
    bench_changes.make_store(tmp_path / 'store', 240, 300, seed=9, share=0.1, chunk=80,
                             start='2025-01-10T00:00:00', monthly=True)
    got = scan.find(files + nights, **kw)
    assert _same(got, scan.find(files + nights, nproc=1, chunk_rows=20_000))
    assert ScanCopy(keep).manifest['last']['read'] == 240
    _keys_are_gathered(keep)
    assert all(a.stat().st_mtime_ns > b for a, b in zip(
        sorted(keep.glob(f'*/{past.META}')), made))


def _latest_is_kept(keep):
    '''Each chunk's latest month, kept by the scan for the site, is its files' runs from
    the cut on.'''
    copy = ScanCopy(keep)
    cut = dt.datetime.fromisoformat(copy.manifest['last']['cut'])
    for part in copy.parts():
        cols = ['_sid', 'time', 'value', *chunkfiles.SITE]
        want = chunkfiles.read_chunk(sorted(part.glob('*' + chunkfiles.SUFFIX)), cols) \
            .filter(pl.col('time') >= cut).sort(['_sid', 'time', 'value'])
        got = chunkfiles.read_latest(part, cut)
        assert got is not None and got.height and got.equals(want)
        assert chunkfiles.read_latest(part, cut - dt.timedelta(days=31)) is None


def _keys_are_gathered(keep):
    '''Each chunk's gathered keys hold every ``.keys`` file as it is now, and are what
    reading them all gives.'''
    for part in ScanCopy(keep).parts():
        files = sorted(part.glob('*' + chunkfiles.KEYS))
        assert sorted(json.loads((part / chunkfiles.KEYS_META).read_text())) == \
            [f.name for f in files]
        every = pl.concat([pl.read_ipc(f) for f in files]).unique('_sid').sort('_sid')
        assert chunkfiles.read_keys(part).sort('_sid').equals(every)


def test_runs_on_both_sides_of_the_cut_keep_no_past(tmp_path):
    '''One file of the whole year (a perflog's copy): every run is recent, read each night.'''
    f = tmp_path / 'year.parquet'
    bench_changes.make_store(f, 120, 200, seed=4, share=0.1, chunk=60)
    keep = tmp_path / 'scan'
    got = scan.find([f], nproc=1, chunk_rows=10_000, keep=keep)
    assert _same(got, scan.find([f], nproc=1, chunk_rows=10_000))
    assert not list(keep.glob(f'*/{past.META}'))
    got = scan.find([f], nproc=1, chunk_rows=10_000, keep=keep)
    assert ScanCopy(keep).manifest['last']['read'] == 120


def test_a_month_that_ends_extends_the_past_as_making_it_again_would(tmp_path, monkeypatch):
    '''November's nights, then December's first: the past at the new cut is the old past
    and November's runs merged, the same as made again from every file; the change points
    those of a scan from nothing.'''
    meta = bench_changes.real_meta()
    start = '2025-01-10T00:00:00'
    bench_changes.make_store(tmp_path / 'store', 240, 300, seed=8, share=0.1, meta=meta,
                             chunk=80, start=start, monthly=True)
    nov = tmp_path / 'nov.parquet'          # runs 300-324: 6-30 November
    bench_changes.make_store(nov, 240, 325, seed=8, share=0.1, meta=meta, chunk=80,
                             first_run=300, start=start, span=300)
    dec = tmp_path / 'dec.parquet'          # run 325: 1 December
    bench_changes.make_store(dec, 240, 326, seed=8, share=0.1, meta=meta, chunk=80,
                             first_run=325, start=start, span=300)
    files = sorted((tmp_path / 'store').glob('*.parquet'))
    keep = tmp_path / 'scan'
    scan.find(files + [nov], nproc=1, chunk_rows=20_000, keep=keep)
    with monkeypatch.context() as m:        # extended, not made again
        m.setattr(past.Past, 'make', classmethod(lambda *a: pytest.fail('made again')))
        got = scan.find(files + [nov, dec], nproc=1, chunk_rows=20_000, keep=keep)
    assert _same(got, scan.find(files + [nov, dec], nproc=1, chunk_rows=20_000))
    cut = dt.datetime(2025, 12, 1, tzinfo=dt.timezone.utc)
    for part in ScanCopy(keep).parts():
        grown = past.Past.load(part, cut)
        assert grown is not None and len(grown.files) == 12      # 10 months, Nov., nights
        cols = [*chunkfiles.CHUNK_SCHEMA, *chunkfiles.SITE]
        every = [chunkfiles.read_chunk([part / n], cols) for n in sorted(grown.files)]
        (tmp_path / 'again').mkdir(exist_ok=True)
        again = past.Past.make(tmp_path / 'again', pl.concat(every), [], cut)
        assert grown.series.equals(again.series)
        # (equals() compares values only): the same types, the declared ones
        assert grown.series.schema == again.series.schema
        assert {c: again.series.schema[c] for c in past.FRAME} == past.FRAME
        assert np.array_equal(grown.values, again.values) and \
            np.array_equal(grown.locs, again.locs)
        assert (grown.values.dtype, grown.locs.dtype) == (again.values.dtype, again.locs.dtype)


def test_an_empty_past_has_every_column_and_no_run():
    '''The past of a chunk with no run before the cut: the per-series frame's columns
    (FRAME's, then the site summary's others, each of its declared type), no value, no
    place, no file.'''
    e = past.Past.empty()
    want = dict(past.FRAME, **{c: t for c, t in past.SUMMARY_SCHEMA.items()
                               if c in chunkfiles.SUMMARY and c not in past.FRAME})
    assert dict(e.series.schema) == want and e.series.height == 0
    assert list(want)[:len(past.FRAME)] == list(past.FRAME)
    # every column of the site's summary but its cut (the past's own)
    assert set(want) == set(past.FRAME) | (set(chunkfiles.SUMMARY) - {'cut'})
    assert (len(e.values), len(e.locs), e.locs.dtype, e.files) == (0, 0, np.uint64, {})


def test_columns_are_aligned_on_every_series_zero_where_absent():
    every = np.array([1, 2, 5, 9], dtype=np.uint64)
    has, (a, b) = past.align(every, np.array([2, 5], dtype=np.uint64), np.array([10, 20]),
                             np.array([7, 8]))
    assert has.tolist() == [False, True, True, False]
    assert a.tolist() == [0, 10, 20, 0] and b.tolist() == [0, 7, 8, 0]
    has, (c,) = past.align(np.array([1, 2], dtype=np.uint64), np.array([2], dtype=np.uint64),
                           np.array([10]))
    assert has.tolist() == [False, True] and c.tolist() == [0, 10]


def test_a_kept_past_is_taken_only_while_its_files_are_there_unchanged(tmp_path):
    '''Past.load: told which files are there (present) and which were routed again
    (fresh, by source id), it trusts that and looks at no file; told nothing, it compares
    each file's size and modification time.'''
    part = tmp_path / 'part'
    part.mkdir()
    for name in ('1-0.arrow', '2-0.arrow'):
        (part / name).write_bytes(b'x')
    cut = dt.datetime(2026, 11, 1, tzinfo=dt.timezone.utc)
    made = past.Past._keep(part, pl.DataFrame({'_sid': [0]}), np.array([1.0]),
                           np.array([0], dtype=np.uint64),
                           {n: past._stamp(part / n) for n in ('1-0.arrow', '2-0.arrow')}, cut)
    assert set(made.files) == {'1-0.arrow', '2-0.arrow'}
    names = {'1-0.arrow', '2-0.arrow'}
    assert past.Past.load(part, cut, names, set()) is not None
    assert past.Past.load(part, cut, names, {'2'}) is None            # routed again
    assert past.Past.load(part, cut, {'1-0.arrow'}, set()) is None    # gone
    assert past.Past.load(part, cut) is not None                      # stamps checked
    assert past.Past.load(part, cut + dt.timedelta(days=30)) is None  # another cut
    (part / '2-0.arrow').write_bytes(b'xy')                           # changed
    assert past.Past.load(part, cut) is None
    assert past.Past.load(part, cut, names, set()) is not None        # (told, not looked at)
    assert past.Past.load(part, cut, names, None) is None             # not told: looked at


def test_a_past_of_no_series_has_no_figures_and_spares_nothing():
    '''A chunk whose past holds no series (every one of its series new tonight): its
    figures are empty columns of their types, and the bound spares none.'''
    f = past.figures(np.zeros(0), np.zeros(0, np.int64), np.zeros(0, np.int64))
    for name in ('sum', 'ssd', 'bits', 'unit'):
        assert len(f[name]) == 0, (name, f[name])
    assert f['bits'].dtype == np.uint64 and f['h'] == [] and f['tail'] == []
    frame = pl.DataFrame({'_sid': np.zeros(0, np.uint64), 'start': np.zeros(0, np.int64),
                          'n': np.zeros(0, np.uint32), **f}, schema_overrides=past.FRAME)
    spared = past.quiet(frame, np.zeros(0), np.zeros(0, np.int64), np.zeros(0, np.int64),
                        incremental.KAPPA, 6.0)
    assert spared.dtype == bool and spared.shape == (0,)
    assert past.ranges(np.zeros(0, np.int64), np.zeros(0, np.int64)).shape == (0,)


def _bound_by_hand(x, min_size=changes.MIN_SIZE):
    '''The module's bound H of one past ``x``, every cut spelled out (not its passes over
    all series): at each shift g of GRID, the largest (C0(t) - t g u)^2 p / (t (p - t))
    over the cuts t from min_size to p - TAIL, C0 the centred sum of the past, u its noise
    over sqrt(p).'''
    p = len(x)
    u = np.sqrt(np.sum(np.diff(x) ** 2) / max(p - 1, 1) / 2) / np.sqrt(p)
    t = np.arange(min_size, p - past.TAIL + 1)
    if not len(t):
        return u, [0.0] * len(past.GRID)
    c0 = np.cumsum(x - x.mean())[t - 1]
    return u, [max(0.0, float(np.max((c0 - t * g * u) ** 2 * p / (t * (p - t)))))
               for g in past.GRID]


def test_each_pasts_figures_are_its_sums_noise_tail_and_bound_cut_by_cut():
    '''figures() of 40 generated pasts laid end to end (1 to 300 runs, around TAIL + the
    least segment, where the bound first has a cut): each one's sum, squared successive
    differences, noise unit, last TAIL runs, wrapping sum of its values' bits and bound H
    at every shift of GRID, as the module's formulas give them computed by hand on that
    past alone.'''
    rng = np.random.default_rng(21)
    lengths = [1, 2, 5, 63, 64, 65, 68, 69, 70, 71, 75, 128, 300] + \
        [int(n) for n in rng.integers(1, 300, 27)]
    xs = [1000 * (1 + 0.01 * rng.standard_normal(n)) + np.linspace(0, 30 * (i % 3), n)
          for i, n in enumerate(lengths)]
    ns = np.array(lengths, dtype=np.int64)
    f = past.figures(np.concatenate(xs), np.cumsum(ns) - ns, ns)
    for i, x in enumerate(xs):
        u, h = _bound_by_hand(x)
        assert f['sum'][i] == pytest.approx(x.sum(), rel=1e-12), i
        assert f['ssd'][i] == pytest.approx(np.sum(np.diff(x) ** 2), rel=1e-9, abs=1e-9), i
        assert f['unit'][i] == pytest.approx(u, rel=1e-9, abs=1e-12), i
        assert f['tail'][i] == list(x[-past.TAIL:]), i
        assert int(f['bits'][i]) == sum(int(b) for b in x.view(np.uint64)) % 2 ** 64, i
        assert np.allclose(f['h'][i], h, rtol=1e-9, atol=1e-9), (i, len(x), f['h'][i], h)
    # the pasts long enough to have a cut to bound have a bound above nothing
    assert all(max(f['h'][i]) > 0 for i, n in enumerate(lengths)
               if n - past.TAIL >= changes.MIN_SIZE)


def _screened_by_hand(x, q, min_size=changes.MIN_SIZE):
    '''The figures quiet() decides a series of past x[:-q] and recent runs x[-q:] on, from
    the whole series (the rule of its docstring, computed cut by cut): the exact gain at
    the cuts among the past's last TAIL runs and the recent ones, the bound H at the two
    grid shifts around the recent runs' shift of the mean ``r`` (pasts with cuts deeper
    than the tail), the noise of all runs.'''
    n, p = len(x), len(x) - q
    mean = x.mean()
    t = np.arange(max(p - past.TAIL, 0) + 1, n + 1)
    t = t[(t >= min_size) & (n - t >= min_size)]
    exact = float(np.max(np.cumsum(x - mean)[t - 1] ** 2 * n / (t * (n - t)))) if len(t) else 0.0
    noise2 = np.sum(np.diff(x) ** 2) / max(n - 1, 1) / 2
    u, h = _bound_by_hand(x[:p])
    deep = p - past.TAIL >= min_size
    r = (mean - x[:p].mean()) / u if u > 0 else np.inf
    inside = u > 0 and abs(r) <= past.GRID[-1]
    j = min(max(int(np.searchsorted(past.GRID, r if inside else 0.0, side='right')) - 1, 0),
            len(past.GRID) - 2)
    bound = max(h[j], h[j + 1]) if deep else 0.0
    return {'exact': exact, 'bound': bound, 'noise2': noise2, 'r': r, 'inside': inside,
            'deep': deep}


def _spared_by_hand(x, q, kappa, penalty, min_size=changes.MIN_SIZE):
    '''Whether the module spares a series of past x[:-q] and recent runs x[-q:]: its
    largest split, exact or bounded, under the limit in the whole series' noise, rounding
    (MARGIN) on the safe side.'''
    f = _screened_by_hand(x, q, min_size)
    if f['deep'] and not f['inside']:
        return False
    worst = max(f['exact'], f['bound']) * (1 + past.MARGIN)
    limit = kappa * penalty * np.log(max(len(x), 2)) * (1 - past.MARGIN)
    return bool(f['noise2'] > 0 and worst / f['noise2'] < limit)


@pytest.mark.parametrize('seed', [0, 1])
def test_the_bound_spares_exactly_the_series_its_rule_spares_computed_cut_by_cut(seed):
    '''quiet() on 300 generated series (test_the_bound_never_spares...'s mix: steps among
    the recent runs and late in the past, drifts, flat ones, pasts of 1 to 800 runs): each
    series spared or not as the rule gives it computed by hand from the whole series --
    neither more (a bound too loose would miss a change) nor fewer (one too tight reads
    the past for nothing). Both answers occur.'''
    by_hand = _spared_as_by_hand(_series(np.random.default_rng(seed), 300))
    assert 50 < by_hand.sum() < 280, by_hand.sum()


def _spared_as_by_hand(parts):
    '''quiet()'s answer for the series ``parts`` ((past, recent) each), asserted to be
    the rule's computed cut by cut for each; returns the latter.'''
    recent = np.concatenate([b for _, b in parts] + [np.zeros(0)])
    r_n = np.array([len(b) for _, b in parts], dtype=np.int64)
    spared = past.quiet(_frame(parts), recent, np.cumsum(r_n) - r_n, r_n, incremental.KAPPA,
                        6.0)
    by_hand = np.array([_spared_by_hand(np.concatenate([a, b]), len(b), incremental.KAPPA, 6.0)
                        for a, b in parts])
    assert list(np.flatnonzero(spared != by_hand)) == []
    return by_hand


def _near_the_limit(unit=1.0):
    '''Series made to fall on both sides of the bound's limit: pasts too short for a cut to
    bound (20, 40 runs), of TAIL + MIN_SIZE runs (one cut to bound), one more, and 200; a
    step in the past at the first bounded cut, at the last, 20 runs deeper, or just inside
    the tail, of 120 sizes 3.5% apart; 3 or 20 recent runs shifted by seven sizes, either
    way: the decisions of the bound near its limit, on every side.'''
    rng = np.random.default_rng(31)
    parts = []
    for p in (20, 40, past.TAIL + changes.MIN_SIZE, past.TAIL + changes.MIN_SIZE + 1, 200):
        ats = {changes.MIN_SIZE} | {at for at in (p - past.TAIL, p - past.TAIL - 20,
                                                  p - past.TAIL + 2) if at >= changes.MIN_SIZE}
        for at in sorted(ats):
            for q in (3, 20):
                for step in np.geomspace(0.2, 12, 120):
                    for shift in (0.0, -1.5, -0.7, 0.4, 0.7, 1.1, 3.0):
                        x = 100 + rng.standard_normal(p + q)
                        x[at:] += step
                        x[p:] += shift
                        x *= unit
                        parts.append((x[:p], x[p:]))
    return parts


@pytest.mark.parametrize('unit', [1.0, 1e-3], ids=['level 100', 'level 0.1'])
def test_near_its_limit_the_bound_spares_exactly_the_series_its_rule_spares(unit):
    '''As above, on 18,480 series made to lie near the limit (_near_the_limit): the grid
    cell the recent runs' shift falls in (and which of its ends bounds), the cut the bound
    starts at, the pasts just deep enough to have one and those too short, the noise of
    all runs -- each decides some of them; and the same series in units a thousand times
    smaller (a figure in TB/s, a latency in s: its noise far below 1, where adding a
    constant to a sum of squares is no longer lost in it).'''
    by_hand = _spared_as_by_hand(_near_the_limit(unit))
    assert 0.2 < by_hand.mean() < 0.8, by_hand.mean()


@pytest.mark.parametrize('step', [3.0, -3.0], ids=['step up', 'step down'])
@pytest.mark.parametrize('cell', range(len(past.GRID) - 1))
def test_a_deep_bound_is_its_grid_cells_and_a_limit_within_rounding_spares_nothing(cell, step):
    '''A past of 200 runs with a step 100 runs deep (a cut only the bound H sees) and 20
    recent runs shifting the mean into the middle of one cell of GRID: the bound, above
    every exact gain, decides. With the limit 4e-6 above the series' largest split (by
    hand: H at the cell's two ends) the series is spared; 1e-6 above -- within the
    rounding MARGIN keeps on the safe side, both ways -- or 0.1% below, it is not. A
    neighbouring cell's ends, or the first series' sums off by a constant, bound another
    figure: one of the three answers changes.'''
    rng = np.random.default_rng(40 + cell)
    p, q = 200, 20
    a = 100 + rng.standard_normal(p)
    a[100:] += step
    u = np.sqrt(np.sum(np.diff(a) ** 2) / (p - 1) / 2) / np.sqrt(p)
    want = (past.GRID[cell] + past.GRID[cell + 1]) / 2
    # the recent runs' mean moves the whole series' by q / n of its distance from the past's
    b = a.mean() + want * u * (p + q) / q + 0.05 * (-1) ** np.arange(q)
    x = np.concatenate([a, b])
    f = _screened_by_hand(x, q)
    assert f['deep'] and past.GRID[cell] < f['r'] < past.GRID[cell + 1], f['r']
    assert f['bound'] > 1.01 * f['exact'], f          # the bound decides, not a recent cut
    ratio = f['bound'] / f['noise2']
    frame = _frame([(a, b)])
    answers = []
    for above in (4e-6, 1e-6, -1e-3):
        kappa = ratio * (1 + above) / (6.0 * np.log(p + q))
        answers.append(bool(past.quiet(frame, b, np.zeros(1, np.int64),
                                       np.array([q], np.int64), kappa, 6.0)[0]))
    assert answers == [True, False, False]


# open_chunk: which runs are the past and which are recent, on each of its paths (made,
# kept, extended by a month that ended), in the columns the scan asks for: with a cut, the
# chunk's and the site's (every column a routed file has); without one, the chunk's only
UTC = dt.timezone.utc
OCT, NOV, DEC = (dt.datetime(2025, m, 1, tzinfo=UTC) for m in (10, 11, 12))
ASKED = [*chunkfiles.CHUNK_SCHEMA, *chunkfiles.SITE]


def _routed(part, name, times, sids=(1, 2)):
    '''A routed file of ``part``: a run of each series ``sids`` at each of ``times``, every
    column a kept chunk's file has (the chunk's and the site's).'''
    rows = [(s, t) for t in times for s in sids]
    df = pl.DataFrame({'_sid': [s for s, _ in rows], 'time': [t for _, t in rows],
                       'value': [10.0 + i for i in range(len(rows))],
                       '_loc': list(range(len(rows)))}, schema=chunkfiles.CHUNK_SCHEMA)
    df = df.with_columns([pl.lit(None, dtype=t).alias(c) for c, t in chunkfiles.SITE.items()])
    part.mkdir(exist_ok=True)
    df.write_ipc(part / name)
    return part / name


def _days(month, n, hour=3):
    return [month.replace(day=d, hour=hour) for d in range(1, n + 1)]


def _forbid_making(m):
    '''Past.make fails the test where called (patched on ``m``): the past must be kept or
    extended.'''
    m.setattr(past.Past, 'make', classmethod(lambda *a: pytest.fail('the past was made again')))


def _record_making(m):
    '''Past.make as it is, the names of the files of each call recorded (patched on
    ``m``); returns the record.'''
    made, real = [], past.Past.make.__func__
    m.setattr(past.Past, 'make', classmethod(
        lambda cls, *a: made.append(sorted(f.name for f in a[2])) or real(cls, *a)))
    return made


@pytest.fixture
def no_making(monkeypatch):
    '''Past.make fails the test where called, from the call of the fixture's value on.'''
    return lambda: _forbid_making(monkeypatch)


def test_a_chunk_opened_makes_its_past_of_the_files_that_end_before_the_cut(tmp_path):
    part = tmp_path / 'part'
    _routed(part, '1-0.arrow', _days(OCT, 20))
    _routed(part, '2-0.arrow', _days(NOV, 5))
    kept, recent = past.open_chunk(part, NOV, ASKED)
    assert set(kept.files) == {'1-0.arrow'} and len(kept.values) == 40
    assert recent.columns == ASKED and recent.height == 10
    assert recent['time'].min() >= NOV


def test_without_a_cut_every_run_is_recent_in_the_chunks_columns(tmp_path):
    part = tmp_path / 'part'
    _routed(part, '1-0.arrow', _days(OCT, 20))
    _routed(part, '2-0.arrow', _days(NOV, 5))
    kept, recent = past.open_chunk(part, None, list(chunkfiles.CHUNK_SCHEMA))
    assert kept.files == {} and len(kept.values) == 0
    assert recent.columns == list(chunkfiles.CHUNK_SCHEMA) and recent.height == 50
    assert not (part / past.META).exists()
    # a past kept at a cut, then a night without one (a file without time statistics):
    # no past, every run recent, the kept one removed
    past.open_chunk(part, NOV, ASKED)
    assert (part / past.META).exists()
    kept, recent = past.open_chunk(part, None, list(chunkfiles.CHUNK_SCHEMA), fresh=set())
    assert kept.files == {} and recent.height == 50
    assert not (part / past.META).exists()


def test_a_run_at_the_cut_itself_is_recent(tmp_path, no_making):
    '''The cut is the first instant of the newest run's month: a run at that instant is
    the month's, so a file whose last run is there is recent, made or extended.'''
    part = tmp_path / 'part'
    _routed(part, '1-0.arrow', _days(OCT, 20))
    _routed(part, '2-0.arrow', [NOV])
    kept, recent = past.open_chunk(part, NOV, ASKED)
    assert set(kept.files) == {'1-0.arrow'}
    assert recent.height == 2 and recent['time'].to_list() == [NOV, NOV]
    # a month later: November's file ended before December, the one at the cut is recent
    _routed(part, '3-0.arrow', [DEC])
    no_making()
    kept, recent = past.open_chunk(part, DEC, ASKED, fresh=set())
    assert set(kept.files) == {'1-0.arrow', '2-0.arrow'}
    assert recent.columns == ASKED and recent['time'].to_list() == [DEC, DEC]


def test_a_kept_past_is_read_with_its_recent_runs_only(tmp_path, no_making):
    part = tmp_path / 'part'
    _routed(part, '1-0.arrow', _days(OCT, 20))
    _routed(part, '2-0.arrow', _days(NOV, 5))
    past.open_chunk(part, NOV, ASKED)
    no_making()
    kept, recent = past.open_chunk(part, NOV, ASKED, fresh=set())
    assert set(kept.files) == {'1-0.arrow'} and len(kept.values) == 40
    assert recent.columns == ASKED and recent.height == 10


def test_a_kept_past_without_recent_runs_gives_an_empty_table_of_the_columns(
        tmp_path, no_making):
    part = tmp_path / 'part'
    _routed(part, '1-0.arrow', _days(OCT, 20))
    kept, recent = past.open_chunk(part, NOV, ASKED)
    assert set(kept.files) == {'1-0.arrow'}
    assert recent.columns == ASKED and recent.height == 0      # made: nothing recent
    no_making()
    kept, recent = past.open_chunk(part, NOV, ASKED, fresh=set())
    assert set(kept.files) == {'1-0.arrow'}
    assert recent.columns == ASKED and recent.height == 0      # kept: nothing recent
    # a month later, nothing after December's cut: the past extended by November (none
    # here), still nothing recent
    kept, recent = past.open_chunk(part, DEC, ASKED, fresh=set())
    assert set(kept.files) == {'1-0.arrow'} and kept.cut == DEC
    assert recent.columns == ASKED and recent.height == 0


def test_a_month_that_ends_moves_its_files_into_the_past(tmp_path, no_making):
    part = tmp_path / 'part'
    _routed(part, '1-0.arrow', _days(OCT, 20))
    _routed(part, '2-0.arrow', _days(NOV, 5))
    past.open_chunk(part, NOV, ASKED)
    _routed(part, '3-0.arrow', _days(DEC, 2))
    no_making()
    kept, recent = past.open_chunk(part, DEC, ASKED, fresh=set())
    assert set(kept.files) == {'1-0.arrow', '2-0.arrow'} and len(kept.values) == 50
    assert recent.columns == ASKED and recent.height == 4


def test_the_scan_is_trusted_on_which_files_it_routed_again(tmp_path, no_making):
    '''Told which files are there and which it routed again, open_chunk looks at no file:
    a file touched but not routed again keeps the past (its stamp is not compared), and
    one routed again unchanged in size and time is not trusted.'''
    import os

    part = tmp_path / 'part'
    old = _routed(part, '1-0.arrow', _days(OCT, 20))
    _routed(part, '2-0.arrow', _days(NOV, 5))
    names = {'1-0.arrow', '2-0.arrow'}
    past.open_chunk(part, NOV, ASKED)
    st = old.stat()
    os.utime(old, ns=(st.st_atime_ns, st.st_mtime_ns + 10**9))    # touched only
    with pytest.MonkeyPatch.context() as m:
        _forbid_making(m)
        kept, _ = past.open_chunk(part, NOV, ASKED, fresh=set())
        assert set(kept.files) == {'1-0.arrow'}
        # a month later, the past at November's cut extended: the same trust
        _routed(part, '3-0.arrow', _days(DEC, 2))
        kept, _ = past.open_chunk(part, DEC, ASKED, fresh=set())
        assert set(kept.files) == names
    # routed again (its source id '1'), the same size and time: made again without it
    os.utime(old, ns=(st.st_atime_ns, st.st_mtime_ns))
    with pytest.MonkeyPatch.context() as m:
        made = _record_making(m)
        kept, recent = past.open_chunk(part, DEC, ASKED, fresh={'1'})
    assert made == [['1-0.arrow', '2-0.arrow']], made
    assert set(kept.files) == names and recent.height == 4


def test_files_on_both_sides_of_a_new_cut_make_the_past_again(tmp_path):
    '''A month ended, but a file holds runs on both sides of the new cut (it would
    interleave with the past): no past is kept, every run is recent.'''
    part = tmp_path / 'part'
    _routed(part, '1-0.arrow', _days(OCT, 20))
    _routed(part, '2-0.arrow', _days(NOV, 5))
    past.open_chunk(part, NOV, ASKED)
    _routed(part, '3-0.arrow', _days(NOV, 28)[20:] + _days(DEC, 3))
    kept, recent = past.open_chunk(part, DEC, ASKED, fresh=set())
    assert kept.files == {} and len(kept.values) == 0
    assert recent.height == 40 + 10 + 22


def test_a_late_file_of_runs_before_the_old_cut_makes_the_past_again(tmp_path):
    '''A month ended, and a file routed since holds runs before the past's own cut (a
    late record of September): the past is made again of every file that ended, not
    extended by one that would interleave with it.'''
    part = tmp_path / 'part'
    _routed(part, '1-0.arrow', _days(OCT, 20))
    _routed(part, '2-0.arrow', _days(NOV, 5))
    past.open_chunk(part, NOV, ASKED)
    _routed(part, '3-0.arrow', [dt.datetime(2025, 9, 30, 5, tzinfo=UTC)])
    _routed(part, '4-0.arrow', _days(DEC, 2))
    with pytest.MonkeyPatch.context() as m:
        made = _record_making(m)
        kept, recent = past.open_chunk(part, DEC, ASKED, fresh=set())
    assert made == [['1-0.arrow', '2-0.arrow', '3-0.arrow']], made
    assert len(kept.values) == 40 + 10 + 2 and recent.height == 4
