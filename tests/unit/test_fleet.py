'''mdxbench accept's plan and job script (no Slurm needed): which nodes get a job, what
each job runs, and the drain lines of failed nodes.'''
import json

import pytest

from mdxbench.post.fleet import jobs


def test_drained_and_down_nodes_get_no_job_and_one_job_per_node_by_default():
    p = jobs.plan('nscluster', 'nodes', states={
        'mdxnode1': 'idle', 'mdxnode2': 'mixed', 'mdxnode3': 'drained', 'mdxnode4': 'down*',
        'mdxnode5': 'idle'})
    assert p.testable == ['mdxnode1', 'mdxnode2', 'mdxnode5']
    assert p.untested == {'mdxnode3': 'drained', 'mdxnode4': 'down*'}
    assert p.max_jobs == 3 and p.access == ['--partition=nodes']
    assert jobs.plan('nscluster', 'nodes', max_jobs=2, states={'a': 'idle'}).max_jobs == 2
    with pytest.raises(ValueError, match="no partition 'nope'"):
        jobs.plan('nscluster', 'nope', states={'a': 'idle'})


def test_the_job_runs_every_acceptance_check_of_its_node_inside_its_allocation(tmp_path):
    p = jobs.plan('nscluster', 'nodes', states={'mdxnode1': 'idle'})
    text = jobs.job_script(p, 'mdxnode1', tmp_path, ['-n', 'NodeConformance'])
    assert '#SBATCH --nodelist=mdxnode1' in text and '#SBATCH --partition=nodes' in text
    assert 'export MDXBENCH_INSIDE_ALLOCATION=1' in text
    # (the pair checks, nccl-tests across nodes, run in jobs of their own)
    assert "-t acceptance -T pair -r --system nscluster:nodes" in text
    assert text.rstrip().endswith('-n NodeConformance')


def test_a_gpu_nodes_acceptance_job_holds_its_gpus(tmp_path):
    '''mdxbench accept runs the checks inside the node's allocation (issue 56): the job
    asks for the partition's GPUs (mdx1: 8, its resource gpu) and the node alone; a
    partition without GPUs asks for none.'''
    import dataclasses

    p = jobs.plan('mdx1', 'gpu', states={'mdx1-001': 'idle', 'mdx1-002': 'idle'})
    assert p.gpus == ['--gres=gpu:8']
    for text in (jobs.job_script(p, 'mdx1-001', tmp_path),
                 jobs.round_script(dataclasses.replace(p), ['mdx1-001', 'mdx1-002'], tmp_path)):
        assert '#SBATCH --gres=gpu:8' in text and '#SBATCH --exclusive' in text
    assert jobs.plan('nscluster', 'nodes', states={'mdxnode1': 'idle'}).gpus == []


def test_inside_the_allocation_the_partition_runs_its_checks_locally(monkeypatch):
    from mdxbench import REPO_ROOT
    from mdxbench.sitecfg import build_config

    env = {'MDXBENCH_INSIDE_ALLOCATION': '1', 'SLURM_JOB_ID': '42'}
    part = build_config(REPO_ROOT / 'site-configs', 'nscluster', env=env)['systems']
    part = next(s for s in part if s['name'] == 'nscluster')['partitions'][0]
    assert (part['scheduler'], part['access'], part['max_jobs'], part['launcher']) == \
        ('local', [], 1, 'srun')
    # not inside a job: the partition is the site's
    plain = build_config(REPO_ROOT / 'site-configs', 'nscluster',
                         env={'MDXBENCH_INSIDE_ALLOCATION': '1'})['systems']
    assert next(s for s in plain if s['name'] == 'nscluster')['partitions'][0]['scheduler'] \
        == 'slurm'


