'''The suspects' rules one at a time, each expected value worked out by hand (in the
docstrings) from what the rule must decide: how long the next runs are, which figures no
budget decides, the buddy, and the words each verdict explains itself with. Inputs are made
up here (no benchmark output); the sequential test itself is test_suspects.py's.'''
import datetime as dt
import json
import math
import types

import pytest

from mdxbench.post.fleet import sequential, suspects
from mdxbench.post.store import records

SEQ = types.SimpleNamespace(alpha=0.01, beta=0.05)
T0 = dt.datetime(2026, 11, 20, tzinfo=dt.timezone.utc)


# --- lengthening ---------------------------------------------------------------------
def test_a_first_run_is_of_the_checks_own_length_where_the_rounds_left_suffice():
    '''At 5% a pair the test needs 4 paired runs (effect 10%, alpha 0.01, beta 0.05: room
    (|ln 0.9| / 3.9712)^2 = 0.00070390, 0.0025 / 0.00070390 = 3.55 -> 4); with none made
    and 4 rounds left, runs of the check's own length do.'''
    assert sequential.lengthening(0.05, [], 0.1, 0.01, 0.05, 4) == 1
    # with no round left the last length stays
    assert sequential.lengthening(0.15, [1, 1, 3], 0.1, 0.01, 0.05, 0) == 3


def test_a_noise_no_number_of_runs_decides_asks_for_the_longest_runs():
    '''A baseline known to 3% (tau^2 0.0009 > 0.00070390): no paired runs decide a 10%
    effect -- the next runs are as long as the cap allows.'''
    assert sequential.pairs_to_decide(0.05, 0.1, 0.01, 0.05, tau=0.03) == math.inf
    assert sequential.lengthening(0.05, [1, 1], 0.1, 0.01, 0.05, 3, cap=5, tau=0.03) == 5


def test_checks_that_declare_no_knob_are_not_made_longer_and_a_check_takes_its_longest_case():
    '''next_lengths: two cases of FioTarget (one at 10% a pair: 4x over 4 rounds, one at
    5%: 1x) -> FioTarget 4; HpccHpl declares no knob: not listed; a case not measured again
    whose noise is one run's spread: not sized (the other's length stands).'''
    noisy = sequential.Noise(0.10 / math.sqrt(2), 'repeated runs', 400)
    quiet = sequential.Noise(0.05 / math.sqrt(2), 'repeated runs', 400)
    cases = [{'check': 'HpccHpl', 'key': 'd', 'x': [0.0, 0.0], 'sigma_pair': 0.2,
              'noise': noisy, 'lengths': [1, 1]},
             {'check': 'FioTarget %workload=seqwrite', 'key': 'c', 'x': []},
             {'check': 'FioTarget %workload=seqread', 'key': 'a', 'x': [0.0, 0.0],
              'sigma_pair': 0.10, 'noise': noisy, 'lengths': [1, 1]},
             {'check': 'FioTarget %workload=randread', 'key': 'b', 'x': [0.0, 0.0],
              'sigma_pair': 0.05, 'noise': quiet, 'lengths': [1, 1]}]
    spread = {'c': sequential.Noise(0.5, 'fleet spread', 8)}
    out = sequential.next_lengths(cases, 0.1, SEQ, 4, {'FioTarget': ['runtime']}, spread)
    # planning_sigma at 400 differences: 148 degrees of freedom, chi2(0.05) = 120.8:
    # sigma x 1.107 -> 11.07% a pair: need 18, 16 missing over 4 -> 4
    assert out == {'FioTarget': 4}
    # the pair's own spread is small (2%), the noise's planning value is not: sized for
    # the larger; a shared error (tau 2.5%: room 0.00070390 - 0.000625 = 0.0000789) asks
    # 0.01225 / 0.0000789 = 156 pairs: the cap
    small = [dict(cases[2], sigma_pair=0.02)]
    assert sequential.next_lengths(small, 0.1, SEQ, 4, {'FioTarget': ['runtime']}) == \
        {'FioTarget': 4}
    assert sequential.next_lengths([dict(small[0], tau=0.025)], 0.1, SEQ, 4,
                                 {'FioTarget': ['runtime']}) == {'FioTarget': 8}
    # a quiet check alone stays at its own length; a case not measured again with noise
    # from repeated runs is sized at once (18 pairs, none made yet: 18 / 4 -> 5)
    assert sequential.next_lengths(cases[3:], 0.1, SEQ, 4, {'FioTarget': ['runtime']}) == \
        {'FioTarget': 1}
    assert sequential.next_lengths(cases[1:2], 0.1, SEQ, 4, {'FioTarget': ['runtime']},
                                 {'c': noisy}) == {'FioTarget': 5}


