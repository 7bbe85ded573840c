'''The Spack environments of spack/, validated offline against Spack's builtin package
index (spack/tools/builtin-index.json) by spack/tools/spackcheck.py, and concretized when
spack is on PATH.'''
import pathlib
import shutil
import subprocess

import sys

import pytest

from mdxbench import sitecfg

ROOT = pathlib.Path(__file__).resolve().parents[2]
SPACK = ROOT / 'spack'
sys.path.insert(0, str(SPACK / 'tools'))
import spackcheck  # noqa: E402  (spack/tools/spackcheck.py: repository tooling, not a package)


@pytest.fixture(scope='module')
def index():
    return spackcheck.DEFAULT_INDEX


def test_every_environment_validates(index):
    envs = spackcheck.environment_dirs(SPACK)
    assert envs and {e.name for e in envs} <= {f.stem for f in sitecfg.system_files(ROOT / 'site-configs')}
    assert spackcheck.validate(envs, index) == []


def test_every_system_has_an_environment_and_back():
    '''Each system names its Spack environment (key spack_environment, default its own
    name): it must exist, and every environment must serve a system.'''
    used = {}
    for f in sitecfg.system_files(ROOT / 'site-configs'):
        data = sitecfg.load_yaml(f)
        used[f.stem] = data.get('spack_environment', f.stem)

    envs = {e.name for e in spackcheck.environment_dirs(SPACK)}
    assert set(used.values()) <= envs, used
    assert envs <= set(used.values()), envs
    assert used['nscluster'] == 'local'


def test_the_papers_benchmarks_are_in_every_environment(index):
    v = spackcheck.Validator(spackcheck.Index(index))
    for env in spackcheck.environment_dirs(SPACK):
        specs = []
        for f, data in v.config_files(env):
            specs += [str(s) for s in data.get('specs', [])]
            for entry in data.get('definitions', []) or []:
                for name, lst in entry.items():
                    if name != 'when' and f'${name}' in open(env / 'spack.yaml').read():
                        specs += [str(s) for s in lst]

        names = {spackcheck.parse_spec(s)[0]['name'] for s in specs if not s.startswith('$')}
        for pkg in ('fio', 'iperf3', 'netperf', 'osu-micro-benchmarks', 'ior', 'hpcc', 'babelstream'):
            assert pkg in names, (env.name, pkg)

    assert v.errors == []


def _copy(tmp_path):
    dst = tmp_path / 'spack'
    shutil.copytree(SPACK, dst, ignore=shutil.ignore_patterns('.spack-env'))
    return dst


@pytest.mark.parametrize('old,new,message', [
    ('fio@3.37 +libaio', 'fio@3.37 +libaoi', "fio has no variant 'libaoi' (closest: libaio)"),
    ('netperf@2.7.0', 'netperf@2.7.9', "netperf has no version '2.7.9'"),
    ('iperf3@3.17.1', 'iperf@3.17.1', "no package 'iperf'"),
    ('threads=openmp\n', 'threads=omp\n', "intel-oneapi-mkl variant threads='omp' is not legal"),
    ('py-dask@2026.3.0 +dataframe', 'py-dask@2026.3.0 dataframe=yes', "variant 'dataframe' is boolean"),
    ('%oneapi', '%oneapy', "no package 'oneapy'"),
])
def test_injected_spec_errors_are_caught(index, tmp_path, old, new, message):
    spack = _copy(tmp_path)
    f = spack / 'common' / 'definitions.yaml'
    text = f.read_text()
    assert old in text
    f.write_text(text.replace(old, new, 1))
    errors = spackcheck.validate(spackcheck.environment_dirs(spack), index)
    assert errors and all(str(f) in e for e in errors), errors
    assert any(message in e for e in errors), errors


def test_missing_include_and_definition(index, tmp_path):
    spack = _copy(tmp_path)
    m = spack / 'mdx2' / 'spack.yaml'
    m.write_text(m.read_text().replace('- site.yaml', '- sites.yaml').replace('$intel', '$intl'))
    errors = spackcheck.validate([spack / 'mdx2'], index)
    assert any("include[1]: 'sites.yaml' does not exist" in e for e in errors), errors
    assert any("no definition named 'intl' (closest: intel)" in e for e in errors), errors


def test_broken_yaml_names_the_line(index, tmp_path):
    spack = _copy(tmp_path)
    (spack / 'laurel' / 'site.yaml').write_text('packages:\n  slurm: [\n')
    errors = spackcheck.validate([spack / 'laurel'], index)
    assert any('site.yaml:' in e and 'invalid YAML' in e for e in errors), errors


def test_external_of_the_wrong_package(index, tmp_path):
    spack = _copy(tmp_path)
    f = spack / 'aws-pcluster' / 'site.yaml'
    f.write_text(f.read_text().replace('spec: libfabric@1.22.0', 'spec: libfabrik@1.22.0'))
    errors = spackcheck.validate([spack / 'aws-pcluster'], index)
    assert any("is not of package 'libfabric'" in e for e in errors), errors


@pytest.mark.skipif(shutil.which('spack') is None,
                    reason='spack is not on PATH (not installable here): concretization is '
                           'tested where Spack exists')
@pytest.mark.parametrize('env', [e.name for e in spackcheck.environment_dirs(SPACK)])
def test_environment_concretizes(env):
    res = subprocess.run(['spack', '-e', str(SPACK / env), 'concretize', '--fresh'],
                         capture_output=True, text=True, timeout=3600)
    assert res.returncode == 0, res.stdout[-3000:] + res.stderr[-3000:]


def test_spack_build_script_refuses_unknown_system_and_missing_spack():
    res = subprocess.run(['bash', str(ROOT / 'ci' / 'spack-build.sh'), 'nosuch'],
                         capture_output=True, text=True)
    assert res.returncode != 0 and "no Spack environment for system 'nosuch'" in res.stderr
    if shutil.which('spack') is None:
        res = subprocess.run(['bash', str(ROOT / 'ci' / 'spack-build.sh'), 'mdx2'],
                             capture_output=True, text=True)
        assert res.returncode != 0 and 'spack is not on PATH' in res.stderr


def test_stream_arrays_past_2_gib_are_built_with_the_medium_code_model():
    '''Guidi et al.'s STREAM size (120 M elements of 8 bytes, three static arrays: 2.7 GiB)
    links only with -mcmodel=medium: the spec that builds it must say so, and keep the size.'''
    import yaml

    defs = yaml.safe_load((SPACK / 'common' / 'definitions.yaml').read_text())['definitions']
    specs = [s for d in defs for name, lst in d.items() if name != 'when' for s in lst
             if str(s).startswith('stream@')]
    assert len(specs) == 1, specs
    spec = spackcheck.parse_spec(specs[0])[0]
    variants = dict(spec['variants'])
    size = int(variants['stream_array_size'])
    assert size == 120_000_000                          # the paper's arrays
    assert 3 * size * 8 > 2 ** 31
    assert '-mcmodel=medium' in variants.get('cflags', '').split(), specs[0]