def test_drain_lines_name_the_failed_nodes_and_why():
    lines = jobs.drain_lines([
        {'node': 'n1', 'verdict': 'pass', 'reasons': []},
        {'node': 'n2', 'verdict': 'fail', 'reasons': ['HpccHpl gflops=3.1 GFLOPS: outlier '
                                                      '(nodes\' median 60.2)']},
        {'node': 'n3', 'verdict': 'not tested', 'reasons': ['Slurm state drained']}])
    assert lines == ['scontrol update nodename=n2 state=drain reason="mdxbench acceptance: '
                     "HpccHpl gflops=3.1 GFLOPS: outlier (nodes' median 60.2)\""]


def test_the_node_checks_run_one_after_another_and_leave_reframes_report(tmp_path):
    p = jobs.plan('nscluster', 'nodes', states={'mdxnode1': 'idle'})
    text = jobs.job_script(p, 'mdxnode1', tmp_path, [])
    assert '--exec-policy=serial' in text
    assert f'--report-file {tmp_path}/rfm/mdxnode1/report.json' in text


def _report(tmp_path, node, cases):
    '''A ReFrame 4.10 run report (--report-file), reduced to the keys outcomes() reads;
    the keys and values are those of a real report of this suite.'''
    path = tmp_path / 'rfm' / node / 'report.json'
    path.parent.mkdir(parents=True)
    path.write_text(json.dumps({'session_info': {'version': '4.10.4'}, 'runs': [
        {'run_index': 0, 'testcases': cases}]}))


def test_outcomes_name_checks_that_failed_before_measuring_and_jobs_without_report(tmp_path):
    _report(tmp_path, 'n1', [
        {'name': 'HpccHpl', 'display_name': 'HpccHpl', 'result': 'pass', 'fail_phase': None,
         'fail_reason': None},
        {'name': 'FioTarget_1', 'display_name': 'FioTarget %workload=seqwrite', 'result': 'fail',
         'fail_phase': 'run', 'fail_reason': 'JobError: job exceeded its time limit'},
        # in the perflog with its own reason: not repeated
        {'name': 'NodeConformance', 'display_name': 'NodeConformance', 'result': 'fail',
         'fail_phase': 'sanity', 'fail_reason': 'kernel: declared 6.1, found 6.2'}])
    _report(tmp_path, 'n2', [{'name': 'HpccHpl', 'display_name': 'HpccHpl', 'result': 'pass',
                              'fail_phase': None, 'fail_reason': None}])
    got = jobs.outcomes(tmp_path, {'n1': '11', 'n2': '12', 'n3': '13'},
                         states={'13': 'TIMEOUT, exit 0:0'})
    assert got['n1'] == [('FioTarget %workload=seqwrite', 'FioTarget %workload=seqwrite: '
                          'failed in run: JobError: job exceeded its time limit')]
    assert 'n2' not in got
    assert got['n3'][0][0] == 'job'
    assert got['n3'][0][1].startswith('job 13 (TIMEOUT, exit 0:0) left no ReFrame report')
    assert f'{tmp_path}/jobs/n3.out' in got['n3'][0][1]


