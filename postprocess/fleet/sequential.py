'''Wald's sequential probability ratio test on the suspects' paired runs, and the sizing of
those runs: the decision on oriented log ratios (:func:`decide`), how many paired runs a
decision takes at a noise (:func:`pairs_to_decide`), how much longer the runs must be to
decide within the rounds left (:func:`lengthening`, :func:`planning_sigma`), and whether an
earlier level known to an error can be decided against at all (:func:`level_decidable`).
The mathematics alone: the per-node bookkeeping that feeds it is :mod:`.suspects`'.'''
import dataclasses
import math

import numpy as np
from scipy import stats

from mdxbench.post.analysis.stats import SIGMA_PER_MAD


#: successive differences needed before repeated runs, not the fleet's spread, give the noise
MIN_DIFFS = 3


@dataclasses.dataclass
class Noise:
    '''Standard deviation of ln(value) of one measurement of one node, and where from.'''
    sigma: float
    source: str         # 'repeated runs' or 'fleet spread'
    n: int              # successive differences, or nodes

    def describe(self):
        if self.source == 'repeated runs':
            return f'noise {self.sigma:.1%} from {self.n} repeated-run differences'
        return (f'noise {self.sigma:.1%} from the spread of {self.n} nodes in one run '
                f'(too few repeated runs yet)')


def noise(series, fleet_logs):
    '''The noise of one check's figure. ``series``: {node: [ln value, ...] in time order}
    (history and this session); ``fleet_logs``: ln value of each node in one run, the
    stand-in. None when neither gives a spread.'''
    diffs = np.array([b - a for vals in series.values() for a, b in zip(vals, vals[1:])])
    if len(diffs) >= MIN_DIFFS:
        sigma = SIGMA_PER_MAD * float(np.median(np.abs(diffs - np.median(diffs)))) / math.sqrt(2)
        if sigma > 0:
            return Noise(sigma, 'repeated runs', len(diffs))
    logs = np.asarray(fleet_logs)
    if len(logs) >= 3:
        sigma = SIGMA_PER_MAD * float(np.median(np.abs(logs - np.median(logs))))
        if sigma > 0:
            return Noise(sigma, 'fleet spread', len(logs))
    return None


#: paired runs before any decision: one may be disturbed, as the first run was, and two
#: show how much the pair's own ratio moves
MIN_PAIRED = 2


#: the interval given with each estimated deficit
CONFIDENCE = 0.95


#: its half width in standard errors (two-sided, normal)
Z_CONFIDENCE = float(stats.norm.ppf(0.5 + CONFIDENCE / 2))


@dataclasses.dataclass
class Decision:
    '''The sequential test on paired observations (oriented log ratios, baseline removed).'''
    state: str              # 'confirmed', 'excluded' or 'undecided'
    n: int                  # paired observations used
    deficit: float          # estimated fraction worse (0.25: a quarter worse)
    interval: tuple         # (low, high) of the deficit at CONFIDENCE
    llr: float
    bounds: tuple           # (lower, upper) log likelihood ratio bounds

    def describe(self, effect, alpha, beta):
        what = {'confirmed': f'deficit of {effect:.0%} or more confirmed',
                'excluded': f'deficit of {effect:.0%} excluded',
                'undecided': 'undecided'}[self.state]
        return (f'deficit {self.deficit:+.1%} over {self.n} paired run(s) '
                f'({CONFIDENCE:.0%} interval {self.interval[0]:+.1%} to '
                f'{self.interval[1]:+.1%}; negative: better): {what} '
                f'(alpha {alpha:g}, beta {beta:g})')


