'''Suspects of node acceptance: the noise from repeated runs, the sequential test, and who
is a suspect (series generated with known noise; the integration test runs real nodes).'''
import json
import math
import types

import numpy as np
import pytest

from mdxbench.post.fleet import sequential, suspects


def test_noise_comes_from_repeated_runs_and_ignores_a_node_that_changed_once():
    rng = np.random.default_rng(1)
    sigma = 0.05
    series = {f'n{i}': list(rng.normal(math.log(40 + i), sigma, 4)) for i in range(8)}
    # a node that became a third slower after its second run: one large difference
    series['n0'][2:] = [v + math.log(2 / 3) for v in series['n0'][2:]]
    nz = sequential.noise(series, fleet_logs=[math.log(40 + i) for i in range(8)])
    assert nz.source == 'repeated runs' and nz.n == 8 * 3
    assert nz.sigma == pytest.approx(sigma, rel=0.35)
    # one run only: the spread across nodes stands in, and says so
    nz = sequential.noise({n: s[:1] for n, s in series.items()}, [math.log(v) for v in
                                                                (38, 40, 42, 45, 51, 57)])
    assert nz.source == 'fleet spread' and nz.n == 6
    assert 'too few repeated runs' in nz.describe()


def _sprt_runs(deficit, n_seq, sigma=0.10, effect=0.2, alpha=0.01, beta=0.05, cap=200,
               seed=7, decide=sequential.decide):
    """Run ``n_seq`` sequential tests to their end on paired log ratios of a node short by
    ``deficit`` (noise ``sigma``): the count of each final state, and the mean length."""
    rng = np.random.default_rng(seed)
    ends, lengths = {'confirmed': 0, 'excluded': 0, 'undecided': 0}, []
    for _ in range(n_seq):
        x = []
        while True:
            x.append(rng.normal(math.log(1 - deficit), sigma))
            d = decide(x, sigma, effect, alpha=alpha, beta=beta)
            if d.state != 'undecided' or len(x) == cap:
                break
        ends[d.state] += 1
        lengths.append(len(x))
    return ends, float(np.mean(lengths))


# Wald's bounds keep the error rates at most alpha / (1 - beta) = 1.05% (a healthy node
# confirmed short) and beta / (1 - alpha) = 5.05% (a node short by exactly the effect
# excluded). The tests run where those bounds are nearly reached: a paired-ratio noise of
# 30% against an effect of 20% (a step of 0.74 sigma, so little overshoot; at 10% noise
# one observation jumps past the bounds and the rates fall to 0.1% and 1.4%, too far below
# them to tell a wrong bound). 4,000 sequences tell 1% from 2.5%: 40 +- 6.3 against
# 100 +- 9.9. Measured here (2,000 sequences): healthy confirmed 0.8%, boundary excluded
# 3.6%; with alpha and beta swapped in decide's bounds 3.7% and 0.8%: both tests fail then
# (checked by hand once, and test_swapped_bounds_are_caught does it on every run).
N_SEQ = 4000
NOISY = 0.30


def test_a_healthy_node_is_confirmed_short_at_most_at_the_rate_alpha():
    ends, _ = _sprt_runs(0.0, N_SEQ, sigma=NOISY)
    assert ends['undecided'] <= 2, ends
    assert ends['confirmed'] <= 60, ends          # <= 1.5%: alpha is 1%


def test_a_node_short_by_exactly_the_effect_is_excluded_at_most_at_the_rate_beta():
    """The boundary: deficit = effect, where the test confirms with 1 - beta."""
    ends, _ = _sprt_runs(0.2, 2000, sigma=NOISY, seed=11)
    assert ends['undecided'] <= 1, ends
    # beta 5%: at most 5.5% (110; 100 +- 9.7 at a true 5%); and not the 1% of alpha
    # (swapped bounds): at least 2%
    assert 40 <= ends['excluded'] <= 110, ends


@pytest.mark.parametrize('deficit, expect', [(0.35, 'confirmed'), (-0.05, 'excluded')])
def test_away_from_the_boundary_the_test_decides_right_and_fast(deficit, expect):
    ends, mean_len = _sprt_runs(deficit, 1000, seed=3)
    assert ends[expect] >= 998, ends
    assert mean_len < 4, mean_len


def test_swapped_bounds_are_caught():
    """A decide() with alpha and beta swapped in its bounds -- the mistake the tests above
    must catch -- confirms healthy nodes at about beta's rate: past the limit."""
    from scipy import stats

    def swapped(x, sigma, effect, alpha, beta):
        d = sequential.decide(x, sigma, effect, alpha, beta)
        upper, lower = math.log((1 - alpha) / beta), math.log(alpha / (1 - beta))
        st = 'confirmed' if d.llr >= upper else 'excluded' if d.llr <= lower else 'undecided'
        return type(d)(st, d.n, d.deficit, d.interval, d.llr, (lower, upper))

    # the limits of the two tests above, on fewer sequences (1.5% and 2% of 1,500)
    ends, _ = _sprt_runs(0.0, 1500, sigma=NOISY, decide=swapped)
    assert ends['confirmed'] > 22, ends
    ends, _ = _sprt_runs(0.2, 1500, sigma=NOISY, seed=11, decide=swapped)
    assert ends['excluded'] < 30, ends
    # and the llr itself is the normal likelihood ratio
    x = [-0.1, -0.25, 0.02]
    d = sequential.decide(x, 0.1, 0.2, alpha=0.01, beta=0.05)
    mu1 = math.log(0.8)
    assert d.llr == pytest.approx(sum(stats.norm.logpdf(v, mu1, 0.1) - stats.norm.logpdf(v, 0, 0.1)
                                      for v in x), rel=1e-12)
    assert d.bounds == pytest.approx((math.log(0.05 / 0.99), math.log(0.95 / 0.01)))


def test_the_deficit_interval_agrees_with_an_independent_computation_and_covers():
    """The interval of a decision against scipy's normal interval of the mean (known
    sigma) on the log scale, to 1e-12; and over 4,000 generated samples it holds the true
    deficit 95% of the time (an interval of the wrong width misses this: 90% or 99%)."""
    from scipy import stats

    rng = np.random.default_rng(5)
    covered, sigma, true = 0, 0.08, 0.15
    for i in range(N_SEQ):
        n = 2 + i % 7
        x = rng.normal(math.log(1 - true), sigma, n)
        d = sequential.decide(x, sigma, 0.2, alpha=0.01, beta=0.05)
        lo, hi = stats.norm.interval(0.95, loc=float(np.mean(x)), scale=sigma / math.sqrt(n))
        assert d.interval == pytest.approx((1 - math.exp(hi), 1 - math.exp(lo)), abs=1e-12)
        assert d.deficit == pytest.approx(1 - math.exp(float(np.mean(x))), abs=1e-12)
        covered += d.interval[0] <= true <= d.interval[1]
    # 95% of 4,000: 3,800 +- 14
    assert 3745 <= covered <= 3855, covered


