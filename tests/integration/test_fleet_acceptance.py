'''Node acceptance at fleet scale on 8 namespace nodes (ci/cluster.sh), with `mdxbench
accept`: one job per testable node (all acceptance checks inside it, one after another),
at most --max-jobs in the queue, a failed node measured again before it is failed.

One node made slow by a CPU quota on its slurmd, one by a rate limit on its network, one by
a bandwidth limit on its local disk, and one drained: exactly the three slow nodes fail,
each on the metric its fault affects, with their drain lines; the drained node is not
tested; the other four pass, measured on every check -- the healthy fleet's run, which CI
had on its own until 2026-11-27 (100 s), is that half of this one. (How often healthy
nodes fail or stay undecided over many rounds: `mdxbench bench suspects`.)

The namespace nodes share this machine's two cores: CPU-bound figures are only comparable
between nodes measured one at a time (--max-jobs 1; two HPL jobs of 2 ranks each on 2
cores gave 57 and 4.7 GFLOPS).'''
import json
import re

import numpy as np
import pytest

from conftest import CLUSTER_CONF, cluster_slurm, mdxbench, run

NODES = [f'mdxnode{i}' for i in range(1, 9)]
CONF = CLUSTER_CONF
slurm = cluster_slurm
# short runs of the acceptance checks the faults affect, and the conformance check. HPL at
# N = 2000: hpcc runs all its kernels at the size HPL's N sets (RandomAccess, PTRANS, FFT,
# STREAM), 3 s in all at N = 2000 against 10 s at 3000 for the same HPL spread from run to
# run here (12-16 against 14-22 GFLOPS, 2026-11-26): a third of every fleet job
HPL_N = '2000'
CHECKS = ['-n', 'NodeConformance|HpccHpl|NetperfToPeer|FioTarget.*node_local.*seqwrite',
          '-S', f'HpccHpl.problem_size={HPL_N}', '-S', 'NetperfToPeer.duration=2',
          '-S', 'FioTarget.size=32M', '-S', 'FioTarget.runtime=2']


#: the fleet tests' minimum effect: a node this much below the nodes' median is a suspect
#: (or, beyond --z robust deviations, an outlier). Healthy namespace nodes sharing two
#: cores spread far below their median on 1-s HPL runs (N = 3000): 15% on an earlier machine, 22% in
#: this project's CI on 2026-11-26 (12.7 against 16.3 GFLOPS; one node's runs 16.4 to 24.5),
#: where a 20% effect made a healthy node a suspect that 8 extra jobs could not clear. The
#: degraded nodes are 75% and more below; 40% is four standard deviations of CI's HPL noise
#: (13% a run) below the median.
MIN_EFFECT = 0.4


def accept(tmp_path, name):
    # the default bound of extra jobs: half the 7 tested nodes, 3 paired rounds (a round,
    # every suspect and the buddy, is one job)
    out = mdxbench('accept', '--system', 'nscluster', '--partition', 'nodes', '--poll', '1', '--max-jobs',
                   '1', '--min-effect', str(MIN_EFFECT),
                   '--out', str(tmp_path / name), '--json', str(tmp_path / f'{name}.json'),
                   '--', *CHECKS, env={'SLURM_CONF': str(CONF)}, timeout=1800)
    data = json.loads((tmp_path / f'{name}.json').read_text())
    return out, data, {v['node']: v for v in data['nodes']}


def table(verdicts):
    '''Every node's figures, for the assertion messages: what CI prints on a failure.'''
    return '\n'.join(f"{n} {v['verdict']}: " + ', '.join(
        f"{m['check'].split(' %')[0]} {m['perf_var']}={m['value']:.4g} "
        f"(median {m['nodes_median']:.4g}{', OUTLIER' if m['outlier'] else ''})"
        for m in v['measurements']) + f" | reasons: {v['reasons']} | earlier: "
        f"{v.get('earlier', [])}" for n, v in sorted(verdicts.items()))


def fails_on(verdict, prefix):
    return any(r.startswith(prefix) and 'outlier' in r for r in verdict['reasons'])


