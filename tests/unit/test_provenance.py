import json
import pathlib
import shutil

import pytest

from mdxbench.provenance import archive_spec, binary_provenance

SPEC = pathlib.Path(__file__).parents[1] / 'fixtures' / 'spack' / 'stream-5.10-o3yov74-spec.json'


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

    from mdxbench.provenance import pypi_owner

    dist = next(d for d in importlib.metadata.distributions()
                if any(str(f).endswith('.so') for f in d.files or ()))
    so = next(f for f in dist.files if str(f).endswith('.so'))
    path = pathlib.Path(dist.locate_file(so))
    want = f"{dist.metadata['Name']} {dist.version}"
    assert pypi_owner(path) == want
    assert binary_provenance(path) == {'source': 'pypi', 'pypi_package': want}
    assert pypi_owner('/bin/sh') is None


def test_a_spack_build_names_its_concrete_spec_and_a_copy_is_archived(tmp_path):
    """Spack's own spec.json (a real one): the record names the hash and the file, and a
    copy kept under the perflog directory by hash outlives the install."""
    prefix = tmp_path / 'opt' / 'stream-5.10-o3yov74new7ufxl5spxs43ibup7du5rb'
    (prefix / 'bin').mkdir(parents=True)
    (prefix / '.spack').mkdir()
    (prefix / 'bin' / 'stream_c.exe').write_text('#!/bin/sh\n')
    shutil.copy(SPEC, prefix / '.spack' / 'spec.json')
    binary_provenance.cache_clear()
    p = binary_provenance(str(prefix / 'bin' / 'stream_c.exe'))
    assert p['spack_hash'] == 'o3yov74new7ufxl5spxs43ibup7du5rb'
    assert p['spack_spec_json'] == str(prefix / '.spack' / 'spec.json')
    assert p['spack_spec'].startswith('stream@5.10 ') and '+openmp' in p['spack_spec']
    copy = archive_spec(p, tmp_path / 'perflogs')
    assert copy == tmp_path / 'perflogs' / 'specs' / 'o3yov74new7ufxl5spxs43ibup7du5rb.json'
    shutil.rmtree(prefix)                       # spack gc, an environment rebuilt
    assert json.loads(copy.read_text()) == json.loads(SPEC.read_text())
    assert archive_spec(p, tmp_path / 'perflogs') == copy      # once
    assert archive_spec({'source': 'debian', 'debian_package': 'fio 3.33-3'}, tmp_path) is None
