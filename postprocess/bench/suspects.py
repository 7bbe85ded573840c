'''``mdxbench bench suspects``: how small a slow node acceptance catches on this machine's
noise, with no false drain, and what the retests of suspects cost (issue 30). Figures
printed, nothing here is a timed test.

On the Slurm cluster of SLURM_CONF (``ci/cluster.sh start 8``), in one run: ``healthy``
acceptance runs of all nodes (HPL only), each with the earlier ones as ``--history`` (the
noise then comes from repeated runs of the same nodes); then, for each CPU quota on one
node (``ci/cluster.sh degrade NODE cpu P``: P% of one CPU for HPL's two ranks; 180, 155
and 140 cost it about 10, 20 and 30%), one run with all the healthy runs as history; all
with ``--min-effect`` 0.1, the default. Each row: the slow node's deficit against the nodes' median in its first pass, whether the
baseline named here -- the same first pass judged by the outlier rule alone (``--z``), as
``mdxbench accept`` did before suspects -- failed it, whether the suspects' test did, the
nodes failed that were healthy (false drains), and the jobs against one pass.
'''
import json
import pathlib
import subprocess
import sys
import tempfile

from mdxbench import REPO_ROOT

DEFAULT_ARGS = ['-n', 'HpccHpl', '-S', 'HpccHpl.problem_size=3000']
QUOTAS = (180, 155, 140)


def _accept(exe, out, history, reframe_args, extra):
    js = out.with_suffix('.json')
    cmd = [str(exe / 'mdxbench'), 'accept', '--system', 'nscluster', '--partition', 'nodes',
           '--max-jobs', '1', '--out', str(out), '--json', str(js), *extra] + \
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


def _row(label, data, slow, nodes):
    by = {v['node']: v for v in data['nodes']}
    first = None
    if slow:
        m = next(m for m in by[slow]['measurements'] if m['perf_var'] == 'gflops')
        first = m['deficit']
    before = {n: v.get('before_suspects', v['verdict']) for n, v in by.items()}
    false = [n for n, v in by.items() if n != slow and v['verdict'] == 'fail']
    left = [n for n, v in by.items() if v['verdict'] == 'undecided']
    # every suspect of the run and how it ended (its first figure: HPL's gflops)
    seen = [f"{n} {next((c['state'] for c in v['suspect'] if c['key'].endswith('gflops')), '?')}"
            f" after {max((len(c['runs']) for c in v['suspect']), default=0)} round(s)"
            for n, v in sorted(by.items()) if v.get('suspect')]
    return {'run': label, 'deficit': first,
            'baseline': (before[slow] == 'fail') if slow else None,
            'caught': (by[slow]['verdict'] == 'fail') if slow else None,
            'false': false, 'suspect': left, 'seen': seen, 'jobs': data['jobs'],
            'more': data['jobs'] / nodes - 1, 'noise': data.get('noise', {})}


def _count(nodes):
    '''"2 (mdxnode3,mdxnode5)", or "0".'''
    return f"{len(nodes)} ({','.join(nodes)})" if nodes else '0'


def main(healthy=3, quotas=QUOTAS, slow='mdxnode3', reframe_args=None, min_effect=0.1):
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
    with tempfile.TemporaryDirectory(prefix='mdxbench-bench-suspects-') as tmp:
        tmp = pathlib.Path(tmp)
        for i in range(healthy):
            out = tmp / f'healthy-{i + 1}'
            data = _accept(exe, out, list(history), reframe_args, extra)
            rows.append(_row(f'healthy {i + 1}', data, None, n))
            history.append(out / 'perflogs')
        for q in quotas:
            _cluster('degrade', slow, 'cpu', str(q))
            try:
                data = _accept(exe, tmp / f'quota-{q}', list(history), reframe_args, extra)
            finally:
                _cluster('restore', slow)
            rows.append(_row(f'{slow} at a CPU quota of {q}%', data, slow, n))

    print(f'node acceptance of {n} nodes of nscluster:nodes, one job per node per pass, '
          f'--min-effect {min_effect}; ReFrame options: {" ".join(reframe_args)}')
    print(f'{"run":<32} {"deficit":>8} {"baseline":>9} {"suspects":>9} {"false fails":>16} '
          f'{"undecided":>16} {"jobs":>5} {"extra":>6}  suspects: how each ended')
    for r in rows:
        d = '-' if r['deficit'] is None else f"{r['deficit']:.0%}"
        yes = {None: '-', True: 'caught', False: 'passed'}
        print(f"{r['run']:<32} {d:>8} {yes[r['baseline']]:>9} {yes[r['caught']]:>9} "
              f"{_count(r['false']):>16} {_count(r['suspect']):>16} "
              f"{r['jobs']:>5} {r['more']:>6.0%}  {'; '.join(r['seen']) or 'no suspect'}")
    print('baseline: the first pass judged by the outlier rule alone (z 3), as before '
          'suspects; suspects: the same run with suspects measured again')
    for r in rows:
        for key, nz in sorted(r['noise'].items()):
            src = (f"{nz['n']} repeated-run differences" if nz['source'] == 'repeated runs'
                   else f"the spread of {nz['n']} nodes in one run")
            print(f"noise of {key} in '{r['run']}': {nz['sigma']:.1%} from {src}")
    caught = [r['deficit'] for r in rows if r['caught'] and not r['false']]
    print(f"smallest deficit caught with no false drain: "
          f"{min(caught):.0%}" if caught else 'no slow node caught without a false drain')
    return 0
