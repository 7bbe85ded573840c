'''Cycles on the cluster's own scheduler: one Slurm ``scrontab`` entry per system.

``scrontab`` (Slurm >= 20.11, ``ScronParameters=enable``) keeps a crontab per user in
slurmctld; each entry is a batch job that Slurm starts at the cron times, visible in
``squeue`` while it waits and ``scrontab -l`` always. An entry of ours is a block of three
lines between two markers, so that ``remove`` and a new ``install`` of the same system
touch nothing else of the user's crontab::

    # >>> mdxbench cycle SYSTEM (mdxbench schedule: do not edit between the markers)
    #SCRON --job-name=mdxbench-cycle-SYSTEM --time=... --output=... [--partition=...]
    0 2 * * * env MDXBENCH_STATE_DIR=... PATH=... /venv/bin/mdxbench cycle --system SYSTEM ...
    # <<< mdxbench cycle SYSTEM

The job starts with the user's login environment (Slurm's ``--get-user-env``), not the
shell's that ran ``install``: the variables mdxbench and ReFrame read are written into the
entry. Secrets are not: an Elasticsearch API key or password must come from a 0600 file
(``MDXBENCH_ES_API_KEY_FILE``, ``MDXBENCH_ES_PASSWORD_FILE``), because slurmctld stores the
crontab and ``scrontab -l`` shows it.
'''
import dataclasses
import os
import pathlib
import re
import shlex
import shutil
import subprocess
import sys
import tempfile

#: the environment written into an entry (when set where ``install`` runs)
CARRIED = ('MDXBENCH_STATE_DIR', 'MDXBENCH_ROOT', 'MDXBENCH_PERFLOG_DIR', 'MDXBENCH_EVENTS',
           'MDXBENCH_REFERENCE_DIR', 'MDXBENCH_ES_URL', 'MDXBENCH_ES_API_KEY_FILE',
           'MDXBENCH_ES_USER', 'MDXBENCH_ES_PASSWORD_FILE', 'MDXBENCH_ES_CA_CERTS',
           'MDXBENCH_ES_INSECURE', 'MDXBENCH_ES_INDEX_PREFIX', 'MDXBENCH_LOCAL_SLURM_CONF',
           'RFM_CONFIG_FILES', 'RFM_REFERENCE_PREFIX', 'SLURM_CONF')
#: never written into a crontab (slurmctld keeps it, ``scrontab -l`` prints it)
SECRETS = ('MDXBENCH_ES_API_KEY', 'MDXBENCH_ES_PASSWORD')
BEGIN = '# >>> mdxbench cycle {system} (mdxbench schedule: do not edit between the markers)'
END = '# <<< mdxbench cycle {system}'
_BEGIN_RE = re.compile(r'^# >>> mdxbench cycle (\S+)')
_CRON_NICKNAMES = {'@yearly', '@annually', '@monthly', '@weekly', '@daily', '@midnight',
                   '@hourly'}
_CRON_FIELD = re.compile(r'^[0-9*,/-]+$')


class ScheduleError(ValueError):
    '''scrontab is missing, disabled, or refused the entry; the message says which.'''


@dataclasses.dataclass
class Entry:
    '''One system's cycle entry, as installed.'''
    system: str
    at: str
    options: list
    command: str
    disabled: bool = False

    def job_name(self):
        return job_name(self.system)

    def cycle_args(self):
        '''What follows ``mdxbench cycle`` in the command.'''
        return self.command.partition(' cycle ')[2]

    def job_options(self):
        '''The sbatch options besides those every entry has.'''
        return [o for o in self.options if not o.startswith(('--job-name=', '--output=',
                                                               '--chdir='))]


def job_name(system):
    return f'mdxbench-cycle-{system}'


