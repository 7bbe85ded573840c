'''``mdxbench bench mde``: is the stated minimum detectable effect
(:mod:`mdxbench.post.analysis.sensitivity`) right? On generated series of known noise, the
MDE stated from one stable history of each kind (its own residuals, as for a real series)
is compared with the empirical 95% detection threshold, measured on fresh histories drawn
from the true noise model (``trials`` per step size tried, the step at a random run of the
middle half, found within +-2 runs). Target: stated within +-25% of empirical. Figures
printed; nothing here is a timed test.
'''
import math
import time

import numpy as np

from mdxbench.post.analysis import changes, sensitivity

#: (label, runs, noise model); bimodal like this VM's memory bandwidth (38 or 55 GB/s)
KINDS = (('Gaussian 2% CV, 60 runs', 60, ('gauss', 0.02)),
         ('Gaussian 2% CV, 30 runs', 30, ('gauss', 0.02)),
         ('Gaussian 5% CV, 120 runs', 120, ('gauss', 0.05)),
         ('bimodal 38/55 GB/s 20/80, 60 runs', 60, ('bimodal', 0.2)),
         ('bimodal 38/55 GB/s 50/50, 60 runs', 60, ('bimodal', 0.5)))


def draw(rng, model, n):
    kind, p = model
    if kind == 'gauss':
        return 100 * (1 + p * rng.standard_normal(n))
    return np.where(rng.random(n) < p, 38.0, 55.0) * (1 + 0.02 * rng.standard_normal(n))


def empirical(model, n, trials, rng):
    '''The smallest downward step found in >= 95% of fresh histories (bisected).'''
    def rate(step):
        hits = 0
        for _ in range(trials):
            x = draw(rng, model, n)
            at = int(rng.integers(n // 4, 3 * n // 4 + 1))
            x[at:] *= 1 - step
            hits += any(abs(c['index'] - at) <= sensitivity.TOLERANCE
                        for c in changes.detect(x))
        return hits / trials

    lo, hi = math.log(sensitivity.LOW), math.log(0.95)
    if rate(0.95) < sensitivity.POWER:
        return None
    for _ in range(sensitivity.STEPS):
        mid = (lo + hi) / 2
        if rate(math.exp(mid)) >= sensitivity.POWER:
            hi = mid
        else:
            lo = mid
    return math.exp(hi)


def main(trials=400, histories=10, seed=3):
    from mdxbench.post.site import text

    rng = np.random.default_rng(seed)
    rows, ok = [], True
    for label, n, model in KINDS:
        t0 = time.perf_counter()
        stated = [sensitivity.mde(draw(rng, model, n), 'higher', seed=i)
                  for i in range(histories)]
        secs = (time.perf_counter() - t0) / histories
        mdes = [s['mde'] for s in stated if s['mde'] is not None]
        emp = empirical(model, n, trials, rng)
        med = float(np.median(mdes)) if mdes else None
        ratio = med / emp if med and emp else None
        good = ratio is not None and 0.75 <= ratio <= 1.25
        each = sum(emp is not None and 0.75 <= m / emp <= 1.25 for m in mdes)
        ok &= good
        rows.append((label, f'{emp:.1%}' if emp else '> 95%',
                     f'{min(mdes):.1%} .. {max(mdes):.1%}' if mdes else '-',
                     f'{ratio:.2f}' if ratio else '-', 'met' if good else 'MISSED',
                     f'{each}/{len(stated)}',
                     ', '.join(str(s['repetitions']) for s in stated), f'{secs:.2f} s'))
    print(f'stated MDE (from {histories} stable histories each, their own residuals, '
          f'{sensitivity.TRIALS} simulated histories per step) against the empirical 95% '
          f'threshold ({trials} fresh histories per step):')
    print(text.render(('noise', 'empirical 95% threshold', 'stated MDE (range)',
                       'ratio (median)', 'median within +-25%', 'histories within +-25%',
                       f'repetitions for {sensitivity.TARGET:.0%}',
                       'time per series'), rows))
    print('target: every median ratio within 0.75..1.25: ' + ('met' if ok else 'MISSED'))
    return 0 if ok else 1
