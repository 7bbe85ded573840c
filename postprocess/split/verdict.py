'''Was it the system or the software? The verdict of a split (pure functions).

An incident's series moved from ``before`` to ``after`` (medians of its history either
side of the change point) while both the system (kernel, hypervisor, an event) and the
benchmark's build (its Spack hash) changed. A split measures, today and on the same node,
the previous build (``old``) and the current one (``new``) interleaved in rounds, and
separates, on the log scale (relative effects, paired by round):

* the **software** effect: new build / old build, today (paired rounds: what the nodes'
  state does to both builds in a round cancels);
* the **system** effect: old build today / the series' level before the change (the same
  binary, measured before and after the system changed).

Each effect gets a Student-t confidence interval from the rounds, and is read against one
threshold, the *tolerance*: ``min_effect`` or a quarter of the regression, on the log
scale (where the two effects add up to the regression), whichever is larger. An effect is
*present* when its interval lies wholly on the worse side of zero (the series' direction)
and its estimate reaches the tolerance (it explains a material part of the regression);
*absent* when its interval's worse end stays under the tolerance; else *unclear*. The two
readings exclude each other: a 4% drift of the node beside a 40% regression is absent,
not a second cause. The verdict: **software** (software present, system absent: the old
build is back at the old level), **system** (system present, software absent: both builds
are at the new level), **both** (both present), else **inconclusive**, saying which
interval was too wide. A new build that measures today at the old level did not reproduce
the regression: **not reproduced** (inconclusive, said so).
'''
import math
import re

#: verdicts a split gives (and ``cannot rebuild``/``cannot run`` when it could not measure)
VERDICTS = ('software', 'system', 'both', 'inconclusive')

#: rounds (one run of each build) at least and at most
MIN_ROUNDS = 3
MAX_ROUNDS = 10

#: confidence of the intervals
CONFIDENCE = 0.95

_HASH = re.compile(r'(?:^|\s)([a-z2-7]{32})$')


def spack_hash(binary):
    '''The Spack hash at the end of a binary's provenance text (``changes.PROVENANCE``:
    ``"stream@5.10 +openmp ... o3yov74new7ufxl5spxs43ibup7du5rb"``), or None: a Debian
    or PyPI package, or a record written before hashes were recorded.'''
    m = _HASH.search((binary or '').strip())
    return m.group(1) if m else None


def software_series(incident):
    '''The incident's series whose benchmark binary changed with it, each with the old and
    new binary and their Spack hashes (None where a side is not a Spack build), and the
    others with the reason they cannot be split: ``(splittable, reasons)``.'''
    out, reasons = [], []
    for s in incident['series']:
        name = f"{s['partition']} {s['environ']} {s['check']} {s['perf_var']}"
        change = (s.get('changed') or {}).get('binary')
        if not change:
            reasons.append(f'{name}: its binary did not change with the incident: nothing to '
                           'split (a system change alone)')
            continue
        before, after = change
        if len(before) != 1 or len(after) != 1:
            reasons.append(f'{name}: {len(before)} binaries before and {len(after)} after the '
                           'change point: no single previous build to rebuild')
            continue
        out.append(dict(s, old_binary=before[0], new_binary=after[0],
                        old_hash=spack_hash(before[0]), new_hash=spack_hash(after[0])))
    return out, reasons


def rounds_for(noise, regression, min_effect, confidence=CONFIDENCE, lo=MIN_ROUNDS,
               hi=MAX_ROUNDS):
    '''Rounds enough for the series: the smallest n (``lo``..``hi``) at which the interval of
    a paired effect (noise ``noise``, relative, on each run) is at most half the tolerance
    wide either side -- small enough to tell present from absent. Unknown noise: ``hi``.'''
    from scipy.stats import t

    if not noise or not math.isfinite(noise):
        return hi
    half = tolerance(regression, min_effect) / 2
    sd = math.sqrt(2) * noise
    for n in range(lo, hi + 1):
        if t.ppf(0.5 + confidence / 2, n - 1) * sd / math.sqrt(n) <= half:
            return n
    return hi


#: the share of the regression (log scale) an effect must explain to be present
SHARE = 0.25


def tolerance(regression, min_effect):
    '''The size (relative, on the worse side) an effect must reach to be present and stay
    under to be absent: ``min_effect``, or a quarter of the regression on the log scale
    where that is larger.'''
    share = math.expm1(SHARE * abs(math.log1p(regression))) if regression > -1 else 1.0
    return max(min_effect, share)


def _worse_log(x, worse):
    '''A relative change as its size on the log scale, positive on the worse side.'''
    if x <= -1:                     # a value of zero: infinitely worse where higher is better
        return math.inf if worse < 0 else -math.inf
    return worse * math.log1p(x)


def _interval(x, confidence):
    '''(mean, low, high) of the mean of ``x`` (Student t); the ends are None with fewer
    than two values.'''
    import numpy as np
    from scipy.stats import t

    x = np.asarray(x, dtype=float)
    m = float(x.mean())
    if len(x) < 2:
        return m, None, None
    half = float(t.ppf(0.5 + confidence / 2, len(x) - 1) * x.std(ddof=1) / math.sqrt(len(x)))
    return m, m - half, m + half


def _rel(v):
    return None if v is None else math.expm1(v)


def effect(x, confidence=CONFIDENCE):
    '''A relative effect from log ratios ``x``: ``{estimate, low, high}`` (exp - 1).'''
    m, lo, hi = _interval(x, confidence)
    return {'estimate': _rel(m), 'low': _rel(lo), 'high': _rel(hi)}


