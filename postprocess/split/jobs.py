'''The runs of a split: one Slurm job per node, with a time limit, in which the old and the
new build of each check run in rounds, interleaved (ABBA: old-new, new-old, ...; a drift of
the node during the job weighs on both builds alike).

Each run is ReFrame on the node's own allocation (``MDXBENCH_INSIDE_ALLOCATION``, as
``mdxbench accept`` runs), the check selected by its name, the build put first on PATH by
pointing the ``spack`` environment at the build's install prefix (``MDXBENCH_SPACK_VIEW``),
and ``MDXBENCH_SPLIT`` saying what the run is: its records carry ``meta.split`` and the tag
``split``, and go to the perflogs like any other (ingested, never a run of the nightly
series). Each side runs with the variables its recorded runs were given (``-S``), never
the class's defaults where they were not what ran; the job's time limit is sized from
the recorded runs' job times.
'''
import dataclasses
import json
import pathlib
import re
import shlex
import sys
import time

from mdxbench import REPO_ROOT
from mdxbench.post.fleet import slurm


@dataclasses.dataclass
class Case:
    '''One check of one node to run with both builds.'''
    partition: str
    environ: str
    check: str              # the series' check: display name without repetition
    node: str
    old_hash: str
    new_hash: str
    old_prefix: str = ''
    new_prefix: str = ''
    rounds: int = 0
    #: the variables each side's runs were given, as recorded (``meta.variables``): each
    #: side runs so again
    old_vars: dict = dataclasses.field(default_factory=dict)
    new_vars: dict = dataclasses.field(default_factory=dict)
    #: the longest recorded job of the series' runs either side, or None
    run_seconds: float = None

    @property
    def key(self):
        return (self.partition, self.environ, self.check, self.node, self.old_hash,
                self.new_hash)


def check_file(check):
    '''The file under checks/ that defines the check's class (its first word).'''
    name = check.split()[0]
    pat = re.compile(rf'^class {re.escape(name)}\(', re.M)
    for f in sorted((REPO_ROOT / 'checks').rglob('*.py')):
        if pat.search(f.read_text()):
            return f
    raise ValueError(f'no check class {name} under {REPO_ROOT / "checks"}')


def name_pattern(check):
    '''ReFrame's ``-n`` for exactly this test case (names are matched with their spaces
    removed).'''
    return '^' + re.escape(check.replace(' ', '')) + '$'


def set_options(check, variables):
    '''ReFrame's ``-S`` options that give the check's class each variable as recorded: a
    list or a mapping as JSON (ReFrame reads it so), None as ``@none``.'''
    import json

    cls, out = check.split()[0], []
    for name, value in sorted(variables.items()):
        if value is None:
            text = '@none'
        elif isinstance(value, bool):
            text = 'true' if value else 'false'
        elif isinstance(value, (list, dict)):
            text = json.dumps(value, sort_keys=True)
        else:
            text = str(value)
        out += ['-S', f'{cls}.{name}={text}']
    return out


#: a time limit's allowance per run beyond its recorded job time: ReFrame's start, the
#: check's load and stage (two minutes: a busy node), and a margin of 50% on the run
RUN_ALLOWANCE_S, RUN_MARGIN = 120, 1.5
#: where a case's runs recorded no job time
DEFAULT_TIME_LIMIT = '30:00'
#: the shortest limit sized, in minutes
MIN_LIMIT_MIN = 10