def check_at(at):
    '''A cron time of five fields or a nickname (``@daily``); else ValueError naming it.'''
    fields = at.split()
    if (len(fields) == 1 and fields[0] in _CRON_NICKNAMES) or \
            (len(fields) == 5 and all(_CRON_FIELD.match(f) for f in fields)):
        return ' '.join(fields)
    raise ValueError(f'--at {at!r} is not a cron time: five fields "minute hour day-of-month '
                     f'month day-of-week" (e.g. "0 2 * * *") or one of '
                     f'{", ".join(sorted(_CRON_NICKNAMES))}')


def environment(env=None):
    '''The ``NAME=value`` words an entry carries; ValueError where a secret would.'''
    env = os.environ if env is None else env
    secret = [s for s in SECRETS if env.get(s)]
    if secret:
        raise ValueError(f'{", ".join(secret)} is set: a scheduled cycle cannot carry it '
                         '(slurmctld stores the crontab and `scrontab -l` prints it). Put the '
                         f'secret in a file of mode 0600 and set {secret[0]}_FILE instead')
    words = [f'{k}={env[k]}' for k in CARRIED if env.get(k)]
    path = [str(pathlib.Path(sys.executable).parent), '/usr/local/bin', '/usr/bin', '/bin']
    return words + [f'PATH={":".join(dict.fromkeys(path + env.get("PATH", "").split(":")))}'
                    .rstrip(':')]


def block(entry):
    '''The lines of an entry.'''
    return [BEGIN.format(system=entry.system),
            '#SCRON ' + ' '.join(shlex.quote(o) for o in entry.options),
            f'{entry.at} {entry.command}', END.format(system=entry.system)]


def cycle_args(state, *, run=True, site=None, notify_command=None, reframe_args=()):
    '''The options of the scheduled ``mdxbench cycle``.'''
    words = ['--run'] if run else []
    for flag, value in (('--state', state), ('--site', site),
                        ('--notify-command', notify_command)):
        if value:
            words += [flag, str(value)]
    return words + (['--', *reframe_args] if reframe_args else [])


def make_entry(system, at, *, cycle_args, state, time_limit='04:00:00', partition=None,
               scron_options=(), env=None):
    '''The entry that runs ``mdxbench cycle --system SYSTEM CYCLE_ARGS`` at ``at``; its
    output goes to ``STATE/scron-%j.out``.'''
    state = pathlib.Path(state)
    state.mkdir(parents=True, exist_ok=True)      # the job's --chdir and --output
    options = [f'--job-name={job_name(system)}', f'--time={time_limit}',
               f'--output={state}/scron-%j.out', f'--chdir={state}']
    if partition:
        options.append(f'--partition={partition}')
    options += list(scron_options)
    exe = pathlib.Path(sys.executable).parent / 'mdxbench'
    command = ' '.join(shlex.quote(w) for w in ['env', *environment(env), str(exe), 'cycle',
                                                 '--system', system, *cycle_args])
    return Entry(system, check_at(at), options, command)


def parse(text):
    '''Our entries in a crontab's text (``#DISABLED:`` lines, scrontab's mark of a line it
    could not submit, count as disabled).'''
    found, lines = [], text.splitlines()
    for i, line in enumerate(lines):
        m = _BEGIN_RE.match(line)
        if not m or i + 2 >= len(lines):
            continue
        opts, cron = lines[i + 1], lines[i + 2]
        disabled = cron.startswith('#DISABLED:') or opts.startswith('#DISABLED:')
        opts = opts.removeprefix('#DISABLED:').strip()
        cron = cron.removeprefix('#DISABLED:').strip()
        words = cron.split()
        n = 1 if words and words[0].startswith('@') else 5
        found.append(Entry(m.group(1), ' '.join(words[:n]),
                           shlex.split(opts.removeprefix('#SCRON')), ' '.join(words[n:]),
                           disabled))
    return found


def without(text, system):
    '''The crontab's text without ``system``'s entry; everything else as it was.'''
    out, skipping = [], False
    for line in text.splitlines():
        m = _BEGIN_RE.match(line)
        if m and m.group(1) == system:
            skipping = True
            continue
        if skipping:
            skipping = line != END.format(system=system)
            continue
        out.append(line)
    return '\n'.join(out) + ('\n' if out else '')


