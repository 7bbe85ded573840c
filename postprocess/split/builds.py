'''The two builds of a split: the previous one installed again by Spack from its concrete
spec (what the records name by hash), the current one found where Spack installed it.

Where a build's concrete spec is found, in order:

1. the spec archive: ``<perflog dir>/specs/<hash>.json``, the copy a check keeps of the
   ``.spack/spec.json`` of every Spack build it ran (``mdxbench.provenance``), which
   outlives the install (``spack gc``, an environment rebuilt);
2. the install itself: ``spack location -i /<hash>`` and its ``.spack/spec.json``.

``spack install <spec.json>`` installs exactly that concrete spec (the same hash), from the
site's mirrors; an installed one is not built again.
'''
import json
import pathlib
import shutil
import subprocess

from mdxbench import settings

#: how long a rebuild may take
INSTALL_TIMEOUT = 3600


class CannotRebuild(Exception):
    '''The build cannot be had: the verdict says why.'''


def spack_command():
    '''The ``spack`` a split uses: ``$MDXBENCH_SPACK`` or the one on PATH (the site's, or
    the project's wrapper after ``source ci/activate.sh``).'''
    s = settings.get('MDXBENCH_SPACK') or shutil.which('spack')
    if not s:
        raise CannotRebuild('no spack: neither MDXBENCH_SPACK nor a spack on PATH')
    return s


def archive_dirs(perflog_dirs):
    return [pathlib.Path(d) / 'specs' for d in perflog_dirs]


def _spack(*args, timeout=600):
    try:
        return subprocess.run([spack_command(), *args], capture_output=True, text=True,
                              timeout=timeout)
    except subprocess.TimeoutExpired:
        raise CannotRebuild(f'spack {" ".join(args)} ran past {timeout}s') from None
    except OSError as err:
        raise CannotRebuild(f'cannot run spack: {err}') from None


def installed_prefix(h):
    '''The install prefix of the build with hash ``h``, or None where it is not installed.'''
    res = _spack('location', '-i', f'/{h}', timeout=300)
    if res.returncode != 0:
        return None
    prefix = pathlib.Path(res.stdout.strip().splitlines()[-1])
    return prefix if (prefix / '.spack' / 'spec.json').is_file() else None


def find_spec(h, dirs):
    '''The path of the concrete spec of hash ``h`` (see the module), or raise
    :class:`CannotRebuild` naming where it was looked for.'''
    for d in dirs:
        f = pathlib.Path(d) / f'{h}.json'
        if f.is_file():
            return f
    prefix = installed_prefix(h)
    if prefix:
        return prefix / '.spack' / 'spec.json'
    raise CannotRebuild(f'no concrete spec of /{h}: not in the spec archive '
                        f'({", ".join(map(str, dirs)) or "none"}) and not installed')


def spec_hash(path):
    '''The hash of the root of a spec.json (the build it names).'''
    try:
        return json.loads(pathlib.Path(path).read_text())['spec']['nodes'][0]['hash']
    except (OSError, ValueError, KeyError, IndexError) as err:
        raise CannotRebuild(f'{path}: not a Spack spec.json ({err})') from None


def obtain(h, dirs, log=print):
    '''The install prefix of the build of hash ``h``: as installed, or installed again by
    ``spack install`` from its concrete spec. ``(prefix, how)``; :class:`CannotRebuild`
    with Spack's last lines where that fails.'''
    prefix = installed_prefix(h)
    if prefix:
        return prefix, 'installed'
    spec = find_spec(h, dirs)
    if spec_hash(spec) != h:
        raise CannotRebuild(f'{spec} names /{spec_hash(spec)}, not /{h}')
    # a path Spack's spec parser reads as a file: absolute, ending in .json
    log(f'mdxbench split: spack install {spec} (the build /{h[:7]})')
    res = _spack('install', '--fail-fast', str(spec.resolve()), timeout=INSTALL_TIMEOUT)
    if res.returncode != 0:
        tail = ' '.join((res.stderr or res.stdout).strip().splitlines()[-3:])
        raise CannotRebuild(f'spack install of /{h} failed: {tail[-500:]}')
    prefix = installed_prefix(h)
    if not prefix:
        raise CannotRebuild(f'spack install of /{h} succeeded but spack location does not '
                            'find it')
    return prefix, 'rebuilt'
