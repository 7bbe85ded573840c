'''What a Spack environment's concretization reads, as a manifest: one ``<sha256>  <input>``
line per input, so that a lockfile kept in the repository (``spack/<system>/spack.lock``
beside its ``spack.lock.inputs``) can be told current or stale without concretizing again.

The inputs, none of them a path of the checkout or of the state directory (a clone elsewhere,
CI's or a site's, gets the same manifest from the same inputs):

    spack-version            ``spack --version``
    platform                 ``spack arch --platform`` and ``--operating-system`` (not the
                             host's target: the site environments require theirs)
    config:<section>         Spack's own configuration, outside the environment, of the
                             sections concretization reads (the externals and compilers it
                             found on this machine, a site's settings), its mappings in
                             sorted order
    repo:<namespace>         every ``.py`` and ``repo.yaml`` of each package repository of that
                             configuration (builtin's)
    <system>/..., common/..., repo/...
                             every ``.yaml`` and ``.py`` of the environment, what it
                             includes and our package repository (paths relative to spack/)

Used by ``ci/spack-build.sh`` (concretize only when the manifest changed) and by
``tests/integration/test_spack.py`` (each kept lock is the one its inputs give).

    python spack/tools/lockinputs.py ENV_DIR --spack SPACK [-C SCOPE ...] [--check FILE | --write FILE]

Exit status with ``--check``: 0 the same inputs, 1 changed (naming each input), 2 no file;
3 an error (Spack failed, a malformed manifest: the message names it).
'''
import argparse
import concurrent.futures
import hashlib
import pathlib
import subprocess
import sys

import yaml

#: configuration sections concretization reads besides the environment's own
CONFIG_SECTIONS = ('packages', 'concretizer', 'compilers')


def _sha(data):
    return hashlib.sha256(data if isinstance(data, bytes) else data.encode()).hexdigest()


def _spack(spack, scopes, *args):
    cmd = [str(spack)]
    for s in scopes:
        cmd += ['-C', str(s)]
    res = subprocess.run(cmd + list(args), capture_output=True, text=True)
    if res.returncode != 0:
        raise RuntimeError(f'{" ".join(cmd + list(args))} failed (exit {res.returncode}): '
                           f'{res.stderr.strip()[-2000:]}')
    return res.stdout


def _tree_sha(root, patterns):
    '''One sha256 over the relative names and contents of the files matching ``patterns``.'''
    h = hashlib.sha256()
    files = sorted({p for pat in patterns for p in root.rglob(pat)
                    if p.is_file() and '__pycache__' not in p.parts})
    for p in files:
        h.update(str(p.relative_to(root)).encode() + b'\0' + p.read_bytes() + b'\0')
    return h.hexdigest()


def _repo_dirs(repos_yaml):
    '''{namespace: directory} of the ``repos:`` section Spack printed (a path, or a mapping
    with ``path``/``destination``); an entry of another form is an error naming it.'''
    repos = (yaml.safe_load(repos_yaml) or {}).get('repos') or {}
    items = repos.items() if isinstance(repos, dict) else enumerate(repos)
    out = {}
    for name, entry in items:
        path = entry if isinstance(entry, str) else \
            (entry.get('path') or entry.get('destination')) if isinstance(entry, dict) else None
        if not path:
            raise ValueError(f"Spack's repos configuration: entry {name!r} ({entry!r}) names "
                             'no local directory; lockinputs can hash only local repositories')
        d = pathlib.Path(path)
        repo_yaml = d / 'repo.yaml'
        if repo_yaml.is_file():
            ns = (yaml.safe_load(repo_yaml.read_text()) or {}).get('repo', {}).get('namespace')
            out[ns or str(name)] = d
        else:
            out[str(name)] = d
    return out