class Scrontab:
    '''The calling user's crontab in slurmctld, through the ``scrontab`` client.'''

    def __init__(self, exe=None):
        self.exe = exe or shutil.which('scrontab')
        if not self.exe:
            raise ScheduleError(
                'scrontab not found on PATH: Slurm\'s scrontab client (Slurm >= 20.11) is '
                'needed. Debian 12\'s slurm-client leaves it out; ci/install.sh builds it from '
                'Debian\'s source package. Without it, run `mdxbench cycle` from cron or a '
                'systemd timer (docs/results.md, "Scheduling cycles")')

    def _run(self, *args):
        res = subprocess.run([self.exe, *args], capture_output=True, text=True, timeout=60)
        said = (res.stdout + res.stderr).strip()
        if 'scrontab is disabled' in said:
            raise ScheduleError(
                'scrontab is disabled on this cluster: slurm.conf needs '
                'ScronParameters=enable (slurmctld reads it when it starts). Without it, run '
                '`mdxbench cycle` from cron or a systemd timer (docs/results.md, '
                '"Scheduling cycles")')
        return res, said

    def read(self):
        res, said = self._run('-l')
        if res.returncode != 0:
            if 'no crontab for' in said:
                return ''
            raise ScheduleError(f'scrontab -l failed (exit {res.returncode}): {said}')
        return res.stdout

    def write(self, text):
        if not text.strip():
            res, said = self._run('-r')
            if res.returncode != 0 and 'no crontab for' not in said:
                raise ScheduleError(f'scrontab -r failed (exit {res.returncode}): {said}')
            return
        with tempfile.NamedTemporaryFile('w', suffix='.crontab', delete=False) as fp:
            fp.write(text)
        try:
            res, said = self._run(fp.name)
        finally:
            os.unlink(fp.name)
        # scrontab keeps a line it could not submit, commented out with #DISABLED:
        if res.returncode != 0 or 'errors in your crontab' in said or 'issue with the job' in said:
            raise ScheduleError(f'scrontab refused the crontab (exit {res.returncode}): {said}')


def install(tab, entry):
    '''Put ``entry`` in the crontab, replacing the system's previous one; the entry as
    scrontab kept it (a line it disabled is an error).'''
    text = without(tab.read(), entry.system).rstrip('\n')
    tab.write((text + '\n' if text else '') + '\n'.join(block(entry)) + '\n')
    kept = [e for e in parse(tab.read()) if e.system == entry.system]
    if not kept or kept[0].disabled:
        raise ScheduleError(f'scrontab did not keep the entry of {entry.system} enabled: '
                            f'{tab.read()}')
    return kept[0]


def remove(tab, system):
    '''Remove ``system``'s entry; whether there was one. Other lines stay as they were.'''
    text = tab.read()
    if not any(e.system == system for e in parse(text)):
        return False
    tab.write(without(text, system))
    return True


def next_start(system):
    '''(job id, state, start time) of the system's waiting cycle job in ``squeue``, or None.'''
    try:
        res = subprocess.run(['squeue', '-h', '--me', '--name', job_name(system), '-o',
                              '%i %T %S'], capture_output=True, text=True, timeout=30)
    except (OSError, subprocess.TimeoutExpired):
        return None
    first = res.stdout.split('\n', 1)[0].split()
    return tuple(first) if res.returncode == 0 and len(first) == 3 else None


def next_starts(entries):
    '''{system: next_start(system)} for the entries.'''
    return {e.system: next_start(e.system) for e in entries}


def as_json(entries, starts):
    '''The entries and their waiting jobs, as JSON-ready dictionaries.'''
    return [dict(dataclasses.asdict(e), job_name=e.job_name(),
                 next_job=dict(zip(('id', 'state', 'start'), starts[e.system]))
                 if starts.get(e.system) else None) for e in entries]