def test_the_checks_that_say_how_to_run_longer_are_read_from_the_records():
    rows = [{'check': 'FioTarget %workload=seqread', 'meta': json.dumps(
                {'length': {'knobs': {'runtime': 1}}})},
            {'check': 'HpccHpl', 'meta': None},
            {'check': 'NetperfTcpRR', 'meta': json.dumps({'length': {}})}]
    import polars as pl
    assert suspects.lengthenable(pl.DataFrame(rows)) == {'FioTarget': {'runtime': 1}}


def test_what_would_decide_an_undecided_suspect_counts_the_shared_error():
    '''At 10% a pair and a baseline known to 1%: room 0.00070390 - 0.0001 = 0.00060390,
    0.01 / 0.00060390 = 16.56 -> 17 paired runs; with 2 made, 15 more, or runs 17 / 2 ->
    9x as long.'''
    assert sequential.to_decide('HpccHpl', 0.10, 2, 0.1, 0.01, 0.05, tau=0.01) == (
        'to decide: about 17 paired runs at this noise (10.0% a pair, 15 more than these: '
        '--max-extra-jobs), or HpccHpl run about 9x as long')
    # with one paired run made, runs as long as the two the test starts with
    assert sequential.to_decide('HpccHpl', 0.10, 1, 0.1, 0.01, 0.05).endswith(
        'about 15 paired runs at this noise (10.0% a pair, 14 more than these: '
        '--max-extra-jobs), or HpccHpl run about 8x as long')


# --- undecidable: said before the first run ------------------------------------------
def _history(series):
    '''{(check, node): [value, ...]} -> a records table, one run a day.'''
    rows = []
    for (check, node), values in series.items():
        for i, v in enumerate(values):
            rows.append({'time': (T0 + dt.timedelta(days=i)).isoformat(), 'system': 's',
                         'partition': 'p', 'check': check, 'perf_var': 'bw', 'value': v,
                         'unit': 'GB/s', 'better': 'higher', 'nodes': node,
                         'tags': 'acceptance', 'result': 'pass'})
    return records.frame(rows)


#: five runs alternating by a factor e^0.0706: log differences +-0.0706 (median 0), their
#: MAD 0.0706, the noise of one run 1.4826 x 0.0706 / sqrt 2 = 7.401%, a pair 10.467%: the
#: test needs 0.010956 / 0.00070390 = 15.56 -> 16 paired runs at a 10% effect
SWING = ([100.0, 100.0 * math.exp(0.0706)] * 3)[:5]
QUIET = ([100.0, 100.0 * math.exp(0.01)] * 3)[:5]


def test_a_figure_is_undecidable_where_the_budget_at_the_longest_runs_is_short_of_its_need():
    '''Need 16: a budget of 2 rounds at up to 8x (capacity 16) decides it, one round (8)
    does not -- then the least effect 8 runs decide: 1 - exp(-3.9712 x 0.10467 / sqrt 8)
    = 13.67%. A quiet figure beside it (need 2) is never listed, whichever comes first; a
    figure of two runs a node (one difference) has no noise yet: not listed.'''
    h = _history({('AATwo', 'n0'): SWING[:2], ('ASwing', 'n0'): SWING,
                  ('BQuiet', 'n0'): QUIET, ('CSwing', 'n0'): SWING})
    assert suspects.undecidable(h, 0.1, 0.01, 0.05, budget=2) == []
    out = suspects.undecidable(h, 0.1, 0.01, 0.05, budget=1)
    assert [(o['key'], o['check'], o['need'], o['capacity']) for o in out] == [
        ('ASwing bw', 'ASwing', 16, 8), ('CSwing bw', 'CSwing', 16, 8)]
    assert out[0]['min_effect'] == pytest.approx(0.13667, abs=2e-5)
    assert out[0]['noise'].sigma == pytest.approx(0.074014, abs=1e-6)
    # one round of runs no longer than the check's own: capacity 1, short even of the
    # quiet figure's two paired runs (the least the test decides on)
    assert [(o['key'], o['need'], o['capacity']) for o in suspects.undecidable(
        h, 0.1, 0.01, 0.05, budget=1, cap=1)] == [('ASwing bw', 16, 1), ('BQuiet bw', 2, 1),
                                                  ('CSwing bw', 16, 1)]
    # no budget: nothing is decided, and nothing is said to be undecidable
    assert suspects.undecidable(h, 0.1, 0.01, 0.05, budget=0) == []
    assert suspects.undecidable(None, 0.1, 0.01, 0.05, budget=1) == []


