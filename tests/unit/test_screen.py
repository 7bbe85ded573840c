'''The screen proves a series quiet only where ruptures' PELT finds nothing in it, so the
scan's change points are the same with it (generated series: test input for the
statistics, not benchmark output).'''
import math

import numpy as np
import pytest

from mdxbench.post.analysis import changes, screen


def generated(count=3000, seed=5, runs=None):
    '''Series of many shapes and lengths (``runs`` each when given): noise, a step near the
    penalty, a bump (two changes whose best single split is weak), heavy tails, two modes,
    ties, a large offset, a lone spike, a drift; scaled from 1e-3 to 1e6.'''
    rng = np.random.default_rng(seed)
    out = []
    for _ in range(count):
        n = runs or int(rng.choice([rng.integers(1, 30), rng.integers(30, 400), 365]))
        kind = int(rng.integers(0, 9))
        x = rng.normal(size=n)
        if kind == 1:
            x[int(rng.integers(0, n)):] += rng.uniform(0.1, 1.5) * np.sign(rng.normal())
        elif kind == 2:
            a = int(rng.integers(0, n))
            x[a:a + int(rng.integers(1, 40))] += rng.uniform(0, 4)
        elif kind == 3:
            x = rng.standard_t(2, size=n)
        elif kind == 4:
            x = rng.choice([0.0, 1.0], size=n) + 0.01 * rng.normal(size=n)
        elif kind == 5:
            x = np.round(2 * rng.normal(size=n))
        elif kind == 6:
            x = 1e12 + 1e-2 * rng.normal(size=n)
        elif kind == 7:
            x = np.zeros(n)
            x[int(rng.integers(0, n))] = 1.0
        elif kind == 8:
            x = 0.1 * np.cumsum(rng.normal(size=n)) + rng.normal(size=n)
        out.append(x * rng.uniform(1e-3, 1e6))
    return out


def _candidates(x):
    '''ruptures' PELT candidates of ``x`` as changes.detect segments it.'''
    sigma, center = changes._scale(x)
    return changes.segment(((x - center) / sigma).reshape(-1, 1),
                           changes.PENALTY * math.log(len(x)))


def _laid_out(series):
    ns = np.array([len(x) for x in series])
    return np.concatenate(series), np.cumsum(ns) - ns, ns


def _quiet(series):
    values, starts, ns = _laid_out(series)
    return screen.quiet(values, starts, ns, changes.PENALTY * np.log(np.maximum(ns, 2)),
                        changes.MIN_SIZE)


def test_a_quiet_series_has_no_candidate_and_most_noise_is_quiet():
    series = generated()
    quiet = _quiet(series)
    long_enough = [i for i, x in enumerate(series) if len(x) >= 2 * changes.MIN_SIZE]
    loud = [i for i in long_enough if _candidates(series[i])]
    assert len(loud) > 300 and not [i for i in loud if quiet[i]]
    # the screen is worth its passes: a year of white noise is proven quiet in most series
    # (measured: 97.9 % of the bench's 10,000 series)
    noise = [np.random.default_rng(s).normal(size=365) for s in range(300)]
    assert np.mean(_quiet(noise)) > 0.9


def test_a_bump_whose_best_single_split_is_weak_is_not_quiet():
    '''Two changes (a 30-run bump in 365 runs): no single split saves the penalty, the
    pair does; the bound on every interval's term catches it.'''
    rng = np.random.default_rng(3)
    x = rng.normal(size=365)
    x[170:200] += 2.0
    sigma, _ = changes._scale(x)
    beta = changes.PENALTY * math.log(len(x))
    assert screen.best_split(x, [0], [len(x)], [sigma], changes.MIN_SIZE)[0] < beta
    assert _candidates(x)
    assert not _quiet([x])[0]


