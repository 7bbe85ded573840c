'''Regression incidents, one per cause, on generated histories (test input for the
grouping, not benchmark output): a kernel update shifting 30 series of mdx2 and an
unrelated step on laurel are two incidents; a dip that returns is no open regression.'''
import datetime as dt

import numpy as np
import pytest

from mdxbench.post.analysis import incidents, scan
from mdxbench.post.store import records

from test_changes import T0, gauss, rows

CHECKS = [('BabelStreamOmp', 'triad', 'GB/s', 'higher'), ('HpccHpl', 'gflops', 'GFLOPS', 'higher'),
          ('NetperfTcpRR', 'p50_rtt', 'us', 'lower'), ('FioTarget', 'bandwidth', 'GB/s', 'higher'),
          ('OsuLatency', 'latency_8B', 'us', 'lower')]


def kernel(at, old='6.1.0-25', new='6.1.0-26'):
    return lambda i: {'suite_commit': 'a1b2c3d4e5f6', 'node_kernel': old if i < at else new}


def kernel_update_on_mdx2(n=60, at=30):
    '''30 series (5 checks x 3 parameter values x 2 partitions), each 12-25% worse from
    run ``at`` on, when the nodes' kernel changed.'''
    out, seed = [], 0
    for part in ('vc16m32g', 'vc224m498g'):
        for check, var, unit, better in CHECKS:
            for param in (1, 2, 3):
                seed += 1
                x = gauss(100 * param, n, seed=seed)
                worse = 0.75 + 0.13 * np.random.default_rng(seed).random()
                x[at:] *= worse if better == 'higher' else 1 / worse
                out += rows(x, check=f'{check} %p={param}', var=var, unit=unit, better=better,
                            part=part, meta=kernel(at))
    return out


def found_in(rs, events=()):
    return scan.find(records.frame(rs), events)


def test_a_kernel_update_and_an_unrelated_step_are_two_incidents():
    laurel = gauss(50, 60, seed=99)
    laurel[41:] *= 0.8
    found = incidents.group(found_in(kernel_update_on_mdx2() + rows(
        laurel, check='HpccStream', var='triad', system='laurel', part='compute')))
    assert len(found) == 2, [(i['system'], i['cause'], len(i['series'])) for i in found]
    mdx2, = [i for i in found if i['system'] == 'mdx2']
    assert mdx2['kind'] == 'provenance' and mdx2['cause'] == 'kernel 6.1.0-25 \u2192 6.1.0-26'
    assert mdx2['partition'] is None and len(mdx2['series']) == 30
    assert {s['partition'] for s in mdx2['series']} == {'vc16m32g', 'vc224m498g'}
    effects = [abs(s['effect']) for s in mdx2['series']]
    assert effects == sorted(effects, reverse=True)        # worst effect first
    laurel_inc, = [i for i in found if i['system'] == 'laurel']
    assert laurel_inc['kind'] == 'unexplained' and len(laurel_inc['series']) == 1
    assert laurel_inc['series'][0]['run'] == 42


def test_one_recorded_event_is_one_incident_scoped_to_its_partition():
    x, y = gauss(100, 60, seed=1), gauss(40, 60, seed=2)
    x[30:] *= 0.8
    y[30:] *= 0.8
    rs = rows(x) + rows(y, check='HpccStream', var='triad')
    ev = {'system': 'mdx2', 'name': 'flavor change', 'partition': 'vc16m32g',
          'time': (T0 + dt.timedelta(days=29, hours=12)).isoformat()}
    found = incidents.group(found_in(rs, [ev]))
    assert len(found) == 1 and found[0]['kind'] == 'event'
    assert found[0]['partition'] == 'vc16m32g' and len(found[0]['series']) == 2
    assert found[0]['cause'].startswith('event "flavor change"')


@pytest.mark.parametrize('dip', [3, 12])
def test_a_dip_that_returns_is_no_open_regression(dip):
    '''A 3-run dip is too short to be a change point; a 12-run dip is one, and the series
    coming back resolves its incident.'''
    x = gauss(100, 70, seed=4)
    x[30:30 + dip] *= 0.7
    found = incidents.group(found_in(rows(x)))
    state = incidents.update({}, found, '2026-11-23T00:00:00+00:00')
    assert incidents.open_regressions(state) == [] and incidents.to_notify(state) == []
    if dip == 3:
        assert found == []
    else:
        assert len(found) == 1 and found[0]['went_away']
        assert [h['state'] for h in state[found[0]['id']]['history']] == ['resolved']


