'''Suspects: nodes worse than the fleet (or than their own history) by at least the minimum
effect -- outliers among the nodes too, unless gross (those a retest decides). They are
measured again, interleaved with a healthy node near the median, and judged on all their
runs by a sequential probability ratio test (Wald's SPRT), which stops as soon as the
deficit is confirmed or excluded at the error rates the operator sets (``alpha``: a
healthy node drained; ``beta``: a node short by the minimum effect passed), within a bound
on extra jobs.

The measurements are compared as logarithms (a ratio is a difference), oriented so that a
negative value is worse: ``ln(suspect / healthy)`` for higher-is-better figures.

Noise: the standard deviation of one measurement of one node, estimated from *repeated runs
of the same nodes* (successive differences of each node's own series: the store's history
and this session's repeated jobs), robustly (1.4826 x MAD, so a node that changed once does
not inflate it). Where too few repeated runs exist yet, the spread of this run across nodes
stands in (it holds the nodes' real differences as well: larger, so slower to decide, never
quicker), and the verdict says which was used.

This module keeps the per-node bookkeeping (which nodes are suspects, their buddy, their
paired observations round after round, the verdicts); the test's mathematics and the sizing
of the runs are :mod:`.sequential`'s.
'''
import dataclasses
import json
import math

import numpy as np
from scipy import stats

from .sequential import (MAX_LENGTH, MIN_PAIRED, Z_CONFIDENCE, decide, level_decidable,
                         level_error, noise, pairs_to_decide, to_decide)


def lengthenable(session):
    '''{check class: its declared length knobs} from the records' ``meta.length`` (what a
    check says makes its run longer: ``MdxBenchTest.lengthen``).'''
    out = {}
    for check, meta in session.select('check', 'meta').unique().iter_rows():
        knobs = (json.loads(meta or '{}').get('length') or {}).get('knobs')
        if knobs:
            out[check.split()[0]] = knobs
    return out


def undecidable(history, effect, alpha, beta, budget, cap=MAX_LENGTH):
    '''The figures whose run-to-run noise, known from the history's repeated runs, is too
    large for any suspect of them to be decided within ``budget`` extra jobs, even with
    runs ``cap`` times as long: ``[{key, check, noise, need, capacity, min_effect}]``
    (``need``: paired runs of the check's own length the test needs; ``capacity``: what
    the budget gives one suspect, its rounds at the longest length; ``min_effect``: the
    least effect that capacity decides). Said before the first run, not after it.'''
    if history is None or history.is_empty():
        return []
    better = {_key(c, v): b for c, v, b in history.select('check', 'perf_var', 'better')
              .unique().iter_rows()}
    rounds = budget                     # a round, every suspect and their buddy, is one job
    capacity = rounds * cap
    z = stats.norm.ppf(1 - alpha) + stats.norm.ppf(1 - beta)
    out = []
    for key, nodes in sorted(_series(history, better).items()):
        nz = noise(_own_length(nodes), [])
        if nz is None or capacity < 1:
            continue
        sigma_pair = nz.sigma * math.sqrt(2)
        need = pairs_to_decide(sigma_pair, effect, alpha, beta)
        if need <= capacity:
            continue
        out.append({'key': key, 'check': key.split()[0], 'noise': nz, 'need': need,
                    'capacity': capacity,
                    'min_effect': 1 - math.exp(-z * sigma_pair / math.sqrt(capacity))})
    return out


def oriented_log(value, better):
    '''ln(value), negated where lower is better: larger is always better.'''
    if value is None or value <= 0 or better not in ('higher', 'lower'):
        return None
    return math.log(value) if better == 'higher' else -math.log(value)


def pick_buddy(candidates, keys, first):
    '''The healthy node nearest the nodes' median on the suspects' figures: the one whose
    oriented logs of ``keys`` are closest to the medians in ``first`` ({key: {node:
    oriented log}}). ``candidates``: nodes that may serve (passed, not suspect).'''
    medians = {key: float(np.median(list(first[key].values()))) for key in keys
               if first.get(key)}
    near = [(sum(abs(first[key][node] - medians[key]) for key in keys), node)
            for node in candidates
            if all(node in (first.get(key) or {}) for key in keys)]
    # (equally near: the first by name)
    return min(near)[1] if near else None


# --- the suspects of one acceptance run ----------------------------------------------
def now():
    '''The start of a round (records completed after it belong to it).'''
    import datetime as dt

    # whole seconds, as the perflogs stamp completion times
    return dt.datetime.now(dt.timezone.utc).replace(microsecond=0)


def _key(check, perf_var):
    return f'{check} {perf_var}'


