'''Per-node acceptance verdicts on measurements made up here (test input, not benchmark
output): eight nodes, one slow, one failing its reference, one drained.'''
import datetime as dt
import json

from mdxbench.post.fleet import jobs, verdicts
from mdxbench.post.site import text
from mdxbench.post.store import records

T = dt.datetime(2026, 11, 1, tzinfo=dt.timezone.utc)
META = json.dumps({'tags': ['acceptance', 'memory']})
BETTER = {'GB/s': 'higher', 'us': 'lower'}


def rows(values, check='BabelStreamOmp', var='triad', unit='GB/s', results=None,
         tags='acceptance,memory', meta=META):
    out = []
    for i, (node, v) in enumerate(values.items()):
        out.append({'time': (T + dt.timedelta(minutes=i)).isoformat(), 'system': 'mdx2',
                    'partition': 'vc16m32g', 'environ': 'spack', 'check': check,
                    'perf_var': var, 'value': v, 'unit': unit, 'better': BETTER[unit],
                    'ref': 164.0, 'result': (results or {}).get(node, 'pass'), 'jobid': str(i),
                    'nodes': node, 'tags': tags, 'meta': meta})
    return out


def test_outlier_failed_reference_and_untested_nodes():
    bw = {f'n{i}': 160 + i * 0.5 for i in range(8)}
    bw['n5'] = 120.0                                     # far below the other nodes
    lat = {f'n{i}': 74 + (i % 3) * 0.3 for i in range(8)}
    df = records.frame(rows(bw, results={'n2': 'fail'}) +
                       rows(lat, check='NetperfTcpRR', var='mean_rtt', unit='us'))
    states = {f'n{i}': 'idle' for i in range(8)} | {'n8': 'drained', 'n9': 'idle'}
    v = {x['node']: x for x in verdicts.judge(df, states)}
    assert v['n5']['verdict'] == 'fail' and 'outlier' in v['n5']['reasons'][0]
    assert v['n2']['verdict'] == 'fail' and 'fail against the reference' in v['n2']['reasons'][0]
    assert v['n8']['verdict'] == 'not tested' and 'drained' in v['n8']['reasons'][0]
    assert v['n9']['verdict'] == 'not tested'
    assert {n for n, x in v.items() if x['verdict'] == 'pass'} == {'n0', 'n1', 'n3', 'n4', 'n6', 'n7'}
    out = json.loads(verdicts.to_json(list(v.values())))
    assert out['summary'] == {'pass': 6, 'fail': 2, 'undecided': 0, 'not tested': 2}
    assert 'n5' in text.node_verdicts(list(v.values()))


def test_drained_node_with_old_results_is_not_passed():
    df = records.frame(rows({'n0': 160.0, 'n1': 161.0, 'n2': 159.0}))
    v = {x['node']: x for x in verdicts.judge(df, {'n0': 'idle', 'n1': 'drain', 'n2': 'down*'})}
    assert v['n1']['verdict'] == 'not tested' and v['n2']['verdict'] == 'not tested'
    assert v['n0']['verdict'] == 'pass'


def test_slower_latency_is_the_worse_side():
    lat = {f'n{i}': 74.0 + i * 0.1 for i in range(6)}
    lat['n3'] = 60.0        # faster: not a failure
    lat['n4'] = 95.0        # slower: outlier
    df = records.frame(rows(lat, check='NetperfTcpRR', var='mean_rtt', unit='us'))
    v = {x['node']: x['verdict'] for x in verdicts.judge(df)}
    assert v['n3'] == 'pass' and v['n4'] == 'fail'


def test_acceptance_records_are_chosen_by_their_tags_not_by_text():
    """A record whose meta merely mentions "acceptance" (here in its command line) is not
    an acceptance measurement; one tagged so is."""
    meta = json.dumps({'tags': ['memory'], 'command': 'run --mode "acceptance"'})
    df = records.frame(rows({'n0': 160.0, 'n1': 10.0, 'n2': 161.0}, tags='memory', meta=meta))
    assert verdicts.judge(df) == []
    df = records.frame(rows({'n0': 160.0, 'n1': 10.0, 'n2': 161.0, 'n3': 160.5}))
    assert {x['node']: x['verdict'] for x in verdicts.judge(df)}['n1'] == 'fail'


def test_the_declared_direction_decides_the_worse_side():
    """The same values with the unit '%' judged both ways: only the declaration counts."""
    vals = {f'n{i}': 5.0 + i * 0.01 for i in range(6)}
    vals['n4'] = 9.0
    for better, verdict in (('lower', 'fail'), ('higher', 'pass')):
        df = records.frame([dict(r, unit='%', better=better)
                            for r in rows(vals, check='PerfCountersFft', var='cache_miss_rate')])
        assert {x['node']: x['verdict'] for x in verdicts.judge(df)}['n4'] == verdict, better


