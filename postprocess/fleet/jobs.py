'''Node acceptance at fleet scale with bounded jobs (``mdxbench accept``).

ReFrame's ``--distribute=all`` makes one test case, hence one Slurm job, per node and per
check: N x M jobs, which stalls at Slurm's MaxSubmitJobs with hundreds of nodes (ReFrame
issues #3586, #3653). Here each node gets **one** job that runs all the acceptance
checks one after another inside its allocation (ReFrame started in the job, the
partition switched to ReFrame's ``local`` scheduler by ``MDXBENCH_INSIDE_ALLOCATION``,
its launcher unchanged), and at most ``max_jobs`` of those jobs are in the queue at once.
Nodes Slurm reports drained, down or failing get no job and are "not tested". The
records go to one perflog directory; the verdicts are ``mdxbench acceptance``'s (fleet
outliers and references), with a ``scontrol update ... state=drain`` line printed for
each failed node (run only with ``drain=True``).

The suspects' paired rounds (:func:`run_round`) are one job each, whatever the number of
nodes: the suspects and their healthy buddy in one allocation, a job step per node that
runs that node's checks, all at once where the nodes have cores of their own, one after
another where the site config says they share them (``extras.shared_cpus``).

*Pair checks* (tag ``pair``: nccl-tests across two nodes) measure two nodes at once. Each
node gets one run *for* it (``MDXBENCH_PAIR_SUBJECT``), with the next node of the ring of
testable nodes as partner (:func:`ring`), in a two-node job of its own after the nodes'
jobs: the figure is the subject's reading (``verdicts.acceptance_records``). A bad node
spoils its own reading and its predecessor's; the suspects' rounds tell them apart, each
suspect measured with the healthy buddy as partner against the buddy's own reading with a
second healthy node, in the round's one job.
'''
import dataclasses
import functools
import json
import os
import pathlib
import shlex
import subprocess
import sys
import time

from mdxbench import REPO_ROOT
from mdxbench.post.fleet import slurm
from mdxbench.post.fleet.verdicts import BAD_STATES


@dataclasses.dataclass
class Plan:
    system: str
    partition: str
    slurm_partition: str
    testable: list
    untested: dict          # node -> Slurm state
    access: list            # the partition's sbatch options (account, partition, ...)
    max_jobs: int
    #: the nodes share one machine's cores (the site config's ``extras.shared_cpus``): the
    #: nodes of one job measure one after another, not at once
    shared_cpus: bool = False
    #: the sbatch options that ask for every GPU of a node (the partition's ReFrame
    #: resource ``gpu`` with its GPU count): the checks run inside the allocation, which
    #: must hold the GPUs, or cgroup device confinement hides them
    gpus: list = dataclasses.field(default_factory=list)
    #: seconds between two looks at the queue (squeue): a production controller serves
    #: every user's commands, and a node's job takes minutes
    poll: float = 5.0


def gpu_options(part):
    '''The sbatch options of a partition (site config) that ask for all its GPUs per node:
    its ``resources`` entry ``gpu`` formatted with the GPU count of its ``devices``.'''
    n = sum(int(d.get('num_devices') or 0) for d in part.get('devices') or []
            if d.get('type') == 'gpu')
    res = next((r for r in part.get('resources') or [] if r.get('name') == 'gpu'), None)
    if not n or res is None:
        return []
    return [o.format(num_gpus_per_node=n) for o in res.get('options') or []]


def plan(system, partition, slurm_partition=None, max_jobs=None, states=None, nodes=None):
    '''Which nodes get a job, from Slurm's node states and the site config (``nodes``:
    only these of the partition).'''
    from mdxbench.sitecfg import build_config

    cfg = build_config(REPO_ROOT / 'site-configs', selected=system)
    sysdef = next(s for s in cfg['systems'] if s['name'] == system)
    part = next((p for p in sysdef['partitions'] if p['name'] == partition), None)
    if part is None:
        raise ValueError(f'{system}: no partition {partition!r} (has '
                         f'{", ".join(p["name"] for p in sysdef["partitions"])})')
    states = slurm.node_states(slurm_partition or partition) if states is None else states
    if not states:
        raise ValueError(f'sinfo lists no node in Slurm partition '
                         f'{slurm_partition or partition!r} (SLURM_CONF '
                         f'{os.environ.get("SLURM_CONF", "unset")})')
    if nodes:
        unknown = sorted(set(nodes) - set(states))
        if unknown:
            raise ValueError(f'not in Slurm partition {slurm_partition or partition!r}: '
                             f'{", ".join(unknown)}')
        states = {n: s for n, s in states.items() if n in nodes}
    testable, untested = [], {}
    for node, state in sorted(states.items()):
        st = state.lower().rstrip('*~#!%$@^-')
        (untested.__setitem__(node, state) if st.startswith(BAD_STATES)
         else testable.append(node))
    return Plan(system, partition, slurm_partition or partition, testable, untested,
                list(part.get('access') or []), max_jobs or max(1, len(testable)),
                bool((part.get('extras') or {}).get('shared_cpus')), gpu_options(part))