def test_a_paired_round_is_one_job_a_step_per_node_one_after_another_on_shared_cores(
        tmp_path):
    """The suspects' paired round: one allocation of every node, a job step per node that
    runs that node's checks (MDXBENCH_STEP_NODE: the steps ReFrame's srun launcher starts
    go to that node; the job's node list, as the records see it, narrowed to it), each
    node's own prefix and report. nscluster's nodes share this machine's cores
    (extras.shared_cpus): one after another, in the order given, the time limit covering
    them all; nodes with cores of their own run at once."""
    import dataclasses

    p = jobs.plan('nscluster', 'nodes', states={f'mdxnode{i}': 'idle' for i in (1, 2, 3)})
    assert p.shared_cpus
    nodes = ['mdxnode3', 'mdxnode1', 'mdxnode2']
    text = jobs.round_script(p, nodes, tmp_path, ['-n', 'HpccHpl'], '30:00', name='round-1')
    assert '#SBATCH --nodelist=mdxnode3,mdxnode1,mdxnode2' in text
    assert '#SBATCH --nodes=3' in text and '#SBATCH --exclusive' in text
    assert '#SBATCH --time=0-01:30:00' in text and '#SBATCH --partition=nodes' in text
    assert f'#SBATCH --output={tmp_path}/jobs/round-1.out' in text
    assert 'srun --nodes=1 --ntasks=1 --nodelist="$node" --overlap' in text
    assert 'MDXBENCH_STEP_NODE="$node"' in text and 'SLURM_JOB_NODELIST="$node"' in text
    assert '-u SLURM_NTASKS' in text
    runs = [ln for ln in text.splitlines() if ln.startswith('on_node ')]
    assert [ln.split()[1] for ln in runs] == nodes
    for node, ln in zip(nodes, runs):
        assert f'--prefix {tmp_path}/rfm/{node} ' in ln
        assert f'--report-file {tmp_path}/rfm/{node}/report.json' in ln
        assert ln.endswith('-n HpccHpl || status=$?')
    at_once = jobs.round_script(dataclasses.replace(p, shared_cpus=False), nodes, tmp_path)
    assert '#SBATCH --time=30:00' in at_once
    assert all(ln.endswith(' &') for ln in at_once.splitlines() if ln.startswith('on_node '))
    assert 'wait "$pid"' in at_once


@pytest.mark.parametrize('limit, k, expect', [
    ('30', 2, '0-01:00:00'), ('30:00', 3, '0-01:30:00'), ('1:00:00', 2, '0-02:00:00'),
    ('1-12', 2, '3-00:00:00'), ('0-00:10:30', 4, '0-00:42:00')])
def test_a_time_limit_scales_in_slurms_formats(limit, k, expect):
    assert jobs.scale_time(limit, k) == expect


@pytest.mark.parametrize('bad', ['half an hour', '1:2:3:4', '-5'])
def test_a_time_limit_that_is_no_slurm_time_is_refused(bad):
    with pytest.raises(ValueError, match='not a Slurm time'):
        jobs.scale_time(bad, 2)


# --- issue 61: pair checks (nccl-tests across nodes) ------------------------------------
def test_each_node_is_the_subject_of_one_pair_run_with_the_next_node_as_partner():
    assert jobs.ring(['a', 'b', 'c', 'd']) == [('a', 'b'), ('b', 'c'), ('c', 'd'), ('d', 'a')]
    # two nodes: each the subject once, the other the partner
    assert jobs.ring(['a', 'b']) == [('a', 'b'), ('b', 'a')]
    assert jobs.ring(['a']) == [] and jobs.ring([]) == []
    runs = jobs.ring([f'n{i}' for i in range(7)])
    assert sorted(s for s, _ in runs) == [f'n{i}' for i in range(7)]
    # every node in exactly two runs, never its own partner
    assert all(sum(n in r for r in runs) == 2 for n in (f'n{i}' for i in range(7)))
    assert all(s != p for s, p in runs)


def test_a_pair_run_is_a_two_node_job_for_its_subject_that_runs_only_the_pair_checks(
        tmp_path):
    """mdx1's GPU nodes: the pair run of mdx1-001 with mdx1-002 asks for both nodes alone
    with their GPUs, says whose reading it is (MDXBENCH_PAIR_SUBJECT), sends the checks'
    steps to both nodes (MDXBENCH_STEP_NODE), runs the acceptance checks tagged pair and
    leaves its report under its own name; a node's own job runs every other one."""
    p = jobs.plan('mdx1', 'gpu', states={'mdx1-001': 'idle', 'mdx1-002': 'idle'})
    text = jobs.pair_script(p, 'mdx1-001', 'mdx1-002', tmp_path, ['-n', 'NcclTests'], '20:00')
    lines = text.splitlines()
    for opt in ('--nodelist=mdx1-001,mdx1-002', '--nodes=2', '--exclusive', '--gres=gpu:8',
                '--time=20:00', f'--output={tmp_path}/jobs/pair-mdx1-001.out',
                '--job-name=mdxbench-accept-pair-mdx1-001'):
        assert f'#SBATCH {opt}' in lines, (opt, text)
    assert 'export MDXBENCH_PAIR_SUBJECT=mdx1-001' in lines
    assert 'export MDXBENCH_STEP_NODE=mdx1-001,mdx1-002' in lines
    assert 'export MDXBENCH_INSIDE_ALLOCATION=1' in lines
    cmd = lines[-1]
    assert ' -t acceptance -t pair -r --system mdx1:gpu ' in cmd, cmd
    assert f'--prefix {tmp_path}/rfm/pair-mdx1-001 ' in cmd
    assert f'--report-file {tmp_path}/rfm/pair-mdx1-001/report.json' in cmd
    assert cmd.endswith('-n NcclTests')
    assert ' -t acceptance -T pair -r ' in jobs.job_script(p, 'mdx1-001', tmp_path)


