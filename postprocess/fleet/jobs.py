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
'''
import dataclasses
import json
import os
import pathlib
import shlex
import subprocess
import sys
import time

from mdxbench import REPO_ROOT
from mdxbench.post.fleet.verdicts import BAD_STATES, slurm_nodes


@dataclasses.dataclass
class Plan:
    system: str
    partition: str
    slurm_partition: str
    testable: list
    untested: dict          # node -> Slurm state
    access: list            # the partition's sbatch options (account, partition, ...)
    max_jobs: int


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
    states = slurm_nodes(slurm_partition or partition) if states is None else states
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
                list(part.get('access') or []), max_jobs or max(1, len(testable)))


def job_script(p, node, out, reframe_args=(), time_limit='30:00', files=None):
    '''The batch script of one node: all acceptance checks in its allocation (loaded from
    ``files``, those that define them, else the whole of checks/).'''
    opts = [f'--job-name=mdxbench-accept-{node}', f'--nodelist={node}', '--nodes=1',
            '--exclusive', f'--time={time_limit}', f'--output={out}/jobs/{node}.out',
            *p.access]
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
           '-t', 'acceptance', '-r', '--system',
           f'{p.system}:{p.partition}', '--prefix', f'{out}/rfm/{node}', '--nocolor',
           '--exec-policy=serial', '--report-file', report_path(out, node), *reframe_args]
    return '\n'.join(['#!/bin/bash'] + [f'#SBATCH {o}' for o in opts] + [
        '# mdxbench accept: every acceptance check of this node, in this one job',
        'export MDXBENCH_INSIDE_ALLOCATION=1',
        f'export MDXBENCH_PERFLOG_DIR={shlex.quote(str(out))}/perflogs',
        f'export RFM_CONFIG_FILES={shlex.quote(str(REPO_ROOT / "site-configs" / "settings.py"))}',
        ' '.join(shlex.quote(c) for c in cmd), ''])


def report_path(out, node):
    return f'{out}/rfm/{node}/report.json'


def outcomes(out, job_ids, states=None):
    '''Failures no perflog record carries, per node: a check that failed before it
    measured (ReFrame's run report: phase and reason), or a job that left no report at all
    (Slurm's state from sacct). {node: [(key, reason), ...]}, key: the check, or 'job'.'''
    states = job_states(list(job_ids.values())) if states is None else states
    found = {}
    for node, jid in job_ids.items():
        path = pathlib.Path(report_path(out, node))
        try:
            report = json.loads(path.read_text())
        except (OSError, ValueError) as err:
            state = states.get(jid, 'state unknown')
            found[node] = [('job', f'job {jid} ({state}) left no ReFrame report '
                                   f'({err.__class__.__name__} on {path}); its output: '
                                   f'{out}/jobs/{node}.out')]
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
            found[node] = reasons
    return found


def job_states(ids):
    '''{job id: "STATE exit N:M"} from sacct; {} without accounting.'''
    if not ids:
        return {}
    try:
        res = subprocess.run(['sacct', '-n', '-X', '-P', '-o', 'JobID,State,ExitCode', '-j',
                              ','.join(ids)], capture_output=True, text=True, timeout=60)
    except (OSError, subprocess.SubprocessError):
        return {}
    states = {}
    for ln in res.stdout.splitlines():
        parts = ln.split('|')
        if len(parts) == 3:
            states[parts[0]] = f'{parts[1]}, exit {parts[2]}'
    return states


def acceptance_cases(system, partition, reframe_args=()):
    '''The acceptance test cases ReFrame selects for system:partition with these options
    (what ``--distribute=all`` multiplies by the node count), from ``reframe --describe``:
    ``(count, files)``, the files that define them -- all a node's job needs to load.'''
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
    return len(cases), sorted({c['@file'] for c in cases})


def _queued(ids):
    if not ids:
        return set()
    res = subprocess.run(['squeue', '-h', '-o', '%i', '-j', ','.join(ids)],
                         capture_output=True, text=True, timeout=60)
    if res.returncode != 0 and 'Invalid job id' not in res.stderr:
        raise RuntimeError(f'squeue failed: {res.stderr.strip()}')
    return {ln.strip() for ln in res.stdout.splitlines() if ln.strip()}


def run(p, out, reframe_args=(), time_limit='30:00', poll=0.5, log=print, files=None):
    '''Submit one job per testable node, at most ``p.max_jobs`` in the queue at once, and
    wait for all. Returns figures: jobs submitted, most in the queue, wall seconds.'''
    out = pathlib.Path(out).resolve()
    (out / 'jobs').mkdir(parents=True, exist_ok=True)
    pending, inflight, jobs, most = list(p.testable), set(), {}, 0
    t0 = time.monotonic()
    while pending or inflight:
        inflight &= _queued(sorted(inflight))
        while pending and len(inflight) < p.max_jobs:
            node = pending.pop(0)
            script = out / 'jobs' / f'{node}.sh'
            script.write_text(job_script(p, node, out, reframe_args, time_limit, files))
            res = subprocess.run(['sbatch', '--parsable', str(script)], capture_output=True,
                                 text=True, timeout=60)
            if res.returncode != 0:
                raise RuntimeError(f'sbatch {script} failed: {res.stderr.strip()}')
            jid = res.stdout.strip().split(';')[0]
            jobs[node] = jid
            inflight.add(jid)
            log(f'mdxbench accept: {node}: job {jid}')
        most = max(most, len(inflight))
        if inflight:
            time.sleep(poll)
    return {'jobs': len(jobs), 'max_in_queue': most, 'seconds': time.monotonic() - t0,
            'job_ids': jobs}


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