# --- the buddy ------------------------------------------------------------------------
def test_the_buddy_is_nearest_the_median_on_all_the_suspects_figures_together():
    '''Two figures: on the first d is nearest (0.0 against b's 0.1), on the second b is
    (0.0 against d's 0.3): summed, b (0.1) beats d (0.3) -- d is nearest on the last
    figure alone. A node without a value of every figure never serves; nodes equally near
    go by name.'''
    first = {'x': {'a': 1.0, 'b': 1.1, 'c': 0.5, 'd': 1.0, 'e': 0.9},
             'y': {'a': 2.0, 'b': 2.0, 'c': 2.5, 'd': 1.7, 'e': 2.1}}
    # medians: x 1.0, y 2.0
    assert suspects.pick_buddy(['b', 'd'], ['x', 'y'], first) == 'b'
    assert suspects.pick_buddy(['d', 'b'], ['x'], first) == 'd'
    assert suspects.pick_buddy(['a', 'f'], ['x', 'y'], first) == 'a'
    assert suspects.pick_buddy(['f'], ['x'], first) is None
    assert suspects.pick_buddy(['a', 'b'], ['z'], first) is None
    ties = {'x': {'p': 1.0, 'q': 1.2, 'r': 0.8}}
    assert suspects.pick_buddy(['r', 'q'], ['x'], ties) == 'q'


# --- a node's state and its words -----------------------------------------------------
def _decision(state, n, deficit, lo, hi):
    return sequential.Decision(state, n, deficit, (lo, hi), 1.5, (-2.9, 4.5))


def test_a_node_is_confirmed_on_any_figure_excluded_only_on_all():
    def case(state):
        return {'decision': _decision(state, 2, 0.0, 0.0, 0.0) if state else None}

    assert suspects.state([case('excluded'), case('excluded')]) == 'excluded'
    assert suspects.state([case('excluded'), case(None)]) == 'undecided'
    assert suspects.state([case('excluded'), case('undecided')]) == 'undecided'
    assert suspects.state([case('undecided'), case('confirmed')]) == 'confirmed'


def _fleet_case():
    return {'key': 'FioTarget bandwidth', 'check': 'FioTarget', 'why': 'fleet',
            'deficit_first': 0.27, 'first': 7.3, 'unit': 'GB/s', 'runs': [5.1, 5.0, 5.2],
            'buddy_runs': [7.0, 7.1, 7.0], 'baseline': 0.0, 'x': [-0.3, -0.31, -0.29],
            'lengths': [1, 2, 4], 'noise': sequential.Noise(0.02, 'repeated runs', 12),
            'sigma_pair': 0.02 * math.sqrt(2),
            'decision': _decision('confirmed', 3, 0.26, 0.2, 0.31)}


def test_a_confirmed_suspect_fails_its_node_and_says_how_it_was_measured():
    v = {'node': 'n3', 'verdict': 'pass', 'reasons': [], 'keys': []}
    suspects.settle(v, [_fleet_case()], 'n4', 0.1, SEQ, None)
    text = ("FioTarget bandwidth=7.3 GB/s: suspect (27% below the nodes' median); paired with "
            "n4: deficit +26.0% over 3 paired run(s) (95% interval +20.0% to +31.0%; negative: "
            "better): deficit of 10% or more confirmed (alpha 0.01, beta 0.05); noise 2.0% "
            "from 12 repeated-run differences; its noise too large to decide in the budget "
            "at the check's length: paired runs 2-3 made up to 4x as long "
            "(FioTarget.length_factor)")
    assert v['verdict'] == 'fail' and v['before_suspects'] == 'pass'
    assert v['reasons'] == [text] and v['keys'] == ['FioTarget bandwidth']
    assert 'notes' not in v
    [s] = v['suspect']
    assert s == {'key': 'FioTarget bandwidth', 'why': 'fleet', 'first': 7.3,
                 'deficit_first': 0.27, 'buddy': 'n4', 'runs': [5.1, 5.0, 5.2],
                 'buddy_runs': [7.0, 7.1, 7.0], 'baseline': 0.0, 'baseline_error': 0.0,
                 'state': 'confirmed', 'deficit': 0.26, 'interval': [0.2, 0.31], 'llr': 1.5,
                 'bounds': [-2.9, 4.5],
                 'noise': {'sigma': 0.02, 'source': 'repeated runs', 'n': 12},
                 'sigma_pair': 0.02 * math.sqrt(2), 'lengths': [1, 2, 4], 'explain': text}


