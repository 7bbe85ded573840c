'''The Spack environments of spack/, validated offline against Spack's builtin package
index (spack/tools/builtin-index.json) by spack/tools/spackcheck.py, and concretized when
spack is on PATH.'''
import os
import pathlib
import re
import shutil
import subprocess

import sys

import pytest
import yaml

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


def _flat(specs):
    '''The spec strings of a specs list, a matrix's rows' items among them.'''
    for s in specs:
        if isinstance(s, dict):
            yield from _flat(item for row in s.get('matrix', []) for item in row)
        else:
            yield str(s)


def test_the_papers_benchmarks_are_in_every_environment(index):
    v = spackcheck.Validator(spackcheck.Index(index))
    gpu_only = yaml.safe_load((SPACK / 'tools' / 'needs.yaml').read_text())[
        'gpu_only_environments']
    for env in spackcheck.environment_dirs(SPACK):
        specs = []
        for f, data in v.config_files(env):
            specs += list(_flat(data.get('specs', [])))
            for entry in data.get('definitions', []) or []:
                for name, lst in entry.items():
                    if name != 'when' and f'${name}' in open(env / 'spack.yaml').read():
                        specs += list(_flat(lst))

        names = {spackcheck.parse_spec(s)[0]['name'] for s in specs
                 if not s.startswith('$') and not s.startswith('cuda_arch=')}
        if env.name in gpu_only:
            # one GPU node vetted on its own: the GPU benchmarks alone
            assert names == {'babelstream', 'nvbandwidth', 'cuda-samples-p2p', 'nccl-tests',
                             'gpu-burn'}, names
            continue
        for pkg in ('fio', 'iperf3', 'netperf', 'osu-micro-benchmarks', 'ior', 'stream',
                    'babelstream'):
            assert pkg in names, (env.name, pkg)
        # the sites build HPCC too; `local` takes Debian's (its site.yaml)
        assert env.name == 'local' or 'hpcc' in names, env.name

    assert v.errors == []


def _copy(tmp_path):
    dst = tmp_path / 'spack'
    shutil.copytree(SPACK, dst, ignore=shutil.ignore_patterns('.spack-env'))
    return dst


