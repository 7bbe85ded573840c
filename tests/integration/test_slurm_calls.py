'''fleet/slurm.py -- the one module that runs Slurm's commands -- against the real Slurm of
ci/services.sh: the nodes and their states as scontrol reports them, a job submitted,
seen in the queue, waited for and its end read from accounting, a refused job, and no
Slurm at all. (Also the tests of its mutation run: tests/mutation/modules.yaml.)'''
import re
import time

import pytest

from mdxbench.post.fleet import slurm

from conftest import run


def _scontrol_nodes():
    '''{node: (base state, lowercase; partitions)} from ``scontrol show node -o``: another
    command and another format than sinfo's.'''
    res = run(['scontrol', 'show', 'node', '-o'])
    assert res.returncode == 0, res.stderr
    out = {}
    for line in res.stdout.splitlines():
        f = dict(kv.split('=', 1) for kv in line.split() if '=' in kv)
        out[f['NodeName']] = (f['State'].split('+')[0].lower(), f.get('Partitions', ''))
    return out


def test_the_nodes_and_their_states_are_those_slurm_reports(services):
    want = _scontrol_nodes()
    assert want, 'scontrol lists no node'
    got = slurm.node_states()
    assert set(got) == set(want)
    for node, state in got.items():
        # sinfo's long state names: idle, mixed, allocated (scontrol's in capitals)
        assert state.rstrip('*~#!%$@^-') == want[node][0], (node, state, want[node])
    part = next(iter(want.values()))[1].split(',')[0]
    assert set(slurm.node_states(part)) == {n for n, (_, p) in want.items()
                                            if part in p.split(',')}
    assert slurm.node_states('no-such-partition') == {}


def test_a_job_is_submitted_waited_for_and_its_end_read_from_accounting(services, tmp_path):
    # the first job runs until the test lets it end (a job of fixed length could leave the
    # queue before a loaded machine asks squeue about it); slurmd runs it as root, the
    # release file is in the test's own directory
    release = tmp_path / 'release'
    ok, bad = tmp_path / 'ok.sh', tmp_path / 'bad.sh'
    ok.write_text('#!/bin/bash\n#SBATCH -t 2\n#SBATCH -o /dev/null\n'
                  f'for i in $(seq 600); do [ -e {release} ] && exit 0; sleep 0.2; done; exit 1\n')
    bad.write_text('#!/bin/bash\n#SBATCH -t 2\n#SBATCH -o /dev/null\nexit 3\n')
    a, b = slurm.submit(ok), slurm.submit(bad)
    assert a.isdigit() and b.isdigit() and int(b) > int(a)
    queued = slurm.queue_states([a, b])
    assert a in queued and set(queued.values()) <= {'PD', 'CF', 'R', 'CG'}, queued
    release.touch()
    t0 = time.monotonic()
    slurm.wait([a, b], poll=0.5)
    assert time.monotonic() - t0 < 120
    assert slurm.queue_states([a, b]) == {}
    # this Slurm keeps no accounting (the namespace cluster's does: test_cluster.py reads
    # a job's end there): no end is made up
    config = run(['scontrol', 'show', 'config']).stdout
    assert re.search(r'AccountingStorageType\s*=\s*accounting_storage/none', config), config
    assert slurm.job_states([a, b]) == {}
    assert slurm.queue_states([]) == {} and slurm.job_states([]) == {}
    # a job long gone (squeue: "Invalid job id specified") is simply not queued
    assert slurm.queue_states(['999999']) == {}


def test_a_job_slurm_refuses_is_an_error_naming_the_script(services, tmp_path):
    script = tmp_path / 'refused.sh'
    script.write_text('#!/bin/bash\n#SBATCH --partition=no-such-partition\ntrue\n')
    with pytest.raises(RuntimeError, match=rf'^sbatch {script} failed: .*partition'):
        slurm.submit(script)


def test_without_slurm_there_are_no_nodes_and_no_accounting(services, monkeypatch, tmp_path):
    monkeypatch.setenv('PATH', str(tmp_path))          # no sinfo, no sacct
    assert slurm.node_states() == {}
    assert slurm.job_states(['1']) == {}