@pytest.mark.parametrize('layout, batch', [('contiguous', screen.BATCH), ('scattered', 1000)])
def test_the_scan_finds_what_detect_finds_on_every_series(layout, batch, monkeypatch):
    '''changes.detect_each, which skips the quiet series, against changes.detect on each
    series (one of 2,500 runs among them, longer than a window, is never skipped), the
    series screened all at once or a thousand runs at a time.'''
    monkeypatch.setattr(screen, 'BATCH', batch)
    series = generated(800, seed=9) + [np.random.default_rng(1).normal(size=2500)]
    values, starts, ns = _laid_out(series)
    if layout == 'scattered':             # the series in another order in the values
        order = np.random.default_rng(2).permutation(len(series))
        values, starts, ns = _laid_out([series[i] for i in order])
        back = np.argsort(order)
        starts, ns = starts[back], ns[back]
    got = [(k, cp) for k, _, _, cp in changes.detect_each(values, starts, ns, {})]
    want = [(k, cp) for k, x in enumerate(series) for cp in changes.detect(x)]
    assert got == want and len(want) > 50


@pytest.mark.parametrize('kw', [{'min_size': 3}, {'min_size': 3, 'penalty': 4.0}],
                         ids=['min_size 3', 'min_size 3, penalty 4'])
def test_the_screen_spares_with_the_detections_own_tuning(kw):
    '''A tuning other than the default reaches the screen too: with segments of three runs
    allowed, a step of 2.5 to 5 noise units in a 60-run series' last three runs is a
    change point, where the best split five runs from the end (the default least
    segment) saves too little -- the screen must not spare such a series as if five
    were the least.'''
    rng = np.random.default_rng(3)
    series = []
    for _ in range(400):
        x = 10 + rng.standard_normal(60)
        x[-3:] += rng.uniform(2.5, 5)
        series.append(x)
    values, starts, ns = _laid_out(series)
    got = [(k, cp) for k, _, _, cp in changes.detect_each(values, starts, ns, kw)]
    want = [(k, cp) for k, x in enumerate(series) for cp in changes.detect(x, **kw)]
    assert got == want
    assert sum(cp['index'] == 57 for _, cp in want) >= 20     # the late steps found


def test_a_long_series_skips_only_the_windows_where_pelt_finds_nothing(monkeypatch):
    '''A series longer than a window is segmented window by window (changes.segment); the
    windows proven quiet, in the series' noise units, are skipped. The candidates are those
    of PELT run on every window, on 150 series of 2,000 to 9,000 runs of every generated
    shape and 60 with one step whose gain in its window is 0.7 to 1.4 times the penalty;
    and most windows of a noise series are skipped.'''
    rng = np.random.default_rng(13)
    series = [x for k in range(150)
              for x in generated(1, seed=100 + k, runs=int(rng.integers(2001, 9000)))]
    for _ in range(60):
        n = int(rng.integers(3000, 6000))
        x = rng.normal(size=n)
        # a step of d at a window's middle saves d² window / 4 of its cost
        x[int(rng.integers(1000, n - 1000)):] += math.sqrt(
            4 * changes.PENALTY * math.log(n) * rng.uniform(0.7, 1.4) / changes.WINDOW)
        series.append(x)
    calls = []
    quiet = screen.quiet

    def counted(*a, **k):
        out = quiet(*a, **k)
        calls.append(out)
        return out

    monkeypatch.setattr(screen, 'quiet', counted)
    got = [_candidates(x) for x in series]
    skipped = np.concatenate(calls)
    monkeypatch.setattr(screen, 'quiet', lambda values, starts, *a, **k:
                        np.zeros(len(starts), dtype=bool))
    assert got == [_candidates(x) for x in series]
    assert sum(map(len, got)) > 50 and 0.3 < skipped.mean() < 1
    calls.clear()
    monkeypatch.setattr(screen, 'quiet', counted)
    _candidates(np.random.default_rng(2).normal(size=20000))
    assert len(calls[0]) == 19 and calls[0].mean() > 0.9


def test_flat_and_not_finite_series_are_left_to_pelt():
    flat = np.full(100, 7.0)
    spiky = np.r_[np.zeros(50), np.nan, np.zeros(49)]
    short = np.arange(2 * changes.MIN_SIZE - 1, dtype=float)
    assert _quiet([flat, spiky, short]).tolist() == [False, False, True]