#: the tag of the acceptance checks that measure two nodes at once (one run for each node,
#: with a partner): run in jobs of their own, never in a node's
PAIR_TAG = 'pair'


def ring(nodes):
    '''The pair runs of a first acceptance run: ``[(subject, partner)]``, each node the
    subject once with the next node (in the order given, the last with the first) as
    partner -- each node in two runs, a slow node in its own and its predecessor's. None
    for fewer than two nodes.'''
    nodes = list(nodes)
    if len(nodes) < 2:
        return []
    return [(n, nodes[(i + 1) % len(nodes)]) for i, n in enumerate(nodes)]


def pair_name(subject):
    '''The name of the pair run for ``subject``: its job script, output and report.'''
    return f'pair-{subject}'


def _reframe(p, node, out, reframe_args=(), files=None, pair=False):
    '''The ReFrame command that runs every acceptance check of ``node`` (loaded from
    ``files``, those that define them, else the whole of checks/) -- with ``pair``, the
    pair checks of the pair run named ``node`` (:func:`pair_name`); without it, every
    other one.'''
    # --exec-policy=serial: the checks of one node measure one after another -- HPL beside
    # netperf or fio on the same node would measure the overlap, not the node. (The
    # partition's max_jobs of 1 inside an allocation already keeps their jobs apart under
    # ReFrame's default async policy; serial says so, and orders setup and builds too.)
    # --report-file: ReFrame's run report says which checks failed before they measured
    # (setup, build, run, time limit), which no perflog record does.
    # (only the files of the selected checks: loading all of checks/ is most of ReFrame's
    # start-up, paid once per node)
    search = [a for f in (files or [REPO_ROOT / 'checks']) for a in ('-c', str(f))]
    cmd = [str(pathlib.Path(sys.executable).parent / 'reframe'), *search,
           '-t', 'acceptance', *(('-t', PAIR_TAG) if pair else ('-T', PAIR_TAG)), '-r',
           '--system',
           f'{p.system}:{p.partition}', '--prefix', f'{out}/rfm/{node}', '--nocolor',
           '--exec-policy=serial', '--report-file', report_path(out, node), *reframe_args]
    return ' '.join(shlex.quote(c) for c in cmd)


def _exports(out):
    return ['export MDXBENCH_INSIDE_ALLOCATION=1',
            f'export MDXBENCH_PERFLOG_DIR={shlex.quote(str(out))}/perflogs',
            f'export RFM_CONFIG_FILES='
            f'{shlex.quote(str(REPO_ROOT / "site-configs" / "settings.py"))}']


def job_script(p, node, out, reframe_args=(), time_limit='30:00', files=None):
    '''The batch script of one node: all acceptance checks in its allocation.'''
    opts = [f'--job-name=mdxbench-accept-{node}', f'--nodelist={node}', '--nodes=1',
            '--exclusive', f'--time={time_limit}', f'--output={out}/jobs/{node}.out',
            *p.access, *p.gpus]
    return '\n'.join(['#!/bin/bash'] + [f'#SBATCH {o}' for o in opts] + [
        '# mdxbench accept: every acceptance check of this node, in this one job',
        *_exports(out), _reframe(p, node, out, reframe_args, files), ''])


def pair_script(p, subject, partner, out, reframe_args=(), time_limit='30:00', files=None):
    '''The batch script of one pair run: the pair checks on ``subject`` and ``partner`` in
    one two-node allocation, for ``subject`` (its records are its readings); the checks'
    steps reach both nodes, a check's tasks per node on each (``MDXBENCH_STEP_NODE``).'''
    name = pair_name(subject)
    opts = [f'--job-name=mdxbench-accept-{name}', f'--nodelist={subject},{partner}',
            '--nodes=2', '--exclusive', f'--time={time_limit}',
            f'--output={out}/jobs/{name}.out', *p.access, *p.gpus]
    return '\n'.join(['#!/bin/bash'] + [f'#SBATCH {o}' for o in opts] + [
        f'# mdxbench accept: the pair checks of {subject}, with {partner} as partner',
        *_exports(out), f'export MDXBENCH_PAIR_SUBJECT={shlex.quote(subject)}',
        f'export MDXBENCH_STEP_NODE={shlex.quote(f"{subject},{partner}")}',
        _reframe(p, name, out, reframe_args, files, pair=True), ''])


