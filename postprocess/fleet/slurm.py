'''Slurm's commands, in one place: the nodes of a partition and their states (``sinfo``),
a job submitted (``sbatch``), the jobs still queued (``squeue``), their end states
(``sacct``), and waiting for jobs to leave the queue. Every other module asks these; the
integration tests run them against the real Slurm of ``ci/services.sh``
(tests/integration/test_slurm_calls.py).'''
import subprocess
import time


def node_states(partition=None):
    '''{node: state} of a Slurm partition (``sinfo``; every partition where None), or {}
    where sinfo cannot be run or fails (no Slurm here).'''
    cmd = ['sinfo', '-h', '-N', '-o', '%N %T'] + (['-p', partition] if partition else [])
    try:
        out = subprocess.run(cmd, capture_output=True, text=True, timeout=30, check=True).stdout
    except (OSError, subprocess.SubprocessError):
        return {}
    return dict(line.split(None, 1) for line in out.splitlines() if line.strip())


def submit(script):
    '''Submit a job script (``sbatch --parsable``): its job id. A refusal raises
    RuntimeError with the script's path and sbatch's message.'''
    res = subprocess.run(['sbatch', '--parsable', str(script)], capture_output=True,
                         text=True, timeout=60)
    if res.returncode != 0:
        raise RuntimeError(f'sbatch {script} failed: {res.stderr.strip()}')
    # --parsable prints "id" or "id;cluster"
    return res.stdout.strip().split(';')[0]


def queue_states(ids):
    '''{job id: Slurm's state code (PD, R, CG, ...)} of the jobs ``ids`` still in the
    queue (one squeue call); a job that left the queue is not there.'''
    if not ids:
        return {}
    res = subprocess.run(['squeue', '-h', '-o', '%i %t', '-j', ','.join(ids)],
                         capture_output=True, text=True, timeout=60)
    # (squeue refuses a list of jobs that all left the queue: "Invalid job id specified")
    if res.returncode != 0 and 'Invalid job id' not in res.stderr:
        raise RuntimeError(f'squeue failed: {res.stderr.strip()}')
    return dict(ln.split()[:2] for ln in res.stdout.splitlines() if len(ln.split()) >= 2)


def wait(ids, poll=1.0):
    '''Return once none of the jobs ``ids`` is queued or running.'''
    waiting = set(ids)
    while waiting:
        waiting &= set(queue_states(sorted(waiting)))
        if waiting:
            time.sleep(poll)


def job_states(ids):
    '''{job id: "STATE, exit N:M"} of the jobs ``ids`` from accounting (``sacct``); {}
    where there is no accounting or no sacct.'''
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
