'''Offline validation of the Spack environments in ``spack/`` against an index of Spack's
builtin packages (``builtin-index.json`` beside this file: versions and variants of every
package, see ``README.md`` here for its source), without Spack: every ``include:`` resolves, every spec names a package that
exists, a pinned version that exists, and variants that exist with legal values. Errors
name the file, the spec and the closest valid names.

    python spack/tools/spackcheck.py [--index FILE] [ENV_DIR ...]

It needs only Python and PyYAML (no mdxbench, no Spack).
'''
import argparse
import difflib
import gzip
import json
import pathlib
import re
import shlex
import sys

import yaml

HERE = pathlib.Path(__file__).resolve().parent
SPACK_DIR = HERE.parent
DEFAULT_INDEX = HERE / 'builtin-index.json'

#: Virtual packages (provided by others) that may appear where a package name does
VIRTUALS = {'mpi', 'blas', 'lapack', 'scalapack', 'c', 'cxx', 'fortran', 'fftw-api',
            'pkgconfig', 'java', 'golang', 'rust', 'libllvm', 'yacc', 'awk', 'tbb',
            'sycl', 'opencl', 'gl', 'glu', 'jpeg', 'uuid', 'iconv', 'elf', 'unwind',
            'zlib-api', 'libc'}

#: Compiler names Spack accepts after % that are not package names
COMPILER_ALIASES = {'oneapi': 'intel-oneapi-compilers', 'intel': 'intel-oneapi-compilers-classic',
                    'clang': 'llvm', 'dpcpp': 'intel-oneapi-compilers', 'nvhpc': 'nvhpc',
                    'aocc': 'aocc', 'gcc': 'gcc'}

FLAGS = {'cflags', 'cxxflags', 'fflags', 'cppflags', 'ldflags', 'ldlibs'}
ARCH_KEYS = {'target', 'os', 'platform', 'arch', 'namespace', 'dev_path', 'commit'}


#: variants a builtin package declares in a loop, which the static index cannot see: Boost's
#: one per library (``for lib in all_libs: variant(lib, default=False)``, spack-packages
#: 1e8cf059e3); nvbandwidth needs ``boost +program_options``
LOOP_VARIANTS = {'boost': (
    'atomic', 'charconv', 'chrono', 'cobalt', 'container', 'context', 'contract', 'conversion',
    'coroutine', 'date_time', 'exception', 'fiber', 'filesystem', 'graph', 'graph_parallel',
    'iostreams', 'json', 'locale', 'log', 'math', 'mpi', 'mqtt5', 'nowide', 'openmethod',
    'program_options', 'python', 'random', 'regex', 'serialization', 'signals', 'signals2',
    'stacktrace', 'system', 'test', 'thread', 'timer', 'type_erasure', 'url', 'wave')}


class Index:
    def __init__(self, path):
        self.path = pathlib.Path(path)
        self.packages = json.loads(self.path.read_text())['packages']
        for name, variants in LOOP_VARIANTS.items():
            if name in self.packages:
                for v in variants:
                    self.packages[name]['variants'].setdefault(v, {'default': False})

    def closest(self, name, choices, n=3):
        return difflib.get_close_matches(name, list(choices), n=n, cutoff=0.5)


def _hint(close):
    return f' (closest: {", ".join(close)})' if close else ''


