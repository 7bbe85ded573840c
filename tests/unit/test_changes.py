'''Change points over whole histories: generated series (test input for the statistics,
not benchmark output) and the real history of HpccStream and SockperfPingPong recorded on
`local` through Slurm (tests/fixtures/perflogs/history-*, see the fixtures README).'''
import datetime as dt
import json
import pathlib

import numpy as np
import polars as pl
import pytest

from mdxbench.post.analysis import changes, scan
from mdxbench.post import cli
from mdxbench.post.store import records

T0 = dt.datetime(2026, 9, 1, tzinfo=dt.timezone.utc)
HISTORY = pathlib.Path(__file__).resolve().parents[1] / 'fixtures' / 'perflogs' / 'history-local'


def rows(values, check='BabelStreamOmp', var='triad', unit='GB/s', better='higher',
         system='mdx2', part='vc16m32g', environ='spack', meta=None, nodes=None):
    out = []
    for i, v in enumerate(values):
        m = meta(i) if meta else {'suite_commit': 'a1b2c3d4e5f6', 'node_kernel': '6.1.0-25'}
        out.append({'time': (T0 + dt.timedelta(days=i)).isoformat(), 'system': system,
                    'partition': part, 'environ': environ, 'check': check, 'perf_var': var,
                    'value': float(v), 'unit': unit, 'better': better, 'ref': None,
                    'result': 'pass', 'jobid': str(100 + i),
                    'nodes': nodes(i) if nodes else 'n1', 'tags': '', 'params': '{}',
                    'meta': json.dumps(m)})
    return out


def gauss(center, n, cv=0.02, seed=1):
    return center * (1 + cv * np.random.default_rng(seed).standard_normal(n))


def stepped(center, n, at, factor, seed=1):
    x = gauss(center, n, seed=seed)
    x[at:] *= factor
    return x


def test_a_rising_lower_is_better_metric_is_a_regression():
    '''cache_miss_rate (%) declared lower-is-better: 5% -> 9% at run 31 is a regression.'''
    cps = scan.find(records.frame(rows(stepped(5, 50, 30, 1.8), check='PerfCountersFft',
                                          var='cache_miss_rate', unit='%', better='lower')))
    assert len(cps) == 1
    c = cps[0]
    assert c['verdict'] == 'regression' and c['run'] == 31 and c['jobid'] == '130'
    assert c['effect'] == pytest.approx(0.8, abs=0.05)


def test_the_same_rise_declared_higher_is_better_is_an_improvement_and_none_is_undeclared():
    data = stepped(5, 50, 30, 1.8)
    assert scan.find(records.frame(rows(data, better='higher')))[0]['verdict'] == 'improvement'
    assert scan.find(records.frame(rows(data, better=None)))[0]['verdict'] == 'no-direction'


def test_the_explanation_names_what_changed_and_the_event_between_the_runs():
    def meta(i):
        return {'suite_commit': 'a1b2c3d4e5f6', 'node_kernel': '6.1.0-25' if i < 30 else '6.1.0-26',
                'binary': {'source': 'spack', 'spack_spec': 'babelstream@5.0', 'spack_hash': 'h1'}}

    ev = [{'system': 'mdx2', 'partition': None, 'name': 'hypervisor kernel update',
           'time': (T0 + dt.timedelta(days=29, hours=12)).isoformat()},
          {'system': 'mdx2', 'partition': None, 'name': 'too early',
           'time': (T0 + dt.timedelta(days=20)).isoformat()},
          {'system': 'laurel', 'partition': None, 'name': 'other system',
           'time': (T0 + dt.timedelta(days=29, hours=12)).isoformat()}]
    c = scan.find(records.frame(rows(stepped(383, 50, 30, 0.78), meta=meta)), ev)[0]
    assert c['changed'] == {'kernel': [['6.1.0-25'], ['6.1.0-26']]}
    assert set(c['unchanged']) == {'binary', 'suite', 'nodes'}
    assert [e['name'] for e in c['events']] == ['hypervisor kernel update']
    s = c['explanation']
    assert s.startswith('mdx2:vc16m32g BabelStreamOmp triad -2') and '\u2192' in s
    assert 'since 2026-10-01 run 31' in s
    assert 'kernel 6.1.0-25 \u2192 6.1.0-26' in s
    assert 'event 2026-09-30 "hypervisor kernel update"' in s