def test_an_undecided_history_suspect_says_why_and_what_would_decide_it():
    '''Measured once beside its buddy, against a baseline known to 1.2%, its pair spread
    5% (more than the noise's 3% x sqrt 2 = 4.24%): what decides it needs 5 paired runs
    (0.0025 / (0.00070390 - 0.000144) = 4.47), runs 3x as long (5 / 2).'''
    c = {'key': 'HpccHpl gflops', 'check': 'HpccHpl', 'why': 'history', 'deficit_first': 0.12,
         'level_runs': 5, 'tau': 0.012, 'first': 44.0, 'unit': 'GFLOPS', 'runs': [44.0],
         'buddy_runs': [48.0], 'baseline': -0.02, 'x': [-0.1], 'lengths': [1],
         'noise': sequential.Noise(0.03, 'repeated runs', 9), 'sigma_pair': 0.05,
         'decision': _decision('undecided', 1, 0.095, -0.02, 0.2)}
    v = {'node': 'n3', 'verdict': 'pass', 'reasons': [], 'keys': []}
    suspects.settle(v, [c], 'n4', 0.1, SEQ, 'budget spent')
    assert v['verdict'] == 'undecided' and v['reasons'] == [] and v['keys'] == []
    assert v['notes'] == [
        "HpccHpl gflops=44 GFLOPS: suspect (12% below its own earlier level, the median of "
        "5 run(s), the pair's known to \u00b11.2%); paired with n4: deficit +9.5% over 1 "
        "paired run(s) (95% interval -2.0% to +20.0%; negative: better): undecided (alpha "
        "0.01, beta 0.05); noise 3.0% from 9 repeated-run differences; its paired runs "
        "spread more (5.0%); nothing decided on fewer than 2 paired runs; budget spent; to "
        "decide: about 5 paired runs at this noise (5.0% a pair, 4 more than these: "
        "--max-extra-jobs), or HpccHpl run about 3x as long"]
    assert v['suspect'][0]['baseline_error'] == 0.012 and v['suspect'][0]['baseline'] == -0.02


def test_a_suspect_on_one_runs_spread_or_never_measured_again_stays_undecided_and_says_so():
    spread = dict(_fleet_case(), noise=sequential.Noise(0.02, 'fleet spread', 8), lengths=[1, 1],
                  decision=_decision('undecided', 2, 0.3, 0.25, 0.35))
    lost = dict(_fleet_case(), key='NetperfTcpRR mean_rtt', unit='us', first=90.0,
                deficit_first=0.15, decision=None, x=[], sigma_pair=None)
    del lost['lengths']                 # (update() never saw it)
    v = {'node': 'n3', 'verdict': 'pass', 'reasons': [], 'keys': []}
    suspects.settle(v, [spread, lost], 'n4', 0.1, SEQ, None)
    assert v['verdict'] == 'undecided'
    assert v['notes'][0].endswith(
        '(alpha 0.01, beta 0.05); noise 2.0% from the spread of 8 nodes in one run (too few '
        'repeated runs yet); nothing decided before the noise came from repeated runs; to '
        'decide: about 2 paired runs at this noise (2.8% a pair, 0 more than these: '
        '--max-extra-jobs), or FioTarget run about 1x as long')
    assert v['notes'][1] == ("NetperfTcpRR mean_rtt=90 us: suspect (15% below the nodes' "
                             "median); not measured again: no paired run")
    assert v['suspect'][1] | {'explain': None} == {
        'key': 'NetperfTcpRR mean_rtt', 'why': 'fleet', 'first': 90.0, 'deficit_first': 0.15,
        'buddy': 'n4', 'runs': [5.1, 5.0, 5.2], 'buddy_runs': [7.0, 7.1, 7.0], 'baseline': 0.0,
        'baseline_error': 0.0, 'state': 'undecided', 'deficit': None, 'interval': None,
        'llr': None, 'bounds': None, 'noise': None, 'sigma_pair': None, 'lengths': [],
        'explain': None}