def parse_spec(text):
    '''Split a spec string into nodes: [{'name', 'version', 'variants': [(name, value)],
    'kind': 'root'|'dep'|'compiler'}]. Values: True/False for +/~, a string for k=v.'''
    try:
        tokens = shlex.split(text)
    except ValueError as err:
        raise ValueError(f'unbalanced quotes ({err})') from None

    nodes = []
    cur = None

    def new(kind, tok):
        m = re.fullmatch(r'([A-Za-z0-9_.-]*)(?:@(.+))?', tok)
        if not m:
            raise ValueError(f'cannot read package name in {tok!r}')

        node = {'name': m.group(1), 'version': m.group(2), 'variants': [], 'kind': kind}
        nodes.append(node)
        return node

    for tok in tokens:
        while tok:
            if tok.startswith('^'):
                tok = tok[1:]
                if not tok:
                    break

                cur = new('dep', re.split(r'(?=[+~%])', tok, maxsplit=1)[0])
                tok = tok[len(re.split(r'(?=[+~%])', tok, maxsplit=1)[0]):]
            elif tok.startswith('%'):
                # %gcc, %cxx=intel-oneapi-compilers, %c,cxx=gcc (the languages it provides)
                body = re.sub(r'^[a-z]+(,[a-z]+)*=', '', tok[1:])
                name = re.split(r'(?=[+~^])', body, maxsplit=1)[0]
                node = new('compiler', name)
                tok = body[len(name):]
            elif tok[0] in '+~':
                if cur is None:
                    cur = new('root', '')  # anonymous spec: a constraint on any package

                m = re.match(r'(\+\+|~~|\+|~)([A-Za-z0-9_-]+)', tok)
                if not m:
                    raise ValueError(f'cannot read variant in {tok!r}')

                cur['variants'].append((m.group(2), m.group(1)[0] == '+'))
                tok = tok[m.end():]
            elif '=' in tok:
                k, _, v = tok.partition('=')
                v = v.lstrip('=')
                if cur is None:
                    cur = new('root', '')

                cur['variants'].append((k, v))
                tok = ''
            elif tok.startswith('@'):
                if cur is None:
                    cur = new('root', '')

                cur['version'] = tok[1:]
                tok = ''
            else:
                name = re.split(r'(?=[+~%^])', tok, maxsplit=1)[0]
                if cur is None or cur['name'] == '':
                    if cur is not None and cur['name'] == '':
                        nodes.remove(cur)

                    cur = new('root', name)
                else:
                    raise ValueError(f'unexpected {tok!r} (a second package name?)')

                tok = tok[len(name):]

    return [n for n in nodes if n['name'] or n['variants'] or n['version']]


def _version_ok(want, versions):
    if want is None:
        return True

    want = want.lstrip('=')
    parts = [p for p in re.split(r'[:,]', want) if p]
    return all(any(v == p or v.startswith(p + '.') or v.startswith(p + '-') for v in versions)
               for p in parts)