def test_a_run_that_failed_before_measuring_fails_its_node_with_the_checks_reason():
    '''NodeConformance on n1 found a wrong kernel: its perflog line has no value, result
    fail, and the sanity message in meta.failure; the node fails with that reason.'''
    why = 'nodefacts: node n1 is not what mdx2:vc16m32g declares: kernel: declared 6.1, found 6.2'
    bad = json.dumps({'tags': ['acceptance', 'conformance'], 'failure': why})
    ok = json.dumps({'tags': ['acceptance', 'conformance']})
    conf = rows({'n0': 16.0, 'n1': None, 'n2': 16.0}, check='NodeConformance', var='cpus',
                unit='GB/s', meta=ok)
    conf[1]['result'] = None            # no perf result: the run failed before it
    conf[1]['meta'] = bad
    df = records.frame(conf + rows({'n0': 160.0, 'n1': 161.0, 'n2': 159.0}))
    v = {x['node']: x for x in verdicts.judge(df)}
    assert v['n1']['verdict'] == 'fail' and v['n1']['reasons'] == [f'NodeConformance: failed: {why}']
    assert v['n0']['verdict'] == v['n2']['verdict'] == 'pass'


def test_nodes_that_agree_closely_do_not_make_a_small_difference_an_outlier():
    '''Seven nodes within 0.2% of each other: 4% lower is beyond 3 MADs but within the
    10% an operator accepts (min_effect); 15% lower fails.'''
    bw = {f'n{i}': 160 + (i % 3) * 0.1 for i in range(7)} | {'n7': 153.6}
    assert all(x['verdict'] == 'pass' for x in verdicts.judge(records.frame(rows(bw))))
    bw['n7'] = 136.0
    v = {x['node']: x for x in verdicts.judge(records.frame(rows(bw)))}
    assert v['n7']['verdict'] == 'fail' and 'outlier' in v['n7']['reasons'][0]
    assert {n for n, x in v.items() if x['verdict'] == 'pass'} == {f'n{i}' for i in range(7)}
    # a stricter operator
    strict = verdicts.judge(records.frame(rows(dict(bw, n7=153.6))), min_effect=0.02)
    assert [x['node'] for x in strict if x['verdict'] == 'fail'] == ['n7']


def test_parameters_of_a_check_are_separate_measurements_but_distributes_node_is_not():
    '''fio's workloads are compared among themselves; ReFrame's --distribute parameter
    ($nid) names the node and is not part of the measurement.'''
    seq = {f'n{i}': 2.0 + i * 0.01 for i in range(4)}
    rnd = {f'n{i}': 0.2 + i * 0.001 for i in range(4)}
    df = records.frame(rows(seq, check='FioTarget %workload=seqread') +
                       rows(rnd, check='FioTarget %workload=randread'))
    # pooled, the random-read figures would all be far below the sequential ones
    assert all(x['verdict'] == 'pass' for x in verdicts.judge(df))
    nid = [dict(r, check=f"HpccHpl %$nid={r['nodes']}")
           for r in rows({'n0': 50.0, 'n1': 51.0, 'n2': 49.0, 'n3': 5.0}, unit='GB/s')]
    v = {x['node']: x for x in verdicts.judge(records.frame(nid))}
    assert v['n3']['verdict'] == 'fail'
    assert v['n3']['reasons'][0].startswith('HpccHpl triad=5 GB/s: outlier')


def test_failures_known_elsewhere_and_checks_missing_on_a_node_fail_it():
    df = records.frame(rows({'n0': 160.0, 'n1': 161.0, 'n2': 159.0}) +
                       rows({'n0': 16.0, 'n1': 16.0}, check='NodeConformance', var='cpus'))
    states = {'n0': 'idle', 'n1': 'idle', 'n2': 'idle', 'n3': 'idle'}
    fails = {'n3': [('job', 'job 7 (TIMEOUT, exit 0:0) left no ReFrame report')]}
    v = {x['node']: x for x in verdicts.judge(df, states, failures=fails, same_checks=True)}
    assert v['n2']['verdict'] == 'fail'
    assert v['n2']['reasons'] == ['NodeConformance: no record from this node (recorded on '
                                  '2 other nodes)']
    # a node whose job left nothing is failed, not "not tested"
    assert v['n3']['verdict'] == 'fail'
    assert v['n3']['reasons'] == ['job 7 (TIMEOUT, exit 0:0) left no ReFrame report']
    assert v['n0']['verdict'] == v['n1']['verdict'] == 'pass'
    # without same_checks (records of several sessions), a missing check is no verdict
    v = {x['node']: x for x in verdicts.judge(df)}
    assert v['n2']['verdict'] == 'pass'