def test_nodes_rotating_is_no_change_but_a_new_node_is():
    rot = scan.find(records.frame(rows(stepped(100, 40, 20, 0.8),
                                          nodes=lambda i: f'n{i % 4}')))[0]
    assert 'new nodes' not in rot['changed'] and 'nodes' in rot['unchanged']
    new = scan.find(records.frame(rows(stepped(100, 40, 20, 0.8),
                                          nodes=lambda i: 'n9' if i >= 20 else 'n1')))[0]
    assert new['changed']['new nodes'] == [['n1'], ['n9']]


def test_noise_alone_gives_no_change_point():
    rng = np.random.default_rng(3)
    bimodal = np.where(rng.random(60) < 0.5, 38.0, 55.0) * (1 + 0.02 * rng.standard_normal(60))
    df = records.frame(rows(gauss(100, 60, seed=4)) + rows(bimodal, var='copy'))
    assert scan.find(df) == []


def test_two_steps_are_two_change_points_in_order_of_severity():
    x = np.concatenate([gauss(100, 20, seed=5), gauss(80, 20, seed=6), gauss(96, 20, seed=7)])
    cps = scan.find(records.frame(rows(x)))
    assert [(c['run'], c['verdict']) for c in cps] == [(21, 'regression'), (41, 'improvement')]


def test_environments_are_separate_series():
    '''HPL on OpenBLAS and on MKL: different levels, not a change point.'''
    df = records.frame(rows(gauss(60, 20), environ='native') +
                       rows(gauss(50, 20, seed=2), environ='mkl'))
    assert scan.find(df) == []


def history():
    errors = []
    df = records.from_perflogs([HISTORY], errors)
    assert errors == [] and df.height > 0
    return df


def test_the_real_local_history_has_no_change_point():
    '''36 runs of HpccStream and of SockperfPingPong recorded on this kind of VM, nothing
    changed in between: its bimodal memory bandwidth must not make change points.'''
    df = history()
    # `reframe --repeat 36` names its cases `%.repeat_no=N`: still one series per check;
    # the perflogs say `placement=same-node`, read under its current name `loopback`
    # (records.RENAMED_VALUES), so the series goes on with the runs recorded since
    assert sorted(df['check'].unique()) == ['HpccStream', 'SockperfPingPong %placement=loopback']
    assert set(df['params']) == {'{}', '{"placement": "loopback"}'}
    tri = df.filter((pl.col('check') == 'HpccStream') & (pl.col('perf_var') == 'triad'))
    assert tri.height == 36 and tri['value'].max() / tri['value'].min() > 1.5     # bimodal
    assert scan.find(df) == []