def test_a_decision_gives_the_deficit_with_its_interval():
    x = [math.log(0.7), math.log(0.68), math.log(0.72)]
    d = sequential.decide(x, 0.05, 0.2, alpha=0.01, beta=0.05)
    assert d.state == 'confirmed' and d.n == 3
    assert d.deficit == pytest.approx(0.30, abs=0.01)
    low, high = d.interval
    assert low < d.deficit < high and high - low < 0.15
    assert d.llr >= d.bounds[1]
    assert 'deficit +30.0% over 3 paired run(s)' in d.describe(0.2, 0.01, 0.05)


def _verdict(node, value, median, better='higher', check='HpccHpl', perf_var='gflops'):
    worse = (median - value) if better == 'higher' else (value - median)
    return {'node': node, 'verdict': 'pass', 'reasons': [], 'keys': [],
            'measurements': [{'check': check, 'perf_var': perf_var, 'value': value,
                              'unit': 'GFLOPS', 'result': 'pass', 'better': better,
                              'nodes_median': median, 'outlier': False,
                              'deficit': worse / median}]}


def test_a_nodes_figures_are_each_judged_whatever_comes_before():
    '''A node's first figure has no direction (nothing to be worse on), its second is at
    the nodes' median (no suspect of it); its third, 27% below the median, still makes it
    a suspect.'''
    found = [_verdict(n, v, 41) for n, v in {'a': 42, 'b': 44, 'c': 30, 'd': 41}.items()]
    for v in found:
        m = v['measurements'][0]
        v['measurements'][:0] = [dict(m, perf_var='errors', better=None, deficit=None),
                                 dict(m, perf_var='rmax', value=41, deficit=0.0)]
    cases = suspects.find(found, 0.2, None, ['a', 'b', 'c', 'd'])
    assert list(cases) == ['c'] and [c['perf_var'] for c in cases['c']] == ['gflops']


def test_suspects_are_nodes_worse_by_the_minimum_effect_and_nodes_below_their_own_level():
    from mdxbench.post.store import records

    values = {'a': 42, 'b': 44, 'c': 30, 'd': 41, 'e': 40}
    found = [_verdict(n, v, 41) for n, v in values.items()]
    # no history: only c, 27% below the median, is a suspect (of the fleet)
    cases = suspects.find(found, 0.2, None, list(values))
    assert list(cases) == ['c'] and cases['c'][0]['why'] == 'fleet'
    # b was always the fastest by far (60 against 40): at 44 it is below its own level
    rows = []
    for day in range(3):
        for n, v in {'a': 42, 'b': 60, 'c': 41, 'd': 41, 'e': 40}.items():
            rows.append({'time': f'2026-11-{20 + day}T00:00:00+00:00', 'system': 's',
                         'partition': 'p', 'check': 'HpccHpl', 'perf_var': 'gflops',
                         'value': float(v), 'unit': 'GFLOPS', 'better': 'higher',
                         'nodes': n, 'tags': 'acceptance', 'result': 'pass'})
    history = records.frame(rows)
    key = 'HpccHpl gflops'
    quiet = {key: sequential.Noise(0.01, 'repeated runs', 12)}
    cases = suspects.find(found, 0.2, history, list(values), quiet)
    assert set(cases) == {'b', 'c'}
    assert cases['b'][0]['why'] == 'history' and cases['b'][0]['level_runs'] == 3
    assert cases['b'][0]['deficit_first'] == pytest.approx(1 - (44 / 41) / (60 / 41), abs=0.01)
    # a level no paired run could decide against is no level: of one run each at 8% noise
    # (two nodes' levels differ by 11% from noise alone), or of a noise not known from
    # repeated runs
    one_day = records.frame(rows[:5])
    noisy = {key: sequential.Noise(0.08, 'repeated runs', 12)}
    tau = sequential.level_error(0.08, 1, 1)
    assert not sequential.level_decidable(tau, 0.2, 0.01, 0.05)
    assert set(suspects.find(found, 0.2, one_day, list(values), noisy)) == {'c'}
    assert set(suspects.find(found, 0.2, history, list(values))) == {'c'}
    spread = {key: sequential.Noise(0.01, 'fleet spread', 5)}
    assert set(suspects.find(found, 0.2, history, list(values), spread)) == {'c'}


def test_the_buddy_is_the_healthy_node_nearest_the_median():
    first = {'HpccHpl gflops': {n: math.log(v) for n, v in
                                {'a': 42, 'b': 44, 'c': 30, 'd': 41, 'e': 40}.items()}}
    assert suspects.pick_buddy(['a', 'b', 'd', 'e'], ['HpccHpl gflops'], first) == 'd'
    assert suspects.pick_buddy([], ['HpccHpl gflops'], first) is None


def _rows(day, values, hour=0):
    return [{'time': f'2026-11-{day}T{hour:02d}:00:00+00:00', 'system': 's', 'partition': 'p',
             'check': 'HpccHpl', 'perf_var': 'gflops', 'value': float(v), 'unit': 'GFLOPS',
             'better': 'higher', 'nodes': n, 'tags': 'acceptance', 'result': 'pass'}
            for n, v in values.items()]


def test_nothing_is_decided_on_one_runs_spread_nor_on_one_paired_run():
    """Rounds beside the buddy give paired ratios. After one round nothing is decided:
    without history the noise is still one run's spread across nodes, with history there
    is one paired run only. After two, the repeated runs give the noise and the clear
    deficit is confirmed either way."""
    import datetime as dt

    from mdxbench.post.store import records

    first = {'a': 42, 'b': 44, 'c': 30, 'd': 41, 'e': 40}
    found = [_verdict(n, v, 41) for n, v in first.items()]
    seq = type('Seq', (), {'alpha': 0.01, 'beta': 0.05})
    starts = [dt.datetime(2026, 11, 25, h, tzinfo=dt.timezone.utc) for h in (1, 3)]
    rounds = [_rows(25, {'c': 29, 'd': 41}, hour=2), _rows(25, {'c': 30, 'd': 42}, hour=4)]
    sessions = [records.frame(_rows(25, first) + sum(rounds[:k], [])) for k in (1, 2)]
    history = records.frame(_rows(20, {'a': 42, 'b': 44, 'c': 41, 'd': 40, 'e': 40})
                            + _rows(21, {'a': 43, 'b': 43, 'c': 42, 'd': 41, 'e': 41}))
    for hist, why in ((None, 'nothing decided before the noise came from repeated runs'),
                      (history, 'nothing decided on fewer than 2 paired runs')):
        cases = suspects.find(found, 0.2, None, list(first))
        for k in (1, 2):
            session = sessions[k - 1]
            noise = suspects.noises(session, hist, suspects.first_run(found), chosen={'c'})
            suspects.update(cases['c'], session, starts[:k], 'c', 'd', noise, 0.2, seq)
            [case] = cases['c']
            if k == 1:
                assert case['decision'].state == 'undecided', case['decision']
                assert noise['HpccHpl gflops'].source == (
                    'fleet spread' if hist is None else 'repeated runs')
                v = dict(found[2], reasons=[], keys=[])
                suspects.settle(v, [dict(case)], 'd', 0.2, seq, 'bound reached')
                assert v['verdict'] == 'undecided' and why in v['notes'][0], v['notes']
                assert 'to decide: about ' in v['notes'][0] and 'x as long' in v['notes'][0]
        assert case['runs'] == [pytest.approx(29), pytest.approx(30)]
        assert case['buddy_runs'] == [pytest.approx(41), pytest.approx(42)]
        assert case['decision'].state == 'confirmed', (noise, case['decision'])
        assert noise['HpccHpl gflops'].source == 'repeated runs'
        v = dict(found[2], reasons=[], keys=[])
        suspects.settle(v, cases['c'], 'd', 0.2, seq, 'bound reached')
        assert v['verdict'] == 'fail' and 'deficit of 20% or more confirmed' in v['reasons'][0]
        assert 'repeated-run differences' in v['reasons'][0]