def test_an_excluded_suspect_passes_its_node_with_the_reason_kept_as_a_note():
    c = dict(_fleet_case(), lengths=[1, 1, 1],
             decision=_decision('excluded', 3, 0.01, -0.02, 0.04))
    v = {'node': 'n3', 'verdict': 'pass', 'reasons': [], 'keys': []}
    suspects.settle(v, [c], 'n4', 0.1, SEQ, 'never said')
    assert v['verdict'] == 'pass' and v['reasons'] == []
    assert v['notes'] == [
        "FioTarget bandwidth=7.3 GB/s: suspect (27% below the nodes' median); paired with "
        "n4: deficit +1.0% over 3 paired run(s) (95% interval -2.0% to +4.0%; negative: "
        "better): deficit of 10% excluded (alpha 0.01, beta 0.05); noise 2.0% from 12 "
        "repeated-run differences"]


# --- every verdict explains itself ----------------------------------------------------
def _m(check, value, median, better='higher'):
    return {'check': check, 'perf_var': 'v', 'value': value, 'nodes_median': median,
            'better': better}


def test_each_figure_gets_its_deficit_interval_from_its_noise():
    '''90 against a median of 100 at a noise of 2%: ln 0.9 -+ 1.95996 x 0.02 -> deficit
    interval 6.402% to 13.460%; lower-better 110 against 100: 5.457% to 12.586%. A figure
    without a known noise, or with no value, gets none.'''
    nz = sequential.Noise(0.02, 'repeated runs', 12)
    found = [{'node': 'n0', 'verdict': 'pass', 'reasons': [],
              'measurements': [_m('C', 90.0, 100.0), _m('A', 90.0, 100.0),
                               _m('B', 110.0, 100.0, 'lower'), _m('A', 0.0, 100.0),
                               _m('A', 90.0, None)]}]
    suspects.explain(found, {'A v': nz, 'B v': nz}, 0.1)
    c, a, b, zero, nomed = found[0]['measurements']
    assert a['interval'] == pytest.approx([0.0640201, 0.1345968], abs=1e-7)
    assert b['interval'] == pytest.approx([0.0545657, 0.1258554], abs=1e-7)
    assert a['noise'] == {'sigma': 0.02, 'source': 'repeated runs', 'n': 12}
    assert 'interval' not in c and 'interval' not in zero and 'interval' not in nomed
    assert found[0]['why'] == "pass: every figure within 10% of the nodes' median and its reference"


def test_each_verdict_says_why_in_one_line():
    found = [{'node': 'a', 'verdict': 'not tested', 'reasons': ['Slurm state drained', 'x'],
              'measurements': []},
             {'node': 'b', 'verdict': 'fail', 'reasons': ['r1', 'r2'], 'measurements': []},
             {'node': 'c', 'verdict': 'undecided', 'reasons': [], 'measurements': [],
              'suspect': [{'explain': 's1'}, {'explain': 's2'}]},
             {'node': 'd', 'verdict': 'pass', 'reasons': [], 'measurements': [],
              'suspect': [{'explain': 's3'}, {'explain': 's4'}]},
             {'node': 'e', 'verdict': 'pass', 'reasons': [], 'measurements': [], 'suspect': []}]
    suspects.explain(found, {}, 0.05)
    assert [v['why'] for v in found] == [
        'not tested: Slurm state drained; x', 'fail: r1; r2', 'undecided: s1; s2', 'pass: s3; s4',
        "pass: every figure within 5% of the nodes' median and its reference"]


def test_the_likelihood_ratio_is_that_of_the_normal_densities():
    '''Against scipy's densities: one sigma for all, one per observation, one value.'''
    import numpy as np
    from scipy import stats

    x, mu1 = np.array([-0.1, -0.25, 0.02, 0.3]), math.log(0.8)
    for sig in (0.1, np.array([0.1, 0.05, 0.2, 0.07])):
        want = float(np.sum(stats.norm.logpdf(x, mu1, sig) - stats.norm.logpdf(x, 0, sig)))
        assert sequential.normal_llr(x, mu1, sig) == pytest.approx(want, rel=1e-12)
    assert sequential.normal_llr(-0.05, mu1, 0.03) == pytest.approx(
        stats.norm.logpdf(-0.05, mu1, 0.03) - stats.norm.logpdf(-0.05, 0, 0.03), rel=1e-12)
    assert sequential.Z_CONFIDENCE == pytest.approx(1.959964, abs=1e-6)


