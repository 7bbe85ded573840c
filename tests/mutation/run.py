'''A mutation run over the modules an operator's decisions come from (issue 58): mutmut
changes one operator, constant or condition at a time and runs the unit tests that reach
the changed function; a mutant no test fails on "survived".

Not part of CI (hours on two cores): run it after a change to a decision module,

    python tests/mutation/run.py [GROUP ...] [--jobs N]

with the project's virtual environment active (``. ci/activate.sh``; mutmut is the
``mutation`` extra). The groups, each a few modules and the unit tests that guard them,
are data: tests/mutation/modules.yaml.

mutmut names a mutant by its module, found from the file's path under ``src/``; our
packages live in ``reframe/mdxbench`` and ``postprocess`` (setuptools' package-dir). So
each group runs in a staging copy, .mdxbench/mutation/GROUP, laid out as mutmut expects:
``src/mdxbench`` (and ``src/mdxbench/post``) beside the data the code and tests read
(site-configs, checks, tests, docs). ``mdxbench.REPO_ROOT`` is two levels above the package,
so it is the staging copy's ``mutants/`` -- where mutmut copies that data.

Writes .mdxbench/mutation/report-GROUP.md: per module, mutants killed, survived, timed out, and
each survivor's name and diff, for docs/testing.md (where each survivor left is argued
equivalent, or a test added that kills it).'''
import argparse
import fnmatch
import os
import pathlib
import re
import shutil
import subprocess
import sys

import yaml

import equivalent

ROOT = pathlib.Path(__file__).resolve().parents[2]
GROUPS = ROOT / 'tests' / 'mutation' / 'modules.yaml'
WORK = ROOT / '.mdxbench' / 'mutation'
#: what the code under test and its tests read besides the package
DATA = ['tests', 'site-configs', 'checks', 'spack', 'docs', 'README.md', 'ci', 'reframe',
        'postprocess']
PACKAGES = {'reframe/mdxbench': 'src/mdxbench', 'postprocess': 'src/mdxbench/post'}


def staged(path):
    '''The repository path of a module -> its path in the staging copy.'''
    for repo, stage in sorted(PACKAGES.items(), key=lambda kv: -len(kv[0])):
        if path.startswith(repo + '/'):
            return stage + path[len(repo):]
    raise SystemExit(f'{GROUPS}: {path} is in neither package ({", ".join(PACKAGES)})')


def stage(name, group):
    '''A fresh staging copy for one group, its mutmut configuration written.'''
    where = WORK / name
    shutil.rmtree(where, ignore_errors=True)
    ignore = shutil.ignore_patterns('__pycache__', '*.pyc', '.pytest_cache')
    shutil.copytree(ROOT / 'reframe' / 'mdxbench', where / 'src' / 'mdxbench', ignore=ignore)
    shutil.copytree(ROOT / 'postprocess', where / 'src' / 'mdxbench' / 'post', ignore=ignore)
    for d in DATA:
        src = ROOT / d
        if src.is_dir():
            shutil.copytree(src, where / d, ignore=ignore, symlinks=True)
        else:
            shutil.copy2(src, where / d)
    for m in group['modules']:
        if not (ROOT / m).is_file():
            raise SystemExit(f'{GROUPS}: group {name}: no module {m}')
    for t in group['tests']:
        if not (ROOT / t.split('::')[0]).is_file():
            raise SystemExit(f'{GROUPS}: group {name}: no test file {t}')
    conf = {'source_paths': ['src'],
            'only_mutate': [staged(m) for m in group['modules']],
            'also_copy': DATA,
            'pytest_add_cli_args_test_selection': group['tests'],
            'pytest_add_cli_args': ['-p', 'no:cacheprovider', '-q'],
            'use_git_change_detection': False,
            # a mutant that makes its tests run 4x as long (CPU time, all threads), and
            # 30 s more, is taken as caught: mutmut's 1 s more is less than pytest's
            # collection of a test module that imports Polars and SciPy in the forked
            # child, and flagged every mutant of a fast function as a timeout
            'timeout_multiplier': 4.0, 'timeout_constant': 30.0,
            # each mutant's process forked from a server that imported the tests, not from
            # mutmut's own, whose Polars thread pool (its stats run used it) leaves a forked
            # child waiting on a lock forever: every such mutant a false "timeout"
            'process_isolation': 'forkserver'}
    lines = ['[tool.pytest.ini_options]', 'testpaths = ["tests"]', '', '[tool.mutmut]']
    lines += [f'{k} = {toml_value(v)}' for k, v in conf.items()]
    (where / 'pyproject.toml').write_text('\n'.join(lines) + '\n')
    return where