class Validator:
    def __init__(self, index):
        self.index = index
        self.errors = []
        #: versions that the environment's own package repositories add (repos:)
        self.repo_versions = {}

    def err(self, where, msg):
        self.errors.append(f'{where}: {msg}')

    def check_name(self, where, name, what='package'):
        if name in self.index.packages or name in VIRTUALS:
            return True

        self.err(where, f'no {what} {name!r} in Spack\'s builtin repository'
                 + _hint(self.index.closest(name, self.index.packages)))
        return False

    def check_spec(self, where, text, *, versions=True):
        try:
            nodes = parse_spec(text)
        except ValueError as err:
            self.err(where, f'spec {text!r}: {err}')
            return

        for node in nodes:
            name = node['name']
            if node['kind'] == 'compiler':
                name = COMPILER_ALIASES.get(name, name)

            if not name:
                continue   # anonymous constraint (e.g. target=...)

            w = f'{where}: spec {text!r}'
            if not self.check_name(w, name):
                continue

            pkg = self.index.packages.get(name)
            if pkg is None:
                continue   # a virtual

            known = self.repo_versions.get(name, []) + list(pkg['versions'])
            if versions and not _version_ok(node['version'], known):
                self.err(w, f'{name} has no version {node["version"]!r} (has: '
                         f'{", ".join(known[:8])}...)')

            for vname, value in node['variants']:
                self.check_variant(w, name, pkg, vname, value)

    def check_variant(self, where, name, pkg, vname, value):
        if vname in FLAGS or vname in ARCH_KEYS:
            return

        variants = pkg.get('variants', {})
        if vname not in variants:
            self.err(where, f'{name} has no variant {vname!r}' + _hint(self.index.closest(vname, variants)))
            return

        v = variants[vname]
        default, values = v.get('default'), v.get('values')
        if isinstance(value, bool):
            if not isinstance(default, bool) and values not in (None, [True, False]):
                self.err(where, f'{name} variant {vname!r} is not boolean: use {vname}=VALUE'
                         + (f' (values: {", ".join(map(str, values))})' if isinstance(values, list) else ''))
            return

        if isinstance(default, bool) and values is None:
            if value.lower() not in ('true', 'false'):
                self.err(where, f'{name} variant {vname!r} is boolean, got {value!r}')
            return

        if isinstance(values, list):
            legal = [str(x) for x in values]
            for part in value.split(','):
                if part not in legal:
                    self.err(where, f'{name} variant {vname}={part!r} is not legal (values: '
                             f'{", ".join(legal)})' + _hint(self.index.closest(part, legal)))

    # --- files -------------------------------------------------------------------------
    def load(self, path):
        try:
            data = yaml.safe_load(path.read_text())
        except FileNotFoundError:
            self.err(str(path), 'file not found')
            return None
        except yaml.YAMLError as err:
            mark = getattr(err, 'problem_mark', None)
            self.err(f'{path}' + (f':{mark.line + 1}' if mark else ''), f'invalid YAML: {err}')
            return None

        return data or {}

    def config_files(self, env_dir):
        '''The environment's spack.yaml and every file its include: list names.'''
        manifest = env_dir / 'spack.yaml'
        data = self.load(manifest)
        if data is None:
            return []

        if 'spack' not in data:
            self.err(str(manifest), "no top-level 'spack' key")
            return []

        files = [(manifest, data['spack'])]
        for i, inc in enumerate(data['spack'].get('include', []) or []):
            path, optional = (inc, False) if isinstance(inc, str) else \
                (inc.get('path'), inc.get('optional', False))
            if not path or '://' in str(path) or '$' in str(path):
                self.err(f'{manifest}: include[{i}]', f'{path!r}: only relative or absolute '
                         'local paths can be validated offline')
                continue

            target = (env_dir / path).resolve()
            if target.is_dir():
                for f in sorted(target.glob('*.yaml')):
                    d = self.load(f)
                    if d is not None:
                        files.append((f, d))
            elif target.is_file():
                d = self.load(target)
                if d is not None:
                    files.append((target, d))
            elif not optional:
                self.err(f'{manifest}: include[{i}]', f'{path!r} does not exist ({target})')

        return files

    def read_repos(self, files):
        '''Versions the package repositories of the environment's ``repos:`` add (a repository
        of ours extends builtin packages by inheritance: their variants stay builtin's).'''
        self.repo_versions = {}
        for f, data in files:
            repos = data.get('repos', {}) or {}
            paths = repos.values() if isinstance(repos, dict) else repos
            for path in paths:
                path = path.get('path') if isinstance(path, dict) else path
                if not isinstance(path, str) or path.startswith('$') or '://' in path:
                    continue   # a builtin or git repository: the index stands for it
                repo = (f.parent / path).resolve()
                if not (repo / 'repo.yaml').is_file():
                    self.err(f'{f}: repos', f'{path!r}: no package repository there ({repo}/repo.yaml)')
                    continue
                for pkg in sorted(repo.glob('packages/*/package.py')):
                    name = pkg.parent.name.replace('_', '-')
                    text = pkg.read_text()
                    found = re.findall(r'version\(\s*"([^"]+)"', text)
                    if name not in self.index.packages and name not in VIRTUALS:
                        # a package of ours that builtin lacks: known from its own file
                        self.index.packages[name] = self.own_package(pkg, text, found)
                    elif name in self.index.packages:
                        # ours over builtin's (e.g. ior +s3): the variants it adds
                        known = self.index.packages[name].setdefault('variants', {})
                        for vname in re.findall(r'^\s*variant\(\s*"([^"]+)"', text, re.M):
                            known.setdefault(vname, {})
                    self.repo_versions.setdefault(name, []).extend(found)

    def own_package(self, path, text, versions):
        '''The index entry of a package only our repository has: its versions, the variants
        it declares, and those of the build systems it derives from (what every builtin
        package deriving from that base has, e.g. CudaPackage's cuda and cuda_arch).'''
        m = re.search(r'^class \w+\(([^)]*)\)', text, re.M)
        bases = [b.strip() for b in (m.group(1).split(',') if m else []) if b.strip()]
        if not bases:
            self.err(str(path), 'no package class deriving from a Spack build system')
        variants = {}
        for base in bases:
            having = [p['variants'] for p in self.index.packages.values()
                      if base in (p.get('bases') or [])]
            if having:
                common = set.intersection(*(set(v) for v in having))
                variants.update({k: having[0][k] for k in common})
        for vname in re.findall(r'^\s*variant\(\s*"([^"]+)"', text, re.M):
            variants.setdefault(vname, {})
        return {'bases': bases, 'variants': variants, 'versions': versions}

    def validate_env(self, env_dir):
        env_dir = pathlib.Path(env_dir)
        files = self.config_files(env_dir)
        self.read_repos(files)
        definitions = {}
        for f, data in files:
            for j, entry in enumerate(data.get('definitions', []) or []):
                for name, specs in entry.items():
                    if name == 'when':
                        continue

                    definitions.setdefault(name, [])
                    for k, spec in enumerate(specs or []):
                        where = f'{f}: definitions[{j}].{name}[{k}]'
                        self._spec_item(where, spec, definitions, out=definitions[name])

        for f, data in files:
            for k, spec in enumerate(data.get('specs', []) or []):
                self._spec_item(f'{f}: specs[{k}]', spec, definitions, out=None)

            self.validate_packages(f, data.get('packages', {}) or {})

        return self.errors

    def _spec_item(self, where, spec, definitions, out):
        if isinstance(spec, dict):
            for m, row in enumerate(spec.get('matrix', [])):
                for n, s in enumerate(row):
                    self._spec_item(f'{where}.matrix[{m}][{n}]', s, definitions, out)
            return

        spec = str(spec)
        if spec.startswith('$'):
            ref = spec[1:].lstrip('^%')
            if ref not in definitions:
                self.err(where, f'{spec!r}: no definition named {ref!r}'
                         + _hint(self.index.closest(ref, definitions)))
            return

        self.check_spec(where, spec)
        if out is not None:
            out.append(spec)

    def validate_packages(self, f, packages):
        for name, conf in packages.items():
            where = f'{f}: packages.{name}'
            if name != 'all' and not self.check_name(where, name):
                continue

            conf = conf or {}
            for key in ('require', 'prefer', 'conflict'):
                items = conf.get(key, [])
                items = [items] if isinstance(items, str) else items
                for i, item in enumerate(items):
                    specs = [item] if isinstance(item, str) else \
                        (item.get('one_of') or item.get('any_of') or [item.get('spec', '')])
                    for s in specs:
                        first = s.split()[0] if s.split() else ''
                        named = re.match(r'^[A-Za-z0-9_-]+(@\S*)?$', first) is not None
                        if not (name == 'all' or name in VIRTUALS or named):
                            s = f'{name} {s}'   # a constraint on this package itself

                        self.check_spec(f'{where}.{key}[{i}]', s)

            for i, ext in enumerate(conf.get('externals', []) or []):
                spec = ext.get('spec', '')
                if not spec.split('@')[0].split()[0] == name:
                    self.err(f'{where}.externals[{i}]', f'spec {spec!r} is not of package {name!r}')

                self.check_spec(f'{where}.externals[{i}]', spec, versions=False)
                if 'prefix' not in ext and 'modules' not in ext:
                    self.err(f'{where}.externals[{i}]', 'an external needs a prefix or modules')