@pytest.mark.parametrize('old,new,message', [
    ('fio@3.38 +libaio', 'fio@3.38 +libaoi', "fio has no variant 'libaoi' (closest: libaio)"),
    ('netperf@2.7.0', 'netperf@2.7.9', "netperf has no version '2.7.9'"),
    ('iperf3@3.18', 'iperf@3.18', "no package 'iperf'"),
    ('threads=openmp\n', 'threads=omp\n', "intel-oneapi-mkl variant threads='omp' is not legal"),
    ('py-dask@2026.3.0 +dataframe', 'py-dask@2026.3.0 dataframe=yes', "variant 'dataframe' is boolean"),
    ('%cxx=intel-oneapi-compilers', '%cxx=intel-oneapi-compilrs',
     "no package 'intel-oneapi-compilrs'"),
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


def test_a_variant_our_repository_adds_to_a_builtin_package_is_known_and_only_there(
        tmp_path, index):
    '''ior +s3 (IOR's S3-libs3 backend) is our package's variant over builtin's ior: spack/local
    asks it and validates; without our package's variant line the same environment is
    refused, naming it.'''
    spack = _copy(tmp_path)
    assert '+s3' in (spack / 'local' / 'spack.yaml').read_text()
    assert spackcheck.validate([spack / 'local'], index) == []
    ours = spack / 'repo' / 'spack_repo' / 'mdxbench' / 'packages' / 'ior' / 'package.py'
    ours.write_text(ours.read_text().replace('variant("s3"', 'variant("s3x"'))
    errors = spackcheck.validate([spack / 'local'], index)
    assert any("ior has no variant 's3'" in e for e in errors), errors


FIXTURES = ROOT / 'tests' / 'fixtures' / 'spack'


def test_our_repository_adds_the_papers_versions_and_nothing_unknown_passes(tmp_path, index):
    '''fio 3.38, iperf3 3.18 and OSU 7.4-tree come from spack/repo (not in the builtin index);
    a version that neither has is still refused, naming the versions there are.'''
    spack = _copy(tmp_path)
    f = spack / 'common' / 'definitions.yaml'
    f.write_text(f.read_text().replace('fio@3.38 ', 'fio@3.39 '))
    errors = spackcheck.validate([spack / 'local'], index)
    assert len(errors) == 1 and "fio has no version '3.39'" in errors[0] and '3.38' in errors[0], errors


def test_compiler_of_a_language_is_read_as_the_compiler_package():
    nodes = spackcheck.parse_spec('babelstream@5.0 +omp cxxflags="-O3" %cxx=intel-oneapi-compilers')
    assert [(n['name'], n['kind']) for n in nodes] == [('babelstream', 'root'),
                                                      ('intel-oneapi-compilers', 'compiler')]
    assert spackcheck.parse_spec('stream %c,fortran=gcc')[1]['name'] == 'gcc'


def test_concretized_mdx2_has_what_the_checks_need():
    '''Real Spack's lockfile of spack/mdx2: IOR +aio +lustre, STREAM's size and code model,
    BabelStream's OpenMP model with the oneAPI flags on itself and icpx as its compiler, the
    papers' fio and iperf3 from our repository, MKL 2025.0.1.'''
    assert spackcheck.check_lock(FIXTURES / 'mdx2-spack.lock.gz', env_name='mdx2') == []


def test_flags_written_after_the_compiler_are_caught_in_the_lockfile():
    '''The spec as it was written before (`%oneapi cxxflags=...`): Spack 1.x put the flags on
    the compiler node and built BabelStream's OpenCL model with gcc. Only the lockfile
    shows it, and the check names each difference.'''
    errors = spackcheck.check_lock(FIXTURES / 'mdx2-oneapi-flags-after-compiler-spack.lock.gz',
                                   env_name='mdx2')
    # both BabelStream entries of needs.yaml: the model (every system), the oneAPI build;
    # and a root needs.yaml asks for since (2026-12-02), which that lock of 2026-11-25 lacks
    later = [e for e in errors if 'polars-benchmark' in e]
    assert len(later) == 1 and later[0].endswith('no root of polars-benchmark in environment mdx2')
    errors = [e for e in errors if e not in later]
    assert len(errors) == 2 and all('babelstream' in e and 'BabelStreamOmp' in e for e in errors), errors
    e = ' '.join(errors)
    assert "ocl=True (needs ~ocl)" in e
    assert "cxxflags [] lack ['-O3', '-qopt-zmm-usage=high', '-qopt-streaming-stores=always']" in e
    assert "cxx compiler 'gcc' (needs 'intel-oneapi-compilers')" in e


def test_a_root_the_checks_need_that_is_missing_is_named(tmp_path):
    import gzip
    import json

    lock = json.loads(gzip.decompress((FIXTURES / 'mdx2-spack.lock.gz').read_bytes()))
    lock['roots'] = [r for r in lock['roots'] if not r['spec'].startswith('ior')]
    (tmp_path / 'mdx2').mkdir()
    (tmp_path / 'mdx2' / 'spack.lock').write_text(json.dumps(lock))
    errors = spackcheck.check_lock(tmp_path / 'mdx2' / 'spack.lock')
    assert len(errors) == 2 and all('no root of ior in environment mdx2' in e for e in errors), errors
    assert spackcheck.check_lock(tmp_path / 'nosuch' / 'spack.lock')[0].endswith(
        'no lockfile (concretize the environment first)')


def test_the_gpu_roots_of_mdx1_as_real_spack_concretized_them(tmp_path):
    """mdx1's lockfile from real Spack (issue 42): the GPU builds the checks need are there,
    for the A100 (cuda_arch, a multi-valued variant the lock lists), our P2P sample among
    them; a need for another architecture fails, naming it."""
    import gzip

    (tmp_path / 'mdx1').mkdir()
    lock = tmp_path / 'mdx1' / 'spack.lock'
    lock.write_bytes(gzip.decompress((FIXTURES / 'mdx1-spack.lock.gz').read_bytes()))
    assert spackcheck.check_lock(lock) == []
    needs = yaml.safe_load((ROOT / 'spack' / 'tools' / 'needs.yaml').read_text())
    for need in needs['roots']:
        if need['package'] == 'cuda-samples-p2p':
            need['variants']['cuda_arch'] = '90'
    (tmp_path / 'needs.yaml').write_text(yaml.safe_dump(needs))
    errors = spackcheck.check_lock(lock, tmp_path / 'needs.yaml')
    assert len(errors) == 1 and 'cuda-samples-p2p' in errors[0] and \
        "cuda_arch=['80'] (needs cuda_arch=90)" in errors[0], errors


def test_spack_build_script_refuses_unknown_system_and_missing_spack(tmp_path):
    res = subprocess.run(['bash', str(ROOT / 'ci' / 'spack-build.sh'), 'nosuch'],
                         capture_output=True, text=True)
    assert res.returncode != 0 and "no Spack environment for system 'nosuch'" in res.stderr
    env = {k: v for k, v in os.environ.items() if not k.startswith('MDXBENCH_')}
    env.update(MDXBENCH_STATE_DIR=str(tmp_path), PATH='/usr/bin:/bin')
    res = subprocess.run(['bash', str(ROOT / 'ci' / 'spack-build.sh'), 'mdx2'],
                         capture_output=True, text=True, env=env)
    assert res.returncode != 0 and 'spack is not on PATH' in res.stderr, res.stderr


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


def test_a_lock_s_inputs_manifest_names_what_changed_and_refuses_a_bad_line(tmp_path):
    sys.path.insert(0, str(ROOT / 'spack' / 'tools'))
    import lockinputs

    old = {'spack-version': 'a' * 64, 'mdx2/spack.yaml': 'b' * 64, 'repo:builtin': 'c' * 64}
    new = {'spack-version': 'a' * 64, 'mdx2/spack.yaml': 'd' * 64, 'common/x.yaml': 'e' * 64}
    assert lockinputs.changed(old, new) == ['common/x.yaml (new)', 'mdx2/spack.yaml (changed)',
                                            'repo:builtin (gone)']
    assert lockinputs.changed(old, dict(old)) == []
    f = tmp_path / 'spack.lock.inputs'
    f.write_text('# comment\n' + lockinputs.dumps(old))
    assert lockinputs.read(f) == old
    f.write_text('# comment\n' + lockinputs.dumps(old) + 'xyz mdx2/site.yaml\n')
    with pytest.raises(ValueError, match=rf'^{re.escape(str(f))}:5: not "<sha256>  <input>"'):
        lockinputs.read(f)


def test_the_kept_site_lockfiles_give_the_checks_what_they_need():
    '''The lockfiles the repository keeps (a site builds them as they are) meet needs.yaml,
    in a clone without Spack; each has its manifest of inputs beside it.'''
    kept = sorted(p.parent.name for p in SPACK.glob('*/spack.lock.inputs'))
    assert kept == ['aws-pcluster', 'laurel', 'mdx2']
    for env in kept:
        assert spackcheck.check_lock(SPACK / env / 'spack.lock', env_name=env) == [], env