def toml_value(v):
    if isinstance(v, bool):
        return 'true' if v else 'false'
    if isinstance(v, (int, float)):
        return repr(v)
    if isinstance(v, list):
        return '[' + ', '.join(toml_value(x) for x in v) + ']'
    return '"' + str(v).replace('\\', '\\\\').replace('"', '\\"') + '"'


def services_up():
    '''A group whose tests talk to the real Slurm (``services: true``) runs only where
    ci/services.sh started it; the staging copy's ci/ scripts then find it through this
    checkout's state directory.'''
    res = subprocess.run(['bash', str(ROOT / 'ci' / 'slurm.sh'), 'status'],
                         capture_output=True, text=True)
    if res.returncode != 0:
        raise SystemExit('this group runs its tests against the real Slurm: start it first '
                         f'(bash ci/services.sh start)\n{res.stdout}{res.stderr}')


def mutmut(where, *args, check=True, services=False):
    env = dict(os.environ, PYTHONDONTWRITEBYTECODE='1')
    if services:
        # (ci/lib.sh keeps a state directory set on purpose, not one inherited with the
        # checkout's root)
        env.pop('MDXBENCH_ROOT', None)
        env['MDXBENCH_STATE_DIR'] = os.environ.get('MDXBENCH_STATE_DIR') or str(ROOT / '.mdxbench')
    res = subprocess.run([sys.executable, '-m', 'mutmut', *args], cwd=where, env=env,
                         capture_output=True, text=True)
    if check and res.returncode != 0:
        raise SystemExit(f'mutmut {" ".join(args)} in {where} failed (exit {res.returncode}):'
                         f'\n{res.stdout[-3000:]}\n{res.stderr[-3000:]}')
    return res


#: mutmut's result words -> ours (everything but 'killed' counts against the score)
STATUS = re.compile(r'^\s*(\S+): (killed|survived|timeout|suspicious|no tests|skipped|'
                    r'caught by type check|segfault|not checked)\s*$')


def results(where):
    '''{mutant name: status} of every mutant of the run.'''
    out = mutmut(where, 'results', '--all', 'true', check=False).stdout
    found = {}
    for line in out.splitlines():
        m = STATUS.match(line)
        if m:
            found[m.group(1)] = m.group(2)
    return found


def module_of(mutant):
    ''''mdxbench.post.fleet.suspects.x_judge__mutmut_3' -> 'mdxbench.post.fleet.suspects'.'''
    head = mutant.partition('__mutmut_')[0]
    parts = head.split('.')
    while parts and not (parts[-1].startswith('x_') or parts[-1].startswith('xǁ')):
        parts.pop()
    return '.'.join(parts[:-1]) if parts else head


def counts(st):
    '''(caught -- killed or timed out --, mutants checked and not argued equivalent) of one
    module's {status: names} (``argued``: survivors argued equivalent in equivalent.yaml).'''
    total = sum(len(v) for k, v in st.items() if k not in ('not checked', 'argued'))
    return len(st.get('killed', [])) + len(st.get('timeout', [])), total