# --- the clock, levels and noises ----------------------------------------------------
def test_a_round_starts_on_a_whole_utc_second_as_perflogs_stamp_them():
    t = suspects.now()
    assert t.microsecond == 0 and t.utcoffset() == dt.timedelta(0)
    assert abs((dt.datetime.now(dt.timezone.utc) - t).total_seconds()) < 2


def test_two_nodes_with_history_are_enough_for_levels():
    '''n0 at 100 and n1 at 110 (their medians): the fleet's median of medians 104.88
    (geometric: the logs'), each node's level its log's distance from it.'''
    h = _history({('A', 'n0'): [100.0, 100.0, 100.0], ('A', 'n1'): [110.0, 110.0, 110.0]})
    levels = suspects.history_levels(h, {'A bw': 'higher'})
    half = math.log(1.1) / 2
    assert levels['A bw']['n0'] == pytest.approx((-half, 3), abs=1e-12)
    assert levels['A bw']['n1'] == pytest.approx((half, 3), abs=1e-12)
    assert suspects.history_levels(_history({('A', 'n0'): [100.0] * 3}), {'A bw': 'higher'}) == {}


def test_a_suspects_first_run_is_no_repetition_and_a_figure_without_runs_has_the_fleets():
    '''noises(): n0's runs alternate by e^0.0706 (differences +-0.0706); n1, a suspect,
    came out 30% low at first, then ran at 100 twice. Chosen, its first run is left out:
    five differences (0.0706 four times, 0 once; median 0, MAD 0.0706), the noise
    1.4826 x 0.0706 / sqrt 2 = 7.40%; not chosen, its first difference, ln(100/70), is a
    sixth. B has no run anywhere: its noise is this round's spread across the nodes
    (MAD 0.1 of 0, 0.1, 0.3).'''
    session = _history({('A', 'n0'): SWING, ('A', 'n1'): [70.0, 100.0, 100.0]})
    first = {'A bw': {'n0': math.log(100.0), 'n1': math.log(70.0)},
             'B bw': {'n0': 0.0, 'n1': 0.1, 'n2': 0.3}, None: {'A bw': 'higher', 'B bw': 'higher'}}
    chosen = suspects.noises(session, None, first, chosen=('n1',))
    plain = suspects.noises(session, None, first)
    assert chosen['A bw'] == sequential.Noise(pytest.approx(0.074014, abs=1e-6), 'repeated runs', 5)
    assert plain['A bw'].n == 6
    assert chosen['B bw'] == sequential.Noise(pytest.approx(1.4826 * 0.1), 'fleet spread', 3)


# --- update(): each case from its own records ------------------------------------------
def test_each_undecided_case_takes_its_pairs_runs_and_a_decided_or_unmeasured_one_is_left():
    '''Three cases of node b beside d: the first decided already (kept as it was), the
    second on a figure this round did not measure (left untouched), the third measured:
    its paired run is b's over d's. A round where d measured nothing leaves it too.'''
    from mdxbench.post.store import records

    nz = sequential.Noise(0.01, 'repeated runs', 12)
    decided = sequential.Decision('excluded', 3, 0.0, (0.0, 0.0), -9.0, (-2.9, 4.5))

    def case(check, decision=None):
        return {'key': f'{check} bw', 'check': check, 'better': 'higher', 'why': 'fleet',
                'runs': [], 'buddy_runs': [], 'x': [], 'decision': decision, 'baseline': 0.0}

    cases = [case('A', decided), case('Q'), case('C')]
    t1 = dt.datetime(2026, 11, 25, 1, tzinfo=dt.timezone.utc)
    rows = [{'time': t1.isoformat(), 'system': 's', 'partition': 'p', 'check': c,
             'perf_var': 'bw', 'value': v, 'unit': 'GB/s', 'better': 'higher', 'nodes': n,
             'tags': 'acceptance', 'result': 'pass'}
            for c, n, v in (('A', 'b', 50.0), ('A', 'd', 100.0), ('C', 'b', 80.0),
                            ('C', 'd', 100.0))]
    noise = {'A bw': nz, 'Q bw': nz, 'C bw': nz}
    suspects.update(cases, records.frame(rows), [t1], 'b', 'd', noise, 0.2, SEQ)
    assert cases[0]['decision'] is decided and cases[0]['x'] == []
    assert cases[1]['x'] == [] and cases[1]['decision'] is None
    assert cases[2]['x'] == pytest.approx([math.log(0.8)])
    assert cases[2]['runs'] == pytest.approx([80.0]) and cases[2]['buddy_runs'] == pytest.approx([100.0])
    assert cases[2]['lengths'] == [1] and cases[2]['decision'].state == 'undecided'
    # d measured nothing in the next round: nothing added
    t2 = t1 + dt.timedelta(hours=1)
    rows2 = rows + [dict(rows[2], time=t2.isoformat())]
    suspects.update(cases, records.frame(rows2), [t1, t2], 'b', 'd', noise, 0.2, SEQ)
    assert len(cases[2]['x']) == 1
    # nor where b did not: the buddy's run alone is no pair
    rows3 = rows + [dict(rows[3], time=t2.isoformat())]
    suspects.update(cases, records.frame(rows3), [t1, t2], 'b', 'd', noise, 0.2, SEQ)
    assert len(cases[2]['x']) == 1


