'''How small a regression each series can see: its minimum detectable effect (MDE).

The MDE of a series is the smallest relative step, to the worse side, that the change-point
detector (:func:`mdxbench.post.analysis.changes.detect`, with the same settings) finds with
probability >= ``POWER`` (95%) within +-``TOLERANCE`` (2) runs of where it happened, in a
history as long as the series' own and as noisy as its own runs. It is computed, not
assumed, by simulation on the series' own residuals:

1. the series is cut at its own change points (the detector's) and each run divided by
   its segment's median: the relative residuals, whatever their shape (a VM's bimodal
   memory bandwidth keeps its two modes: nothing Gaussian is assumed);
2. ``trials`` synthetic histories of the series' length (at most ``MAX_RUNS``) are drawn
   from those residuals (bootstrap), each with a step at a random run in its middle half;
   the same draws serve every step size tried (common random numbers), so the detection
   rate grows smoothly with the step;
3. the step size is bisected (in log scale, between 0.2% and 100%) to the smallest one
   detected in >= 95% of the histories.

The *repetitions* answer "how many repetitions per run (``reframe --repeat``, or the
check's own, the median taken) would bring the MDE under ``target`` (5%)": the smallest m
of (1, 2, 3, 4, 6, 8, 12, 16) whose histories, each run the median of m residual draws,
show a ``target`` step in >= 95%. ``None``: not within 16.

``mdxbench bench mde`` checks the stated MDE against the empirical 95% threshold on
generated series of known noise (Gaussian, and bimodal like this VM's memory bandwidth).
'''
import math

import numpy as np

from mdxbench.post.analysis import changes

POWER = 0.95
TOLERANCE = 2
TRIALS = 60
MAX_RUNS = 200
TARGET = 0.05
REPETITIONS = (1, 2, 3, 4, 6, 8, 12, 16)
LOW, HIGH = 0.002, 1.0
STEPS = 9


def residuals(x):
    '''Relative residuals of ``x`` around the medians of its segments (the detector's own
    change points cut it).'''
    x = np.asarray(x, dtype=float)
    edges = [0] + [c['index'] for c in changes.detect(x)] + [len(x)]
    out = []
    for a, b in zip(edges, edges[1:]):
        med = float(np.median(x[a:b]))
        if med:
            out.append(x[a:b] / med - 1)
    return np.concatenate(out) if out else np.zeros(0)