@pytest.mark.parametrize('better,back,gone', [
    ('higher', 1.08, True),     # a quota lifted: back 8% above the old level
    ('higher', 0.85, False),    # only partly back: still a regression
    ('lower', 0.92, True),      # latency back below its old level
    ('lower', 1.15, False),
])
def test_a_series_back_at_its_old_level_or_better_went_away(better, back, gone):
    '''Issue 28: a node slowed by a quota, then restored, came back above its earlier
    level and its incident stayed open: better than before is gone too, in the series'
    own direction.'''
    x = gauss(100, 90, seed=6)
    x[30:60] *= 0.7 if better == 'higher' else 1 / 0.7
    x[60:] *= back
    found = incidents.group(found_in(rows(x, better=better)))
    assert len(found) == 1 and found[0]['went_away'] is gone, found
    state = incidents.update({}, found, '2026-11-23T00:00:00+00:00')
    assert (incidents.open_regressions(state) == []) is gone


def test_states_across_cycles_notify_only_new_and_reopened():
    x = gauss(100, 90, seed=5)
    x[30:45] *= 0.7                       # regression, returns at run 45, regresses at 65
    x[65:] *= 0.7
    t1, t2, t3 = '2026-11-01T00:00:00+00:00', '2026-11-02T00:00:00+00:00', '2026-11-03T00:00:00+00:00'
    first = incidents.update({}, incidents.group(found_in(rows(x[:40]))), t1)
    inc, = first.values()
    assert inc['state'] == 'new' and incidents.to_notify(first) == [inc]
    # a failed notification: still to notify next cycle
    retry = incidents.update(first, incidents.group(found_in(rows(x[:40]))), t2)
    assert incidents.to_notify(retry) == [retry[inc['id']]]
    incidents.notified(retry[inc['id']], t2)
    # the same history again: no state changes, nothing to tell
    again = incidents.update(retry, incidents.group(found_in(rows(x[:40]))), t2)
    assert again == retry and incidents.to_notify(again) == []
    back = incidents.update(again, incidents.group(found_in(rows(x[:60]))), t2)
    assert back[inc['id']]['state'] == 'resolved' and incidents.to_notify(back) == []
    worse = incidents.update(back, incidents.group(found_in(rows(x))), t3)
    assert worse[inc['id']]['state'] == 'reopened'
    told = incidents.to_notify(worse)
    assert inc['id'] in {i['id'] for i in told} and len(told) == 2   # and the new step's
    assert [h['state'] for h in worse[inc['id']]['history']] == ['new', 'open', 'resolved',
                                                                  'reopened']


def test_an_acknowledged_incident_stays_so_and_is_not_notified():
    x = gauss(100, 60, seed=6)
    x[30:] *= 0.7
    found = incidents.group(found_in(rows(x)))
    state = incidents.update({}, found, '2026-11-01T00:00:00+00:00')
    ident = found[0]['id']
    incidents.acknowledge(state, ident[:6], 'known: BIOS setting, ticket 42',
                          '2026-11-01T01:00:00+00:00', who='operator')
    later = incidents.update(state, found, '2026-11-02T00:00:00+00:00')
    assert later[ident]['state'] == 'acknowledged' and incidents.to_notify(later) == []
    assert later[ident]['ack']['note'] == 'known: BIOS setting, ticket 42'
    with pytest.raises(ValueError, match='no such incident'):
        incidents.acknowledge(later, 'zzz', 'x', '2026-11-02T00:00:00+00:00')


def test_the_incident_id_is_stable_across_cycles():
    rs = kernel_update_on_mdx2()
    a = incidents.group(found_in(rs))
    b = incidents.group(found_in(rs + rows(gauss(7, 60, seed=77), check='Other', var='v')))
    assert [i['id'] for i in a] == [i['id'] for i in b]


@pytest.mark.parametrize('y_back, gone', [(True, True), (False, False)])
def test_an_incident_went_away_only_when_every_series_did(y_back, gone):
    '''One event, two series down 20% from run 30; x is back from run 60, y only where
    ``y_back``. An incident with one series still down is open: the one that recovered
    does not resolve it.'''
    x, y = gauss(100, 90, seed=1), gauss(40, 90, seed=2)
    x[30:60] *= 0.8
    y[30:60 if y_back else 90] *= 0.8
    rs = rows(x) + rows(y, check='HpccStream', var='triad')
    ev = {'system': 'mdx2', 'name': 'flavor change', 'partition': 'vc16m32g',
          'time': (T0 + dt.timedelta(days=29, hours=12)).isoformat()}
    [inc] = incidents.group(found_in(rs, [ev]))
    assert {s['check']: s['went_away'] for s in inc['series']} == \
        {'BabelStreamOmp': True, 'HpccStream': y_back}
    assert inc['went_away'] is gone
    state = incidents.update({}, [inc], '2026-11-23T00:00:00+00:00')
    assert (incidents.open_regressions(state) == []) is gone