def test_a_30_percent_step_put_into_the_real_history_is_found_where_it_was_put():
    df = history().sort('time')
    runs = df.filter(pl.col('check') == 'HpccStream').select('time').unique().sort('time')['time']
    cut = runs[len(runs) // 2]
    worse = df.with_columns(pl.when((pl.col('time') >= cut) & (pl.col('perf_var') == 'triad'))
                            .then(pl.col('value') * 0.7).otherwise(pl.col('value')).alias('value'))
    cps = scan.find(worse)
    tri = [c for c in cps if c['perf_var'] == 'triad' and c['check'] == 'HpccStream']
    assert len(tri) == 1 and tri[0]['verdict'] == 'regression', cps
    n_before = df.filter((pl.col('perf_var') == 'triad') & (pl.col('time') < cut)).height
    assert abs(tri[0]['run'] - (n_before + 1)) <= 2
    assert all(c['perf_var'] == 'triad' for c in cps)


def test_cli_json_exit_codes_and_since(tmp_path, capsys, monkeypatch):
    monkeypatch.setenv('MDXBENCH_EVENTS', str(tmp_path / 'events.jsonl'))
    store = tmp_path / 'store.parquet'
    records.frame(rows(stepped(100, 40, 20, 0.8)) +
                  rows(stepped(10, 40, 25, 0.8), var='latency', unit='us', better='lower')) \
        .write_parquet(store)
    assert cli.main(['changes', '--parquet', str(store), '--format', 'json']) == 1
    out = json.loads(capsys.readouterr().out)
    assert out['regressions'] == 1 and out['series'] == 2
    assert [c['verdict'] for c in out['change_points']] == ['regression', 'improvement']
    assert isinstance(out['change_points'][0]['run'], int)
    # only the improvement starts after --since: nothing to alert on
    since = (T0 + dt.timedelta(days=22)).isoformat()
    assert cli.main(['changes', '--parquet', str(store), '--since', since]) == 0
    text = capsys.readouterr().out
    assert 'improvement' in text and 'regression  ' not in text
    assert cli.main(['changes', '--parquet', str(store), '--since', '2026-09-01']) == 2


def test_cli_scans_a_parquet_export_without_loading_it_and_keeps_to_its_system(
        tmp_path, capsys, monkeypatch):
    '''``--parquet`` goes through the bounded scan (the export is never read as one
    table), ``--system`` selects its records there, and the series are counted the same.'''
    monkeypatch.setenv('MDXBENCH_EVENTS', str(tmp_path / 'events.jsonl'))
    store = tmp_path / 'store.parquet'
    records.frame(rows(stepped(100, 40, 20, 0.8)) + rows(gauss(50, 40), var='copy') +
                  rows(stepped(10, 40, 25, 1.3), system='laurel', part='cpu')) \
        .write_parquet(store)

    def whole_table(*a, **k):
        raise AssertionError('the export was read as one table')

    monkeypatch.setattr(records, 'from_parquet', whole_table)
    assert cli.main(['changes', '--parquet', str(store), '--format', 'json']) == 1
    out = json.loads(capsys.readouterr().out)
    assert out['series'] == 3 and len(out['change_points']) == 2
    assert cli.main(['changes', '--parquet', str(store), '--system', 'laurel',
                     '--format', 'json']) == 0
    out = json.loads(capsys.readouterr().out)
    assert out['series'] == 1
    assert [(c['system'], c['verdict']) for c in out['change_points']] == \
        [('laurel', 'improvement')]


def test_long_series_are_segmented_in_windows_with_the_same_change_points():
    '''Past changes.WINDOW runs the segmentation works in overlapping windows (near-linear
    instead of PELT's quadratic worst case): on a generated 6,000-run series with steps on
    the borders of the windows' kept regions (1,500, 2,500) and inside one (4,200), the
    windows find what one PELT over the whole series finds, each change once.'''
    import math

    import numpy as np

    rng = np.random.default_rng(4)
    x = 100 * (1 + 0.02 * rng.standard_normal(6000))
    for at, f in ((1500, 0.9), (2500, 1.12), (4200, 0.93)):
        x[at:] *= f
    z = ((x - np.median(x)) / changes.noise(x)).reshape(-1, 1)
    pen = changes.PENALTY * math.log(len(x))
    whole = changes.segment(z, pen, window=len(x))
    assert changes.segment(z, pen) == whole == [1500, 2500, 4200]
    assert [c['index'] for c in changes.detect(x)] == [1500, 2500, 4200]


def _windowed(z, min_size=3, window=40):
    import math
    return changes.segment(z.reshape(-1, 1), changes.PENALTY * math.log(len(z)),
                           min_size=min_size, window=window)


def test_a_step_anywhere_in_a_long_series_is_found_once_where_it_was_put():
    '''Windows of 40 runs over a series of 130 (each window keeps the change points of its
    central half, the first from run 0 and the last to the end): a step of 30 noise units
    put at each run in turn, from the least segment's 3 runs to 3 before the end, is found
    at that run and nowhere else -- on both borders of every window's kept region, in the
    first window's outer quarter and in the last's (a window shorter than the others).'''
    base = np.random.default_rng(11).standard_normal(130)
    wrong = {}
    for at in range(3, 128):
        z = base.copy()
        z[at:] += 30
        got = _windowed(z)
        if got != [at]:
            wrong[at] = got
    assert wrong == {}


@pytest.mark.parametrize('at', [28, 48, 68, 88])
def test_two_steps_the_least_segment_apart_across_a_border_are_both_found(at):
    '''Two steps 3 runs apart (the least segment), the first in one window's kept region
    and the second in the next one's (their border at runs 30, 50, 70, 90): both are
    change points -- the windows' own merging keeps changes the least segment apart.'''
    z = np.random.default_rng(12).standard_normal(130)
    z[at:] += 30
    z[at + 3:] += 30
    assert _windowed(z) == [at, at + 3]


def test_windows_keep_every_segment_at_least_the_least_segment_long():
    '''PELT's segments are at least ``min_size`` runs long; the windows, each judging its
    own runs, must keep that across their borders too: on 1,000 generated 130-run series
    with one to three weak steps (1.5 to 5 noise units, where two windows either side of a
    border can place one change a run apart), no two change points are closer than the
    least segment, and none is closer to either end.'''
    rng = np.random.default_rng(17)
    for _ in range(1000):
        z = rng.standard_normal(130)
        for _ in range(int(rng.integers(1, 4))):
            z[int(rng.integers(3, 127)):] += rng.uniform(1.5, 5) * rng.choice([-1, 1])
        got = _windowed(z)
        assert all(b - a >= 3 for a, b in zip([0, *got], [*got, 130])), got


def test_a_series_of_one_window_is_segmented_whole_and_one_run_longer_in_windows():
    '''A series as long as the window is one PELT, one run longer it is cut in windows:
    a step 3 runs before the end (the least segment) is found either way, in the longer
    one by the last window, from its outer quarter.'''
    z = np.random.default_rng(13).standard_normal(40)
    z[37:] += 30
    assert _windowed(z) == [37]
    z = np.random.default_rng(13).standard_normal(41)
    z[38:] += 30
    assert _windowed(z) == [38]


def test_a_real_step_beside_a_spurious_candidate_is_kept_once_the_spurious_one_goes():
    '''An 8% step at run 30 (3% noise) and a spurious candidate 3 runs after it: tested
    against the 3 runs between them, the step fails the p-value (0.037), the spurious one
    fails the effect (none). Only the weakest goes at a time -- the spurious one, whose
    effect is the smaller -- and the step, tested again against its whole segment,
    stays: one change point at run 30 with the segments' medians either side. Given
    alone, the step is the same change point.'''
    x = 100 * (1 + 0.03 * np.random.default_rng(8).standard_normal(60))
    x[30:] *= 1.08
    [cp] = changes.refine(x, [30, 33])
    assert cp['index'] == 30
    assert cp['before'] == pytest.approx(np.median(x[:30]))
    assert cp['after'] == pytest.approx(np.median(x[30:]))
    assert cp['effect'] == pytest.approx(np.median(x[30:]) / np.median(x[:30]) - 1)
    assert changes.refine(x, [30]) == [cp]
    # the same candidates where nothing changed: both go
    flat = 100 * (1 + 0.03 * np.random.default_rng(8).standard_normal(60))
    assert changes.refine(flat, [30, 33]) == []


def test_of_two_spurious_candidates_the_one_with_the_smaller_effect_goes_first():
    '''Two steps, 6% at run 20 and 3.5% at run 40 (0.5% noise), and the spurious
    candidate run 30 between them: the spurious one goes, both steps stay. With the
    minimum effect at 5%, the smaller step goes too and the larger stays (tested again
    against the runs from 20 to the end: 3.5% more than before).'''
    x = 100 * (1 + 0.005 * np.random.default_rng(5).standard_normal(60))
    x[20:] *= 1.06
    x[40:] *= 1.035
    assert [c['index'] for c in changes.refine(x, [20, 30, 40])] == [20, 40]
    [cp] = changes.refine(x, [20, 30, 40], min_effect=0.05)
    assert cp['index'] == 20 and cp['after'] == pytest.approx(np.median(x[20:]))


def test_of_two_candidates_failing_only_their_p_value_the_less_certain_goes_first():
    '''Runs 0-9 near 100 (spread 3), 10-11 at 102 and 109, 12-21 near 109.5 (spread
    0.2): both candidates differ by more than the minimum effect (5.5% and 3.8%), and
    both fail the p-value with only two runs between them (0.12 and 0.03). The one that
    goes is the less certain, run 10 -- although its effect is the larger: past the
    minimum, the effect no longer ranks them --, and run 12, tested again against runs
    0-11, is the change point.'''
    x = np.concatenate([100 + np.linspace(-3, 3, 10), [102.0, 109.0],
                        109.5 + np.linspace(-0.2, 0.2, 10)])
    [cp] = changes.refine(x, [10, 12])
    assert cp['index'] == 12 and cp['pvalue'] < 0.01


def test_of_two_candidates_equally_weak_the_earlier_goes():
    '''Runs near 100, two at 110 and 110.5, runs near 121: both candidates fail the
    p-value alike (0.03: two runs against ten, apart) with effects past the minimum; the
    earlier goes, the later is the change point.'''
    x = np.concatenate([100 + np.linspace(-1, 1, 10), [110.0, 110.5],
                        121 + np.linspace(-1, 1, 10)])
    assert [c['index'] for c in changes.refine(x, [10, 12])] == [12]


def test_a_step_of_exactly_the_minimum_effect_is_a_change_point():
    '''Medians 100 and 103, exactly: a 3% step is MIN_EFFECT reached, not missed.'''
    spread = np.arange(-5, 6) * 0.1
    x = np.concatenate([100 + spread, 103 + spread])
    [cp] = changes.refine(x, [11])
    assert (cp['before'], cp['after'], cp['effect']) == (100.0, 103.0, changes.MIN_EFFECT)


def test_a_series_of_negative_values_rising_has_a_positive_effect_and_noise():
    '''A figure below zero (an offset, a difference) going from -100 to -90 rose by 10%
    of its size: the effect is +0.1, as a rise from 100 to 110 is, and the noise relative
    to the level is positive.'''
    spread = np.arange(-5, 6) * 0.1
    [cp] = changes.refine(np.concatenate([-100 + spread, -90 + spread]), [11])
    assert cp['effect'] == pytest.approx(0.1) and cp['noise'] > 0


def test_the_shortest_series_that_can_hold_a_change_is_two_least_segments():
    '''Ten runs (twice the least segment of 5) with a 50% step after the fifth: one
    change point; nine runs cannot hold two segments of 5 and give none.'''
    x = gauss(100, 10, cv=0.005, seed=2)
    x[5:] *= 1.5
    assert [c['index'] for c in changes.detect(x)] == [5]
    assert changes.detect(x[:9]) == []


@pytest.mark.parametrize('factor, found', [(0.98, False), (0.96, True), (1.02, False),
                                           (1.04, True)])
def test_a_step_smaller_than_three_percent_is_no_change_point_however_clear(factor, found):
    '''A quiet series (0.2% noise): a 2% step is beyond doubt statistically, yet below
    MIN_EFFECT (3%), what an operator acts on; a 4% step is a change point.'''
    x = gauss(100, 60, cv=0.002, seed=7)
    x[30:] *= factor
    cps = scan.find(records.frame(rows(x)))
    assert (len(cps) == 1) is found, cps
    if found:
        assert cps[0]['run'] == 31 and cps[0]['effect'] == pytest.approx(factor - 1, abs=0.005)


def test_each_tuning_the_scan_is_given_is_the_one_it_uses():
    '''A 6% step at 1% noise (run 31 of 60): found with the defaults; not with a minimum
    effect of 10%, a penalty of 500, a p-value of 1e-30, nor segments of 40 runs at least
    (no 40 runs on either side of run 31).'''
    x = gauss(100, 60, cv=0.01, seed=3)
    x[30:] *= 0.94
    df = records.frame(rows(x))
    _, found = changes.scan(df)
    assert [c['index'] for c in found] == [30]
    for kw in ({'min_effect': 0.10}, {'penalty': 500.0}, {'max_pvalue': 1e-30},
               {'min_size': 40}):
        assert changes.scan(df, **kw)[1] == [], kw


def test_change_points_come_in_the_order_of_their_series():
    '''Forty series (checks C00..C39, in reverse order in the table), each with a step:
    the scan lists them in the order of the series' keys, whatever the records' order; a
    series without an environment (an older record) after those with one.'''
    x = gauss(100, 30, cv=0.005, seed=99)
    x[15:] *= 0.8
    recs = [dict(r, environ=None) for r in rows(x, check='A')]
    for k in reversed(range(40)):
        x = gauss(100, 30, cv=0.005, seed=k)
        x[15:] *= 0.8
        recs += rows(x, check=f'C{k:02d}')
    _, found = changes.scan(records.frame(recs))
    assert [c['check'] for c in found] == [f'C{k:02d}' for k in range(40)] + ['A']


def test_what_the_user_tuned_is_passed_on_and_nothing_else():
    assert changes.tuning() == {}
    assert changes.tuning(penalty=8.0) == {'penalty': 8.0}
    assert changes.tuning(min_effect=0.05, max_pvalue=0.001) == {'min_effect': 0.05,
                                                                 'max_pvalue': 0.001}


def test_a_scans_summary_counts_its_regressions_and_the_series_it_read():
    df = records.frame(rows(gauss(100, 10)) + rows(gauss(50, 10), check='Other') +
                       rows(gauss(50, 10), check='Other', environ='mkl'))
    cps = [{'verdict': 'regression'}, {'verdict': 'improvement'}, {'verdict': 'regression'}]
    assert changes.summary(df, cps) == {'change_points': cps, 'regressions': 2, 'series': 3}
    assert changes.summary(7, []) == {'change_points': [], 'regressions': 0, 'series': 7}


def test_a_short_series_is_screened_with_the_tuning_it_is_scanned_with():
    '''A 1% step at 1% noise (run 31 of 60), the minimum effect 0.5%: not found at the
    default penalty, found at a penalty of 1 -- the screen that spares quiet series (of a
    window or less) takes the penalty it is given, as the scan does. The change point says
    its p-value (Mann-Whitney, below the 1% the scan keeps) and its noise relative to the
    level: the series was made at 1% a run (between 0.5% and 1.5% measured).'''
    x = gauss(100, 60, cv=0.01, seed=3)
    x[30:] *= 0.99
    df = records.frame(rows(x))
    assert changes.scan(df, min_effect=0.005)[1] == []
    [cp] = changes.scan(df, penalty=1.0, min_effect=0.005)[1]
    assert cp['index'] == 30 and cp['pvalue'] < 0.01, cp
    assert 0.005 < cp['noise'] < 0.015, cp


def test_a_step_nearer_the_start_than_the_least_segment_is_found_where_the_size_allows():
    '''A 10% step after run 3 of 60 at 1% noise: no segment of the default 5 runs fits
    before it (none found), one of 3 does (found at run 4).'''
    x = gauss(100, 60, cv=0.01, seed=3)
    x[3:] *= 0.9
    df = records.frame(rows(x))
    assert changes.scan(df)[1] == []
    assert [c['index'] for c in changes.scan(df, min_size=3)[1]] == [3]


def test_the_noise_of_a_single_run_is_none_at_all():
    '''No successive difference, no noise: 0, not NaN (a series of one run is drawn and
    screened like any other).'''
    import math

    assert changes.noise([7.5]) == 0.0 and changes.noise([]) == 0.0
    assert math.isclose(changes.noise([1.0, 3.0]), math.sqrt(2.0))


def test_a_change_from_a_median_of_zero_has_an_unbounded_effect_and_no_relative_noise():
    '''A counter that was 0 and is now 5 (a median of 0 before: no relative effect can be
    computed, it is unbounded); a series whose median is 0 (-1 then +1) has no noise
    relative to its level: both reported so, not a division by zero.'''
    import math

    x = [0.0] * 20 + [5.0 + 0.01 * k for k in range(20)]
    (cp,) = changes.refine(x, [20])
    assert (cp['index'], cp['before'], cp['effect']) == (20, 0.0, math.inf)
    x = [-1.0 - 0.01 * k for k in range(20)] + [1.0 + 0.01 * k for k in range(20)]
    (cp,) = changes.refine(x, [20], scale=(0.02, 0.0))
    assert cp['noise'] is None and cp['effect'] == pytest.approx((1.095 + 1.095) / 1.095)


@pytest.mark.parametrize('n', [41, 130, 6000])
def test_a_long_series_is_cut_in_windows_overlapping_by_half_and_no_more(n, monkeypatch):
    '''The windows' cost bound: a series of n runs longer than a window of w is cut in
    ceil((n - w) / (w / 2)) + 1 windows of w runs (the last one shorter, ending at the
    series' end), each starting half a window after the one before -- near-linear work,
    not one PELT per run.'''
    import math

    from mdxbench.post.analysis import screen

    seen = []

    def record(values, starts, ns, *a, **kw):
        seen.append((list(starts), list(ns)))
        return np.zeros(len(starts), dtype=bool)
    monkeypatch.setattr(screen, 'quiet', record)
    z = np.random.default_rng(3).standard_normal(n)
    _windowed(z)
    (starts, ns), = seen
    w = 40
    assert len(starts) == math.ceil((n - w) / (w // 2)) + 1
    assert starts == [k * (w // 2) for k in range(len(starts))]
    assert starts[-1] + ns[-1] == n and all(m == w for m in ns[:-1])