def test_slow_nodes_are_flagged_and_a_drained_one_not_tested(cluster8, tmp_path):
    slow, netslow, ioslow, drained = 'mdxnode3', 'mdxnode5', 'mdxnode6', 'mdxnode7'
    assert run(['bash', 'ci/cluster.sh', 'degrade', slow, 'cpu', '50']).returncode == 0
    assert run(['bash', 'ci/cluster.sh', 'degrade', netslow, 'net', '50mbit']).returncode == 0
    assert run(['bash', 'ci/cluster.sh', 'degrade', ioslow, 'io', '20M']).returncode == 0
    res = slurm('scontrol', 'update', f'nodename={drained}', 'state=drain', 'reason=test')
    assert res.returncode == 0, res.stderr
    try:
        out, data, verdicts = accept(tmp_path, 'degraded')
    finally:
        for node in (slow, netslow, ioslow):
            run(['bash', 'ci/cluster.sh', 'restore', node])
        slurm('scontrol', 'update', f'nodename={drained}', 'state=resume')
    why = table(verdicts)
    assert out.returncode == 1, why + out.stdout[-3000:] + out.stderr[-2000:]
    assert sorted(verdicts) == NODES
    assert verdicts[drained]['verdict'] == 'not tested', why
    # its progress, one line per change of the queue's counts (not a terminal here): the 7
    # tested nodes' jobs one at a time (--max-jobs 1), then the failed nodes measured again
    assert 'mdxbench accept: nodes: 0 of 7 jobs done, ' in out.stderr, out.stderr[-3000:]
    assert 'mdxbench accept: nodes: 7 of 7 jobs done, 0 running, 0 queued, 0 to submit' \
        in out.stderr, out.stderr[-3000:]
    again = re.findall(r'nodes measured again: (\d+) of (\d+) jobs done', out.stderr)
    assert again and again[-1][0] == again[-1][1] and int(again[-1][1]) >= 3, out.stderr[-3000:]
    # each slow node on the metric its fault affects, confirmed by a second measurement
    assert verdicts[slow]['verdict'] == 'fail' and fails_on(verdicts[slow], 'HpccHpl gflops='), why
    assert verdicts[netslow]['verdict'] == 'fail', why
    assert fails_on(verdicts[netslow], 'NetperfToPeer throughput='), why
    assert verdicts[ioslow]['verdict'] == 'fail', why
    assert fails_on(verdicts[ioslow], 'FioTarget %target=node_local %workload=seqwrite '
                    'bandwidth='), why
    for node in (slow, netslow, ioslow):
        assert verdicts[node]['earlier'], why
    # and not on what their fault leaves alone (a CPU-starved node also sends and writes
    # slowly: its network and disk figures may fail too)
    assert not any(r.startswith(('HpccHpl', 'FioTarget')) for r in verdicts[netslow]['reasons'])
    assert not any(r.startswith(('HpccHpl', 'NetperfToPeer'))
                   for r in verdicts[ioslow]['reasons']), why
    # the healthy half of the fleet passes, beside the faults: no healthy node failed, none
    # drained, every tested node measured on every check (conformance, HPL, netperf, fio)
    healthy = [n for n in NODES if n not in (slow, netslow, ioslow, drained)]
    assert all(verdicts[n]['verdict'] == 'pass' for n in healthy), why
    checks = {n: {m['check'].split(' %')[0] for m in v['measurements']}
              for n, v in verdicts.items() if n != drained}
    assert all(c == {'NodeConformance', 'HpccHpl', 'NetperfToPeer', 'FioTarget'}
               for c in checks.values()), checks
    # one job per testable node plus one per node measured again; one in the queue at most
    assert data['jobs'] >= 7 + 3 and data['max_in_queue'] == 1
    assert data['drain'] == [ln for ln in out.stdout.splitlines()
                             if ln.startswith('scontrol update')]
    assert [ln.split()[2] for ln in data['drain']] == [
        f'nodename={n}' for n in (slow, netslow, ioslow)]
    assert all('state=drain reason="mdxbench acceptance: ' in ln for ln in data['drain'])
    assert 'HpccHpl gflops=' in data['drain'][0]
    assert 'NetperfToPeer throughput=' in data['drain'][1]
    assert 'FioTarget %target=node_local %workload=seqwrite' in data['drain'][2]


#: the suspects' test's minimum effect: the fleet tests' (MIN_EFFECT)
EFFECT = MIN_EFFECT


