'''A new night re-detects only the series its runs could change, and finds what a full scan
finds (generated histories: test input for the statistics, not benchmark output).'''
import numpy as np
import pytest

from mdxbench.post.analysis import changes, incremental


def histories(nseries=600, runs=200, seed=21):
    '''2% CV noise around random levels; a quarter of the series with a 10% step anywhere
    from run 20 to run 180, so some come after the last scan.'''
    rng = np.random.default_rng(seed)
    out = []
    for _ in range(nseries):
        x = rng.uniform(10, 1000) * (1 + 0.02 * rng.standard_normal(runs))
        if rng.random() < 0.25:
            x[int(rng.integers(20, 180)):] *= rng.choice([0.9, 1.1])
        out.append(x)
    return out


def _indices(cps):
    return [c['index'] for c in cps]


@pytest.mark.parametrize('first, then', [(100, (101, 105, 130, 200)), (60, (61, 90, 150))])
def test_nightly_updates_find_what_full_scans_find(first, then):
    '''The change points of a full scan at ``first`` runs, then updated night by night:
    the same as a full scan at each of ``then`` runs, in every series; and only a few
    series are detected again (measured: 17-18 of 600 after one night, 15-62 after more).'''
    hs = histories()
    state = [changes.detect(x[:first]) for x in hs]
    for n in then:
        again = 0
        for i, x in enumerate(hs):
            state[i], redone = incremental.update(x[:n], state[i])
            again += redone
            assert _indices(state[i]) == _indices(changes.detect(x[:n])), (i, n)
        # one night: a few series; a hundred nights at once: still a small share
        assert again <= (0.05 if n == first + 1 else 0.15) * len(hs), (n, again)


def test_a_step_in_the_new_runs_is_detected_a_stable_series_is_not():
    rng = np.random.default_rng(3)
    x = 100 * (1 + 0.02 * rng.standard_normal(160))
    cps = changes.detect(x[:120])
    assert cps == [] and not incremental.needs_detect(x, cps)
    x[130:] *= 0.9
    assert incremental.needs_detect(x, cps)
    got, redone = incremental.update(x, cps)
    assert redone and _indices(got) == [130]


def test_the_split_gain_is_the_least_squares_saving():
    '''One split of [0, 0, 2, 2] saves 4 (cost 4 whole, 0 split); a series too short to
    split saves nothing.'''
    assert incremental.split_gain([0, 0, 2, 2], 1.0, min_size=2) == pytest.approx(4.0)
    assert incremental.split_gain([0, 1, 2], 1.0, min_size=2) == 0.0


def test_the_screen_of_many_series_at_once_is_the_split_test_of_each():
    '''incremental.screen (NumPy over a whole chunk) decides as split_gain does series by
    series, from each series' last change point.'''
    import math

    hs = histories(nseries=300, runs=120, seed=8)
    cps = [changes.detect(x[:60]) for x in hs]          # the state of night 60
    tails = [c[-1]['index'] if c else 0 for c in cps]
    values = np.concatenate(hs)
    ns = np.array([len(x) for x in hs])
    starts = np.cumsum(ns) - ns
    got = incremental.screen(values, starts, ns, tails)
    want = [incremental.split_gain(x[t:], changes.noise(x)) >=
            incremental.KAPPA * changes.PENALTY * math.log(len(x)) for x, t in zip(hs, tails)]
    assert list(got) == want and 0 < sum(want) < len(want)