@pytest.mark.parametrize('better, level, gone', [
    ('higher', 97.5, True),     # 2.5% short of the old level: within the 3% of noise
    ('higher', 96.0, False),    # 4% short: still down
    ('lower', 102.5, True),
    ('lower', 104.0, False),
    (None, 97.5, True),
    (None, 104.0, False),
])
def test_back_means_within_three_percent_of_the_old_level(better, level, gone):
    '''A series is back when its latest level is within MIN_EFFECT (3%) of where it was
    before the regression, on the worse side; better is back too.'''
    cp = {'before': 100.0, 'better': better}
    assert incidents.went_away(cp, level) is gone


def _cp(**kw):
    cp = {'events': [], 'changed': {}, 'partition': 'vc16m32g', 'check': 'HpccHpl',
          'environ': 'spack', 'jobid': '131'}
    cp.update(kw)
    return cp


def test_the_cause_in_words_an_operator_reads():
    '''Of two events, the earliest names the incident; provenance changes in their order,
    an empty side as "?"; new nodes with the partition; else nothing recorded.'''
    ev = [{'time': '2026-11-02T00:00:00+00:00', 'name': 'b', 'partition': 'p2'},
          {'time': '2026-11-01T00:00:00+00:00', 'name': 'z', 'partition': 'p1'}]
    assert incidents.cause(_cp(events=ev)) == (
        'p1', 'event', 'event "z" at 2026-11-01T00:00:00+00:00')
    changed = {'node_kernel': [['6.1.0-25'], ['6.1.0-26', '6.1.0-27']], 'binary': [[], ['x']],
               'new nodes': [['n1'], ['n1', 'n9']]}
    assert incidents.cause(_cp(changed=changed)) == (
        None, 'provenance', 'binary ? \u2192 x; node_kernel 6.1.0-25 \u2192 6.1.0-26, 6.1.0-27')
    assert incidents.cause(_cp(changed={'new nodes': [['n1'], ['n1', 'n9']]})) == (
        'vc16m32g', 'nodes', 'new nodes n1, n9')
    assert incidents.cause(_cp()) == (
        'vc16m32g', 'unexplained', 'nothing recorded: HpccHpl in spack from job 131 on')


def test_an_incident_id_is_the_same_in_every_version():
    '''The recipe, computed here by itself (the first 10 hex digits of SHA-1 of system,
    scope, cause and the day joined by "|"): an id that changed between versions would open
    every incident again as new.'''
    import hashlib

    raw = 'mdx2||kernel a \u2192 b|2026-11-01'
    assert incidents.incident_id('mdx2', None, 'kernel a \u2192 b', '2026-11-01T05:00:00+00:00') \
        == hashlib.sha1(raw.encode()).hexdigest()[:10]
    raw = 'mdx2|vc16m32g|x|2026-11-01'
    assert incidents.incident_id('mdx2', 'vc16m32g', 'x', '2026-11-01T23:59:59+00:00') \
        == hashlib.sha1(raw.encode()).hexdigest()[:10]


def test_states_an_operator_acts_on_word_for_word():
    inc = {'abc123': {'state': 'new', 'history': []}, 'abd456': {'state': 'open', 'history': []},
           'b00001': {'state': 'reopened', 'history': []},
           'c00001': {'state': 'resolved', 'history': []}}
    assert [i['state'] for i in incidents.open_regressions(inc)] == ['new', 'open', 'reopened']
    with pytest.raises(ValueError) as err:
        incidents.find(inc, 'ab')
    assert str(err.value) == "incident 'ab': ambiguous (abc123, abd456)"
    with pytest.raises(ValueError) as err:
        incidents.find(inc, 'zz')
    assert str(err.value) == "incident 'zz': no such incident"
    acked = incidents.acknowledge(inc, 'abc', 'kernel rollback planned', 'T1', who='ops')
    assert acked['ack'] == {'time': 'T1', 'note': 'kernel rollback planned', 'by': 'ops'}
    assert acked['history'] == [{'time': 'T1', 'state': 'acknowledged'}]
    told = incidents.notified(inc['b00001'], 'T2')
    assert told['state'] == 'open' and told['history'] == [{'time': 'T2', 'state': 'open'}]
    # acknowledged stays so whatever the series do
    assert incidents.next_state('acknowledged', True) == 'acknowledged'
    assert incidents.next_state('acknowledged', False) == 'acknowledged'


