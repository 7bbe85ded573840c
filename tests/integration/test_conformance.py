'''NodeConformance through the real Slurm on `local`: the node is what the configuration
declares (detected, so it conforms), and a declared fact that is wrong -- a pinned kernel
release this node does not run -- fails naming the fact, the declared and the found
value; `mdxbench acceptance` then fails the node with that reason.'''
import json
import os

from conftest import ROOT, VENV_BIN, mdxbench, run
from mdxbench import perflog


def conformance(tmp_path, env):
    env = dict({'MDXBENCH_PERFLOG_DIR': str(tmp_path / 'perflogs'),
                'RFM_CONFIG_FILES': str(ROOT / 'site-configs' / 'settings.py')}, **env)
    return run([str(VENV_BIN / 'reframe'), '-c', 'checks/compute/conformance.py', '-r',
                '--system', 'local', '--prefix', str(tmp_path / 'rfm'), '--nocolor'],
               env=env, timeout=600)


def lines(tmp_path):
    return [r for f in (tmp_path / 'perflogs').rglob('*.log')
            for ln in f.read_text().splitlines()[1:] for r in perflog.parse_line(ln)]


def test_the_node_conforms_and_a_wrong_declared_fact_fails_it(services, tmp_path):
    ok = conformance(tmp_path, {'MDXBENCH_LOCAL_KERNEL': ''})
    assert ok.returncode == 0, ok.stdout[-4000:]
    recs = lines(tmp_path)
    assert {r['perf_var'] for r in recs} == {'cpus', 'memory'}
    assert all(r['result'] == 'pass' and r['perf_value'] > 0 for r in recs)
    assert next(r for r in recs if r['perf_var'] == 'cpus')['perf_value'] == os.cpu_count()

    release = os.uname().release
    bad = conformance(tmp_path, {'MDXBENCH_LOCAL_KERNEL': '5.10.0-0-wrong'})
    assert bad.returncode != 0
    assert f'kernel: declared 5.10.0-0-wrong, found {release}' in bad.stdout, bad.stdout[-4000:]
    failed = [r for r in lines(tmp_path) if r['result'] == 'fail']
    assert failed and all(r['perf_value'] is None for r in failed)
    assert 'kernel: declared 5.10.0-0-wrong' in failed[0]['meta']['failure']

    res = mdxbench('acceptance', str(tmp_path / 'perflogs'), '--no-slurm', '--json',
                   str(tmp_path / 'verdicts.json'))
    assert res.returncode == 1, res.stdout + res.stderr
    nodes = json.loads((tmp_path / 'verdicts.json').read_text())['nodes']
    assert len(nodes) == 1 and nodes[0]['verdict'] == 'fail', nodes
    assert any('kernel: declared 5.10.0-0-wrong' in r for r in nodes[0]['reasons'])