def test_a_node_far_below_is_an_outlier_even_when_few_noisy_nodes_inflate_the_mad():
    '''The fio bandwidths (GB/s) of a CI run on 7 namespace nodes: n3 starved of CPU, n6's
    disk limited to 20 MB/s. The MAD (1.63) puts n6 only 2.4 robust deviations below the
    median; 50% below (gross) is an outlier whatever the spread.'''
    bw = {'n1': 7.364, 'n2': 7.647, 'n3': 3.597, 'n4': 5.732, 'n5': 6.134, 'n6': 0.02104,
          'n8': 5.396}
    v = {x['node']: x for x in verdicts.judge(records.frame(rows(bw)))}
    assert [n for n, x in v.items() if x['verdict'] == 'fail'] == ['n6']
    assert v['n6']['reasons'] == ["BabelStreamOmp triad=0.02104 GB/s: outlier (nodes' "
                                  "median 5.732)"]
    # without the gross rule, n6 would pass
    lax = {x['node']: x for x in verdicts.judge(records.frame(rows(bw)), gross=10)}
    assert lax['n6']['verdict'] == 'pass'


def test_a_node_measured_again_fails_only_on_what_failed_both_times():
    """n6 failed on fio, then (measured again) on HPL: nothing repeated, it passes with
    the HPL reason kept as not repeated; n3 failed on HPL both times: it fails on HPL only;
    n5's job died both times: it fails."""
    hpl = {'n1': 68.0, 'n2': 67.0, 'n3': 9.5, 'n4': 69.0, 'n5': 70.0, 'n6': 30.0, 'n8': 68.5}
    df = records.frame(rows(hpl, check='HpccHpl', var='gflops'))
    fails = {'n5': [('job', 'job 31 (NODE_FAIL, exit 0:0) left no ReFrame report')]}
    first = verdicts.judge(df, failures=fails)
    before = {'n6': {'FioTarget %workload=seqwrite bandwidth'}, 'n3': {'HpccHpl gflops'},
              'n5': {'job'}}
    v = {x['node']: x for x in verdicts.confirm(first, before)}
    assert v['n6']['verdict'] == 'pass' and v['n6']['reasons'] == []
    assert v['n6']['unconfirmed'] == ["HpccHpl gflops=30 GB/s: outlier (nodes' median 68)"]
    assert v['n3']['verdict'] == 'fail'
    assert v['n3']['reasons'] == ["HpccHpl gflops=9.5 GB/s: outlier (nodes' median 68)"]
    assert v['n5']['verdict'] == 'fail' and v['n5']['keys'] == ['job']
    assert '(not repeated: HpccHpl gflops=30' in text.node_verdicts(list(v.values()))


def test_a_nodes_reasons_are_worst_first_so_the_drain_reason_keeps_them():
    '''A CPU-starved node fails on HPL (far below) and on fio (a little below): the drain
    reason Slurm keeps (200 characters) names the worse one first, whatever order the
    records came in (Polars' grouping order is not stable: twenty tries).'''
    hpl = {f'n{i}': 50.0 + i * 0.2 for i in range(6)} | {'n3': 7.7}
    fio = {f'n{i}': 9.7 + i * 0.02 for i in range(6)} | {'n3': 7.9}
    for order in (1, -1) * 10:
        df = records.frame((rows(fio, check='FioTarget', var='bandwidth')
                            + rows(hpl, check='HpccHpl', var='gflops'))[::order])
        v = {x['node']: x for x in verdicts.judge(df)}
        assert [r.split('=')[0] for r in v['n3']['reasons']] == ['HpccHpl gflops',
                                                                 'FioTarget bandwidth']
        [line] = jobs.drain_lines(list(v.values()))
        assert 'HpccHpl gflops=7.7 GB/s' in line


def test_the_outcome_of_a_run_is_fail_then_undecided_then_pass():
    '''mdxbench accept's exit: a failed node wins (1), an undecided one next (3), else 0.'''
    from mdxbench.post.fleet import verdicts as v

    def run(*words):
        return [{'node': f'n{i}', 'verdict': w} for i, w in enumerate(words)]

    assert v.outcome(run('pass', 'undecided', 'fail')) == 'fail'
    assert v.outcome(run('pass', 'undecided', 'not tested')) == 'undecided'
    assert v.undecided(run('pass', 'undecided')) == ['n1']
    assert v.outcome(run('pass', 'pass')) == 'pass'
    assert v.outcome(run('pass', 'not tested')) == 'untested'
    assert v.outcome([]) == 'untested'


