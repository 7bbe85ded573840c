'''Node acceptance at fleet scale on 8 namespace nodes (ci/cluster.sh): one node made slow
on purpose by a CPU quota on its slurmd, one by a rate limit on its network, one drained; `mdxbench accept` submits one job per
testable node (all acceptance checks inside it), keeps at most --max-jobs in the queue,
and must flag exactly the slow nodes, each on the metric its fault affects, print their drain
lines, and list the drained node as not tested. The namespace nodes share this machine's
two cores: CPU-bound figures are only comparable between nodes measured one at a time
(--max-jobs 1; two HPL jobs of 2 ranks each on 2 cores gave 57 and 4.7 GFLOPS).'''
import json

from conftest import CLUSTER_CONF, cluster_slurm, mdxbench, run

NODES = [f'mdxnode{i}' for i in range(1, 9)]
CONF = CLUSTER_CONF
slurm = cluster_slurm


def test_slow_nodes_are_flagged_and_a_drained_one_not_tested(cluster8, tmp_path):
    slow, netslow, drained = 'mdxnode3', 'mdxnode5', 'mdxnode7'
    assert run(['bash', 'ci/cluster.sh', 'degrade', slow, 'cpu', '15']).returncode == 0
    assert run(['bash', 'ci/cluster.sh', 'degrade', netslow, 'net', '50mbit']).returncode == 0
    res = slurm('scontrol', 'update', f'nodename={drained}', 'state=drain', 'reason=test')
    assert res.returncode == 0, res.stderr
    try:
        out = mdxbench('accept', '--system', 'nscluster', '--partition', 'nodes',
                       '--max-jobs', '1', '--out', str(tmp_path / 'accept'), '--json',
                       str(tmp_path / 'verdicts.json'), '--', '-n',
                       'NodeConformance|HpccHpl|NetperfToPeer', '-S', 'HpccHpl.problem_size=1500',
                       '-S', 'NetperfToPeer.duration=2',
                       env={'SLURM_CONF': str(CONF)}, timeout=1800)
    finally:
        run(['bash', 'ci/cluster.sh', 'restore', slow])
        run(['bash', 'ci/cluster.sh', 'restore', netslow])
        slurm('scontrol', 'update', f'nodename={drained}', 'state=resume')
    assert out.returncode == 1, out.stdout[-4000:] + out.stderr[-2000:]
    data = json.loads((tmp_path / 'verdicts.json').read_text())
    verdicts = {v['node']: v for v in data['nodes']}
    assert sorted(verdicts) == NODES
    assert verdicts[drained]['verdict'] == 'not tested'
    assert verdicts[slow]['verdict'] == 'fail', verdicts[slow]
    assert any(r.startswith('HpccHpl gflops=') and 'outlier' in r
               for r in verdicts[slow]['reasons']), verdicts[slow]['reasons']
    # the network-degraded node on its network figure, not on HPL
    assert verdicts[netslow]['verdict'] == 'fail', verdicts[netslow]
    assert any(r.startswith('NetperfToPeer throughput=') and 'outlier' in r
               for r in verdicts[netslow]['reasons']), verdicts[netslow]['reasons']
    assert not any(r.startswith('HpccHpl') for r in verdicts[netslow]['reasons'])
    healthy = [n for n in NODES if n not in (slow, netslow, drained)]
    assert all(verdicts[n]['verdict'] == 'pass' for n in healthy), \
        {n: verdicts[n]['reasons'] for n in healthy}
    # one job per testable node, never more than --max-jobs in the queue
    assert data['jobs'] == 7 and data['max_in_queue'] == 1
    assert data['drain'] == [ln for ln in out.stdout.splitlines()
                             if ln.startswith('scontrol update')]
    # (a CPU-starved node sends slowly too: its network figure may fail as well)
    assert len(data['drain']) == 2
    assert data['drain'][0].startswith(f'scontrol update nodename={slow} state=drain '
                                       'reason="mdxbench acceptance: ')
    assert 'HpccHpl gflops=' in data['drain'][0]
    assert data['drain'][1].startswith(f'scontrol update nodename={netslow} state=drain '
                                       'reason="mdxbench acceptance: NetperfToPeer throughput=')