def test_a_pair_whose_own_runs_spread_more_than_the_fleets_noise_is_not_confirmed_on_it():
    '''The CI-like case: the fleet's repeated runs say 2%, the suspect's two paired runs
    were 26% and 11% low. On 2% alone that confirms a 20% deficit; with the pair's own
    spread as the floor of its noise, it needs more runs.'''
    import datetime as dt

    from mdxbench.post.store import records

    first = {'a': 94, 'b': 94, 'c': 45, 'd': 93, 'e': 95}
    found = [_verdict(n, v, 94) for n, v in first.items()]
    seq = type('Seq', (), {'alpha': 0.01, 'beta': 0.05})
    history = records.frame(_rows(20, {'a': 93, 'b': 95, 'c': 94, 'd': 92, 'e': 94})
                            + _rows(21, {'a': 94, 'b': 94, 'c': 95, 'd': 94, 'e': 96}))
    cases = suspects.find(found, 0.2, None, list(first))
    rounds = []
    for hour, (c, d) in enumerate([(69.3, 93.8), (83.2, 93.4)], start=1):
        rounds.append(dt.datetime(2026, 11, 25, hour, tzinfo=dt.timezone.utc))
        session = records.frame(_rows(25, first) + [
            r for h, (cv, dv) in enumerate([(69.3, 93.8), (83.2, 93.4)][:hour], start=1)
            for r in _rows(25, {'c': cv, 'd': dv}, hour=h)])
        noise = suspects.noises(session, history, suspects.first_run(found), chosen={'c'})
        suspects.update(cases['c'], session, rounds, 'c', 'd', noise, 0.2, seq)
    [case] = cases['c']
    assert noise['HpccHpl gflops'].sigma < 0.03
    assert case['sigma_pair'] > 0.1 and case['decision'].state == 'undecided', case


@pytest.mark.parametrize('sigma, effect', [(0.05, 0.1), (0.1, 0.1), (0.13, 0.4), (0.2, 0.2)])
def test_the_pairs_that_would_decide_are_those_of_a_test_with_the_same_errors(sigma, effect):
    """What an undecided node is told it needs: the fewest pairs at which a one-sided test of
    the same alpha has power 1 - beta against the effect, computed apart from the code with
    scipy's normal distribution (power at n, not at n - 1, unless n is the minimum)."""
    from scipy import stats

    alpha, beta = 0.01, 0.05
    n = sequential.pairs_to_decide(sigma, effect, alpha, beta)
    delta = -math.log(1 - effect)

    def power(k):
        return stats.norm.cdf(delta * math.sqrt(k) / sigma - stats.norm.ppf(1 - alpha))

    assert power(n) >= 1 - beta - 1e-9
    assert n == sequential.MIN_PAIRED or power(n - 1) < 1 - beta
    text = sequential.to_decide('FioTarget', sigma, 2, effect, alpha, beta)
    assert f'about {n} paired runs' in text and f'{max(n - 2, 0)} more than these' in text


def test_runs_of_different_lengths_weigh_by_their_length():
    """Issue 44, item 2: paired runs made f times as long have 1/f the variance. The
    sequential test with one sigma per run against scipy's normal log-likelihoods, and the
    deficit's interval against the inverse-variance weighted mean and its standard error,
    computed apart from the code."""
    from scipy import stats

    x = np.array([math.log(0.93), math.log(1.04), math.log(0.97), math.log(0.99)])
    lengths = np.array([1, 1, 4, 4])
    sigma = 0.12 / np.sqrt(lengths)
    d = sequential.decide(x, sigma, 0.1, alpha=0.01, beta=0.05)
    mu1 = math.log(0.9)
    assert d.llr == pytest.approx(float(np.sum(stats.norm.logpdf(x, mu1, sigma)
                                               - stats.norm.logpdf(x, 0, sigma))), rel=1e-12)
    w = 1 / sigma ** 2
    mean, se = float(np.sum(w * x) / np.sum(w)), float(1 / np.sqrt(np.sum(w)))
    lo, hi = stats.norm.interval(0.95, loc=mean, scale=se)
    assert d.deficit == pytest.approx(1 - math.exp(mean), abs=1e-12)
    assert d.interval == pytest.approx((1 - math.exp(hi), 1 - math.exp(lo)), abs=1e-12)
    # one sigma for all: the unweighted test, as before
    same = sequential.decide(x, 0.06, 0.1, alpha=0.01, beta=0.05)
    assert same.deficit == pytest.approx(1 - math.exp(float(np.mean(x))), abs=1e-12)


@pytest.mark.parametrize('sigma, have, left', [(0.05, [1, 1], 4), (0.15, [1, 1], 4),
                                               (0.3, [1, 1], 2), (0.15, [1, 1, 4], 1)])
def test_a_check_runs_longer_only_where_its_noise_cannot_be_decided_within_the_budget(
        sigma, have, left):
    """The next paired runs' length: as they are where ``left`` more pairs at that length
    bring the information the test needs (pairs_to_decide, in runs of the check's own
    length); else the least factor that does, at most MAX_LENGTH, never shorter than the
    runs before. Checked by the information it gives, computed here."""
    alpha, beta, effect = 0.01, 0.05, 0.1
    need = sequential.pairs_to_decide(sigma, effect, alpha, beta)
    f = sequential.lengthening(sigma, have, effect, alpha, beta, left)
    assert isinstance(f, int) and have[-1] <= f <= sequential.MAX_LENGTH
    if sum(have) + left * have[-1] >= need:
        assert f == have[-1]
    elif f < sequential.MAX_LENGTH:
        assert sum(have) + left * f >= need > sum(have) + left * (f - 1)
    else:       # at the cap: the budget would have needed runs at least that long
        assert f == sequential.MAX_LENGTH
        assert sum(have) + left * (f - 1) < need, 'capped where a shorter run would do'
    assert sequential.lengthening(sigma, have, effect, alpha, beta, 0) == have[-1]