def validate(env_dirs, index_path=DEFAULT_INDEX):
    v = Validator(Index(index_path))
    for d in env_dirs:
        v.validate_env(d)

    return v.errors


DEFAULT_NEEDS = HERE / 'needs.yaml'


def _lock_roots(lock):
    '''The concretized roots of a spack.lock: [(root spec text, node dict)], and the nodes
    by hash.'''
    nodes = lock.get('concrete_specs', {})
    return [(r.get('spec', ''), nodes.get(r.get('hash'), {})) for r in lock.get('roots', [])], nodes


def _differences(need, node, nodes):
    '''What a concretized node lacks of one needs.yaml entry, as readable phrases.'''
    out = []
    if need.get('version') is not None and str(node.get('version')) != str(need['version']):
        out.append(f'version {node.get("version")} (needs {need["version"]})')
    if need.get('namespace') and node.get('namespace') != need['namespace']:
        out.append(f'from repository {node.get("namespace")!r} (needs {need["namespace"]!r})')
    params = node.get('parameters', {})
    for name, want in (need.get('variants') or {}).items():
        have = params.get(name)
        if isinstance(want, bool) or isinstance(have, bool):
            ok = have is want
        elif isinstance(have, list):
            # a multi-valued variant (cuda_arch): the lock lists its values
            wants = want if isinstance(want, list) else str(want).split(',')
            ok = sorted(map(str, have)) == sorted(map(str, wants))
        else:
            ok = str(have) == str(want)
        if not ok:
            shown = {True: f'+{name}', False: f'~{name}'}.get(want, f'{name}={want}')
            out.append(f'{name}={have!r} (needs {shown})')
    for flag, wants in (need.get('flags') or {}).items():
        have = params.get(flag, [])
        missing = [w for w in wants if w not in have]
        if missing:
            out.append(f'{flag} {have} lack {missing}')
    by_virtual = {}
    for dep in node.get('dependencies', []):
        for v in dep.get('parameters', {}).get('virtuals', []):
            by_virtual[v] = dep.get('name')
    for lang, comp in (need.get('compilers') or {}).items():
        if by_virtual.get(lang) != comp:
            out.append(f'{lang} compiler {by_virtual.get(lang)!r} (needs {comp!r})')
    return out