def first_run(found):
    '''{key: {node: oriented log}} of the figures the verdicts judged, and their direction
    (``{key: better}`` under the key ``None``).'''
    first, better = {}, {}
    for v in found:
        for m in v['measurements']:
            o = oriented_log(m['value'], m.get('better'))
            if o is not None:
                key = _key(m['check'], m['perf_var'])
                first.setdefault(key, {})[v['node']] = o
                better[key] = m['better']
    first[None] = better
    return first


def length_factor(meta):
    '''How many times its own length the record's run was (``meta.length.factor``; 1 where
    the record says nothing).'''
    if not meta:
        return 1.0
    try:
        f = float(((json.loads(meta) or {}).get('length') or {}).get('factor') or 1)
    except (ValueError, TypeError, AttributeError):
        return 1.0
    # (never shorter than the check's own: a factor below 1 is none)
    return max(f, 1.0)


def _series(df, key_better):
    '''{key: {node: [(time, oriented log, length factor), ...]}} of a records table.'''
    out = {}
    if df is None or df.is_empty():
        return out
    cols = ['time', 'check', 'perf_var', 'value', 'nodes'] + \
        (['meta'] if 'meta' in df.columns else [])
    for r in df.sort('time').select(cols).iter_rows(named=True):
        key = _key(r['check'], r['perf_var'])
        o = oriented_log(r['value'], key_better.get(key))
        if o is not None:
            out.setdefault(key, {}).setdefault(r['nodes'], []).append(
                (r['time'], o, length_factor(r.get('meta'))))
    return out


def _own_length(nodes):
    '''{(node, factor): [ln value x sqrt(factor), ...]}: each node's runs of one length as
    a series of their own -- a run made f times as long is no repetition of a run of the
    check's own length (HPL at twice N runs faster: its level moves) -- scaled so that
    their differences are those of runs of the check's own length (a run f times as long
    varies 1/sqrt(f) as much).'''
    out = {}
    for node, s in nodes.items():
        for _, o, f in sorted(s):
            out.setdefault((node, f), []).append(o * math.sqrt(f))
    return out


def history_levels(history, key_better):
    '''{key: {node: (the node's earlier level relative to the fleet, its earlier runs)}}:
    the median of its earlier oriented logs minus the median of all nodes' medians (a
    shift of the whole fleet -- a loaded filesystem, a slower day -- moves no node against
    its own level), and how many runs that median is of.'''
    levels = {}
    for key, nodes in _series(history, key_better).items():
        # of runs of the check's own length: the suspects' longer runs have levels of theirs
        own = {n: r for n, s in nodes.items() if (r := [o for _, o, f in s if f == 1])}
        med = {n: float(np.median(r)) for n, r in own.items()}
        if len(med) >= 2:
            fleet = float(np.median(list(med.values())))
            levels[key] = {n: (m - fleet, len(own[n])) for n, m in med.items()}
    return levels


def find(found, effect, history, testable, noise_of=None, alpha=0.01, beta=0.05):
    '''{node: [case, ...]}: passed nodes worse than the nodes' median by at least
    ``effect`` on a figure (``why`` 'fleet'), or than their own earlier level relative to
    the fleet (``why`` 'history') -- where that level is known well enough to decide on:
    its error beside a node of the fleet's usual history (:func:`level_error`, at the
    figure's noise of repeated runs in ``noise_of``) must let ``effect`` be told from none
    (:func:`level_decidable`). A level of one or two noisy runs is no level: the node's
    reading against it is as noisy as the reading itself, and no paired run settles it.'''
    first = first_run(found)
    better = first[None]
    levels = history_levels(history, better)
    cases = {}
    for v in found:
        if v['verdict'] != 'pass' or v['node'] not in testable:
            continue
        for m in v['measurements']:
            key = _key(m['check'], m['perf_var'])
            o = first.get(key, {}).get(v['node'])
            if o is None:
                continue
            case = {'key': key, 'check': m['check'], 'perf_var': m['perf_var'],
                    'better': m['better'], 'unit': m['unit'], 'first': m['value'],
                    'nodes_median': m['nodes_median'], 'runs': [], 'buddy_runs': [], 'x': [],
                    'decision': None, 'baseline': 0.0}
            fleet_now = o - float(np.median(list(first[key].values())))
            level = levels.get(key, {}).get(v['node'])
            own, runs = level if level else (None, None)
            nz = (noise_of or {}).get(key)
            if own is not None and (nz is None or nz.source != 'repeated runs' or
                                    not level_decidable(level_error(nz.sigma, runs, float(
                                        np.median([k for _, k in levels[key].values()]))),
                                        effect, alpha, beta)):
                own = None
            if (m.get('deficit') or 0) >= effect:
                case.update(why='fleet', deficit_first=m['deficit'])
            elif own is not None and 1 - math.exp(fleet_now - own) >= effect:
                case.update(why='history', deficit_first=1 - math.exp(fleet_now - own),
                            level=own, level_runs=runs, levels=levels[key])
            else:
                continue
            cases.setdefault(v['node'], []).append(case)
    return cases