def test_with_the_paired_test_only_a_gross_outlier_fails_on_one_reading():
    '''Issue 44: where the suspects' paired test runs (``paired``), an outlier short of
    gross fails nobody on one reading: it is a suspect, found with its deficit, and decided
    on paired runs; 50% below still fails at once (and is measured again); a failed
    reference still fails. Without ``paired`` (``--no-suspects``) the outlier fails.'''
    from mdxbench.post.fleet import suspects

    bw = {f'n{i}': 160 + (i % 3) * 0.1 for i in range(6)} | {'n6': 136.0, 'n7': 70.0}
    df = records.frame(rows(bw, results={'n2': 'fail'}))
    alone = {x['node']: x for x in verdicts.judge(df)}
    assert {n for n, x in alone.items() if x['verdict'] == 'fail'} == {'n2', 'n6', 'n7'}
    found = verdicts.judge(df, paired=True)
    v = {x['node']: x for x in found}
    assert {n for n, x in v.items() if x['verdict'] == 'fail'} == {'n2', 'n7'}
    assert v['n7']['reasons'] == ["BabelStreamOmp triad=70 GB/s: outlier (nodes' median 160.1)"]
    [m] = v['n6']['measurements']
    assert v['n6']['verdict'] == 'pass' and m['outlier'] and not m['gross']
    assert v['n7']['measurements'][0]['gross']
    cases = suspects.find(found, 0.1, None, set(bw))
    assert list(cases) == ['n6'] and cases['n6'][0]['why'] == 'fleet'
    assert abs(cases['n6'][0]['deficit_first'] - (1 - 136 / 160.1)) < 1e-3


def test_accepts_exit_tells_a_cron_job_pass_undecided_and_fail_apart():
    '''A script that drains on 1 and retries on 3 must not be told 0 for an undecided run,
    nor 0 for a run that tested no node.'''
    from mdxbench.post import exits
    from mdxbench.post.commands import accept

    def run(*words):
        return accept.exit_status(verdicts.outcome(
            [{'node': f'n{i}', 'verdict': w} for i, w in enumerate(words)]))

    assert run('pass', 'pass') == 0
    assert run('pass', 'undecided') == 3 == exits.UNDECIDED
    assert run('undecided', 'fail') == 1 == exits.FOUND
    assert run('not tested') == 1


def _triad(values):
    return records.frame(rows(values))


def test_half_the_median_is_the_gross_line_where_the_paired_test_decides_the_rest():
    '''With the paired test (``paired``), one reading fails a node only when it is gross:
    more than half the nodes' median worse. 48% below is a suspect, left to the paired
    runs; 52% below fails at once. (The median of the eight nodes: 160.75; n6 at 83.2 is
    48.2% below it, n7 at 76.8 52.2%.)'''
    bw = {f'n{i}': 160.0 + i * 0.3 for i in range(6)} | {'n6': 83.2, 'n7': 76.8}
    v = {x['node']: x for x in verdicts.judge(_triad(bw), paired=True)}
    assert v['n6']['verdict'] == 'pass' and v['n6']['measurements'][0]['outlier']
    assert not v['n6']['measurements'][0]['gross']
    assert v['n7']['verdict'] == 'fail' and v['n7']['measurements'][0]['gross']


def test_a_node_is_judged_by_its_latest_run():
    '''n3 measured twice: the verdict is of its later run, whichever way it went (a node
    measured again after a fix passes; one that broke since fails).'''
    base = {f'n{i}': 160.0 + i * 0.3 for i in range(6)}
    for first, later, verdict in ((120.0, 160.5, 'pass'), (160.5, 120.0, 'fail')):
        early = rows(base | {'n3': first})
        late = rows({'n3': later})
        for r in late:
            r['time'] = (T + dt.timedelta(hours=1)).isoformat()
        v = {x['node']: x for x in verdicts.judge(records.frame(early + late))}
        assert v['n3']['verdict'] == verdict, (first, later, v['n3'])
        assert [m['value'] for m in v['n3']['measurements']] == [later]


def test_three_nodes_are_enough_to_judge_an_outlier_and_two_are_not():
    '''The least a fleet judges by (``min_nodes``, 3): three nodes with one at half the
    others' rate fail it; of two, neither is told from the other.'''
    three = {x['node']: x['verdict'] for x in verdicts.judge(_triad(
        {'n0': 160.0, 'n1': 161.0, 'n2': 60.0}))}
    assert three == {'n0': 'pass', 'n1': 'pass', 'n2': 'fail'}
    two = {x['node']: x['verdict'] for x in verdicts.judge(_triad({'n0': 160.0, 'n1': 60.0}))}
    assert two == {'n0': 'pass', 'n1': 'pass'}