def judge(e, worse, tol, min_effect):
    '''``present``, ``absent`` or ``unclear`` for an effect (relative, with its interval);
    ``worse`` is -1 where lower values are worse (``better: higher``), +1 otherwise;
    ``tol`` is :func:`tolerance`'s threshold (at least ``min_effect``).'''
    if e['low'] is None:
        return 'unclear'
    t = math.log1p(max(tol, min_effect))
    near, far = sorted((_worse_log(e['low'], worse), _worse_log(e['high'], worse)))
    if near > 0 and _worse_log(e['estimate'], worse) >= t:
        return 'present'
    if far < t:
        return 'absent'
    return 'unclear'


def decide(old, new, before, after, better, min_effect, confidence=CONFIDENCE):
    '''The verdict of one series from the rounds' values of the old and the new build
    (lists of equal length, paired by round), the series' levels ``before`` and ``after``
    its change point and its direction ``better``. A dict: ``verdict``, ``reason``,
    ``software`` and ``system`` (effects with intervals and their reading), ``regression``
    (after / before - 1), ``today`` (new build today / ``after`` - 1), ``rounds``, the
    values.'''
    import numpy as np

    if better not in ('higher', 'lower'):
        raise ValueError(f'better is {better!r}: a series without a direction has no '
                         'regression to split')
    if len(old) != len(new):
        raise ValueError(f'{len(old)} runs of the old build, {len(new)} of the new: rounds '
                         'pair one of each')
    worse = -1 if better == 'higher' else 1
    lo, ln = np.log(np.asarray(old, dtype=float)), np.log(np.asarray(new, dtype=float))
    regression = after / before - 1
    tol = tolerance(regression, min_effect)
    soft = effect(ln - lo, confidence)
    syst = effect(lo - math.log(before), confidence)
    today = effect(ln - math.log(after), confidence)
    soft['reading'] = judge(soft, worse, tol, min_effect)
    syst['reading'] = judge(syst, worse, tol, min_effect)
    out = {'rounds': len(old), 'old': [float(v) for v in old], 'new': [float(v) for v in new],
           'before': before, 'after': after, 'better': better, 'regression': regression,
           'tolerance': tol, 'min_effect': min_effect, 'confidence': confidence,
           'software': soft, 'system': syst, 'today': today}
    # the new build today: at the old level rather than the new one, the regression did not
    # come back on this node
    new_level = _rel(float(ln.mean()) - math.log(before))
    if len(old) >= 2 and abs(new_level) < tol and abs(regression) > 2 * abs(new_level):
        out['verdict'] = 'inconclusive'
        out['reason'] = (f'not reproduced: the new build measures {new_level:+.1%} from the '
                         f'level before the change (the regression was {regression:+.1%})')
        return out
    verdict = {('present', 'absent'): 'software', ('absent', 'present'): 'system',
               ('present', 'present'): 'both'}.get((soft['reading'], syst['reading']))
    out['verdict'] = verdict or 'inconclusive'
    out['reason'] = reason(out)
    return out


def _fmt(e):
    if e['low'] is None:
        return f"{e['estimate']:+.1%} (no interval: one round)"
    return f"{e['estimate']:+.1%} ({e['low']:+.1%} to {e['high']:+.1%})"


def _worse_side(r):
    '''The tolerance as a change on the series' worse side: a fall where higher is better
    (a quarter of a 96% fall on the log scale is a fall of 56%, not a rise of 126%).'''
    return -r['tolerance'] / (1 + r['tolerance']) if r['better'] == 'higher' else r['tolerance']


def reason(r):
    '''One sentence for people: the verdict and the two effects that made it.'''
    soft, syst = r['software'], r['system']
    head = {'software': 'the old build is back at the old level',
            'system': 'both builds are at the new level',
            'both': 'the build and the system each cost part of it',
            'inconclusive': 'the intervals are too wide to tell'}[r['verdict']]
    return (f"{head}: software (new/old build today) {_fmt(soft)}, {soft['reading']}; "
            f"system (old build today / before) {_fmt(syst)}, {syst['reading']}; "
            f"regression {r['regression']:+.1%}, tolerance {_worse_side(r):+.1%}, "
            f"{r['rounds']} rounds, {r['confidence']:.0%} intervals")


def overall(verdicts):
    '''The incident's verdict from its series' verdicts: the one its conclusive series
    (software, system, both) share, else ``mixed`` (each series says its own); none
    conclusive: ``inconclusive``. A series whose intervals were too wide contradicts no
    one: an incident's series are mostly the metrics of the same runs (STREAM's four
    kernels, one job), and where three of them show both builds at the new level the
    fourth's wide interval is no evidence of another cause -- it is counted and shown
    (:func:`tally`), not voted.'''
    kinds = {v for v in verdicts if v != 'inconclusive'}
    if not kinds:
        return 'inconclusive'
    return kinds.pop() if len(kinds) == 1 else 'mixed'


def tally(verdicts):
    '''How the series voted, for people: ``"3 of 4 series; 1 inconclusive"`` (empty where
    every series says the incident's verdict).'''
    verdicts = list(verdicts)
    counts = {v: verdicts.count(v) for v in dict.fromkeys(verdicts)}
    if len(counts) <= 1:
        return ''
    return '; '.join(f'{n} {v}' for v, n in counts.items())