def test_a_buddy_without_an_earlier_level_stands_at_the_fleets_median():
    '''A history suspect whose buddy has no level of its own: the baseline is the
    suspect's level against the fleet's median (0), and the error of a level of as many
    runs as the suspect's: tau = 0.02 sqrt(1/4 + 1/4).'''
    from mdxbench.post.store import records

    c = {'key': 'A bw', 'check': 'A', 'better': 'higher', 'why': 'history', 'runs': [],
         'buddy_runs': [], 'x': [], 'decision': None, 'baseline': 0.0, 'level': 0.1,
         'level_runs': 4, 'levels': {'b': (0.1, 4)}}
    t1 = dt.datetime(2026, 11, 25, 1, tzinfo=dt.timezone.utc)
    rows = [{'time': t1.isoformat(), 'system': 's', 'partition': 'p', 'check': 'A',
             'perf_var': 'bw', 'value': v, 'unit': 'GB/s', 'better': 'higher', 'nodes': n,
             'tags': 'acceptance', 'result': 'pass'} for n, v in (('b', 90.0), ('d', 100.0))]
    noise = {'A bw': sequential.Noise(0.02, 'repeated runs', 12)}
    suspects.update([c], records.frame(rows), [t1], 'b', 'd', noise, 0.2, SEQ)
    assert c['baseline'] == pytest.approx(0.1)
    assert c['tau'] == pytest.approx(0.02 * math.sqrt(0.5))
    assert c['x'] == pytest.approx([math.log(0.9) - 0.1])


# --- settle(): the words of lengths and of the baseline ---------------------------------
def test_the_words_say_which_runs_were_longer_and_a_baseline_known_exactly_says_nothing():
    longer = dict(_fleet_case(), lengths=[1, 2], x=[-0.3, -0.3])
    v = {'node': 'n3', 'verdict': 'pass', 'reasons': [], 'keys': []}
    suspects.settle(v, [longer], 'n4', 0.1, SEQ, None)
    assert v['reasons'][0].endswith('paired run 2 made up to 2x as long (FioTarget.length_factor)')
    last = dict(_fleet_case(), lengths=[1, 1, 2])
    v = {'node': 'n3', 'verdict': 'pass', 'reasons': [], 'keys': []}
    suspects.settle(v, [last], 'n4', 0.1, SEQ, None)
    assert v['reasons'][0].endswith('paired run 3 made up to 2x as long (FioTarget.length_factor)')
    hist = dict(_fleet_case(), why='history', level_runs=5, tau=0.0, lengths=[1, 1],
                x=[-0.1, -0.07], decision=_decision('undecided', 2, 0.08, 0.01, 0.15),
                sigma_pair=0.05)
    v = {'node': 'n3', 'verdict': 'pass', 'reasons': [], 'keys': []}
    suspects.settle(v, [hist], 'n4', 0.1, SEQ, None)
    assert v['notes'] == [
        "FioTarget bandwidth=7.3 GB/s: suspect (27% below its own earlier level, the median "
        "of 5 run(s)); paired with n4: deficit +8.0% over 2 paired run(s) (95% interval "
        "+1.0% to +15.0%; negative: better): undecided (alpha 0.01, beta 0.05); noise 2.0% "
        "from 12 repeated-run differences; its paired runs spread more (5.0%); to decide: "
        "about 4 paired runs at this noise (5.0% a pair, 2 more than these: "
        "--max-extra-jobs), or FioTarget run about 2x as long"]


# --- small readers --------------------------------------------------------------------
def test_a_shared_error_as_large_as_the_whole_room_leaves_no_number_of_pairs():
    '''tau = |ln 0.9| / z exactly: the room the test affords is 0 -- no pairs decide
    (inf), not a division by zero.'''
    from scipy import stats

    tau = abs(math.log(0.9)) / (stats.norm.ppf(0.99) + stats.norm.ppf(0.95))
    assert sequential.pairs_to_decide(0.05, 0.1, 0.01, 0.05, tau=tau) == math.inf


