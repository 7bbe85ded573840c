'''``mdxbench bench accept``: wall time and job count of node acceptance on N nodes against
one node, ``mdxbench accept`` and ReFrame's ``--distribute=all`` (the baseline), measured
in the same run on the Slurm cluster of SLURM_CONF (``ci/cluster.sh start 8``; figures
printed, nothing here is a timed test).

Runs, in this order, with the same ReFrame options (default: short runs of the
acceptance checks): ``mdxbench accept`` on the first node, on all nodes, and
``reframe --distribute=all --exec-policy=async`` on all nodes. For each: jobs submitted,
wall seconds, ratio to one node, and the machine's CPU time over the run (``/proc/stat``)
divided by its cores -- on namespace nodes that share this machine's cores, the wall time
cannot be shorter than that CPU floor, whatever the orchestration. The target (issue 13)
is <= 1.25x one node's wall time.
'''
import json
import os
import pathlib
import subprocess
import sys
import tempfile
import time

from mdxbench import REPO_ROOT

DEFAULT_ARGS = ['-n', 'NodeConformance|HpccHpl|NetperfToPeer|FioTarget.*node_local.*seqwrite',
                '-S', 'HpccHpl.problem_size=2000', '-S', 'NetperfToPeer.duration=2',
                '-S', 'FioTarget.size=32M', '-S', 'FioTarget.runtime=2']


def cpu_seconds():
    '''Busy CPU seconds of the whole machine since boot (all cores).'''
    with open('/proc/stat') as fp:
        f = [int(x) for x in fp.readline().split()[1:]]
    busy = sum(f) - f[3] - (f[4] if len(f) > 4 else 0)     # minus idle and iowait
    return busy / os.sysconf('SC_CLK_TCK')


def timed(cmd, env):
    c0, t0 = cpu_seconds(), time.monotonic()
    res = subprocess.run(cmd, capture_output=True, text=True, env=env, timeout=7200)
    return res, time.monotonic() - t0, cpu_seconds() - c0


def main(system='nscluster', partition='nodes', reframe_args=None, max_jobs=None):
    from mdxbench.post.fleet import jobs

    reframe_args = list(reframe_args or DEFAULT_ARGS)
    p = jobs.plan(system, partition)
    if len(p.testable) < 2:
        print(f'bench accept: {len(p.testable)} testable node(s) in {system}:{partition}; '
              f'give a cluster of several (ci/cluster.sh start 8)', file=sys.stderr)
        return 2
    cores = os.cpu_count()
    env = dict(os.environ, RFM_CONFIG_FILES=str(REPO_ROOT / 'site-configs' / 'settings.py'))
    exe = pathlib.Path(sys.executable).parent
    rows = []
    with tempfile.TemporaryDirectory(prefix='mdxbench-bench-accept-') as tmp:
        tmp = pathlib.Path(tmp)
        for label, nodes in (('mdxbench accept, 1 node', p.testable[:1]),
                             (f'mdxbench accept, {len(p.testable)} nodes', p.testable)):
            out, verdicts = tmp / f'accept-{len(nodes)}', tmp / f'accept-{len(nodes)}.json'
            cmd = [str(exe / 'mdxbench'), 'accept', '--system', system, '--partition',
                   partition, '--nodes', ','.join(nodes), '--retests', '0', '--poll', '1',
                   '--out', str(out),
                   '--json', str(verdicts)] + \
                (['--max-jobs', str(max_jobs)] if max_jobs else []) + ['--', *reframe_args]
            res, wall, cpu = timed(cmd, env)
            data = json.loads(verdicts.read_text()) if verdicts.exists() else {}
            if res.returncode not in (0, 1) or not data:
                print(res.stdout[-3000:], res.stderr[-3000:], file=sys.stderr)
                raise RuntimeError(f'{label}: mdxbench accept failed ({res.returncode})')
            rows.append((label, data['jobs'], wall, cpu, data['summary']))
        report = tmp / 'distribute.json'
        cmd = [str(exe / 'reframe'), '-c', str(REPO_ROOT / 'checks'), '-t', 'acceptance', '-r',
               '--system', f'{system}:{partition}', '--distribute=all',
               '--exec-policy=async', '--prefix', str(tmp / 'distribute'),
               '--report-file', str(report), *reframe_args]
        res, wall, cpu = timed(cmd, dict(env, MDXBENCH_PERFLOG_DIR=str(tmp / 'dperflogs')))
        try:
            cases = json.loads(report.read_text())['runs'][0]['testcases']
        except (OSError, ValueError, KeyError, IndexError):
            print(res.stdout[-3000:], res.stderr[-3000:], file=sys.stderr)
            raise RuntimeError(f'reframe --distribute left no report ({res.returncode})')
        passed = sum(c['result'] == 'pass' for c in cases)
        rows.append((f'reframe --distribute=all, {len(p.testable)} nodes', len(cases), wall,
                     cpu, {'cases passed': passed, 'failed': len(cases) - passed}))

    one = rows[0][2]
    print(f'node acceptance on {system}:{partition}, {len(p.testable)} nodes, '
          f'{cores} cores on this machine; ReFrame options: {" ".join(reframe_args)}')
    print(f'{"run":<40} {"jobs":>5} {"wall s":>8} {"x 1 node":>9} {"CPU s":>8} '
          f'{"CPU floor s":>12}  outcome')
    for label, njobs, wall, cpu, outcome in rows:
        print(f'{label:<40} {njobs:>5} {wall:>8.1f} {wall / one:>9.2f} {cpu:>8.1f} '
              f'{cpu / cores:>12.1f}  {outcome}')
    ours, dist = rows[1], rows[2]
    floor = max(one, ours[3] / cores)
    print(f'target: <= 1.25x one node. mdxbench accept: {ours[2] / one:.2f}x one node; '
          f'{ours[2] / floor:.2f}x the larger of one node and the CPU floor '
          f'({floor:.1f} s); --distribute: {dist[2] / one:.2f}x one node with {dist[1]} jobs '
          f'against {ours[1]}')
    return 0