def report(name, where, found, out, argued):
    '''The report of one group's run: per module its figures (the score of the mutants not
    argued equivalent), then each survivor's diff -- those not argued first, a stale argument
    said.'''
    by_module, diffs, stale = {}, {}, []
    for mutant, status in found.items():
        if status in ('survived', 'no tests'):
            diffs[mutant] = mutmut(where, 'show', mutant, check=False).stdout.strip()
            said = argued.judge(mutant, diffs[mutant]) if status == 'survived' else None
            if said == 'argued':
                status = 'argued'
            elif said == 'stale':
                stale.append(mutant)
        by_module.setdefault(module_of(mutant), {}).setdefault(status, []).append(mutant)
    out.append(f'## {name}\n')
    out.append('| module | mutants | killed | survived | argued equivalent | no tests | timeout '
               '| not checked | score (of those not argued) |')
    out.append('|---|---|---|---|---|---|---|---|---|')
    for module, st in sorted(by_module.items()):
        killed, total = counts(st)
        out.append(f"| `{module}` | {total + len(st.get('argued', []))} | "
                   f"{len(st.get('killed', []))} | {len(st.get('survived', []))} | "
                   f"{len(st.get('argued', []))} | {len(st.get('no tests', []))} | "
                   f"{len(st.get('timeout', []))} | {len(st.get('not checked', []))} | "
                   f"{killed / total if total else 0:.1%} |")
    out.append('')
    if stale:
        out.append(f'Arguments of {argued.path.name} that name another change now (mutmut '
                   f'numbers a changed function anew; counted as not argued): '
                   + ', '.join(f'`{m}`' for m in sorted(stale)) + '\n')
    for kind, title in (('survived', 'survived, not argued'), ('no tests', 'no tests'),
                        ('argued', 'argued equivalent')):
        for module, st in sorted(by_module.items()):
            for mutant in sorted(st.get(kind, [])):
                out.append(f'### {mutant} ({title})\n')
                out.append('```diff\n' + diffs[mutant] + '\n```\n')
    return by_module


def main(argv=None):
    groups = yaml.safe_load(GROUPS.read_text())['groups']
    p = argparse.ArgumentParser(description=__doc__.split('\n\n')[0],
                                formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument('group', nargs='*',
                   help=f'groups of tests/mutation/modules.yaml: {", ".join(groups)} (default: all)')
    p.add_argument('--jobs', type=int, default=os.cpu_count(),
                   help='mutants tested at once (default: %(default)s, the CPUs)')
    p.add_argument('--only', action='append', default=[], metavar='PATTERN',
                   help="only the mutants whose name matches (fnmatch, mutmut's names: "
                        "'mdxbench.post.fleet.suspects.x_update*'); the report is of those")
    p.add_argument('--report-only', action='store_true',
                   help='no run: the report of the run already in .mdxbench/mutation/GROUP '
                        '(one stopped before its end: its mutants not checked are counted)')
    args = p.parse_args(argv)
    unknown = [g for g in args.group if g not in groups]
    if unknown:
        p.error(f'no group {", ".join(unknown)} in {GROUPS} (there: {", ".join(groups)})')
    scores = {}
    argued = equivalent.load()
    for name in args.group or groups:
        out = [f'# Mutation run (tests/mutation/run.py {name})\n']
        if args.report_only:
            where = WORK / name
            res = None
        else:
            if groups[name].get('services'):
                services_up()
            where = stage(name, groups[name])
            print(f'[mutation] {name}: mutmut in {where}', flush=True)
            res = mutmut(where, 'run', '--max-children', str(args.jobs), *args.only,
                         check=False, services=bool(groups[name].get('services')))
        found = results(where)
        if args.only:
            found = {k: v for k, v in found.items()
                     if any(fnmatch.fnmatch(k, pat) for pat in args.only)}
        if not found or ('not checked' in found.values() and not args.report_only):
            # mutmut tests nothing when a test fails unmutated (its first, timing run)
            said = (f' (exit {res.returncode}):\n{res.stdout[-3000:]}\n{res.stderr[-3000:]}'
                    if res else ': no run there')
            raise SystemExit(f'mutmut in {where} left mutants unchecked{said}')
        for module, st in report(name, where, found, out, argued).items():
            scores[module] = counts(st)
            total = scores[module][1]
            print(f'[mutation]   {module}: {scores[module][0]}/{total} killed '
                  f'({scores[module][0] / max(total, 1):.1%} of those not argued '
                  f'equivalent; {len(st.get("argued", []))} argued, '
                  f'{len(st.get("not checked", []))} not checked)', flush=True)
        (WORK / f'report-{name}.md').write_text('\n'.join(out) + '\n')
        print(f'[mutation] report: {WORK / f"report-{name}.md"}', flush=True)


if __name__ == '__main__':
    main()