def test_an_incident_found_again_carries_its_latest_series_and_cause():
    found = {'id': 'i1', 'went_away': False, 'series': [{'effect': -0.2}], 'cause': 'a'}
    state = incidents.update({}, [found], 'T1')
    assert state['i1']['ack'] is None and state['i1']['first_seen'] == 'T1'
    assert state['i1']['history'] == [{'time': 'T1', 'state': 'new'}]
    again = dict(found, series=[{'effect': -0.3}], cause='b', went_away=True)
    state = incidents.update(state, [again], 'T2')
    assert state['i1']['series'] == [{'effect': -0.3}] and state['i1']['cause'] == 'b'
    assert state['i1']['state'] == 'resolved' and state['i1']['first_seen'] == 'T1'


def _reg(check, time, effect, before=100.0, after=None, changed=None, **kw):
    '''A regression change point as the scan reports it (test input).'''
    cp = {'system': 'mdx2', 'partition': 'vc16m32g', 'environ': 'spack', 'check': check,
          'perf_var': 'triad', 'unit': 'GB/s', 'effect': effect, 'before': before,
          'after': before * (1 + effect) if after is None else after, 'time': time,
          'run': 7, 'jobid': '131', 'nodes': 'n1', 'noise': 0.01, 'better': 'higher',
          'changed': changed if changed is not None else {'binary': [['a'], ['b']]},
          'explanation': 'binary a \u2192 b', 'events': [], 'verdict': 'regression'}
    cp.update(kw)
    return cp


def test_a_series_entry_carries_what_the_incident_page_shows():
    given = {'before': {'num_times': 100}, 'after': {'num_times': 20}}
    cp = _reg('HpccHpl', '2026-11-01T00:00:00+00:00', -0.2, variables=given,
              run_seconds=42.5)
    assert incidents.series_entry(cp, True) == {
        'partition': 'vc16m32g', 'environ': 'spack', 'check': 'HpccHpl', 'perf_var': 'triad',
        'unit': 'GB/s', 'effect': -0.2, 'before': 100.0, 'after': 80.0,
        'time': '2026-11-01T00:00:00+00:00', 'run': 7, 'jobid': '131', 'nodes': 'n1',
        'noise': 0.01, 'better': 'higher', 'changed': {'binary': [['a'], ['b']]},
        'explanation': 'binary a \u2192 b', 'went_away': True,
        'variables': {'before': {'num_times': 100}, 'after': {'num_times': 20}},
        'run_seconds': 42.5}
    # a change point of an older scan, without nodes, noise, direction, variables or time
    old = {k: v for k, v in cp.items()
           if k not in ('nodes', 'noise', 'better', 'variables', 'run_seconds')}
    e = incidents.series_entry(old, False)
    assert (e['nodes'], e['noise'], e['better'], e['went_away'], e['variables'],
            e['run_seconds']) == ('', None, None, False, {}, None)


def test_an_incident_is_written_as_sorted_json_one_space_a_level():
    '''incidents.json (and what the cycle's notify command reads on its standard input):
    keys sorted, one space of indentation, a time written as its text.'''
    inc = {'id': 'abc', 'start': dt.datetime(2026, 11, 1, tzinfo=dt.timezone.utc), 'b': [1]}
    assert incidents.to_json(inc) == ('{\n "b": [\n  1\n ],\n "id": "abc",\n'
                                      ' "start": "2026-11-01 00:00:00+00:00"\n}')