def check_lock(lock_path, needs_path=DEFAULT_NEEDS, env_name=None):
    '''Errors of one environment's spack.lock against needs.yaml: a missing root or a root
    that differs from what the checks need, each naming the lockfile, the package and the
    checks. ``env_name`` defaults to the lockfile's directory name.'''
    lock_path = pathlib.Path(lock_path)
    env_name = env_name or lock_path.parent.name
    try:
        raw = lock_path.read_bytes()
        lock = json.loads(gzip.decompress(raw) if raw[:2] == b'\x1f\x8b' else raw)
    except FileNotFoundError:
        return [f'{lock_path}: no lockfile (concretize the environment first)']
    except json.JSONDecodeError as err:
        return [f'{lock_path}:{err.lineno}: not a Spack lockfile ({err.msg})']
    doc = yaml.safe_load(pathlib.Path(needs_path).read_text())
    needs, gpu_only = doc.get('roots', []), doc.get('gpu_only_environments') or []
    roots, nodes = _lock_roots(lock)
    errors = []
    for i, need in enumerate(needs):
        if need.get('environments') and env_name not in need['environments']:
            continue
        if not need.get('environments') and env_name in gpu_only:
            continue
        where = f'{lock_path}: {need["package"]} (needs.yaml roots[{i}], checks {", ".join(need.get("checks", []))})'
        mine = [(text, node) for text, node in roots if node.get('name') == need['package']]
        if not mine:
            errors.append(f'{where}: no root of {need["package"]} in environment {env_name}')
            continue
        diffs = [_differences(need, node, nodes) for _, node in mine]
        if all(diffs):
            best = min(zip(diffs, mine), key=lambda d: len(d[0]))
            errors.append(f'{where}: root {best[1][0]!r} concretized with ' + '; '.join(best[0]))
    return errors


def environment_dirs(spack_dir=None):
    spack_dir = pathlib.Path(spack_dir or SPACK_DIR)
    return sorted(p for p in spack_dir.iterdir() if (p / 'spack.yaml').is_file())


def main(argv=None):
    ap = argparse.ArgumentParser(description=__doc__.split('\n\n')[0])
    ap.add_argument('--index', default=str(DEFAULT_INDEX))
    ap.add_argument('--lock', action='append', default=[], metavar='SPACK_LOCK',
                    help='check a concretized environment (its spack.lock) against needs.yaml')
    ap.add_argument('--needs', default=str(DEFAULT_NEEDS))
    ap.add_argument('envs', nargs='*')
    args = ap.parse_args(argv)
    if args.lock:
        errors = [e for lock in args.lock for e in check_lock(lock, args.needs)]
        for e in errors:
            print(e)
        print(f'{len(args.lock)} lockfile(s), {len(errors)} error(s)')
        return 1 if errors else 0

    if not pathlib.Path(args.index).exists():
        print(f'spackcheck: no index at {args.index}', file=sys.stderr)
        return 2

    envs = args.envs or environment_dirs()
    errors = validate(envs, args.index)
    for e in errors:
        print(e)

    print(f'{len(envs)} environment(s), {len(errors)} error(s)')
    return 1 if errors else 0


if __name__ == '__main__':
    sys.exit(main())
