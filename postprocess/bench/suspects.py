'''``mdxbench bench suspects``: does node acceptance decide -- no healthy node failed, no
suspect left undecided, the extra jobs within half the fleet -- and how small a slow node
it catches on this machine's noise (issues 30 and 44). Figures printed, nothing here is a
timed test.

On the Slurm cluster of SLURM_CONF (``ci/cluster.sh start 8``), in one run, every pass
``mdxbench accept`` of all nodes with the same short runs (default: the acceptance checks
a fault touches -- conformance, HPL at N = 3000, netperf for 2 s, fio 32 MB for 2 s, as
issue 44 ran them): ``healthy`` passes, each with the earlier ones as ``--history`` (the
noise then comes from repeated runs of the same nodes); then, for each fault on one node
(``ci/cluster.sh degrade NODE KIND VALUE``: ``cpu 155``, 155% of one CPU for HPL's two
ranks, costs HPL about 20%; ``net 1gbit``, a 1 Gbit/s NIC; ``io 20M``, a disk throttled to
20 MB/s), one pass with all the healthy passes as history; all with ``--min-effect`` 0.1,
the default. Each row: the slow node's deficit on the figure its fault touches, in its
first pass; whether the baseline named here -- the same first pass judged by the outlier
rule alone (``--z``), as ``mdxbench accept`` did before suspects -- failed it; whether
the run did; the healthy nodes failed (false fails) and left undecided; and the jobs
against one per node.
'''
import contextlib
import json
import pathlib
import subprocess
import sys
import tempfile

from mdxbench import REPO_ROOT

DEFAULT_ARGS = ['-n', 'NodeConformance|HpccHpl|NetperfToPeer|FioTarget.*node_local.*seqwrite',
                '-S', 'HpccHpl.problem_size=3000', '-S', 'NetperfToPeer.duration=2',
                '-S', 'FioTarget.size=32M', '-S', 'FioTarget.runtime=2']
#: (kind, value) of ``ci/cluster.sh degrade``, and the check each touches
FAULTS = (('cpu', '155'), ('net', '1gbit'), ('io', '20M'))
TOUCHES = {'cpu': 'HpccHpl', 'net': 'NetperfToPeer', 'io': 'FioTarget'}


def _accept(exe, out, history, reframe_args, extra):
    js = out.with_suffix('.json')
    cmd = [str(exe / 'mdxbench'), 'accept', '--system', 'nscluster', '--partition', 'nodes',
           '--max-jobs', '1', '--poll', '1', '--out', str(out), '--json', str(js), *extra] + \
        (['--history', *map(str, history)] if history else []) + ['--', *reframe_args]
    res = subprocess.run(cmd, capture_output=True, text=True, timeout=3600)
    if res.returncode not in (0, 1, 3) or not js.exists():     # 3: a node undecided
        print(res.stdout[-3000:], res.stderr[-3000:], file=sys.stderr)
        raise RuntimeError(f'mdxbench accept failed ({res.returncode})')
    return json.loads(js.read_text())


def _cluster(*args):
    res = subprocess.run(['bash', str(REPO_ROOT / 'ci' / 'cluster.sh'), *args],
                         capture_output=True, text=True, timeout=600)
    if res.returncode != 0:
        raise RuntimeError(f'ci/cluster.sh {" ".join(args)}: {res.stderr[-2000:]}')


def _row(label, data, slow, nodes, touches=None):
    by = {v['node']: v for v in data['nodes']}
    first = None
    if slow:
        # the deficit on the figure the fault touches (the worst of that check's)
        first = max((m['deficit'] for m in by[slow]['measurements']
                     if m['check'].startswith(touches)), default=None)
    before = {n: v.get('before_suspects', v['verdict']) for n, v in by.items()}
    false = [n for n, v in by.items() if n != slow and v['verdict'] == 'fail']
    left = [n for n, v in by.items() if v['verdict'] == 'undecided']
    # every suspect of the run and how it ended, each figure
    seen = [f"{n} " + ', '.join(f"{c['key'].split()[0]} {c['state']} after {len(c['runs'])}"
                                + (f" (up to {max(c['lengths'])}x as long)"
                                   if max(c.get('lengths') or [1]) > 1 else '')
                                for c in v['suspect'])
            for n, v in sorted(by.items()) if v.get('suspect')]
    return {'run': label, 'deficit': first,
            'baseline': (before[slow] == 'fail') if slow else None,
            'caught': (by[slow]['verdict'] == 'fail') if slow else None,
            'false': false, 'suspect': left, 'seen': seen, 'jobs': data['jobs'],
            'more': data['jobs'] / nodes - 1, 'noise': data.get('noise', {})}


