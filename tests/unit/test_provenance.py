import json
import shutil

import pytest

from mdxbench.provenance import binary_provenance


def test_spack_installed_binary(tmp_path):
    '''A Spack install prefix (as `spack install` lays it out) seen through a view link.'''
    prefix = tmp_path / 'opt' / 'fio-3.37-abcdef'
    (prefix / 'bin').mkdir(parents=True)
    (prefix / '.spack').mkdir()
    (prefix / 'bin' / 'fio').write_text('#!/bin/sh\n')
    (prefix / '.spack' / 'spec.json').write_text(json.dumps({'spec': {'nodes': [
        {'name': 'fio', 'version': '3.37', 'hash': 'abcdefabcdef',
         'parameters': {'libaio': True, 'gui': False, 'build_system': 'autotools',
                        'cflags': [], 'patches': ['x']}}]}}))
    view = tmp_path / 'view' / 'bin'
    view.mkdir(parents=True)
    (view / 'fio').symlink_to(prefix / 'bin' / 'fio')
    binary_provenance.cache_clear()
    p = binary_provenance(str(view / 'fio'))
    assert p['source'] == 'spack' and p['spack_hash'] == 'abcdefabcdef'
    assert p['spack_spec'] == 'fio@3.37 build_system=autotools ~gui +libaio'


def test_debian_binary():
    path = shutil.which('fio')
    if path is None or shutil.which('dpkg-query') is None:
        pytest.skip('needs Debian fio (ci/install.sh installs it)')

    binary_provenance.cache_clear()
    p = binary_provenance(path)
    assert p['source'] == 'debian' and p['debian_package'].startswith('fio ')


def test_unknown_binary(tmp_path):
    f = tmp_path / 'tool'
    f.write_text('')
    binary_provenance.cache_clear()
    assert binary_provenance(str(f))['source'] == 'unknown'


def test_a_file_a_python_package_installed_names_its_distribution():
    '''A file listed in an installed distribution's RECORD (here the shared object of the
    polars runtime this venv has) is PyPI's, with the distribution's name and version;
    a file outside this interpreter's prefix is never looked up there.'''
    import importlib.metadata
    import pathlib

    from mdxbench.provenance import binary_provenance, pypi_owner

    dist = next(d for d in importlib.metadata.distributions()
                if any(str(f).endswith('.so') for f in d.files or ()))
    so = next(f for f in dist.files if str(f).endswith('.so'))
    path = pathlib.Path(dist.locate_file(so))
    want = f"{dist.metadata['Name']} {dist.version}"
    assert pypi_owner(path) == want
    assert binary_provenance(path) == {'source': 'pypi', 'pypi_package': want}
    assert pypi_owner('/bin/sh') is None