def test_suspects_are_measured_again_one_confirmed_one_cleared(cluster8, tmp_path):
    """Issue 30: with the outlier rules out of the way (--z 100, --gross 0.95), every node
    at least EFFECT below the nodes' median is a suspect, measured again beside a healthy node
    near the median until the sequential test decides. mdxnode3 runs under a CPU quota of half
    a core throughout (its HPL about a quarter): confirmed, and drained. mdxnode6 is slowed
    the same way only while its first job runs (a healthy node that came out low): cleared.
    Nobody else fails.

    EFFECT is 40%, not the 20% this test had: CI's 1-s HPL runs (N = 3000) spread 15% from
    run to run (sd of one run; 21% for a pair), and against 20% the sequential test needed
    more pairs than the 12 extra jobs allow to clear the healthy node (seen in CI: 5 pairs,
    still undecided). Against 40% one to three pairs decide either way."""
    import threading
    import time

    slow, blip = 'mdxnode3', 'mdxnode6'
    out_dir = tmp_path / 'suspects'
    assert run(['bash', 'ci/cluster.sh', 'degrade', slow, 'cpu', '50']).returncode == 0
    assert run(['bash', 'ci/cluster.sh', 'degrade', blip, 'cpu', '50']).returncode == 0
    done = threading.Event()

    def restore_blip_after_its_first_job():
        report = out_dir / 'rfm' / blip / 'report.json'
        while not done.is_set() and not report.exists():
            time.sleep(0.2)
        run(['bash', 'ci/cluster.sh', 'restore', blip])

    t = threading.Thread(target=restore_blip_after_its_first_job, daemon=True)
    t.start()
    try:
        res = mdxbench('accept', '--system', 'nscluster', '--partition', 'nodes', '--poll', '1',
                       '--max-jobs', '1', '--min-effect', str(EFFECT), '--z', '100', '--gross', '0.95',
                       '--max-extra-jobs', '12', '--out', str(out_dir),
                       '--json', str(tmp_path / 'suspects.json'), '--',
                       '-n', 'HpccHpl', '-S', f'HpccHpl.problem_size={HPL_N}',
                       env={'SLURM_CONF': str(CONF)}, timeout=1800)
    finally:
        done.set()
        t.join()
        run(['bash', 'ci/cluster.sh', 'restore', slow])
    data = json.loads((tmp_path / 'suspects.json').read_text())
    verdicts = {v['node']: v for v in data['nodes']}
    why = table(verdicts) + '\n' + json.dumps({n: v.get('suspect') for n, v in
                                               verdicts.items()}, indent=1)
    assert res.returncode == 1, why + res.stdout[-3000:] + res.stderr[-2000:]
    # the slow node: a suspect of the fleet, its deficit confirmed on paired runs
    s = verdicts[slow]
    assert s['verdict'] == 'fail', why
    # (HPL's percentage of the nominal peak is the same run: a suspect on it too)
    case = next(c for c in s['suspect'] if c['key'] == 'HpccHpl gflops')
    assert case['why'] == 'fleet', why
    assert case['state'] == 'confirmed' and case['deficit'] >= EFFECT, why
    # the deficit and its interval, computed again from the paired runs the verdict lists
    # (HPL: higher is better, x = ln(node / buddy) - baseline) and the pair's noise, with
    # scipy's normal interval of a mean of known sigma
    from scipy import stats
    # (issue 44: a paired run made f times as long counts f times: the inverse-variance
    # weighted mean and its standard error; all of the check's own length, the plain mean)
    x = np.log(np.array(case['runs']) / np.array(case['buddy_runs'])) - case['baseline']
    f = np.array(case['lengths'], dtype=float)
    assert len(f) == len(x) and f.min() >= 1, why
    mean = float(np.sum(f * x) / np.sum(f))
    lo, hi = stats.norm.interval(0.95, loc=mean, scale=case['sigma_pair'] / np.sqrt(np.sum(f)))
    assert case['deficit'] == pytest.approx(1 - np.exp(mean), abs=1e-9), why
    assert case['interval'] == pytest.approx([1 - np.exp(hi), 1 - np.exp(lo)], abs=1e-9), why
    assert len(case['runs']) == len(case['buddy_runs']) >= 1, why
    assert any(r.startswith('HpccHpl gflops=') and 'deficit of 40% or more confirmed' in r
               for r in s['reasons']), why
    # the node slowed only in its first job: a suspect, cleared by its runs after
    b = verdicts[blip]
    assert b['verdict'] == 'pass', why
    case = next(c for c in b['suspect'] if c['key'] == 'HpccHpl gflops')
    assert case['state'] == 'excluded' and case['deficit'] < EFFECT, why
    assert b['why'].startswith('pass: ') and 'deficit of 40% excluded' in b['why'], why
    # the buddy is a healthy node; nobody else fails; only the slow node is drained
    assert case['buddy'] not in (slow, blip) and verdicts[case['buddy']]['verdict'] == 'pass'
    assert [v['node'] for v in data['nodes'] if v['verdict'] == 'fail'] == [slow], why
    assert [ln.split()[2] for ln in data['drain']] == [f'nodename={slow}'], data['drain']
    # the noise of HPL as estimated, from what, and the jobs the suspects cost
    noise = data['noise']['HpccHpl gflops']
    assert noise['sigma'] > 0 and noise['source'] in ('repeated runs', 'fleet spread'), noise
    # a paired round is one job (the suspects and the buddy): two rounds at least
    assert 8 + 2 <= data['jobs'] <= 8 + 12, data['jobs']
    assert 'noise (sd of one run)' in res.stdout
    print(f"issue 30: {data['jobs']} jobs; noise {noise}; slow {verdicts[slow]['suspect']}; "
          f"blip {verdicts[blip]['suspect']}")