def decide(x, sigma, effect, alpha, beta, tau=0.0):
    '''Wald's SPRT of H0 "no deficit" (mean 0) against H1 "short by ``effect``" (mean
    ln(1 - effect)) for normal observations ``x`` of known ``sigma`` -- one for all, or
    one per observation (paired runs made longer are less noisy): the deficit is then the
    inverse-variance weighted mean, its interval from that mean's standard error.

    ``tau``: the standard deviation of an error all observations share -- the baseline a
    history suspect's ratios are taken against, itself estimated from earlier runs -- which
    more paired runs do not average away: the test is then on the weighted mean, whose
    variance is ``1 / sum(1 / sigma**2) + tau**2`` (with ``tau`` 0 the same likelihood
    ratio as the sum over the observations).'''
    x = np.asarray(x)
    if not len(x):
        raise ValueError('decide(): no paired observation to decide on')
    sig = np.broadcast_to(np.asarray(sigma), x.shape)
    mu1 = math.log(1.0 - effect)
    upper, lower = math.log((1 - beta) / alpha), math.log(beta / (1 - alpha))
    n = len(x)
    w = 1.0 / sig ** 2
    mean, se = float(np.sum(w * x) / np.sum(w)), float(1.0 / math.sqrt(np.sum(w)))
    if tau:
        se = math.hypot(se, tau)
        llr = normal_llr(mean, mu1, se)
    else:
        llr = normal_llr(x, mu1, sig)
    state = 'confirmed' if llr >= upper else 'excluded' if llr <= lower else 'undecided'
    half = Z_CONFIDENCE * se
    # deficit = 1 - ratio; a lower mean log ratio is a larger deficit
    interval = (1 - math.exp(mean + half), 1 - math.exp(mean - half))
    return Decision(state, n, 1 - math.exp(mean), interval, llr, (lower, upper))


def normal_llr(x, mu1, sigma):
    '''ln N(x; mu1, sigma) - ln N(x; 0, sigma), summed over ``x``: the normal densities'
    log ratio in closed form, ``mu1 (x - mu1 / 2) / sigma^2`` (scipy's ``logpdf`` twice
    gives the same at twenty times the cost, and the suspects' statistical tests call it
    a hundred thousand times).'''
    return float(np.sum(mu1 * (np.asarray(x) - mu1 / 2) / np.asarray(sigma) ** 2))


def pairs_to_decide(sigma_pair, effect, alpha, beta, tau=0.0):
    '''About how many paired runs Wald's test needs to tell "no deficit" from "short by
    ``effect``" at this noise (the fixed-sample size of the same error rates: normal pairs
    of sd ``sigma_pair``, means 0 and ln(1 - effect)); ``tau``: an error they share
    (:func:`decide`), which leaves the pairs less of the variance the test affords.'''
    delta = abs(math.log(1.0 - effect))
    z = stats.norm.ppf(1 - alpha) + stats.norm.ppf(1 - beta)
    room = (delta / z) ** 2 - tau ** 2
    if room <= 0:
        return math.inf
    return max(MIN_PAIRED, math.ceil(sigma_pair ** 2 / room))


#: the longest the suspects' paired runs are made, in runs of the check's own length: the
#: bound on what one extra job may cost (fio at 2 s: 16 s; HPL: twice N)
MAX_LENGTH = 8


def lengthening(sigma_pair, lengths, effect, alpha, beta, rounds_left, cap=MAX_LENGTH,
                tau=0.0):
    '''The length of the next paired runs, in runs of the check's own length, for a check
    whose noise (``sigma_pair``, a pair of runs of its own length) cannot be decided in the
    rounds left: a run ``f`` times as long has ``1/f`` the variance, so the runs so far
    (``lengths``) carry ``sum(lengths)`` of the :func:`pairs_to_decide` the test needs.
    As long as the last runs where ``rounds_left`` more of them would do; else the least
    factor that does, at most ``cap``, never shorter than the last.'''
    current = lengths[-1] if lengths else 1
    if rounds_left <= 0:
        return current
    missing = pairs_to_decide(sigma_pair, effect, alpha, beta, tau) - sum(lengths)
    if missing == math.inf:
        return int(cap)
    # (where ``rounds_left`` runs as long as the last would do, that is the last's length)
    return int(min(cap, max(current, math.ceil(missing / rounds_left))))


