'''Regression tracking on series made here (test input for the statistics, not benchmark
output): a stable baseline with noise, then a change after a cut.'''
import datetime as dt
import random

import pytest

from mdxbench.post.store import events
from mdxbench.post.store import records
from mdxbench.post.analysis import regress
from mdxbench.post.site import text

T0 = dt.datetime(2026, 10, 1, tzinfo=dt.timezone.utc)


def series(values, system='mdx2', part='vc16m32g', check='BabelStreamOmp', var='triad',
           unit='GB/s', start=T0, better=None):
    better = better or {'GB/s': 'higher', 'GFLOPS': 'higher', 'us': 'lower'}[unit]
    return [{'time': (start + dt.timedelta(days=i)).isoformat(), 'system': system,
             'partition': part, 'environ': 'spack', 'check': check, 'perf_var': var,
             'value': v, 'unit': unit, 'better': better, 'ref': None, 'result': 'pass',
             'jobid': str(i), 'nodes': 'n1', 'tags': '', 'meta': '{}'}
            for i, v in enumerate(values)]


def noisy(center, n, rel=0.01, seed=1):
    rnd = random.Random(seed)
    return [center * (1 + rnd.uniform(-rel, rel)) for _ in range(n)]


def verdicts(rows, **kw):
    t = regress.compare(records.frame(rows), **kw)
    return {(r['check'], r['perf_var']): r for r in t.iter_rows(named=True)}


def test_a_drop_after_the_cut_is_a_regression():
    rows = series(noisy(164, 10) + noisy(130, 3, seed=2))
    r = verdicts(rows, cut=T0 + dt.timedelta(days=10))[('BabelStreamOmp', 'triad')]
    assert r['verdict'] == 'regression'
    assert r['effect'] == pytest.approx(130 / r['base_median'] - 1, rel=0.05)
    assert r['base_n'] == 10 and r['latest_n'] == 3 and r['z'] < -3


def test_noise_is_not_a_regression():
    rows = series(noisy(164, 13, rel=0.02, seed=3))
    assert verdicts(rows, cut=T0 + dt.timedelta(days=10))[('BabelStreamOmp', 'triad')]['verdict'] \
        == 'unchanged'


def test_a_large_but_noisy_change_needs_both_effect_and_z():
    # baseline swings +-30%: a 10% lower median is within the noise
    rows = series(noisy(100, 10, rel=0.3, seed=4) + [90, 90, 90])
    assert verdicts(rows, cut=T0 + dt.timedelta(days=10))[('BabelStreamOmp', 'triad')]['verdict'] \
        == 'unchanged'


def test_a_rising_cache_miss_rate_is_a_regression():
    '''PerfCountersFft declares cache_miss_rate (unit %) lower-is-better: 5% -> 9% is a
    regression, whatever the unit; the same series declared higher-is-better is not.'''
    rows = series(noisy(5, 10) + [9, 9.1, 8.9], check='PerfCountersFft',
                  var='cache_miss_rate', unit='%', better='lower')
    assert verdicts(rows, cut=T0 + dt.timedelta(days=10))[
        ('PerfCountersFft', 'cache_miss_rate')]['verdict'] == 'regression'
    rows = [dict(r, better='higher') for r in rows]
    assert verdicts(rows, cut=T0 + dt.timedelta(days=10))[
        ('PerfCountersFft', 'cache_miss_rate')]['verdict'] == 'improvement'


def test_a_series_without_a_declared_direction_is_not_judged():
    rows = [dict(r, better=None) for r in series(noisy(5, 10) + [9, 9, 9], unit='GB/s')]
    assert verdicts(rows, cut=T0 + dt.timedelta(days=10))[
        ('BabelStreamOmp', 'triad')]['verdict'] == 'no-direction'


def test_every_check_declares_a_direction_for_every_perf_variable():
    from mdxbench import catalog

    for name, cls in catalog.check_classes().items():
        d = catalog.describe(cls)
        assert set(d['better']) == set(d['perf_vars']), name
        assert set(d['better'].values()) <= {'higher', 'lower'}, name


def test_latency_going_up_is_a_regression_and_down_an_improvement():
    up = series(noisy(74, 10) + [90, 91, 89], check='NetperfTcpRR', var='mean_rtt', unit='us')
    down = series(noisy(74, 10) + [55, 56, 54], check='SockperfPingPong', var='mean_rtt', unit='us')
    v = verdicts(up + down, cut=T0 + dt.timedelta(days=10))
    assert v[('NetperfTcpRR', 'mean_rtt')]['verdict'] == 'regression'
    assert v[('SockperfPingPong', 'mean_rtt')]['verdict'] == 'improvement'


def test_without_a_cut_the_latest_runs_are_compared_with_the_ones_before():
    rows = series(noisy(1344, 10) + [1000, 1010, 990], check='MklLinpackShm', var='gflops',
                  unit='GFLOPS')
    assert verdicts(rows, latest_runs=3)[('MklLinpackShm', 'gflops')]['verdict'] == 'regression'


def test_too_short_a_baseline_is_said_so():
    rows = series([100, 50])
    assert verdicts(rows, cut=T0 + dt.timedelta(days=1))[('BabelStreamOmp', 'triad')]['verdict'] \
        == 'no-baseline'


def test_events_cut_each_system_at_its_own_time(tmp_path):
    f = tmp_path / 'events.jsonl'
    events.add('mdx2', 'kernel-6.1', (T0 + dt.timedelta(days=10)).isoformat(), path=f)
    events.add('laurel', 'kernel-6.1', (T0 + dt.timedelta(days=5)).isoformat(), path=f)
    cuts = events.cut_for('kernel-6.1', path=f)
    rows = series(noisy(164, 10) + noisy(120, 3, seed=5)) + \
        series(noisy(490, 5) + noisy(490, 8, seed=6), system='laurel', part='compute')
    t = regress.compare(records.frame(rows), cut=cuts)
    v = {r['system']: r['verdict'] for r in t.iter_rows(named=True)}
    assert v == {'mdx2': 'regression', 'laurel': 'unchanged'}
    with pytest.raises(ValueError, match="no event named 'bios'.*kernel-6.1"):
        events.cut_for('bios', path=f)


def test_event_time_needs_a_zone(tmp_path):
    with pytest.raises(ValueError, match='time zone'):
        events.add('mdx2', 'x', '2026-11-01T00:00:00', path=tmp_path / 'e.jsonl')


def test_render_lists_only_changes():
    rows = series(noisy(164, 10) + noisy(130, 3, seed=2)) + \
        series(noisy(40, 13, seed=7), check='HpccStream')
    t = regress.compare(records.frame(rows), cut=T0 + dt.timedelta(days=10))
    shown = text.regressions(t)
    assert "BabelStreamOmp" in shown and "HpccStream" not in shown and "regression" in shown
