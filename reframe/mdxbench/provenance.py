'''Where a benchmark binary comes from: the Spack spec and hash of the package that
installed it (its prefix holds .spack/spec.json, the concrete spec Spack can install again:
``mdxbench ingest`` keeps a copy of it by hash, ``mdxbench incident split`` rebuilds from
it), or the Debian or PyPI package that owns it.'''
import functools
import json
import os
import pathlib
import subprocess


@functools.lru_cache(maxsize=None)
def binary_provenance(path):
    '''``{'source': 'spack', 'spack_spec': ..., 'spack_hash': ...}``, or
    ``{'source': 'debian', 'debian_package': 'fio 3.33-3'}``, or ``{'source': 'pypi',
    'pypi_package': 'mkl 2025.0.1'}`` (a file a Python package installed, in the
    environment that runs ReFrame), or ``{'source': 'unknown'}``.'''
    if not path:
        return {'source': 'unknown'}

    real = pathlib.Path(os.path.realpath(path))
    for parent in real.parents:
        spec_file = parent / '.spack' / 'spec.json'
        if spec_file.is_file():
            try:
                nodes = json.loads(spec_file.read_text())['spec']['nodes']
                root = nodes[0]
                variants = ' '.join(
                    (f'+{k}' if v is True else f'~{k}' if v is False else f'{k}={v}')
                    for k, v in sorted((root.get('parameters') or {}).items())
                    if k not in ('cflags', 'cxxflags', 'fflags', 'cppflags', 'ldflags', 'ldlibs')
                    and not isinstance(v, list))
                return {'source': 'spack', 'spack_hash': root.get('hash', ''),
                        'spack_spec': f"{root['name']}@{root['version']} {variants}".strip(),
                        'spack_prefix': str(parent), 'spack_spec_json': str(spec_file)}
            except (OSError, KeyError, IndexError, ValueError) as err:
                return {'source': 'spack', 'spack_error': f'{spec_file}: {err}'}

    dist = pypi_owner(real)
    if dist:
        return {'source': 'pypi', 'pypi_package': dist}

    try:
        owner = subprocess.run(['dpkg-query', '-S', str(real)], capture_output=True,
                               text=True, timeout=30)
        if owner.returncode != 0 and str(real).startswith('/usr/'):
            # merged /usr: dpkg knows /bin/x as the owner's path
            owner = subprocess.run(['dpkg-query', '-S', str(real).removeprefix('/usr')],
                                   capture_output=True, text=True, timeout=30)

        if owner.returncode == 0:
            pkg = owner.stdout.split(':')[0].split(',')[0].strip()
            ver = subprocess.run(['dpkg-query', '-W', '-f=${Version}', pkg],
                                 capture_output=True, text=True, timeout=30).stdout.strip()
            return {'source': 'debian', 'debian_package': f'{pkg} {ver}'}
    except (OSError, subprocess.SubprocessError):
        pass

    return {'source': 'unknown', 'path': str(real)}


def pypi_owner(path):
    '''``'name version'`` of the installed Python distribution whose RECORD lists the file
    ``path`` (resolved), or None. Only files under this interpreter's prefix are looked up.'''
    import importlib.metadata
    import sys
    import sysconfig

    real = os.path.realpath(path)
    if not real.startswith(os.path.realpath(sys.prefix) + os.sep):
        return None
    name = os.path.basename(real)
    # the interpreter's own site directories, named: ReFrame's check loader leaves sys.path
    # without them while checks run
    sites = sorted({sysconfig.get_paths()[k] for k in ('purelib', 'platlib')})
    for dist in importlib.metadata.distributions(path=sites):
        for f in dist.files or ():
            if f.name == name and os.path.realpath(dist.locate_file(f)) == real:
                return f"{dist.metadata['Name']} {dist.version}"
    return None


def perflog_dir():
    '''Where this run's perflogs go (the site configuration's perflog ``basedir``).'''
    from mdxbench import settings

    return settings.perflog_dir()


def archive_spec(prov, base=None):
    '''Keep a copy of a Spack build's concrete spec beside the perflogs, as
    ``<perflog dir>/specs/<hash>.json``, once: the spec a record names by hash can be
    installed again (``mdxbench incident split``) after the install itself is gone. Returns
    the copy's path, or None (not a Spack build, or the spec unreadable: the record's
    ``spack_spec_json`` still names it).'''
    h, src = prov.get('spack_hash'), prov.get('spack_spec_json')
    if prov.get('source') != 'spack' or not h or not src:
        return None
    dest = pathlib.Path(base or perflog_dir()) / 'specs' / f'{h}.json'
    if dest.is_file():
        return dest
    try:
        data = pathlib.Path(src).read_bytes()
        dest.parent.mkdir(parents=True, exist_ok=True)
        tmp = dest.with_name(f'.{dest.name}.{os.getpid()}')
        tmp.write_bytes(data)
        tmp.replace(dest)
    except OSError:
        return None
    return dest