def _exact(x, min_size):
    '''(G1, Q) of a series in noise units, by brute force over every cut and interval
    (the quantities of the module's proof, computed apart from it).'''
    n = len(x)
    c = np.concatenate([[0.0], np.cumsum(x - x.mean())])
    t = np.arange(min_size, n - min_size + 1)
    g1 = float(np.max(c[t] ** 2 * n / (t * (n - t)))) if len(t) else 0.0
    b, e = np.triu_indices(n + 1, k=min_size)
    q = float(np.max((c[e] - c[b]) ** 2 / (e - b)))
    return g1, q


def test_a_series_proven_quiet_meets_both_conditions_of_the_proof_exactly():
    '''Soundness, interval by interval: a series the screen proves quiet has its best
    single cut's gain within beta and every interval's term within 2 beta / 3, computed
    here by brute force. Series in noise units (``scale`` 1) made to sit near those
    limits: bumps of every length from MIN_SIZE up, of a height that puts their term
    about at 2 beta / 3, on noise -- where a bound that misses an interval length (a
    shifted grid of scales) proves a series quiet that is not.'''
    rng = np.random.default_rng(11)
    k, series = changes.MIN_SIZE, []
    for i in range(1500):
        n = int(rng.integers(2 * k, 160))
        beta = changes.PENALTY * math.log(n)
        x = 0.3 * rng.normal(size=n)
        length = int(rng.integers(k, n - k + 1))
        a = int(rng.integers(0, n - length + 1))
        # a bump of h over `length` runs: its term is about h^2 length (1 - length / n)^2
        h = math.sqrt(2 * beta / 3 / (length * (1 - length / n) ** 2)) * rng.uniform(0.8, 1.1)
        x[a:a + length] += h
        series.append(x)
    # and every bump length from MIN_SIZE to 80 runs in 200, in the middle, little noise,
    # its term from just below to just above the limit: each scale's edges are met
    for length in range(k, 81):
        beta = changes.PENALTY * math.log(200)
        for f in np.linspace(0.97, 1.08, 12):
            x = 0.02 * rng.normal(size=200)
            a = 100 - length // 2
            x[a:a + length] += math.sqrt(f * 2 * beta / 3 / (length * (1 - length / 200) ** 2))
            series.append(x)
    # two single-run spikes `length - 1` runs apart: the interval from the first to the
    # second is the one whose term is the largest, and no shorter window holds both --
    # the shape the bound of a scale is tightest on (its scales must meet end to end)
    spikes = len(series)
    for length in range(k, 81):
        beta = changes.PENALTY * math.log(400)
        for f in np.linspace(0.97, 1.08, 12):
            x = np.zeros(400)
            x[[200, 200 + length - 1]] = math.sqrt(f * 2 * beta / 3 * length) / 2
            series.append(x)
    values, starts, ns = _laid_out(series)
    beta = changes.PENALTY * np.log(ns)
    quiet = screen.quiet(values, starts, ns, beta, k, scale=1.0)
    wrong, both = [], 0
    for i, x in enumerate(series):
        g1, q = _exact(x, k)
        sound = g1 <= beta[i] and q <= 2 * beta[i] / 3
        both += sound
        if quiet[i] and not sound:
            wrong.append((i, len(x), g1 / beta[i], q / (2 * beta[i] / 3)))
    assert not wrong, wrong[:10]
    # near the limits on purpose: both ways, and the screen proves most of those it may
    assert 0.2 * len(series) < both < 0.8 * len(series), (both, len(series))
    assert quiet[:1500].sum() > 0.5 * sum(
        g <= b and q <= 2 * b / 3 for (g, q), b in ((_exact(x, k), b) for x, b in
                                                    zip(series[:1500], beta[:1500]))), \
        'the screen proves few of the random series that are quiet'
    assert quiet[spikes:].any()