@pytest.mark.parametrize('pair', [False, True], ids=['one-node figure', 'pair figure'])
def test_a_noisy_suspect_is_measured_longer_and_the_verdict_says_so(monkeypatch, tmp_path,
                                                                   pair):
    """``accept.decide_suspects``' rounds with a measure of this test's own (records made
    up here, not benchmark output): a fio figure that varies 12% from run to run at the
    check's length and 12%/sqrt(f) at f times it, every node equally fast; mdxnode3's first
    reading came out 15% low. At 12% no budget of short paired runs tells 10% from nothing
    (about 41 pairs), and the history's repeated runs say so before the first paired round:
    FioTarget is asked for longer runs from the first round on (at most MAX_LENGTH), and
    the suspect is cleared on them, saying so. As a pair figure (its records a node's run with a partner), each round also
    has the suspect's pair run with the buddy and the buddy's with a second healthy node,
    said on the round's line."""
    import datetime as dt
    import json

    from mdxbench.post.fleet import accept, jobs, verdicts
    from mdxbench.post.store import records

    rng = np.random.default_rng(44)
    nodes = [f'mdxnode{i}' for i in range(1, 9)]
    meta = json.dumps({'tags': ['acceptance', 'storage'],
                       'length': {'factor': 1, 'knobs': {'runtime': 1}},
                       'variables': {'size': '1G'}, **({'pair_partner': 'mdxnode1'} if pair else {})})
    clock = [dt.datetime(2026, 11, 27, tzinfo=dt.timezone.utc)]
    rows = []

    def measure(which, lengths=None, pairs=()):
        f = (lengths or {}).get('FioTarget', 1)
        asked.append(f)
        paired.append(list(pairs))
        for n in which:
            clock[0] += dt.timedelta(seconds=10)
            rows.append(_fio(n, float(np.exp(rng.normal(0, 0.12 / math.sqrt(f)))),
                             clock[0], meta))

    def frame(rs):
        return verdicts.acceptance_records(records.frame(rs))

    # three earlier passes (the history: noise from repeated runs), then this run's first
    history = []
    for day in range(3):
        for n in nodes:
            history.append(_fio(n, float(np.exp(rng.normal(0, 0.12))),
                                clock[0] - dt.timedelta(days=3 - day), meta))
    # and a week earlier, runs given another file size: another measurement, left out, said
    other = meta.replace('"1G"', '"4G"')
    history += [_fio(n, 2.0, clock[0] - dt.timedelta(days=7), other) for n in nodes]
    asked, paired = [], []
    for n in nodes:
        clock[0] += dt.timedelta(seconds=10)
        rows.append(_fio(n, 0.85 if n == 'mdxnode3' else 1.0 + 0.01 * nodes.index(n),
                         clock[0], meta))
    monkeypatch.setattr(accept, 'session_records', lambda plan, out: frame(rows))
    monkeypatch.setattr(suspects, 'now', lambda: clock[0] + dt.timedelta(seconds=1))
    plan = jobs.Plan('mdx2', 'vc16m32g', 'debug', nodes, {}, [], 1)
    found = verdicts.judge(records.frame(rows), paired=True)
    seq = accept.Sequential(0.01, 0.05, 12, records.frame(history))
    said = []
    accept.decide_suspects(plan, tmp_path, found, 0.1, seq, measure, log=said.append)
    assert said[0] == ('mdxbench accept: history: 8 record(s) of FioTarget from runs given '
                       "other variables than this session's left out (not the same "
                       'measurement)')
    v = {x['node']: x for x in found}['mdxnode3']
    [case] = v['suspect']
    # longer from the first round (the noise known from the history), never shorter, at
    # most 8x: each round's length is the one its paired run is weighed by
    assert all(1 < a <= b <= sequential.MAX_LENGTH for a, b in zip(asked, asked[1:] + [asked[-1]]))
    assert case['lengths'] == asked and len(asked) >= 2
    assert f'paired runs 1-{len(asked)} made up to {max(asked)}x as long ' \
        '(FioTarget.length_factor)' in case['explain'], case['explain']
    assert case['state'] == 'excluded' and v['verdict'] == 'pass', case['explain']
    rounds = [line for line in said if 'suspects measured again' in line]
    assert len(rounds) == len(paired) == len(asked)
    if not pair:
        assert paired == [[]] * len(asked) and not any('pair runs' in r for r in rounds)
    for pairs, line in zip(paired if pair else [], rounds):
        (suspect, buddy), (again, second) = pairs
        assert (suspect, again) == ('mdxnode3', buddy) and second not in (buddy, 'mdxnode3')
        assert line.endswith(f'; pair runs mdxnode3+{buddy}, {buddy}+{second}'), line


def _fio(node, value, when, meta):
    return {'time': when.isoformat(), 'system': 'mdx2', 'partition': 'vc16m32g',
            'environ': 'spack', 'check': 'FioTarget %target=node_local %workload=seqwrite',
            'perf_var': 'bandwidth', 'value': value, 'unit': 'GB/s', 'better': 'higher',
            'ref': None, 'result': 'pass', 'jobid': '1', 'nodes': node,
            'tags': 'acceptance,storage', 'meta': meta}


def test_a_first_paired_round_is_made_longer_only_on_noise_from_repeated_runs():
    """Before any paired run, the noise of repeated runs (history, this session) sizes the
    first paired runs as it sizes later ones; one run's spread across nodes does not (it
    can be far smaller or larger than a node's run-to-run noise)."""
    seq = types.SimpleNamespace(alpha=0.01, beta=0.05)
    case = {'key': 'FioTarget %target=node_local %workload=seqwrite bandwidth',
            'check': 'FioTarget %target=node_local %workload=seqwrite', 'x': []}
    knobs = {'FioTarget': {'runtime': 1}}
    repeated = {case['key']: sequential.Noise(0.03, 'repeated runs', 16)}
    spread = {case['key']: sequential.Noise(0.03, 'fleet spread', 8)}
    # planned at the noise it could be: 3% from 16 differences (0.37 x 16 = 5.92 degrees of
    # freedom) is at most 3% x sqrt(5.92 / chi2(0.05, 5.92)) = 5.78% at 95%; a pair of runs
    # 8.17%; at alpha 0.01, beta 0.05, 10% that needs 10 pairs, 2.5 in each of 4 rounds:
    # runs 3x as long (at the estimate itself, 3 pairs: no longer run at all)
    assert sequential.next_lengths([case], 0.1, seq, 4, knobs, repeated) == {'FioTarget': 3}
    assert sequential.next_lengths([case], 0.1, seq, 4, knobs, spread) == {}
    assert sequential.next_lengths([case], 0.1, seq, 4, {}, repeated) == {}     # no knob