def test_what_a_failed_node_is_failed_on_and_what_passes():
    '''A run ReFrame marks xfail (an expected failure, its reference says so) passes its
    node; each failure keeps its key (check and perf var: what a second round compares);
    reasons of the same severity in the order of their checks' names; a run that failed
    before measuring and recorded no reason says so.'''
    base = {f'n{i}': 160.0 + i * 0.2 for i in range(6)}
    a = rows(base | {'n3': 100.0}, check='BabelStreamOmp')
    b = rows(base | {'n3': 100.0}, check='AStream')
    x = rows(base | {'n4': 160.5}, results={'n4': 'xfail'}, check='HpccStream')
    died = rows({'n5': None}, check='NodeConformance', meta=None)
    died[0]['result'] = None
    v = {r['node']: r for r in verdicts.judge(records.frame(a + b + x + died))}
    assert v['n4']['verdict'] == 'pass'
    assert v['n3']['keys'] == ['AStream triad', 'BabelStreamOmp triad']
    assert [r.split(' ')[0] for r in v['n3']['reasons']] == ['AStream', 'BabelStreamOmp']
    assert v['n5']['reasons'][-1] == 'NodeConformance: failed: no reason recorded'


def test_only_records_of_one_named_node_are_judged():
    '''A record with no node, an empty node list, or several nodes (a two-node netperf
    run) is no node's acceptance measurement: the far-off values they carry fail nobody,
    and no verdict is made up for them.'''
    bw = {'n0': 160.0, 'n1': 161.0, 'n2': 159.5, 'n3': 160.5}
    others = rows({'x': 20.0, 'y': 21.0, 'z': 22.0})
    others[0]['nodes'], others[1]['nodes'], others[2]['nodes'] = None, '', 'n0,n1'
    v = {x['node']: x['verdict'] for x in verdicts.judge(records.frame(rows(bw) + others))}
    assert v == {'n0': 'pass', 'n1': 'pass', 'n2': 'pass', 'n3': 'pass'}


def _fleet89():
    '''Seven nodes: 96, 98, 100, 100, 102, 104 and n6 at 89. Median 100; distances 11,
    4, 2, 0, 0, 2, 4: MAD 2, robust sigma 1.4826 x 2 = 2.965. n6 is 11 below: 11% of the
    median (past the 10% min_effect), 3.71 sigma (past z = 3, short of 4).'''
    return {'n0': 96.0, 'n1': 98.0, 'n2': 100.0, 'n3': 100.0, 'n4': 102.0, 'n5': 104.0,
            'n6': 89.0}


def test_three_robust_deviations_and_a_tenth_of_the_median_make_an_outlier_by_default():
    '''The defaults an operator reads in docs/acceptance.md: z = 3, min_effect 10%, gross
    50% -- and None for either of the two fractions means its default (the commands pass
    None when the operator gave no option).'''
    df = _triad(_fleet89())
    for kw in ({}, {'min_effect': None, 'gross': None}):
        v = {x['node']: x['verdict'] for x in verdicts.judge(df, **kw)}
        assert [n for n, w in v.items() if w == 'fail'] == ['n6'], kw
    # at z = 4 the same node passes: the default is what fails it
    assert all(x['verdict'] == 'pass' for x in verdicts.judge(df, z=4.0))
    # 3.71 sigma but 9.5% of the median (n6 at 90.5: distances 9.5, 4, 2, 0, 0, 2, 4,
    # sigma still 2.965, 3.2 of them) is within what an operator accepts
    assert all(x['verdict'] == 'pass' for x in verdicts.judge(_triad(_fleet89() | {'n6': 90.5})))


def test_half_the_median_exactly_is_not_yet_gross():
    '''Gross is *more than* half the median worse. n3 at exactly 50 (median of 100, 100,
    100, 50: 100; 50 below, 50% of it) is not gross; at 49.5 it is. Nodes that agree
    exactly (MAD 0) make no robust deviation: only gross decides there.'''
    at = {x['node']: x for x in verdicts.judge(_triad({'n0': 100.0, 'n1': 100.0, 'n2': 100.0,
                                                        'n3': 50.0}))}
    assert at['n3']['verdict'] == 'pass', at['n3']
    assert not at['n3']['measurements'][0]['outlier'] and not at['n3']['measurements'][0]['gross']
    past = {x['node']: x for x in verdicts.judge(_triad({'n0': 100.0, 'n1': 100.0, 'n2': 100.0,
                                                          'n3': 49.5}))}
    assert past['n3']['verdict'] == 'fail' and past['n3']['measurements'][0]['gross']


def test_a_figure_with_no_declared_direction_is_never_an_outlier_and_weighs_nothing():
    '''A check that declares no better side (``better`` empty) is recorded and shown, but
    no value of it is an outlier or gross, and its severity is 0: a node failing it against
    its reference lists that reason after a real deficit elsewhere.'''
    und = [dict(r, better=None) for r in rows({'n0': 5.0, 'n1': 5.1, 'n2': 5.0, 'n3': 40.0},
                                              check='Undeclared', var='x',
                                              results={'n1': 'fail'})]
    bw = rows({'n0': 160.0, 'n1': 128.0, 'n2': 160.5, 'n3': 161.0})
    v = {x['node']: x for x in verdicts.judge(records.frame(und + bw))}
    assert v['n3']['verdict'] == 'pass'
    assert [m['outlier'] or m['gross'] for m in v['n3']['measurements']] == [False, False]
    assert [r.split('=')[0] for r in v['n1']['reasons']] == ['BabelStreamOmp triad', 'Undeclared x']
    [m] = [m for m in v['n1']['measurements'] if m['check'] == 'Undeclared']
    assert m['deficit'] == 0.0