def noises(session, history, first, chosen=()):
    '''{key: Noise} of every figure of the run: repeated runs of the same nodes (the
    history's and this session's), else this run's spread across nodes. The first run of
    a node in ``chosen`` (a suspect: chosen for coming out low) is left out, as from the
    test: its difference to the next run is the selection as much as the noise.'''
    better = first[None]
    series = _series(history, better)
    for key, nodes in _series(session, better).items():
        for node, s in nodes.items():
            series.setdefault(key, {}).setdefault(node, []).extend(
                s[1:] if node in chosen else s)
    out = {}
    for key, fleet in ((k, f) for k, f in first.items() if k is not None):
        nz = noise(_own_length(series.get(key, {})), list(fleet.values()))
        if nz is not None:
            out[key] = nz
    return out


def update(cases, session, rounds, node, buddy, noise_of, effect, seq, lengths=None):
    '''Add the last round's paired observation to each undecided case of ``node`` and
    decide it again. ``lengths``: {check class: length} of the round's runs (1: the
    check's own length).'''
    better = {c['key']: c['better'] for c in cases}
    series = _series(session, better)
    for c in cases:
        if c['decision'] is not None and c['decision'].state != 'undecided':
            continue
        s = series.get(c['key'], {})
        mine = [o for t, o, _ in s.get(node, []) if t >= rounds[-1]]
        theirs = [o for t, o, _ in s.get(buddy, []) if t >= rounds[-1]]
        if not mine or not theirs or c['key'] not in noise_of:
            continue            # a job that measured nothing: its failure says why
        baseline, tau = 0.0, 0.0
        if c['why'] == 'history':
            # against the pair's earlier ratio: the buddy's own level too, where known (else
            # the fleet's median, known about as well as a node's level); that baseline's
            # error is shared by every paired run
            theirs_level, theirs_runs = c['levels'].get(buddy, (0.0, c['level_runs']))
            baseline = c['level'] - theirs_level
            tau = level_error(noise_of[c['key']].sigma, c['level_runs'], theirs_runs)
        c['baseline'], c['tau'] = baseline, tau
        c['runs'].append(_value(mine[-1], c['better']))
        c['buddy_runs'].append(_value(theirs[-1], c['better']))
        c['x'].append(mine[-1] - theirs[-1] - baseline)
        c.setdefault('lengths', []).append((lengths or {}).get(c['check'].split()[0], 1))
        c['noise'] = noise_of[c['key']]
        # a paired ratio holds the noise of two measurements; and it is at least as noisy
        # as this pair's own ratios have been (seen: a node whose paired runs moved 18%
        # while the fleet's repeated runs said 2%, confirmed at 19% on two runs) -- both
        # of runs of the check's own length; a run f times as long: sigma / sqrt(f)
        f, x = np.asarray(c['lengths']), np.asarray(c['x'])
        sigma = c['noise'].sigma * math.sqrt(2)
        if len(x) >= 2:
            mean = float(np.sum(f * x) / np.sum(f))
            sigma = max(sigma, math.sqrt(float(np.sum(f * (x - mean) ** 2)) / (len(x) - 1)))
        c['sigma_pair'] = sigma
        d = decide(x, sigma / np.sqrt(f), effect, seq.alpha, seq.beta, tau)
        if len(c['x']) < MIN_PAIRED:
            d = dataclasses.replace(d, state='undecided')
        if c['noise'].source != 'repeated runs':
            # one run's spread across nodes can be far smaller than a node's run-to-run
            # noise (seen: 3% across 8 nodes, 11% between two runs of one): nothing is
            # decided on it
            d = dataclasses.replace(d, state='undecided')
        c['decision'] = d


def _value(o, better):
    return math.exp(o) if better == 'higher' else math.exp(-o)


def state(cases):
    '''A node's state from its cases: confirmed on any figure, excluded on all, else
    undecided.'''
    states = [c['decision'] and c['decision'].state for c in cases]
    if 'confirmed' in states:
        return 'confirmed'
    return 'excluded' if all(s == 'excluded' for s in states) else 'undecided'