def test_every_undecided_suspect_is_measured_in_each_round_and_a_round_is_one_job(
        monkeypatch, tmp_path):
    """Three suspects on 8 nodes (the default budget: 4 extra jobs). A round -- every
    undecided suspect and the buddy -- is one ``measure`` call, i.e. one job: four rounds
    at most, each with every suspect still undecided, the buddy between them. Two nodes
    were slow only in the first run (cleared on their paired runs), one is slow throughout
    (confirmed): all three decided within the budget. Records made up here (statistics)."""
    import datetime as dt
    import json

    from mdxbench.post.fleet import accept, jobs, verdicts
    from mdxbench.post.store import records

    rng = np.random.default_rng(7)
    nodes = [f'mdxnode{i}' for i in range(1, 9)]
    meta = json.dumps({'tags': ['acceptance', 'storage']})
    clock = [dt.datetime(2026, 11, 27, tzinfo=dt.timezone.utc)]
    rows, history = [], []

    def add(n, v, into=rows):
        clock[0] += dt.timedelta(seconds=10)
        into.append(_fio(n, v, clock[0], meta))

    # the history: two earlier passes, 2% noise a run (the noise of repeated runs)
    for _ in range(2):
        for n in nodes:
            add(n, float(np.exp(rng.normal(0, 0.02))) * (0.7 if n == 'mdxnode5' else 1),
                history)
    slow_now = {'mdxnode2': 0.8, 'mdxnode5': 0.7, 'mdxnode7': 0.85}
    for n in nodes:
        add(n, slow_now.get(n, 1.0) * float(np.exp(rng.normal(0, 0.02))))
    _session(monkeypatch, rows, clock)
    measured = []

    def measure(which, lengths=None, pairs=()):
        measured.append(list(which))
        for n in which:
            add(n, (0.7 if n == 'mdxnode5' else 1.0) * float(np.exp(rng.normal(0, 0.02))))

    plan = jobs.Plan('mdx2', 'vc16m32g', 'debug', nodes, {}, [], 1)
    found = verdicts.judge(records.frame(rows), paired=True, min_effect=0.1)
    seq = accept.Sequential(0.01, 0.05, None, records.frame(history))
    accept.decide_suspects(plan, tmp_path, found, 0.1, seq, measure, log=lambda *a: None)
    v = {x['node']: x for x in found}
    assert accept.default_budget(8) == 4
    assert 2 <= len(measured) <= 4
    # each round: the suspects still undecided, the same healthy buddy between them (after
    # the first half); the first round all three
    buddies = {r[len(r) // 2] for r in measured}
    assert len(buddies) == 1 and not buddies & set(slow_now), measured
    assert sorted(n for n in measured[0] if n not in buddies) == sorted(slow_now)
    assert all(set(b) <= set(a) for a, b in zip(measured, measured[1:])), measured
    assert v['mdxnode5']['verdict'] == 'fail', v['mdxnode5']['suspect']
    assert v['mdxnode2']['verdict'] == v['mdxnode7']['verdict'] == 'pass', \
        (v['mdxnode2']['suspect'], v['mdxnode7']['suspect'])
    assert not any(x['verdict'] == 'undecided' for x in found)


def test_runs_made_longer_neither_move_a_nodes_level_nor_count_as_repetitions():
    """HPL at twice N runs faster: the suspects' longer runs in the history are a series
    of their own -- the node's level relative to the fleet is of runs of the check's own
    length, and the noise is of repetitions at one length (scaled to the check's own)."""
    import datetime as dt
    import json

    from mdxbench.post.store import records

    t0 = dt.datetime(2026, 11, 27, tzinfo=dt.timezone.utc)

    def meta(f):
        return json.dumps({'tags': ['acceptance', 'storage'],
                           'length': {'factor': f, 'knobs': {'runtime': 1}}})

    rows, i = [], 0
    for n in ('a', 'b', 'c', 'd'):
        for f, v in ((1, 1.0), (1, 1.02), (1, 0.98)):
            i += 1
            rows.append(_fio(n, v, t0 + dt.timedelta(seconds=i), meta(f)))
    # node a: two runs 4x as long, at a level 50% higher (a longer run's own level)
    for v in (1.5, 1.52):
        i += 1
        rows.append(_fio('a', v, t0 + dt.timedelta(seconds=i), meta(4)))
    df = records.frame(rows)
    key = 'FioTarget %target=node_local %workload=seqwrite bandwidth'
    levels = suspects.history_levels(df, {key: 'higher'})
    level, runs = levels[key]['a']
    assert abs(level) < 1e-9 and runs == 3    # the median of its own-length runs: 1.0
    assert suspects.length_factor(rows[-1]['meta']) == 4
    assert suspects.length_factor(None) == 1 and suspects.length_factor('{}') == 1
    first = {key: {n: 0.0 for n in 'abcd'}, None: {key: 'higher'}}
    nz = suspects.noises(df, None, first)[key]
    # the 1.0 -> 1.5 step is no repetition: a noise of a few percent, not tens
    assert nz.source == 'repeated runs' and nz.sigma < 0.05, nz
    # 9 differences at the check's own length and one of the 4x runs
    assert nz.n == 4 * 2 + 1


@pytest.mark.parametrize('sigma, budget, warned', [(0.30, 4, True), (0.30, 200, False),
                                                   (0.02, 4, False)])
def test_a_figure_too_noisy_for_the_budget_is_said_before_the_first_run(sigma, budget, warned):
    """With a history whose repeated runs vary ``sigma``, `accept` warns before it runs
    where no suspect of a figure could be decided at --min-effect within the budget, even
    at MAX_LENGTH; the least effect it names is one that budget decides (checked against
    pairs_to_decide), and a smaller one is not. Records made up here (statistics, not
    benchmark output)."""
    import datetime as dt
    import json

    from mdxbench.post.fleet import accept, jobs
    from mdxbench.post.store import records

    rng = np.random.default_rng(7)
    nodes = [f'mdxnode{i}' for i in range(1, 9)]
    meta = json.dumps({'tags': ['acceptance', 'storage']})
    t0 = dt.datetime(2026, 11, 20, tzinfo=dt.timezone.utc)
    rows = [_fio(n, float(np.exp(rng.normal(0, sigma))), t0 + dt.timedelta(days=d), meta)
            for d in range(5) for n in nodes]
    seq = accept.Sequential(0.01, 0.05, budget, records.frame(rows))
    plan = jobs.Plan('mdx2', 'vc16m32g', 'debug', nodes, {}, [], 1)
    lines = accept.noise_warnings(plan, 0.1, seq)
    assert bool(lines) == warned, lines
    if warned:
        [line] = lines
        assert 'FioTarget %target=node_local %workload=seqwrite bandwidth varies' in line
        assert '-S FioTarget.length_factor=F' in line and 'would end undecided' in line
        [u] = suspects.undecidable(verdicts_records(seq.history), 0.1, 0.01, 0.05, budget)
        assert u['capacity'] == budget * sequential.MAX_LENGTH
        sp = u['noise'].sigma * math.sqrt(2)
        assert sequential.pairs_to_decide(sp, u['min_effect'] + 1e-9, 0.01, 0.05) <= \
            u['capacity'] < sequential.pairs_to_decide(sp, u['min_effect'] * 0.9, 0.01, 0.05)
        assert f"--min-effect {u['min_effect']:.0%} or more" in line


def _session(monkeypatch, rows, clock):
    """accept.decide_suspects reads this run's records from ``rows`` (made up by the test)
    and a round starts a second after the clock's last record."""
    import datetime as dt

    from mdxbench.post.fleet import accept, verdicts
    from mdxbench.post.store import records

    monkeypatch.setattr(accept, 'session_records',
                        lambda plan, out: verdicts.acceptance_records(records.frame(rows)))
    monkeypatch.setattr(suspects, 'now', lambda: clock[0] + dt.timedelta(seconds=1))


def verdicts_records(df):
    from mdxbench.post.fleet import verdicts

    return verdicts.acceptance_records(df)


def test_a_budget_too_small_for_two_paired_runs_says_so(monkeypatch, tmp_path):
    """A bound of one extra job (``--max-extra-jobs 1``) gives one paired round, and
    nothing is decided on one paired run. The suspect ends undecided, and its verdict says
    the bound is below the 2 rounds that decide. Records made up here (statistics)."""
    import datetime as dt
    import json

    from mdxbench.post.fleet import accept, jobs, verdicts
    from mdxbench.post.store import records

    nodes = [f'mdxnode{i}' for i in range(1, 8)]
    meta = json.dumps({'tags': ['acceptance', 'storage']})
    clock = [dt.datetime(2026, 11, 27, tzinfo=dt.timezone.utc)]
    rows = []

    def add(n, v):
        clock[0] += dt.timedelta(seconds=10)
        rows.append(_fio(n, v, clock[0], meta))

    for n in nodes:
        add(n, 0.6 if n == 'mdxnode2' else 1.0 + 0.01 * nodes.index(n))   # 42% below
    _session(monkeypatch, rows, clock)
    measured = []

    def measure(which, lengths=None, pairs=()):
        measured.append(list(which))
        for n in which:
            add(n, 1.0)

    plan = jobs.Plan('mdx2', 'vc16m32g', 'debug', nodes, {}, [], 1)
    found = verdicts.judge(records.frame(rows), paired=True, min_effect=0.4)
    seq = accept.Sequential(0.01, 0.05, 1, None)
    accept.decide_suspects(plan, tmp_path, found, 0.4, seq, measure, log=lambda *a: None)
    v = {x['node']: x for x in found}['mdxnode2']
    assert len(measured) == 1 and measured[0][0] == 'mdxnode2'
    assert v['verdict'] == 'undecided', v
    assert 'the bound of 1 extra jobs was reached (fewer than the 2 paired rounds, one job ' \
        'each, anything is decided on: --max-extra-jobs 2 or more)' in v['why'], v['why']


@pytest.mark.parametrize('n', [3, 8, 24, 100])
def test_runs_are_sized_for_the_noise_the_repetitions_could_hide(n):
    """A noise estimated from ``n`` repeated-run differences (1.4826 x MAD / sqrt(2), as
    sequential.noise does) is below the true noise often when ``n`` is small: the planning
    noise, its upper confidence bound, covers the true noise at about PLAN_CONFIDENCE
    (simulated here on normal runs, seeded: 91% at 3 differences, whose MAD is coarse; 95-96%
    from 8 on), shrinks toward the estimate as ``n`` grows, and never falls below it."""
    rng = np.random.default_rng(n)
    true, covered, ratios = 0.1, 0, []
    trials = 2000
    for _ in range(trials):
        runs = {'a': list(rng.normal(0, true, n + 1))}
        nz = sequential.noise(runs, [])
        up = sequential.planning_sigma(nz)
        assert up >= nz.sigma
        covered += up >= true
        ratios.append(up / nz.sigma)
    assert covered / trials >= sequential.PLAN_CONFIDENCE - (0.05 if n < 8 else 0.01), \
        covered / trials
    if n >= 100:
        assert np.median(ratios) < 1.4
    # one run's spread across nodes is taken as it is
    spread = sequential.Noise(0.1, 'fleet spread', 8)
    assert sequential.planning_sigma(spread) == 0.1


def test_an_error_the_pairs_share_is_carried_by_the_test():
    """A history suspect's paired ratios are taken against the pair's earlier levels, an
    estimate whose error every pair shares (tau). With tau the test is on the weighted
    mean of the pairs, variance 1/sum(w) + tau**2 (computed here with scipy); tau 0 is the
    usual sum of the pairs' log likelihood ratios. Simulated healthy nodes (no deficit)
    whose baseline came out off by its error: confirmed at most at about alpha with tau
    carried, several times as often without (the false fail of the bench of 2026-11-27:
    +8.2% "confirmed" against a level of one run)."""
    from scipy import stats

    x, sig, tau, effect = [-0.05, -0.09, -0.07], [0.04, 0.03, 0.03], 0.05, 0.1
    d = sequential.decide(x, sig, effect, 0.01, 0.05, tau)
    w = 1 / np.square(sig)
    mean, se = np.sum(w * x) / np.sum(w), math.sqrt(1 / np.sum(w) + tau ** 2)
    mu1 = math.log(1 - effect)
    assert d.llr == pytest.approx(stats.norm.logpdf(mean, mu1, se) - stats.norm.logpdf(mean, 0, se))
    z = stats.norm.ppf(0.975)
    assert d.interval == pytest.approx([1 - math.exp(mean + z * se), 1 - math.exp(mean - z * se)])
    plain = sequential.decide(x, sig, effect, 0.01, 0.05)
    assert plain.llr == pytest.approx(float(np.sum(stats.norm.logpdf(x, mu1, sig)
                                                   - stats.norm.logpdf(x, 0, sig))))
    # healthy nodes against a baseline known to tau = 4.6% (levels of a few runs at 8%
    # noise): sequential, up to 4 pairs. find() makes no history suspect of such a level
    # (no number of pairs could decide against it at these error rates)
    rng = np.random.default_rng(45)
    alpha, sigma_pair, tau = 0.01, 0.04, 0.046
    assert not sequential.level_decidable(tau, effect, alpha, 0.05)
    assert sequential.pairs_to_decide(sigma_pair, effect, alpha, 0.05, tau) == math.inf
    fails = {True: 0, False: 0}
    trials = 4000
    for _ in range(trials):
        b = rng.normal(0, tau)
        xs = list(b + rng.normal(0, sigma_pair, 4))
        for carried in (True, False):
            for n in range(2, 5):
                dn = sequential.decide(xs[:n], sigma_pair, effect, alpha, 0.05,
                                     tau if carried else 0.0)
                if dn.state != 'undecided':
                    fails[carried] += dn.state == 'confirmed'
                    break
    assert fails[True] / trials <= alpha * 1.5, fails
    assert fails[False] / trials >= 3 * alpha, fails


# -- issue 58: what update() decides for a node below its own earlier level ---------------

#: three earlier passes: b was always the fastest (60 against the fleet's 42), d a little
#: above the fleet (43): their earlier levels, relative to the fleet's median of medians
#: (42), are ln(60/42) and ln(43/42)
LEVELS = {'a': 42, 'b': 60, 'c': 41, 'd': 43, 'e': 40}
FIRST = {'a': 42, 'b': 44, 'c': 30, 'd': 41, 'e': 40}


def _history_case(sigma):
    from mdxbench.post.store import records

    history = records.frame(sum((_rows(20 + day, LEVELS) for day in range(3)), []))
    found = [_verdict(n, v, 41) for n, v in FIRST.items()]
    noise = {'HpccHpl gflops': sequential.Noise(sigma, 'repeated runs', 12)}
    cases = suspects.find(found, 0.2, history, list(FIRST), noise)
    [case] = cases['b']
    # b's first run: 44/41 of the fleet where it used to be 60/42: 25% below its level
    assert case['why'] == 'history'
    assert case['deficit_first'] == pytest.approx(1 - (44 / 41) / (60 / 42), abs=1e-9)
    return cases['b'], noise


def _paired(cases, noise, ratios):
    '''Rounds of b beside its buddy d, at these b/d ratios.'''
    import datetime as dt

    from mdxbench.post.store import records

    seq = types.SimpleNamespace(alpha=0.01, beta=0.05)
    rows, starts = _rows(25, FIRST), []
    for hour, r in enumerate(ratios, start=1):
        starts.append(dt.datetime(2026, 11, 25, hour, tzinfo=dt.timezone.utc))
        rows += _rows(25, {'b': 41.0 * r, 'd': 41.0}, hour=hour)
        suspects.update(cases, records.frame(rows), starts, 'b', 'd', noise, 0.2, seq)
    return cases[0]


def test_a_history_suspect_is_paired_against_both_nodes_earlier_levels_and_their_error():
    """b is measured beside d. Its paired ratios are taken against the pair's earlier
    ratio, 60/43 (both nodes' own levels: b's alone, 60/42, would be another baseline),
    and that baseline, a median of three runs each at 3% noise, is known to
    3% x sqrt(1/3 + 1/3): an error every paired run shares. The test is on the mean of
    the paired runs with that error added to its variance, computed here with scipy."""
    from scipy import stats

    cases, noise = _history_case(0.03)
    ratios = [44.2 / 41, 43.6 / 41]
    case = _paired(cases, noise, ratios)
    assert case['baseline'] == pytest.approx(math.log(60 / 43), abs=1e-12)
    tau = 0.03 * math.sqrt(2 / 3)
    assert case['tau'] == pytest.approx(tau, rel=1e-12)
    x = np.log(ratios) - math.log(60 / 43)
    assert case['x'] == pytest.approx(list(x), abs=1e-12)
    sigma = max(0.03 * math.sqrt(2), float(np.std(x, ddof=1)))
    se = math.hypot(sigma / math.sqrt(2), tau)
    m = float(np.mean(x))
    llr = stats.norm.logpdf(m, math.log(0.8), se) - stats.norm.logpdf(m, 0, se)
    d = case['decision']
    assert d.llr == pytest.approx(llr, rel=1e-9)
    # 44/41 against 60/43: 23% below its level, confirmed (against b's own level alone,
    # 60/42, it would be 25%; with no baseline 7% above, excluded)
    assert d.state == 'confirmed' and d.deficit == pytest.approx(1 - math.exp(m), abs=1e-12)


def test_a_deficit_between_none_and_the_effect_stays_undecided_where_the_baseline_is_uncertain():
    """The false fail of 2026-11-27: a node 12% below its earlier level, the level a
    median of three runs at 3% noise. Five paired runs at 12% would confirm a 20% deficit
    if the baseline were exact (their mean's error shrinks with each run); its own error
    does not, and the node stays undecided -- it is not failed for a deficit the test
    cannot tell from the baseline's error."""
    cases, noise = _history_case(0.03)
    ratios = [math.exp(math.log(60 / 43) + math.log(0.88) + e)
              for e in (0.004, -0.003, 0.002, -0.004, 0.001)]
    case = _paired(cases, noise, ratios)
    assert case['tau'] > 0.02
    assert len(case['x']) == 5 and case['decision'].state == 'undecided', case['decision']
    # the same runs against a baseline known exactly: confirmed (what the error prevents)
    exact = sequential.decide(case['x'], case['sigma_pair'], 0.2, 0.01, 0.05)
    assert exact.state == 'confirmed', exact


@pytest.mark.parametrize('tau, decidable', [(0.0130, True), (0.0135, False)])
def test_a_level_is_decidable_where_twice_its_error_fits_in_the_effect(tau, decidable):
    """At alpha 0.01, beta 0.05 and a 10% effect: z = 2.3263 + 1.6449 = 3.9712, and
    |ln 0.9| = 0.10536 = 2 x 0.013266 x z: a level known to 1.30% is decidable, one known
    to 1.35% is not."""
    assert bool(sequential.level_decidable(tau, 0.1, 0.01, 0.05)) is decidable


@pytest.mark.parametrize('sigma, have, left, tau, f', [
    # need = ceil(sigma^2 / ((|ln 0.9| / z)^2 - tau^2)), (|ln 0.9| / z)^2 = 0.00070390
    (0.05, [1, 1], 4, 0.0, 1),      # need 4: two more at length 1
    (0.10, [1, 1], 4, 0.0, 4),      # need 15: 13 missing in 4 rounds -> 3.25 -> 4
    (0.12, [1, 1], 4, 0.0, 5),      # need 21: 19 in 4 -> 4.75 -> 5
    (0.12, [1, 1, 6], 3, 0.0, 6),   # need 21: 13 in 3 -> 5, but never shorter than 6
    (0.10, [1, 1], 2, 0.0, 7),      # need 15: 13 in 2 -> 6.5 -> 7
    (0.10, [1, 1], 2, 0.01, 8),     # need 17 (room 0.00060390): 15 in 2 -> 7.5 -> 8
    (0.15, [1, 1], 2, 0.0, 8),      # need 32: 30 in 2 -> 15, at most MAX_LENGTH
])
def test_the_next_runs_are_as_long_as_the_rounds_left_need(sigma, have, left, tau, f):
    """The length of the next paired runs, worked out by hand above (the fixed-sample size
    of a one-sided test at alpha 0.01, beta 0.05, effect 10%): most cases below the cap,
    where the length is the figure the budget needs, not merely at most 8."""
    assert sequential.MAX_LENGTH == 8
    assert sequential.lengthening(sigma, have, 0.1, 0.01, 0.05, left, tau=tau) == f


@pytest.mark.parametrize('source, state', [('repeated runs', 'confirmed'),
                                           ('fleet spread', 'undecided')])
def test_paired_runs_are_decided_only_on_the_noise_of_repeated_runs(source, state):
    """c is 27% below the fleet and its two paired runs beside d say so again. At a
    noise of 1% from repeated runs that is confirmed; at 1% from one run's spread across
    the nodes nothing is decided (a node's run-to-run noise can be far larger than the
    nodes' spread in one run), however clear the runs look."""
    import datetime as dt

    from mdxbench.post.store import records

    found = [_verdict(n, v, 41) for n, v in FIRST.items()]
    cases = suspects.find(found, 0.2, None, list(FIRST))
    seq = types.SimpleNamespace(alpha=0.01, beta=0.05)
    noise = {'HpccHpl gflops': sequential.Noise(0.01, source, 5)}
    rows, starts = _rows(25, FIRST), []
    for hour, (c, d) in enumerate([(29.0, 41.0), (30.0, 41.5)], start=1):
        starts.append(dt.datetime(2026, 11, 25, hour, tzinfo=dt.timezone.utc))
        rows += _rows(25, {'c': c, 'd': d}, hour=hour)
        suspects.update(cases['c'], records.frame(rows), starts, 'c', 'd', noise, 0.2, seq)
    [case] = cases['c']
    assert len(case['x']) == 2 and case['decision'].state == state, case['decision']


def _nccl(subject, partner, value, when):
    '''A made-up record of a pair run (nccl-tests across nodes) for ``subject``.'''
    meta = json.dumps({'tags': ['acceptance', 'gpu', 'pair'], 'pair_subject': subject,
                       'pair_partner': partner, 'job_nodes': sorted([subject, partner])})
    return {'time': when.isoformat(), 'system': 'mdx1', 'partition': 'gpu',
            'environ': 'spack', 'check': 'NcclTests %collective=all_reduce %scope=nodes',
            'perf_var': 'busbw', 'value': value, 'unit': 'GB/s', 'better': 'higher',
            'ref': None, 'result': 'pass', 'jobid': '1',
            'nodes': ','.join(sorted([subject, partner])),
            'tags': 'acceptance,gpu,pair', 'meta': meta}


def test_a_slow_node_of_a_pair_figure_is_told_from_its_partner_in_the_rounds(
        monkeypatch, tmp_path):
    """Issue 61, NCCL across nodes in the suspects' rounds. Six GPU nodes, each the subject
    of one pair run with the next as partner (jobs.ring); mdx1-004's network is 30% slow
    now, so its own reading and its predecessor mdx1-003's (partner mdx1-004) are 30% low:
    both suspects. Each round runs each suspect with the healthy buddy as partner and the
    buddy with a second healthy node -- the buddy's own reading of the round -- and the
    test pairs them: mdx1-004 confirmed, mdx1-003 cleared. A pair's figure is its slower
    node's (the collective waits for it), 2% noise a run. Records made up here."""
    import datetime as dt

    from mdxbench.post.fleet import accept, jobs, verdicts
    from mdxbench.post.store import records

    rng = np.random.default_rng(11)
    nodes = [f'mdx1-00{i}' for i in range(1, 7)]
    clock = [dt.datetime(2026, 12, 2, tzinfo=dt.timezone.utc)]
    speed = {n: 1.0 for n in nodes}
    rows, history = [], []

    def run_pair(s, p, into):
        clock[0] += dt.timedelta(seconds=10)
        into.append(_nccl(s, p, 24.0 * min(speed[s], speed[p])
                          * float(np.exp(rng.normal(0, 0.02))), clock[0]))

    for _ in range(2):                      # two earlier acceptance runs, all healthy
        for s, p in jobs.ring(nodes):
            run_pair(s, p, history)
    speed['mdx1-004'] = 0.7
    for s, p in jobs.ring(nodes):
        run_pair(s, p, rows)
    _session(monkeypatch, rows, clock)
    measured = []

    def measure(which, lengths=None, pairs=()):
        measured.append((list(which), list(pairs)))
        for s, p in pairs:
            run_pair(s, p, rows)

    plan = jobs.Plan('mdx1', 'gpu', 'gpu', nodes, {}, [], 1)
    found = verdicts.judge(records.frame(rows), paired=True, min_effect=0.1)
    v = {x['node']: x for x in found}
    # the first run: a node's figure is its own pair run's, the partner named
    [m] = v['mdx1-003']['measurements']
    assert m['check'] == 'NcclTests %collective=all_reduce %scope=nodes' and \
        m['deficit'] > 0.25, m
    seq = accept.Sequential(0.01, 0.05, None, records.frame(history))
    accept.decide_suspects(plan, tmp_path, found, 0.1, seq, measure, log=lambda *a: None)
    assert measured, 'no round'
    first_nodes, first_pairs = measured[0]
    buddy = first_nodes[len(first_nodes) // 2]
    assert sorted(n for n in first_nodes if n != buddy) == ['mdx1-003', 'mdx1-004']
    second = first_pairs[-1][1]
    assert buddy not in ('mdx1-003', 'mdx1-004') and second not in (
        'mdx1-003', 'mdx1-004', buddy)
    assert first_pairs == [('mdx1-003', buddy), ('mdx1-004', buddy), (buddy, second)]
    # a later round: the undecided suspects only, the buddy's own run last
    for nodes_, pairs_ in measured:
        assert pairs_[-1] == (buddy, second) and all(p == buddy for _, p in pairs_[:-1])
        assert [s for s, _ in pairs_[:-1]] == [n for n in nodes_ if n != buddy]
    assert v['mdx1-004']['verdict'] == 'fail', v['mdx1-004'].get('suspect')
    assert v['mdx1-003']['verdict'] == 'pass', v['mdx1-003'].get('suspect')
    assert all(v[n]['verdict'] == 'pass' for n in nodes if n != 'mdx1-004')