def time_limit_for(cases):
    '''A node's job's time limit for its ``cases``' runs (two a round), sized from their
    recorded job times (minutes, as Slurm's ``--time`` takes them); the default where a
    case's runs recorded none.'''
    if any(not c.run_seconds for c in cases):
        return DEFAULT_TIME_LIMIT
    seconds = sum(2 * c.rounds * (c.run_seconds * RUN_MARGIN + RUN_ALLOWANCE_S)
                  for c in cases)
    return str(max(MIN_LIMIT_MIN, -(-int(seconds) // 60)))


def order(rounds):
    '''The builds in run order: old, new, new, old, old, new, ... (ABBA).'''
    out = []
    for r in range(rounds):
        out += [(r + 1, b) for b in (('old', 'new') if r % 2 == 0 else ('new', 'old'))]
    return out


def job_script(system, node, cases, incident, out, perflogs, access, time_limit):
    '''The batch script of one node: every case's rounds, one ReFrame run per build and
    round; a run that fails leaves the others to run (its missing values are counted).'''
    opts = [f'--job-name=mdxbench-split-{incident}-{node}', f'--nodelist={node}', '--nodes=1',
            '--exclusive', f'--time={time_limit}', f'--output={out}/jobs/{node}.out', *access]
    lines = ['#!/bin/bash'] + [f'#SBATCH {o}' for o in opts] + [
        f'# mdxbench incident split {incident}: old and new builds, interleaved',
        'export MDXBENCH_INSIDE_ALLOCATION=1',
        f'export MDXBENCH_PERFLOG_DIR={shlex.quote(str(perflogs))}',
        f'export RFM_CONFIG_FILES={shlex.quote(str(REPO_ROOT / "site-configs" / "settings.py"))}',
        'failed=0']
    rfm = str(pathlib.Path(sys.executable).parent / 'reframe')
    for i, c in enumerate(cases):
        for rnd, build in order(c.rounds):
            h = c.old_hash if build == 'old' else c.new_hash
            prefix = c.old_prefix if build == 'old' else c.new_prefix
            tag = {'incident': incident, 'build': build, 'hash': h, 'round': rnd,
                   'node': node}
            stage = f'{out}/rfm/{node}/{i}-{rnd}-{build}'
            given = c.old_vars if build == 'old' else c.new_vars
            cmd = [rfm, '-c', str(check_file(c.check)), '-n', name_pattern(c.check),
                   '-p', f'^{re.escape(c.environ)}$', *set_options(c.check, given), '-r',
                   '--system', f'{system}:{c.partition}', '--prefix', stage, '--nocolor',
                   '--report-file', f'{stage}/report.json']
            lines.append(f'MDXBENCH_SPACK_VIEW={shlex.quote(prefix)} '
                         f'MDXBENCH_SPLIT={shlex.quote(json.dumps(tag, sort_keys=True))} '
                         + ' '.join(shlex.quote(a) for a in cmd) + ' || failed=$((failed+1))')
    lines += ['echo "mdxbench split: $failed run(s) failed"', '']
    return '\n'.join(lines)


def submit(system, by_node, incident, out, perflogs, access, time_limit, poll=1.0,
           log=print):
    '''One job per node (``by_node``: node -> cases), all in the queue at once; waits for
    them. ``{node: job id}`` and the seconds waited. ``time_limit`` None: each node's
    from its cases' recorded job times (:func:`time_limit_for`).'''
    out = pathlib.Path(out)
    (out / 'jobs').mkdir(parents=True, exist_ok=True)
    ids = {}
    t0 = time.monotonic()
    for node, cases in sorted(by_node.items()):
        script = out / 'jobs' / f'{node}.sh'
        limit = time_limit or time_limit_for(cases)
        script.write_text(job_script(system, node, cases, incident, out, perflogs, access,
                                     limit))
        ids[node] = slurm.submit(script)
        log(f'mdxbench split: {node}: job {ids[node]} '
            f'({sum(c.rounds for c in cases)} rounds of {len(cases)} check(s), time limit '
            f'{limit}{"" if ":" in limit else " min"})')
    slurm.wait(ids.values(), poll)
    return ids, time.monotonic() - t0


def values(records, case, perf_var):
    """The old and new values of a case's perf variable, paired by round: ``(old, new,
    problems)``. A round lacking either build is left out, and so is a run whose binary is
    not the build it was to run (its record's Spack hash): each is a problem, said."""
    got, problems = {}, []
    for r in records:
        sp = r['meta'].get('split') or {}
        name = re.sub(r' %\.repeat_no=\d+', '', r['display_name'])
        if (name, r['perf_var'], r['partition'], r['environ'], sp.get('node')) != \
                (case.check, perf_var, case.partition, case.environ, case.node):
            continue
        ran = (r['meta'].get('binary') or {}).get('spack_hash')
        if ran != sp.get('hash'):
            problems.append(f"round {sp.get('round')}: the {sp.get('build')} build's run "
                            f"used /{ran}, not /{sp.get('hash')}: left out")
            continue
        if r['perf_value'] is not None:
            got[(sp.get('round'), sp.get('build'))] = r['perf_value']
    old, new = [], []
    for rnd in range(1, case.rounds + 1):
        if (rnd, 'old') in got and (rnd, 'new') in got:
            old.append(got[(rnd, 'old')])
            new.append(got[(rnd, 'new')])
        else:
            problems.append(f'round {rnd}: no value of the '
                            + ' and '.join(b for b in ('old', 'new') if (rnd, b) not in got)
                            + ' build')
    return old, new, problems