#: a run-to-run noise known from few repetitions may be much larger than it looks (seen:
#: netperf at 0.8% from 3 differences, 11% a pair two rounds later, when the budget was
#: spent at the check's own length): the runs are *sized* for the upper end of what the
#: noise could be, at this one-sided confidence; the test itself weighs them by the estimate
PLAN_CONFIDENCE = 0.95


#: the efficiency of the median absolute deviation against the standard deviation on
#: normal data (0.37): ``n`` differences weigh as ``0.37 n`` degrees of freedom
MAD_EFFICIENCY = 0.37


def planning_sigma(nz):
    '''The noise a run's length is planned for: the estimate's upper confidence bound
    (chi-square, :data:`PLAN_CONFIDENCE`) at the degrees of freedom its differences give
    (:data:`MAD_EFFICIENCY`); the estimate itself where it is no repetition's (one run's
    spread across nodes sizes nothing anyway).'''
    if nz.source != 'repeated runs':
        return nz.sigma
    df = max(MAD_EFFICIENCY * nz.n, 0.5)
    return nz.sigma * math.sqrt(df / stats.chi2.ppf(1 - PLAN_CONFIDENCE, df))


def to_decide(check, sigma_pair, have, effect, alpha, beta, tau=0.0):
    '''What would decide an undecided suspect, in words: the paired runs it needs at this
    noise, or runs of the check that many times as long (the noise of a run falls as one
    over the square root of its length: fio's runtime, netperf's duration, HPL's work).'''
    need = pairs_to_decide(sigma_pair, effect, alpha, beta, tau)
    longer = math.ceil(need / max(have, MIN_PAIRED))
    return (f'to decide: about {need} paired runs at this noise ({sigma_pair:.1%} a pair, '
            f'{max(need - have, 0)} more than these: --max-extra-jobs), or {check} run about '
            f'{longer}x as long')


def level_error(sigma, runs, other_runs):
    '''The standard deviation of the difference of two nodes' earlier levels, each a
    median of ``runs`` and ``other_runs`` runs of one-run noise ``sigma`` (as the mean of
    as many: a little less than the median's own for three runs and more).'''
    return sigma * math.sqrt(1.0 / runs + 1.0 / other_runs)


def level_decidable(tau, effect, alpha, beta):
    '''Whether a deficit of ``effect`` against an earlier level known to ``tau`` can be
    told from none at these error rates by any number of paired runs: the shared error
    must leave the two hypotheses ``z(1-alpha) + z(1-beta)`` of it apart -- and at most
    half that, so that the paired runs have three quarters of the variance the test
    affords (at most a third more of them than with a level known exactly).'''
    z = stats.norm.ppf(1 - alpha) + stats.norm.ppf(1 - beta)
    return 2 * tau * z <= abs(math.log(1.0 - effect))


def next_lengths(cases, effect, seq, rounds_left, knobs, noise_of=None):
    '''{check class: length} of the next round's runs for the undecided ``cases``: the
    longest any of a check's cases needs (:func:`lengthening`), for checks that declare
    how (``knobs``); others stay as they are. A case not yet measured again is sized from
    its figure's noise (``noise_of``) where repeated runs gave it (the history's, or this
    session's): the first paired runs are then already as long as that noise calls for,
    not a round later; on one run's spread across nodes, no. The noise is taken at what it
    could be (:func:`planning_sigma`), the pair's own spread where larger.'''
    out = {}
    for c in cases:
        cls = c['check'].split()[0]
        if cls not in knobs:
            continue
        if c.get('x'):
            sigma = max(c['sigma_pair'], planning_sigma(c['noise']) * math.sqrt(2))
            lengths = c['lengths']
        else:
            nz = (noise_of or {}).get(c['key'])
            if nz is None or nz.source != 'repeated runs':
                continue
            sigma, lengths = planning_sigma(nz) * math.sqrt(2), []
        f = lengthening(sigma, lengths, effect, seq.alpha, seq.beta, rounds_left,
                        tau=c.get('tau', 0.0))
        out[cls] = max(out.get(cls, 1), f)
    return out