def round_script(p, nodes, out, reframe_args=(), time_limit='30:00', files=None, name='round',
                 pairs=()):
    '''The batch script of one paired round: every acceptance check of each of ``nodes``
    in one allocation, a job step per node (ReFrame on that node; the steps its launcher
    starts confined to the node), all at once -- the readings of a pair then share the
    moment -- or, where the nodes share one machine's cores (``p.shared_cpus``), one
    after another in the order given (the time limit then covers them all).
    ``pairs``: ``[(subject, partner)]``, the pair runs of the round (:func:`pair_script`'s,
    as steps), one after another once the nodes' steps have ended; their nodes join the
    allocation (a second healthy node, the buddy's partner), and each adds a time limit.'''
    nodes, pairs = list(nodes), list(pairs)
    every = list(dict.fromkeys(nodes + [n for pr in pairs for n in pr]))
    limit = scale_time(time_limit, (len(nodes) if p.shared_cpus else 1) + len(pairs)) \
        if p.shared_cpus or pairs else time_limit
    opts = [f'--job-name=mdxbench-accept-{name}', f'--nodelist={",".join(every)}',
            f'--nodes={len(every)}', '--exclusive', f'--time={limit}',
            f'--output={out}/jobs/{name}.out', *p.access, *p.gpus]
    lines = ['#!/bin/bash'] + [f'#SBATCH {o}' for o in opts] + [
        f'# mdxbench accept: the acceptance checks of {len(nodes)} nodes in this one job, '
        + ('one node after another (their cores are shared)' if p.shared_cpus
           else 'all nodes at once'),
        *_exports(out),
        '# ReFrame runs in a step of its own on each node (--overlap: the steps its launcher',
        '# starts there get all the node\'s CPUs); MDXBENCH_STEP_NODE sends those steps to',
        '# the node with the check\'s task count (the checks\' stay_on_the_step_node), and the',
        '# job\'s node list, narrowed to the node, is what its records and NodeConformance see',
        'on_node() {',
        '    local node=$1; shift',
        f'    srun --nodes=1 --ntasks=1 --nodelist="$node" --overlap '
        f'--output={shlex.quote(str(out))}/jobs/"$node".out \\',
        '        env -u SLURM_NTASKS -u SLURM_NPROCS -u SLURM_NTASKS_PER_NODE '
        '-u SLURM_TASKS_PER_NODE \\',
        '        MDXBENCH_STEP_NODE="$node" SLURM_JOB_NODELIST="$node" SLURM_NODELIST="$node" '
        'SLURM_NNODES=1 SLURM_JOB_NUM_NODES=1 "$@"',
        '}']
    if pairs:
        lines += [
            '# a pair run: ReFrame in a step on the subject, its checks\' steps on both nodes',
            'on_pair() {',
            '    local subject=$1 partner=$2; shift 2',
            f'    srun --nodes=1 --ntasks=1 --nodelist="$subject" --overlap '
            f'--output={shlex.quote(str(out))}/jobs/pair-"$subject".out \\',
            '        env -u SLURM_NTASKS -u SLURM_NPROCS -u SLURM_NTASKS_PER_NODE '
            '-u SLURM_TASKS_PER_NODE \\',
            '        MDXBENCH_PAIR_SUBJECT="$subject" MDXBENCH_STEP_NODE="$subject,$partner" '
            'SLURM_JOB_NODELIST="$subject,$partner" SLURM_NODELIST="$subject,$partner" '
            'SLURM_NNODES=2 SLURM_JOB_NUM_NODES=2 "$@"',
            '}']
    lines.append('status=0')
    for node in nodes:
        cmd = f'on_node {node} {_reframe(p, node, out, reframe_args, files)}'
        lines.append(cmd + (' || status=$?' if p.shared_cpus else ' &'))
    if not p.shared_cpus:
        lines.append('for pid in $(jobs -p); do wait "$pid" || status=$?; done')
    for subject, partner in pairs:
        lines.append(f'on_pair {subject} {partner} '
                     f'{_reframe(p, pair_name(subject), out, reframe_args, files, pair=True)}'
                     ' || status=$?')
    lines += ['exit $status', '']
    return '\n'.join(lines)