def test_a_rounds_pair_runs_follow_its_node_steps_one_at_a_time_on_both_nodes(tmp_path):
    """A round with pair runs: the suspects' node steps at once (nodes with cores of their
    own), then each pair run in a step on its subject whose checks reach both nodes, one
    after another (the buddy is in all of them); the second healthy node -- the buddy's
    partner -- joins the allocation, and each pair run adds a time limit."""
    p = jobs.plan('mdx1', 'gpu', states={f'mdx1-00{i}': 'idle' for i in range(1, 6)})
    assert not p.shared_cpus
    nodes = ['mdx1-003', 'mdx1-001', 'mdx1-004']
    pairs = [('mdx1-003', 'mdx1-001'), ('mdx1-004', 'mdx1-001'), ('mdx1-001', 'mdx1-005')]
    text = jobs.round_script(p, nodes, tmp_path, [], '20:00', name='round-2', pairs=pairs)
    lines = text.splitlines()
    assert '#SBATCH --nodelist=mdx1-003,mdx1-001,mdx1-004,mdx1-005' in lines
    assert '#SBATCH --nodes=4' in lines and '#SBATCH --time=0-01:20:00' in lines
    wait = lines.index('for pid in $(jobs -p); do wait "$pid" || status=$?; done')
    runs = [i for i, ln in enumerate(lines) if ln.startswith('on_pair ')]
    assert [lines[i].split()[1:3] for i in runs] == [list(pr) for pr in pairs]
    assert all(i > wait for i in runs)
    for (subject, _), i in zip(pairs, runs):
        assert ' -t acceptance -t pair -r ' in lines[i]
        assert f'--report-file {tmp_path}/rfm/pair-{subject}/report.json' in lines[i]
        assert lines[i].endswith(' || status=$?')
    assert all(' -T pair ' in ln for ln in lines if ln.startswith('on_node '))
    assert 'MDXBENCH_PAIR_SUBJECT="$subject" MDXBENCH_STEP_NODE="$subject,$partner"' in text
    assert 'SLURM_NNODES=2 SLURM_JOB_NUM_NODES=2' in text
    assert 'srun --nodes=1 --ntasks=1 --nodelist="$subject" --overlap' in text
    # no pair run: the round as before, no pair function, its own time limit
    plain = jobs.round_script(p, nodes, tmp_path, [], '20:00', name='round-2')
    assert 'on_pair' not in plain and '#SBATCH --time=20:00' in plain.splitlines()


def test_a_pair_run_that_left_no_report_fails_its_subject(tmp_path):
    _report(tmp_path, 'n1', [])
    got = jobs.outcomes(tmp_path, {'n1': '11', 'pair-n1': '21', 'pair-n2': '22'},
                        states={'21': 'FAILED, exit 1:0', '22': 'COMPLETED'})
    assert [k for k, _ in got['n1']] == ['job pair-n1'], got
    assert got['n1'][0][1].startswith('job 21 (FAILED, exit 1:0) left no ReFrame report')
    assert f'{tmp_path}/jobs/pair-n1.out' in got['n1'][0][1]
    assert [k for k, _ in got['n2']] == ['job pair-n2'] and 'pair-n2' not in got