def test_a_node_whose_disk_is_not_what_the_site_declares_fails_conformance(cluster8, tmp_path):
    '''NodeConformance against a declaration this cluster does not meet: the node-local disk
    declared as xfs (it is ext4) fails every node, naming the fact.'''
    env = {'SLURM_CONF': str(CONF),
           'MDXBENCH_NSCLUSTER_LOCAL_FSTYPE': 'xfs'}
    out = mdxbench('accept', '--system', 'nscluster', '--partition', 'nodes', '--poll', '1', '--nodes',
                   'mdxnode1,mdxnode2', '--retests', '0', '--out', str(tmp_path / 'conf'),
                   '--json', str(tmp_path / 'conf.json'), '--', '-n', 'NodeConformance',
                   env=env, timeout=600)
    assert out.returncode == 1, out.stdout[-3000:] + out.stderr[-2000:]
    verdicts = json.loads((tmp_path / 'conf.json').read_text())['nodes']
    tested = [v for v in verdicts if v['node'] in ('mdxnode1', 'mdxnode2')]
    assert [v['verdict'] for v in tested] == ['fail', 'fail']
    for v in tested:
        assert v['reasons'] == [
            f"NodeConformance: failed: nodefacts: node {v['node']} is not what nscluster:nodes "
            f"declares: storage target node_local: declared file system xfs, found ext4"], v


def test_iperf3_pairs_start_together_placed_as_figure_5(cluster8):
    '''Takahashi et al.'s Figure 5 on the 8 nodes, four a stand-in host: 1 to 4 iperf3 pairs
    across two hosts (servers on one, clients on the other) and 1 and 2 pairs all on one
    host, the clients started together at one time, each with its ramp-up left out; the
    record says where each end ran and how far apart the clients started. 3 and 4 pairs on
    one host need 6 and 8 nodes on it: skipped, saying so.'''
    import re
    import uuid

    import test_cluster as tc

    work = tc.STATE / 'test-cluster' / uuid.uuid4().hex[:8]
    work.mkdir(parents=True)
    res = tc.reframe(work, '-c', 'checks/network/tcp.py', '-n', 'Iperf3Aggregate',
                     '-S', 'Iperf3Aggregate.duration=4')
    assert res.returncode == 0, res.stdout[-5000:]
    skipped = [ln for ln in res.stdout.splitlines() if 'SKIP' in ln]
    for pairs in (3, 4):
        assert [ln for ln in skipped if f'%pairs={pairs} %placement=same-host' in ln and
                f'no physical host has {2 * pairs} usable nodes' in ln], skipped
    recs = [r for r in tc.records(work) if r['perf_var'] == 'aggregate']
    runs = {(re.search(r'%placement=([\w-]+)', r['check']).group(1),
             int(re.search(r'%pairs=(\d+)', r['check']).group(1))): r for r in recs}
    assert sorted(runs) == [('different-hosts', 1), ('different-hosts', 2),
                            ('different-hosts', 3), ('different-hosts', 4),
                            ('same-host', 1), ('same-host', 2)], [r['check'] for r in recs]
    for (placement, pairs), r in runs.items():
        m = r['meta']
        assert sorted(r['nodelist']) == sorted(m['server_nodes'] + m['client_nodes']), m
        assert len(set(r['nodelist'])) == 2 * pairs, r['nodelist']
        if placement == 'same-host':
            assert m['server_hosts'] == m['client_hosts'] == ['ns-host-1'], m
        else:
            assert m['server_hosts'] == ['ns-host-1'] and m['client_hosts'] == ['ns-host-2'], m
        assert len(m['per_pair_gbps']) == pairs and all(v > 0 for v in m['per_pair_gbps']), m
        # iperf3 stamps its start in whole seconds: together means at most one apart
        assert m['start_spread_s'] <= 1 and m['omit_s'] == 2, m
        assert abs(sum(m['per_pair_gbps']) - r['perf_value']) < 0.01 * r['perf_value'], m