def test_a_figure_whose_median_is_zero_has_severity_zero_not_first_place():
    '''An error count every node reports as 0 (median 0: no fraction of it is defined) and
    one node fails against its reference: its severity is 0 (not NaN), so a node's real
    deficit comes first in its reasons.'''
    errs = rows({'n0': 0.0, 'n1': 0.0, 'n2': 0.0, 'n3': 0.0}, check='GpuErrors',
                var='errors', unit='us', results={'n1': 'fail'})
    bw = rows({'n0': 160.0, 'n1': 128.0, 'n2': 160.5, 'n3': 161.0})
    v = {x['node']: x for x in verdicts.judge(records.frame(errs + bw))}
    assert [r.split('=')[0] for r in v['n1']['reasons']] == ['BabelStreamOmp triad', 'GpuErrors errors']
    assert [m['deficit'] for m in v['n1']['measurements'] if m['check'] == 'GpuErrors'] == [0.0]


def test_a_measurement_in_a_verdict_says_all_the_report_shows():
    v = {x['node']: x for x in verdicts.judge(_triad(_fleet89()))}
    [m] = v['n6']['measurements']
    assert m == {'check': 'BabelStreamOmp', 'perf_var': 'triad', 'value': 89.0, 'unit': 'GB/s',
                 'result': 'pass', 'better': 'higher', 'nodes_median': 100.0, 'outlier': True,
                 'gross': False, 'deficit': 0.11}


def test_every_kind_of_failure_keeps_the_key_a_second_round_compares():
    '''keys: "check perf_var" for a figure (against the reference, an outlier, a GPU
    against its peers), the check for a run that failed before measuring or a check
    missing on the node.'''
    gpu = {f'gpu{i}_h2d': 50.0 for i in range(4)} | {'gpu2_h2d': 30.0}
    recs = [dict(r, perf_var=g, nodes='n1', check='GpuCopy', time=(T + dt.timedelta(seconds=i)).isoformat())
            for i, (g, r) in enumerate((g, rows({'n1': x})[0]) for g, x in gpu.items())]
    recs += rows({'n0': 160.0, 'n1': 160.5, 'n2': 159.0, 'n3': 100.0}, results={'n2': 'fail'})
    died = rows({'n0': None}, check='NodeConformance', meta=None)
    died[0]['result'] = None
    v = {x['node']: x for x in verdicts.judge(records.frame(recs + died), same_checks=True)}
    assert v['n0']['keys'] == ['NodeConformance', 'GpuCopy']     # failed, then missing
    assert v['n1']['keys'] == ['GpuCopy gpu2_h2d', 'NodeConformance']
    assert v['n1']['reasons'][0] == ('GpuCopy gpu2_h2d=30 GB/s: GPU 2 40% worse than the '
                                     "node's other 3 GPUs (their median 50)")
    assert v['n1']['reasons'][1] == 'NodeConformance: no record from this node (recorded on 1 other node)'
    assert v['n2']['keys'] == ['BabelStreamOmp triad', 'GpuCopy', 'NodeConformance']
    assert v['n2']['reasons'][1:] == ['GpuCopy: no record from this node (recorded on 1 other node)',
                                      'NodeConformance: no record from this node (recorded on 1 other node)']
    assert v['n3']['keys'] == ['BabelStreamOmp triad', 'GpuCopy', 'NodeConformance']


def test_a_check_that_failed_on_several_figures_is_one_reason():
    '''A run that failed before measuring leaves a record for each of its figures (here
    two, no value): the node fails once for the check, with its reason.'''
    why = json.dumps({'tags': ['acceptance'], 'failure': 'nodefacts: kernel 6.2'})
    died = rows({'n0': None}, check='NodeConformance', var='cpus', meta=why) + \
        rows({'n0': None}, check='NodeConformance', var='kernel', meta=why)
    for r in died:
        r['result'] = None
    [v] = verdicts.judge(records.frame(died))
    assert v['reasons'] == ['NodeConformance: failed: nodefacts: kernel 6.2']


def test_each_node_with_a_slow_gpu_fails_even_after_one_already_failed_on_it():
    '''Two nodes of four GPUs each with one slow GPU; on n0 that figure already failed
    against its reference (not listed twice), on n1 only against its peers: both fail.'''
    recs = []
    for node, slow, res in (('n0', 20.0, 'fail'), ('n1', 30.0, 'pass')):
        for i in range(4):
            r = rows({node: slow if i == 1 else 50.0})[0]
            recs.append(dict(r, check='GpuCopy', perf_var=f'gpu{i}_h2d',
                             result=res if i == 1 else 'pass'))
    v = {x['node']: x for x in verdicts.judge(records.frame(recs))}
    assert v['n0']['keys'] == ['GpuCopy gpu1_h2d'] and v['n0']['verdict'] == 'fail'
    assert v['n1']['keys'] == ['GpuCopy gpu1_h2d'] and v['n1']['verdict'] == 'fail'