def scale_time(limit, k):
    '''A Slurm time limit (``MM``, ``MM:SS``, ``HH:MM:SS``, ``D-HH``, ``D-HH:MM``,
    ``D-HH:MM:SS``) ``k`` times as long, as ``D-HH:MM:SS``.'''
    text = str(limit)
    days, dash, rest = text.rpartition('-')
    try:
        if dash and not days:
            raise ValueError
        parts = [int(x) for x in rest.split(':')]
        d = int(days) if days else 0
    except ValueError:
        raise ValueError(f'time limit {limit!r}: not a Slurm time (MM, MM:SS, HH:MM:SS, '
                         f'D-HH[:MM[:SS]])') from None
    if days:
        h, m, sec = (parts + [0, 0])[:3]
    else:
        h, m, sec = {1: (0, parts[0], 0), 2: (0, *parts), 3: tuple(parts)}.get(
            len(parts), (None, None, None))
    if h is None or min(parts) < 0:
        raise ValueError(f'time limit {limit!r}: not a Slurm time (MM, MM:SS, HH:MM:SS, '
                         f'D-HH[:MM[:SS]])')
    total = k * (((d * 24 + h) * 60 + m) * 60 + sec)
    return (f'{total // 86400}-{total // 3600 % 24:02d}:{total // 60 % 60:02d}:'
            f'{total % 60:02d}')


def report_path(out, node):
    return f'{out}/rfm/{node}/report.json'


def outcomes(out, job_ids, states=None):
    '''Failures no perflog record carries, per node: a check that failed before it
    measured (ReFrame's run report: phase and reason), or a job that left no report at all
    (Slurm's state from sacct). {node: [(key, reason), ...]}, key: the check, or 'job' (a
    pair run's: 'job pair-<node>'); a pair run's failures are its subject's.'''
    states = slurm.job_states(list(job_ids.values())) if states is None else states
    found = {}
    for name, jid in job_ids.items():
        path = pathlib.Path(report_path(out, name))
        node = name.removeprefix(pair_name(''))
        try:
            report = json.loads(path.read_text())
        except (OSError, ValueError) as err:
            state = states.get(jid, 'state unknown')
            found.setdefault(node, []).append((
                'job' if name == node else f'job {name}',
                f'job {jid} ({state}) left no ReFrame report ({err.__class__.__name__} on '
                f'{path}); its output: {out}/jobs/{name}.out'))
            continue

        reasons = []
        for run in report.get('runs', [])[-1:]:
            for tc in run.get('testcases', []):
                # sanity and performance failures are in the perflog with their reason
                if tc.get('result') in ('fail', 'abort') and \
                        tc.get('fail_phase') not in ('sanity', 'performance'):
                    why = ' '.join(str(tc.get('fail_reason') or 'no reason given').split())
                    check = tc.get('display_name') or tc.get('name')
                    reasons.append((check, f"{check}: failed in "
                                           f"{tc.get('fail_phase') or 'an unknown phase'}: "
                                           f"{why[:300]}"))
        if reasons:
            found.setdefault(node, []).extend(reasons)
    return found


def acceptance_cases(system, partition, reframe_args=()):
    '''The acceptance test cases ReFrame selects for system:partition with these options
    (what ``--distribute=all`` multiplies by the node count), from ``reframe --describe``:
    ``(count, files, pairs)``: the files that define them -- all a node's job needs to
    load --, and how many of them are pair checks (tag ``pair``: a job of their own).'''
    res = subprocess.run([str(pathlib.Path(sys.executable).parent / 'reframe'), '-c',
                          str(REPO_ROOT / 'checks'), '-t', 'acceptance', '--describe',
                          '--system', f'{system}:{partition}', '--nocolor', *reframe_args],
                         capture_output=True, text=True, timeout=300,
                         env=dict(os.environ, RFM_CONFIG_FILES=str(
                             REPO_ROOT / 'site-configs' / 'settings.py')))
    text = res.stdout
    try:
        cases = json.loads(text[text.index('['):text.rindex(']') + 1])
    except ValueError:
        cases = None
    if res.returncode != 0 or cases is None:
        raise RuntimeError(f'reframe --describe failed: {res.stdout[-2000:]}{res.stderr[-2000:]}')
    return (len(cases), sorted({c['@file'] for c in cases}),
            sum(PAIR_TAG in (c.get('tags') or ()) for c in cases))