def manifest(env_dir, spack, scopes=()):
    '''{input: sha256} of what concretizing ``env_dir`` reads (see the module's doc).'''
    env_dir = pathlib.Path(env_dir).resolve()
    spack_dir = env_dir.parent
    calls = {'spack-version': ('--version',), 'arch-platform': ('arch', '--platform'),
             'arch-os': ('arch', '--operating-system'), 'repos': ('config', 'get', 'repos'),
             **{f'config:{c}': ('config', 'get', c) for c in CONFIG_SECTIONS}}
    with concurrent.futures.ThreadPoolExecutor(len(calls)) as pool:   # each a second of start-up
        said = dict(zip(calls, pool.map(lambda args: _spack(spack, scopes, *args),
                                        calls.values())))
    out = {'spack-version': _sha(said['spack-version'].strip()),
           'platform': _sha(said['arch-platform'].strip() + '-' + said['arch-os'].strip())}
    for section in CONFIG_SECTIONS:
        # canonical: `spack external find` writes the packages it found in the order its
        # parallel detection finished, which differs from one machine's setup to the next
        out[f'config:{section}'] = _sha(yaml.safe_dump(yaml.safe_load(said[f'config:{section}']),
                                                       sort_keys=True))
    for ns, d in _repo_dirs(said['repos']).items():
        if not d.is_dir():
            raise ValueError(f"Spack's package repository {ns!r}: {d} is not a directory")
        out[f'repo:{ns}'] = _tree_sha(d, ('*.py', 'repo.yaml'))
    for top in (env_dir, spack_dir / 'common', spack_dir / 'repo'):
        for p in sorted(top.rglob('*')):
            rel = p.relative_to(spack_dir)
            if p.is_file() and p.suffix in ('.yaml', '.py') and \
                    not {'.spack-env', '__pycache__'} & set(rel.parts):
                out[str(rel)] = _sha(p.read_bytes())
    return out


def dumps(m):
    return ''.join(f'{sha}  {name}\n' for name, sha in sorted(m.items()))


def read(path):
    '''The manifest in ``path``; a line that is not ``<sha256>  <input>`` is an error naming
    the file and the line.'''
    path = pathlib.Path(path)
    out = {}
    for n, line in enumerate(path.read_text().splitlines(), 1):
        if not line.strip() or line.startswith('#'):
            continue
        sha, sep, name = line.partition('  ')
        if not sep or len(sha) != 64 or not name or any(c not in '0123456789abcdef' for c in sha):
            raise ValueError(f'{path}:{n}: not "<sha256>  <input>": {line!r}')
        out[name] = sha
    return out


def changed(old, new):
    '''The inputs that differ between two manifests, each as "name (changed|new|gone)".'''
    return [f'{name} ({"new" if name not in old else "gone" if name not in new else "changed"})'
            for name in sorted(set(old) | set(new)) if old.get(name) != new.get(name)]


def main(argv=None):
    ap = argparse.ArgumentParser(description=__doc__.split('\n\n')[0])
    ap.add_argument('env_dir')
    ap.add_argument('--spack', required=True)
    ap.add_argument('-C', dest='scopes', action='append', default=[])
    what = ap.add_mutually_exclusive_group()
    what.add_argument('--check', metavar='FILE', help='compare with the manifest in FILE')
    what.add_argument('--write', metavar='FILE', help='write the manifest to FILE')
    args = ap.parse_args(argv)
    try:
        now = manifest(args.env_dir, args.spack, args.scopes)
        old = read(args.check) if args.check and pathlib.Path(args.check).is_file() else None
    except (RuntimeError, ValueError, OSError) as err:
        print(f'lockinputs: {err}', file=sys.stderr)
        return 3
    if args.write:
        pathlib.Path(args.write).write_text(
            f'# what {pathlib.Path(args.env_dir).name}/spack.lock was concretized from '
            '(spack/tools/lockinputs.py)\n' + dumps(now))
        return 0
    if args.check:
        if old is None:
            print(f'{args.check}: no such file', file=sys.stderr)
            return 2
        diff = changed(old, now)
        for d in diff:
            print(d)
        return 1 if diff else 0
    sys.stdout.write(dumps(now))
    return 0


if __name__ == '__main__':
    sys.exit(main())