def test_a_runs_length_factor_is_what_its_record_says_and_never_below_one():
    def meta(f):
        return json.dumps({'length': {'factor': f}})

    assert [suspects.length_factor(m) for m in (meta(1.5), meta(4), meta(1), meta(0.5))] == \
        [1.5, 4.0, 1.0, 1.0]
    for m in (None, '', 'not json', '[1]', json.dumps({'length': None}), meta('x')):
        assert suspects.length_factor(m) == 1.0, m


def test_series_are_read_with_or_without_metadata_and_scaled_to_the_checks_own_length():
    '''A run 4x as long varies half as much: its log is scaled by sqrt 4 = 2 so that its
    differences are those of runs of the check's own length; each length a series.'''
    import polars as pl

    assert suspects._series(None, {}) == {}
    h = _history({('A', 'n0'): [100.0, 110.0]}).drop('meta')
    s = suspects._series(h, {'A bw': 'lower'})
    assert [o for _, o, f in s['A bw']['n0']] == pytest.approx([-math.log(100), -math.log(110)])
    long = h.with_columns(pl.lit(json.dumps({'length': {'factor': 4}})).alias('meta'))
    s = suspects._series(long, {'A bw': 'higher'})
    assert suspects._own_length(s['A bw']) == {
        ('n0', 4.0): pytest.approx([2 * math.log(100), 2 * math.log(110)])}


def test_a_paired_runs_value_is_given_back_in_its_own_unit():
    assert suspects._value(math.log(80.0), 'higher') == pytest.approx(80.0)
    assert suspects._value(-math.log(80.0), 'lower') == pytest.approx(80.0)


def _found(**deficits):
    '''Verdicts of nodes at a median of 100 (higher better) with these deficits.'''
    return [{'node': n, 'verdict': 'pass', 'reasons': [], 'keys': [],
             'measurements': [{'check': 'A', 'perf_var': 'bw', 'value': 100 * (1 - d),
                               'unit': 'GB/s', 'better': 'higher', 'nodes_median': 100.0,
                               'outlier': False, 'deficit': d}]}
            for n, d in deficits.items()]


def test_a_suspect_is_a_passed_testable_node_at_least_the_effect_below():
    '''Exactly 10% below at a 10% effect is a suspect (at least the effect); a node that
    failed already, or that may not be measured again, is none; a figure with no value
    (0: no log) makes no case, and the next figure of the node still does.'''
    found = _found(a=0.0, b=0.1, c=0.3, d=0.3, e=0.05, f=0.2)
    found[2]['verdict'] = 'fail'
    found[5]['measurements'].insert(0, dict(found[5]['measurements'][0], check='Z', value=0.0))
    cases = suspects.find(found, 0.1, None, {'a', 'b', 'c', 'e', 'f'})
    assert sorted(cases) == ['b', 'f']
    [b] = cases['b']
    assert b == {'key': 'A bw', 'check': 'A', 'perf_var': 'bw', 'better': 'higher',
                 'unit': 'GB/s', 'first': 90.0, 'nodes_median': 100.0, 'runs': [],
                 'buddy_runs': [], 'x': [], 'decision': None, 'baseline': 0.0,
                 'why': 'fleet', 'deficit_first': 0.1}
    assert [c['key'] for c in cases['f']] == ['A bw']


def test_runs_that_never_vary_give_no_noise_and_three_nodes_give_a_spread():
    '''noise(): repeated runs all alike (their differences' MAD 0) would let one pair decide
    anything: the spread across three nodes stands in (0, 0.1, 0.3: MAD 0.1); nodes all
    alike give none either; two nodes are no spread.'''
    same = {'n0': [0.5] * 5}
    assert sequential.noise(same, [0.0, 0.1, 0.3]) == sequential.Noise(
        pytest.approx(0.14826), 'fleet spread', 3)
    assert sequential.noise(same, [0.2, 0.2, 0.2, 0.3]) is None
    assert sequential.noise({}, [0.0, 0.3]) is None


def test_a_decision_needs_a_paired_observation():
    with pytest.raises(ValueError, match=r'^decide\(\): no paired observation to decide on$'):
        sequential.decide([], 0.1, 0.2, 0.01, 0.05)