def settle(v, cases, buddy, effect, seq, why_undecided):
    '''The node's verdict from its cases, each explained: fail on a confirmed deficit,
    pass where every deficit is excluded, else undecided (neither passed nor drained:
    its own verdict and exit status, and what would decide it).'''
    v['suspect'] = []
    for c in cases:
        d = c['decision']
        origin = (f"{c['deficit_first']:.0%} below the nodes' median" if c['why'] == 'fleet'
                  else f"{c['deficit_first']:.0%} below its own earlier level, the median of "
                       f"{c['level_runs']} run(s)" + (f", the pair's known to \u00b1{c['tau']:.1%}"
                                                      if c.get('tau') else ''))
        text = (f"{c['key']}={c['first']:.4g} {c['unit']}: suspect ({origin}); "
                + (f'paired with {buddy}: ' + d.describe(effect, seq.alpha, seq.beta)
                   + f"; {c['noise'].describe()}"
                   + (f"; its paired runs spread more ({c['sigma_pair']:.1%})"
                      if c['sigma_pair'] > c['noise'].sigma * math.sqrt(2) * 1.0001 else '')
                   if d else
                   f"not measured again: {why_undecided or 'no paired run'}"))
        longest = max(c.get('lengths') or [1])
        if d and longest > 1:
            first_long, n = next(i for i, f in enumerate(c['lengths'], 1) if f > 1), \
                len(c['lengths'])
            which = f'paired run {n}' if first_long == n else f'paired runs {first_long}-{n}'
            text += (f"; its noise too large to decide in the budget at the check's length: "
                     f"{which} made up to {longest}x as long "
                     f"({c['key'].split()[0]}.length_factor)")
        if d and d.state == 'undecided':
            text += ('; nothing decided before the noise came from repeated runs'
                     if c['noise'].source != 'repeated runs' else
                     f'; nothing decided on fewer than {MIN_PAIRED} paired runs'
                     if len(c['x']) < MIN_PAIRED else '')
            text += f'; {why_undecided}' if why_undecided else ''
            # (a decided case has had a paired run: update() set its sigma_pair)
            text += '; ' + to_decide(c['key'].split()[0], c['sigma_pair'], len(c['x']), effect,
                                     seq.alpha, seq.beta, c.get('tau', 0.0))
        v['suspect'].append({
            'key': c['key'], 'why': c['why'], 'first': c['first'],
            'deficit_first': c['deficit_first'], 'buddy': buddy, 'runs': c['runs'],
            'buddy_runs': c['buddy_runs'], 'baseline': c['baseline'],
            'baseline_error': c.get('tau', 0.0),
            'state': d.state if d else 'undecided',
            'deficit': d.deficit if d else None,
            'interval': list(d.interval) if d else None,
            'llr': d.llr if d else None, 'bounds': list(d.bounds) if d else None,
            'noise': dataclasses.asdict(c['noise']) if d else None,
            'sigma_pair': c.get('sigma_pair'), 'lengths': c.get('lengths', []),
            'explain': text})
        if d and d.state == 'confirmed':
            v['reasons'].append(text)
            v['keys'].append(c['key'])
        else:
            v.setdefault('notes', []).append(text)
    st = state(cases)
    v['before_suspects'] = v['verdict']
    v['verdict'] = 'fail' if st == 'confirmed' else 'pass' if st == 'excluded' else 'undecided'


def explain(found, noise_of, effect):
    '''Every verdict explains itself: each figure's deficit against the nodes' median with
    an interval from the figure's noise, and the node's ``why``.'''
    half = Z_CONFIDENCE
    for v in found:
        for m in v['measurements']:
            nz = noise_of.get(_key(m['check'], m['perf_var']))
            o, med = oriented_log(m['value'], m.get('better')), \
                oriented_log(m['nodes_median'], m.get('better'))
            if nz is None or o is None or med is None:
                continue
            delta = o - med
            m['interval'] = [1 - math.exp(delta + half * nz.sigma),
                             1 - math.exp(delta - half * nz.sigma)]
            m['noise'] = dataclasses.asdict(nz)
        if v['verdict'] == 'not tested':
            v['why'] = 'not tested: ' + '; '.join(v['reasons'])
        elif v['verdict'] == 'fail':
            v['why'] = 'fail: ' + '; '.join(v['reasons'])
        elif v['verdict'] == 'undecided':
            v['why'] = 'undecided: ' + '; '.join(s['explain'] for s in v['suspect'])
        elif v.get('suspect'):
            v['why'] = 'pass: ' + '; '.join(s['explain'] for s in v['suspect'])
        else:
            v['why'] = (f"pass: every figure within {effect:.0%} of the nodes' median and "
                        f"its reference")