def test_three_gpus_are_enough_to_tell_the_slow_one_and_a_quarter_is_not_yet_worse():
    '''PEER_GPU_MIN 3 and PEER_GPU_EFFECT 25% ("more than"): of three GPUs one at 74
    against 100 and 100 fails its node, one at exactly 75 does not; of two, neither is
    told from the other. Both bounds are the function's when given.'''
    def node(values):
        return records.frame([dict(rows({'n0': x})[0], check='GpuCopy', perf_var=f'gpu{i}_h2d')
                              for i, x in enumerate(values)])

    def slow(df, **kw):
        return verdicts.peer_gpu_outliers(verdicts.acceptance_records(df), **kw)['gpu'].to_list()

    assert slow(node([100.0, 74.0, 100.0])) == ['1']
    assert slow(node([100.0, 75.0, 100.0])) == []
    assert slow(node([100.0, 60.0])) == []
    assert slow(node([100.0, 85.0, 100.0]), effect=0.1) == ['1']
    assert slow(node([100.0, 60.0]), min_gpus=2) == ['1']


def test_a_node_measured_again_keeps_only_its_repeated_failures_and_a_new_failure_stands():
    '''confirm(): n3 failed on two figures, one of them failed before: it fails on that
    one only (keys and reasons); n7 fails now and was not measured before: its failure
    stands as it is; n0 passes and was measured before: untouched.'''
    hpl = {'n0': 68.0, 'n1': 67.0, 'n2': 68.5, 'n3': 9.5, 'n4': 69.0, 'n7': 30.0}
    fio = {'n0': 9.7, 'n1': 9.8, 'n2': 9.7, 'n3': 5.0, 'n4': 9.75, 'n7': 9.7}
    df = records.frame(rows(hpl, check='HpccHpl', var='gflops') +
                       rows(fio, check='FioTarget', var='bandwidth'))
    before = {'n3': {'FioTarget bandwidth'}, 'n0': {'HpccHpl gflops'}}
    v = {x['node']: x for x in verdicts.confirm(verdicts.judge(df), before)}
    assert v['n3']['verdict'] == 'fail' and v['n3']['keys'] == ['FioTarget bandwidth']
    assert v['n3']['unconfirmed'] == ["HpccHpl gflops=9.5 GB/s: outlier (nodes' median 67.5)"]
    assert v['n7']['verdict'] == 'fail' and v['n7']['keys'] == ['HpccHpl gflops']
    assert 'unconfirmed' not in v['n7'] and 'unconfirmed' not in v['n0']
    assert v['n0']['verdict'] == 'pass'


def test_nodes_slurm_will_not_run_on_are_not_tested_and_say_why():
    '''A drained node (sinfo "drained"), one down and not responding ("down*"), an idle
    one with no measurement: each "not tested", with the reason the report prints; an
    idle node with flags after its state ("idle~", powered off) that was measured is
    judged.'''
    df = _triad({'n0': 160.0, 'n1': 160.5, 'n2': 159.5, 'n5': 160.2})
    st = {'n0': 'idle', 'n1': 'mixed', 'n2': 'drained', 'n3': 'down*', 'n4': 'idle', 'n5': 'idle~'}
    v = {x['node']: x for x in verdicts.judge(df, st)}
    assert v['n2'] == {'node': 'n2', 'verdict': 'not tested', 'measurements': [],
                       'reasons': ['Slurm state drained'], 'keys': []}
    assert v['n3']['reasons'] == ['Slurm state down*']
    assert v['n4'] == {'node': 'n4', 'verdict': 'not tested', 'measurements': [],
                       'reasons': ['no acceptance measurement (state idle)'], 'keys': []}
    assert [v[n]['verdict'] for n in ('n0', 'n1', 'n5')] == ['pass'] * 3


def test_the_verdicts_file_is_one_json_document_in_a_layout_people_read():
    '''mdxbench accept --json: the nodes, the counts of each verdict, the caller's extra
    fields, one space of indentation per level (read with less as often as with jq).'''
    out = verdicts.to_json([{'node': 'n0', 'verdict': 'pass'}], extra={'session': 's1'})
    assert out == ('{\n "nodes": [\n  {\n   "node": "n0",\n   "verdict": "pass"\n  }\n ],\n'
                   ' "summary": {\n  "pass": 1,\n  "fail": 0,\n  "undecided": 0,\n'
                   '  "not tested": 0\n },\n "session": "s1"\n}')