def test_a_change_of_software_is_one_incident_a_week_and_the_worst_comes_first():
    '''Provenance changes of the same words: within WINDOW (7 days) of the first, one
    incident; after it, another (the same binary change made again). An event's
    regressions are one incident however far apart. The incidents open first, the largest
    effect first; each incident's id is the recipe's (system, scope, cause, first day).'''
    import hashlib

    event = [{'time': '2026-10-01T00:00:00+00:00', 'name': 'kernel', 'partition': 'vc16m32g'}]
    cps = [_reg('A', '2026-11-01T00:00:00+00:00', -0.15),
           _reg('B', '2026-11-07T23:00:00+00:00', -0.30),
           _reg('C', '2026-11-08T01:00:00+00:00', -0.20),
           _reg('D', '2026-11-01T00:00:00+00:00', -0.40, events=event),
           _reg('E', '2026-11-20T00:00:00+00:00', -0.12, events=event)]
    found = incidents.group(cps)
    assert [[s['check'] for s in i['series']] for i in found] == [['D', 'E'], ['B', 'A'], ['C']]
    text = 'binary a \u2192 b'
    raw = f'mdx2||{text}|2026-11-01'
    assert found[1]['cause'] == text and found[1]['id'] == hashlib.sha1(raw.encode()).hexdigest()[:10]
    assert found[2]['id'] == hashlib.sha1(f'mdx2||{text}|2026-11-08'.encode()).hexdigest()[:10]
    ev = 'event "kernel" at 2026-10-01T00:00:00+00:00'
    assert (found[0]['partition'], found[0]['cause']) == ('vc16m32g', ev)
    assert found[0]['id'] == hashlib.sha1(f'mdx2|vc16m32g|{ev}|2026-11-01'.encode()).hexdigest()[:10]


def test_the_went_away_margin_is_the_one_the_caller_gives():
    '''A series 20% down, whose later level is back at 95 of 100: back within 10% (the
    default 3% says not), and group() passes its min_effect on.'''
    cps = [_reg('A', '2026-11-01T00:00:00+00:00', -0.2),
           dict(_reg('A', '2026-11-05T00:00:00+00:00', 0.1875, before=80.0, after=95.0),
                verdict='improvement')]
    assert incidents.group(cps)[0]['went_away'] is False
    assert incidents.group(cps, min_effect=0.1)[0]['went_away'] is True
    assert incidents.went_away(cps[0], None) is False


def test_a_provenance_change_names_every_value_of_each_side():
    changed = {'node_kernel': [['6.1.0-25', '6.1.0-26'], []]}
    assert incidents.cause(_cp(changed=changed)) == (
        None, 'provenance', 'node_kernel 6.1.0-25, 6.1.0-26 \u2192 ?')


def _given(at, old, new, seconds=(30.0, 150.0), recorded_from=0):
    '''The meta of a BabelStream run i: its variables (num_times ``old`` before run ``at``,
    ``new`` from it on; none recorded before ``recorded_from``) and its job's seconds.'''
    def meta(i):
        m = {'suite_commit': 'a1b2c3d4e5f6', 'node_kernel': '6.1.0-25'}
        if i >= recorded_from:
            m['variables'] = {'llc_factor': 4, 'num_times': old if i < at else new}
            m['run_seconds'] = seconds[0] if i < at else seconds[1]
        return m
    return meta


def test_a_change_of_a_variable_is_named_like_a_change_of_binary():
    '''BabelStream's triad 20% lower from run 31 on, when its runs were given num_times 100
    instead of 20 (-S): one incident whose cause names the variable and its values, the
    other variable unchanged; the series stays one series, the step explained; each side's
    variables and the longest job either side are carried for a split.'''
    x = gauss(300, 60, seed=5)
    x[30:] *= 0.8
    found = incidents.group(found_in(rows(x, check='BabelStreamOmp', var='triad',
                                          meta=_given(30, 20, 100))))
    inc, = found
    assert inc['kind'] == 'provenance' and inc['cause'] == 'variable num_times 20 \u2192 100'
    s, = inc['series']
    assert s['changed'] == {'variable num_times': [['20'], ['100']]}
    assert 'variable num_times 20 \u2192 100' in s['explanation']
    assert s['variables'] == {'before': {'llc_factor': 4, 'num_times': 20},
                              'after': {'llc_factor': 4, 'num_times': 100}}
    assert s['run_seconds'] == 150.0 and s['run'] == 31


def test_unchanged_variables_are_said_and_runs_that_recorded_none_are_no_change():
    '''The same step with num_times 20 throughout: variables unchanged (said), the step
    unexplained. And where the runs before the step recorded no variables (written before
    runs did), nothing is claimed to have changed.'''
    x = gauss(300, 60, seed=5)
    x[30:] *= 0.8
    inc, = incidents.group(found_in(rows(x, check='BabelStreamOmp', var='triad',
                                         meta=_given(30, 20, 20))))
    assert inc['kind'] == 'unexplained'
    assert 'variables' in inc['series'][0]['explanation'].split('; ')[-2]
    inc, = incidents.group(found_in(rows(x, check='BabelStreamOmp', var='triad',
                                         meta=_given(30, 20, 100, recorded_from=30))))
    assert inc['kind'] == 'unexplained' and inc['series'][0]['changed'] == {}
    assert inc['series'][0]['variables']['before'] == {}