def _count(nodes):
    '''"2 (mdxnode3,mdxnode5)", or "0".'''
    return f"{len(nodes)} ({','.join(nodes)})" if nodes else '0'


def main(healthy=3, faults=FAULTS, slow='mdxnode3', reframe_args=None, min_effect=0.1,
         out=None):
    '''``out``: a directory that keeps each pass's perflogs, report and verdicts (JSON);
    default: a temporary one, removed.'''
    from mdxbench.post.fleet import jobs

    reframe_args = list(reframe_args or DEFAULT_ARGS)
    p = jobs.plan('nscluster', 'nodes')
    if len(p.testable) < 4 or slow not in p.testable:
        print(f'bench suspects: {len(p.testable)} testable node(s) in nscluster:nodes; '
              f'give the 8-node cluster (ci/cluster.sh start 8)', file=sys.stderr)
        return 2
    n = len(p.testable)
    exe = pathlib.Path(sys.executable).parent
    extra = ['--min-effect', str(min_effect)]
    rows, history = [], []
    if out:
        pathlib.Path(out).mkdir(parents=True, exist_ok=True)
    with (contextlib.nullcontext(out) if out else
          tempfile.TemporaryDirectory(prefix='mdxbench-bench-suspects-')) as tmp:
        tmp = pathlib.Path(tmp)
        for i in range(healthy):
            out = tmp / f'healthy-{i + 1}'
            data = _accept(exe, out, list(history), reframe_args, extra)
            rows.append(_row(f'healthy {i + 1}', data, None, n))
            history.append(out / 'perflogs')
        for kind, value in faults:
            _cluster('degrade', slow, kind, value)
            try:
                data = _accept(exe, tmp / f'{kind}-{value}', list(history), reframe_args,
                               extra)
            finally:
                _cluster('restore', slow)
            rows.append(_row(f'{slow}: {kind} {value}', data, slow, n, TOUCHES[kind]))

    print(f'node acceptance of {n} nodes of nscluster:nodes, one job per node and one per '
          f'paired round of the suspects, --min-effect {min_effect}; ReFrame options: '
          f'{" ".join(reframe_args)}')
    print(f'{"run":<24} {"deficit":>8} {"baseline":>9} {"verdict":>9} {"false fails":>16} '
          f'{"undecided":>16} {"jobs":>5} {"extra":>6}  suspects: how each ended')
    for r in rows:
        d = '-' if r['deficit'] is None else f"{r['deficit']:.0%}"
        yes = {None: '-', True: 'caught', False: 'passed'}
        print(f"{r['run']:<24} {d:>8} {yes[r['baseline']]:>9} {yes[r['caught']]:>9} "
              f"{_count(r['false']):>16} {_count(r['suspect']):>16} "
              f"{r['jobs']:>5} {r['more']:>6.0%}  {'; '.join(r['seen']) or 'no suspect'}")
    print('baseline: the first pass judged by the outlier rule alone (z 3), as before '
          'suspects; verdict: the run (suspects measured again, gross faults retested)')
    ok = all(not r['false'] and not r['suspect'] and r['jobs'] <= n + n // 2 for r in rows)
    said = ('no false fail, nothing undecided, extra jobs within' if ok else
            'NOT all without a false fail or an undecided node within')
    n_caught = sum(1 for r in rows if r['caught'])
    n_faults = sum(1 for r in rows if r['caught'] is not None)
    print(f'every pass: {said} half the fleet; faults caught: {n_caught} of {n_faults}')
    for r in rows:
        for key, nz in sorted(r['noise'].items()):
            src = (f"{nz['n']} repeated-run differences" if nz['source'] == 'repeated runs'
                   else f"the spread of {nz['n']} nodes in one run")
            print(f"noise of {key} in '{r['run']}': {nz['sigma']:.1%} from {src}")
    caught = [r['deficit'] for r in rows if r['caught'] and not r['false']]
    print(f"smallest deficit caught with no false drain: "
          f"{min(caught):.0%}" if caught else 'no slow node caught without a false drain')
    return 0