def test_a_worst_pair_is_named_only_where_the_record_says_it():
    assert verdicts.worst_pair(json.dumps({'worst_pair': {'h2d': '0-3'}}), 'h2d') == ' (GPUs 0-3)'
    assert verdicts.worst_pair(json.dumps({'worst_pair': {'h2d': '0-3'}}), 'd2h') == ''
    for meta in (None, '', '{}', 'not json', '[1]', json.dumps({'worst_pair': None})):
        assert verdicts.worst_pair(meta, 'h2d') == '', meta


def test_gross_by_default_three_nodes_suffice_and_equal_reasons_go_by_figure_name():
    '''Nodes that agree exactly (MAD 0) and one at 40: gross (60% below) with gross left
    to its default (None); of three nodes the gross flag is set too; one node failing two
    figures of one check equally lists them by the figures' names.'''
    v = {x['node']: x for x in verdicts.judge(_triad({'n0': 100.0, 'n1': 100.0, 'n2': 100.0,
                                                       'n3': 40.0}), gross=None)}
    assert v['n3']['verdict'] == 'fail' and v['n3']['measurements'][0]['gross']
    three = {x['node']: x for x in verdicts.judge(_triad({'n0': 160.0, 'n1': 161.0, 'n2': 60.0}))}
    assert three['n2']['measurements'][0]['gross'] is True
    base = {f'n{i}': 160.0 + i * 0.2 for i in range(6)}
    two = rows(base | {'n3': 100.0}, var='b') + rows(base | {'n3': 100.0}, var='a')
    v = {x['node']: x for x in verdicts.judge(records.frame(two))}
    assert v['n3']['keys'] == ['BabelStreamOmp a', 'BabelStreamOmp b']


def _pair_rows(runs, subject_key=True):
    '''Made-up records of pair runs (nccl-tests across nodes): {(subject, partner): GB/s}.'''
    out = []
    for i, ((s, p), v) in enumerate(runs.items()):
        meta = {'tags': ['acceptance', 'gpu', 'pair'], 'job_nodes': sorted([s, p])}
        if subject_key:
            meta |= {'pair_subject': s, 'pair_partner': p}
        out += rows({','.join(sorted([s, p])): v}, check='NcclTests %scope=nodes',
                    var='busbw', tags='acceptance,gpu,pair', meta=json.dumps(meta))
        out[-1]['time'] = (T + dt.timedelta(minutes=i)).isoformat()
    return out


def test_a_pair_runs_figure_is_its_subjects_and_no_other_record_of_two_nodes_is_anyones():
    '''Issue 61: a record of two nodes is one node's reading where mdxbench accept ran it
    for that node (meta.pair_subject, one of the record's nodes); the daily job's records
    of two nodes (no subject), a subject that is not one of the nodes, and a record of
    three nodes are nobody's.'''
    good = _pair_rows({('b', 'a'): 24.0, ('a', 'b'): 23.0})
    daily = _pair_rows({('c', 'd'): 20.0}, subject_key=False)
    stray = _pair_rows({('e', 'f'): 20.0})
    stray[0]['meta'] = stray[0]['meta'].replace('"pair_subject": "e"', '"pair_subject": "x"')
    three = _pair_rows({('g', 'h'): 20.0})
    three[0]['nodes'] = 'g,h,i'
    acc = verdicts.acceptance_records(records.frame(good + daily + stray + three))
    assert sorted(zip(acc['nodes'], acc['value'])) == [('a', 23.0), ('b', 24.0)]


def test_a_pair_figure_fails_its_subject_and_names_the_partner():
    runs = {(f'n{i}', f'n{(i + 1) % 6}'): 24.0 + 0.1 * i for i in range(6)}
    runs[('n3', 'n4')] = 10.0                          # gross: n3's own run
    v = {x['node']: x for x in verdicts.judge(records.frame(_pair_rows(runs)))}
    assert v['n3']['verdict'] == 'fail'
    assert v['n3']['reasons'] == ["NcclTests %scope=nodes busbw=10 GB/s (with n4): outlier "
                                  "(nodes' median 24.15)"], v['n3']['reasons']
    assert {n for n, x in v.items() if x['verdict'] == 'pass'} == {'n0', 'n1', 'n2', 'n4', 'n5'}


def test_a_figure_names_its_pair_partner_only_where_its_record_says_one():
    '''A pair check's figure rests on its partner node (`meta.pair_partner`); a record with
    no meta (null), an empty or broken one, or one without a partner names none.'''
    assert verdicts.with_partner(json.dumps({'pair_partner': 'mdxnode2'})) == ' (with mdxnode2)'
    for meta in (None, '', '{not json', json.dumps({'length': {'factor': 1}}), '[]'):
        assert verdicts.with_partner(meta) == '', meta