class Simulation:
    '''Synthetic histories drawn once from a series' residuals: ``rate(step, m)`` is the
    share of them in which a relative ``step`` (negative: down) is found within
    TOLERANCE runs, each run the median of ``m`` draws.'''

    def __init__(self, res, n, trials=TRIALS, seed=0):
        self.rng = np.random.default_rng(seed)
        self.res, self.n, self.trials = res, min(n, MAX_RUNS), trials
        self.at = self.rng.integers(self.n // 4, 3 * self.n // 4 + 1, trials)
        self.draws = {}

    def noise(self, m):
        if m not in self.draws:
            d = self.rng.choice(self.res, size=(self.trials, self.n, m))
            self.draws[m] = np.median(d, axis=2)
        return self.draws[m]

    def rate(self, step, m=1, need=None):
        '''Detection rate; with ``need``, stops as soon as that rate is out of reach.'''
        noise, hits, misses = self.noise(m), 0, 0
        allowed = self.trials - math.ceil((need or 0) * self.trials)
        for i in range(self.trials):
            x = 1 + noise[i]
            x[self.at[i]:] *= 1 + step
            if any(abs(c['index'] - self.at[i]) <= TOLERANCE for c in changes.detect(x)):
                hits += 1
            else:
                misses += 1
                if need is not None and misses > allowed:
                    return hits / self.trials
        return hits / self.trials


def worse_sign(better):
    return 1 if better == 'lower' else -1


def mde(x, better=None, target=TARGET, trials=TRIALS, seed=0):
    '''The series' MDE and repetitions (see the module): a dict ``runs``, ``mde`` (relative,
    None: fewer runs than the detector needs, or above 100%), ``repetitions`` (for
    ``target``), ``target``, ``noise_cv`` (robust CV of the residuals).'''
    x = np.asarray(x, dtype=float)
    out = {'runs': int(len(x)), 'mde': None, 'repetitions': None, 'target': target,
           'noise_cv': None}
    if len(x) < 4 * changes.MIN_SIZE:
        out['why'] = f'fewer than {4 * changes.MIN_SIZE} runs'
        return out
    res = residuals(x)
    out['noise_cv'] = float(1.4826 * np.median(np.abs(res - np.median(res))))
    sim = Simulation(res, len(x), trials, seed)
    sign = worse_sign(better)
    if sim.rate(sign * HIGH, need=POWER) < POWER:
        out['why'] = 'not found at 100%'
    else:
        lo, hi = math.log(LOW), math.log(HIGH)
        for _ in range(STEPS):
            mid = (lo + hi) / 2
            if sim.rate(sign * math.exp(mid), need=POWER) >= POWER:
                hi = mid
            else:
                lo = mid
        out['mde'] = round(math.exp(hi), 4)
    if out['mde'] is not None and out['mde'] <= target:
        out['repetitions'] = 1
    else:
        out['repetitions'] = next((m for m in REPETITIONS[1:]
                                   if sim.rate(sign * target, m, need=POWER) >= POWER), None)
    return out


def of_series(history, target=TARGET, trials=TRIALS, keys=None, budget=None):
    '''The MDE of every series of ``history`` (a :mod:`mdxbench.post.analysis.kept`
    history -- the kept scan's, its series read a chunk at a time, or a table's), or of
    the series ``keys`` (tuples of ``changes.SERIES``): a list of dicts, series keys
    included, in the order of their keys. ``budget``: seconds, after which the remaining
    series are left out (listed with ``mde`` None, ``why`` budget).'''
    import time

    want = [tuple(r) for r in history.counts().sort(changes.SERIES, nulls_last=True)
            .select(changes.SERIES).iter_rows()]
    if keys is not None:
        wanted = set(keys)
        want = [k for k in want if k in wanted]
    out, t0 = {}, time.monotonic()
    for key, values in history.each_series(want):
        d = dict(zip(changes.SERIES, key))
        if budget is not None and time.monotonic() - t0 > budget:
            out[key] = dict(d, runs=int(len(values)), mde=None, repetitions=None,
                            target=target, noise_cv=None, why='time budget spent')
        else:
            out[key] = dict(d, **mde(values, d['better'], target, trials))
    return [out[k] for k in want if k in out]


def key_of(entry):
    '''A series' key as one string (for a JSON state file).'''
    return '\x1f'.join(str(entry[k]) for k in changes.SERIES)


def stale(entry, n):
    '''A cached MDE is recomputed once its series has grown by 10% (at least 5 runs).'''
    return entry is None or abs(entry['runs'] - n) >= max(5, 0.1 * n)


def refresh(cache, history, budget=30.0, target=TARGET, trials=TRIALS):
    '''The MDEs of every series of ``history`` (a :mod:`mdxbench.post.analysis.kept`
    history, the kept scan's or a table's: each series' runs read from its chunk only where
    its figure is computed), from ``cache`` ({key: entry} of a previous cycle) where still
    current, computed where missing (first) or stale, until ``budget`` seconds are spent:
    what is left keeps its older figure, or has none yet (``why``). A list of entries, and
    how many were computed.'''
    import time

    counts = history.counts().sort(changes.SERIES, nulls_last=True)
    todo, out, runs = {}, {}, {}
    for row in counts.iter_rows(named=True):
        key = {k: row[k] for k in changes.SERIES}
        k, old = key_of(key), cache.get(key_of(key))
        runs[k] = row['n']
        if old is not None and old.get('target') == target and not stale(old, row['n']):
            out[k] = old
        else:
            todo[tuple(key[f] for f in changes.SERIES)] = old
            out[k] = None
    t0, done = time.monotonic(), 0
    # never computed first, then the stale ones; each series' runs read with its chunk
    for first in (True, False):
        want = [k for k, old in todo.items() if (old is None) == first]
        if not want or time.monotonic() - t0 > budget:
            continue
        for key, values in history.each_series(want):
            if time.monotonic() - t0 > budget:
                break
            d = dict(zip(changes.SERIES, key))
            out[key_of(d)] = dict(d, **mde(values, d['better'], target, trials))
            done += 1
    for key, old in todo.items():
        k = key_of(dict(zip(changes.SERIES, key)))
        if out[k] is None:
            out[k] = old or dict(zip(changes.SERIES, key), runs=int(runs[k]), mde=None,
                                 repetitions=None, target=target, noise_cv=None,
                                 why='not computed yet (time budget)')
    return list(out.values()), done