def _tell(progress, what, total, states, submitted, to_submit):
    '''Call ``progress(what, done, running, queued, to_submit, total)`` with the jobs'
    counts: those submitted and gone from the queue are done; a job not seen by squeue yet
    is queued.'''
    if progress is None:
        return
    running = sum(states.get(j) in ('R', 'CG') for j in submitted)
    inqueue = sum(j in states for j in submitted)
    progress(what, len(submitted) - inqueue, running, inqueue - running, to_submit, total)


def _submit(script, text):
    script.write_text(text)
    return slurm.submit(script)


def run(p, out, reframe_args=(), time_limit='30:00', poll=None, log=print, files=None,
        progress=None, what='nodes', pairs=None):
    '''Submit one job per testable node -- or, given ``pairs`` (``[(subject, partner)]``),
    one pair run each (:func:`pair_script`) --, at most ``p.max_jobs`` in the queue at
    once, and wait for all, telling ``progress`` the jobs' counts at each look at the queue
    (:func:`_tell`). Returns figures: jobs submitted, most in the queue, wall seconds, and
    the job ids by node (by :func:`pair_name` for pair runs).'''
    out = pathlib.Path(out).resolve()
    (out / 'jobs').mkdir(parents=True, exist_ok=True)
    if pairs is None:
        pending = [(node, functools.partial(job_script, p, node)) for node in p.testable]
    else:
        pending = [(pair_name(s), functools.partial(pair_script, p, s, partner))
                   for s, partner in pairs]
    total, inflight, jobs, most = len(pending), set(), {}, 0
    t0 = time.monotonic()
    while pending or inflight:
        states = slurm.queue_states(sorted(inflight))
        inflight &= set(states)
        while pending and len(inflight) < p.max_jobs:
            name, script = pending.pop(0)
            jid = _submit(out / 'jobs' / f'{name}.sh',
                          script(out, reframe_args, time_limit, files))
            jobs[name] = jid
            inflight.add(jid)
            states[jid] = 'PD'
            log(f'mdxbench accept: {name}: job {jid}')
        _tell(progress, what, total, states, list(jobs.values()), len(pending))
        most = max(most, len(inflight))
        if inflight:
            time.sleep(p.poll if poll is None else poll)
    _tell(progress, what, total, {}, list(jobs.values()), 0)
    return {'jobs': len(jobs), 'max_in_queue': most, 'seconds': time.monotonic() - t0,
            'job_ids': jobs}


def run_round(p, nodes, out, reframe_args=(), time_limit='30:00', poll=None, log=print,
              files=None, name='round', progress=None, pairs=()):
    '''Submit the one job of a paired round (:func:`round_script`, with its ``pairs``)
    and wait for it; the figures of :func:`run`, every node's (and pair run's) job id that
    job's.'''
    out = pathlib.Path(out).resolve()
    (out / 'jobs').mkdir(parents=True, exist_ok=True)
    t0 = time.monotonic()
    jid = _submit(out / 'jobs' / f'{name}.sh',
                  round_script(p, nodes, out, reframe_args, time_limit, files, name, pairs))
    log(f'mdxbench accept: {", ".join(nodes)}: job {jid}')
    while states := slurm.queue_states([jid]):
        _tell(progress, name, 1, states, [jid], 0)
        time.sleep(p.poll if poll is None else poll)
    _tell(progress, name, 1, {}, [jid], 0)
    return {'jobs': 1, 'max_in_queue': 1, 'seconds': time.monotonic() - t0,
            'job_ids': {**{n: jid for n in nodes}, **{pair_name(s): jid for s, _ in pairs}}}


def drain_commands(verdicts):
    '''``scontrol update`` argument lists that take the failed nodes out of service.'''
    out = []
    for v in verdicts:
        if v['verdict'] == 'fail':
            reason = ('mdxbench acceptance: ' + '; '.join(v['reasons']))[:200].replace('"', "'")
            out.append(['scontrol', 'update', f'nodename={v["node"]}', 'state=drain',
                        f'reason={reason}'])
    return out


def drain_lines(verdicts):
    '''The same commands as lines to print (the reason in double quotes).'''
    return [' '.join(c[:-1]) + ' reason="' + c[-1].removeprefix('reason=') + '"'
            for c in drain_commands(verdicts)]


def drain(verdicts):
    '''Run the drain commands of the failed nodes (``mdxbench accept --drain``).'''
    for cmd in drain_commands(verdicts):
        subprocess.run(cmd, check=True, timeout=60)
