'''Real Spack (ci/spack.sh: a site's spack on PATH, or ours from MDXBENCH_SPACK_TARBALL):
every environment of spack/ concretized by Spack itself and checked against what the checks
need, spack/local built from the source mirror with every checksum verified.

Where no Spack is at hand these tests skip, saying so -- unless the run was given Spack's
archives (MDXBENCH_SPACK_TARBALL, as CI's .ci/run does): then a missing Spack fails.'''
import os
import pathlib
import shutil
import subprocess
import sys
import time

import pytest

from hang import HANG_S
from conftest import ROOT, run

sys.path.insert(0, str(ROOT / 'spack' / 'tools'))
import spackcheck  # noqa: E402

#: the environments whose GPU roots ci/spack-gpu.sh builds: it concretizes them itself (with
#: CI's compile-only CUDA in place of the site's) and checks their lockfiles against
#: needs.yaml, so test_every_environment_... leaves them to it (once, not twice)
GPU_BUILT = ('mdx1', 'gpunode')
ENVS = [e.name for e in spackcheck.environment_dirs(ROOT / 'spack') if e.name not in GPU_BUILT]


@pytest.fixture(scope='module')
def spack():
    res = run(['bash', 'ci/spack.sh', 'path'])
    if res.returncode != 0:
        if os.environ.get('MDXBENCH_SPACK_TARBALL'):
            pytest.fail('MDXBENCH_SPACK_TARBALL is set, yet ci/spack.sh has no Spack: '
                        'ci/install.sh did not set it up')
        pytest.skip('no Spack here (no spack on PATH, MDXBENCH_SPACK_TARBALL unset)')
    return res.stdout.strip()


def _lock_hashes(path):
    import json

    d = json.loads(pathlib.Path(path).read_text())
    return [r['hash'] for r in d['roots']], sorted(d['concrete_specs'])


def test_every_environment_concretizes_with_real_spack(spack, tmp_path):
    '''Every environment, on a copy of spack/, two at a time (one core each), then their
    roots checked against spack/tools/needs.yaml (mdx1's and gpunode's: by
    ci/spack-gpu.sh, below).
    The site environments' lockfiles are kept in the repository with what they were made
    from (spack.lock.inputs, spack/tools/lockinputs.py). Where an input changed since, the
    environment is concretized afresh and must give the kept lock, or the kept one is stale
    (the failure names the inputs and how to renew it); where none changed, Spack is asked
    to concretize the kept lock without --fresh, which it does only for what the lock lacks:
    it must come out the same. spack/local was concretized by this run's ci/install.sh
    (ci/spack-build.sh local) and is asked the same way.'''
    import lockinputs

    copy = tmp_path / 'spack'
    shutil.copytree(ROOT / 'spack', copy,
                    ignore=shutil.ignore_patterns('.spack-env', 'spack.lock'))
    kept, changes = {}, {}
    for env in ENVS:
        lock = ROOT / 'spack' / env / 'spack.lock'
        if (ROOT / 'spack' / env / 'spack.lock.inputs').is_file():
            assert lock.is_file(), f'spack/{env}/spack.lock.inputs is kept without its spack.lock'
            kept[env] = _lock_hashes(lock)
            changes[env] = lockinputs.changed(
                lockinputs.read(ROOT / 'spack' / env / 'spack.lock.inputs'),
                lockinputs.manifest(copy / env, spack))
            if not changes[env]:
                shutil.copy(lock, copy / env / 'spack.lock')
        elif env == 'local' and lock.is_file():
            shutil.copy(lock, copy / env / 'spack.lock')
    assert set(kept) >= {'aws-pcluster', 'laurel', 'mdx2'}, kept
    pending, running, done = list(ENVS), {}, {}
    while pending or running:
        while pending and len(running) < 2:
            env = pending.pop(0)
            log = open(tmp_path / f'{env}.log', 'w')
            fresh = [] if (copy / env / 'spack.lock').is_file() else ['--fresh']
            running[env] = (subprocess.Popen([spack, '-e', str(copy / env), 'concretize', *fresh],
                                             stdout=log, stderr=subprocess.STDOUT),
                            time.monotonic(), log, fresh)
        for env, (proc, t0, log, fresh) in list(running.items()):
            if proc.poll() is not None:
                log.close()
                done[env] = (proc.returncode, time.monotonic() - t0, fresh)
                del running[env]
        time.sleep(1)
    print({env: f'{secs:.0f} s{" fresh" if fresh else ""}'
           for env, (_, secs, fresh) in done.items()})
    for env, (rc, _, _) in done.items():
        assert rc == 0, (env, (tmp_path / f'{env}.log').read_text()[-4000:])
    for env, hashes in kept.items():
        if changes[env]:
            print(f'spack/{env}: concretized afresh, changed since its lock: {changes[env]}')
        assert _lock_hashes(copy / env / 'spack.lock') == hashes, (
            f'spack/{env}/spack.lock is not what its inputs give now'
            + (f' (changed since it was made: {", ".join(changes[env])})' if changes[env] else '')
            + f': renew it with `ci/spack-build.sh {env} --concretize-only` and commit '
            f'spack/{env}/spack.lock and spack.lock.inputs')
    errors = [e for env in ENVS for e in spackcheck.check_lock(copy / env / 'spack.lock')]
    assert errors == []


def test_a_kept_lock_is_stale_when_anything_its_concretization_reads_changes(spack, tmp_path):
    '''The manifest of a site environment's inputs names what changed: a file of the
    environment, one it includes, a package of ours, Spack's own configuration (an external
    found on the machine) -- and nothing when a copy elsewhere is the same.'''
    import lockinputs

    copy = tmp_path / 'spack'
    shutil.copytree(ROOT / 'spack', copy, ignore=shutil.ignore_patterns('.spack-env'))
    kept = lockinputs.read(ROOT / 'spack' / 'mdx2' / 'spack.lock.inputs')
    assert lockinputs.changed(lockinputs.manifest(ROOT / 'spack' / 'mdx2', spack),
                              lockinputs.manifest(copy / 'mdx2', spack)) == []
    for f in ('mdx2/site.yaml', 'common/definitions.yaml',
              'repo/spack_repo/mdxbench/packages/ior/package.py'):
        with open(copy / f, 'a') as fp:
            fp.write('\n')
    scope = tmp_path / 'scope'
    scope.mkdir()
    (scope / 'packages.yaml').write_text(
        'packages:\n  cmake:\n    externals:\n    - spec: cmake@3.99.0\n      prefix: /opt/cmake\n')
    now = lockinputs.manifest(copy / 'mdx2', spack, [scope])
    assert set(lockinputs.changed(kept, now)) >= {
        'mdx2/site.yaml (changed)', 'common/definitions.yaml (changed)',
        'repo/spack_repo/mdxbench/packages/ior/package.py (changed)',
        'config:packages (changed)'}
    # the same packages written in another order (`spack external find` writes them as its
    # parallel detection finishes): the same input
    ext = {'cmake': '    externals:\n    - spec: cmake@3.99.0\n      prefix: /opt/cmake\n',
           'gmake': '    externals:\n    - spec: gmake@9.9\n      prefix: /opt/gmake\n'}
    for name, order in (('ab', ('cmake', 'gmake')), ('ba', ('gmake', 'cmake'))):
        (tmp_path / name).mkdir()
        (tmp_path / name / 'packages.yaml').write_text(
            'packages:\n' + ''.join(f'  {p}:\n{ext[p]}' for p in order))
    assert lockinputs.manifest(copy / 'mdx2', spack, [tmp_path / 'ab'])['config:packages'] == \
        lockinputs.manifest(copy / 'mdx2', spack, [tmp_path / 'ba'])['config:packages']
    (copy / 'repo' / 'spack_repo' / 'mdxbench' / 'packages' / 'ior' / 'package.py').unlink()
    assert 'repo/spack_repo/mdxbench/packages/ior/package.py (gone)' in \
        lockinputs.changed(kept, lockinputs.manifest(copy / 'mdx2', spack))


def test_local_is_built_from_the_mirror_as_the_checks_need(spack):
    '''ci/install.sh built spack/local (ci/spack-build.sh local): the versions pinned, our
    repository's where builtin has none, every check's binary in the view.'''
    res = run([spack, '-e', 'spack/local', 'find', '--format', '{name}@{version} {namespace}'])
    assert res.returncode == 0, res.stderr
    found = set(res.stdout.split('\n'))
    for want in ('ior@4.0.0 mdxbench', 'libs3@287e4bee mdxbench', 'fio@3.38 mdxbench',
                 'iperf3@3.18-tree mdxbench',
                 'netperf@2.7.0 builtin', 'osu-micro-benchmarks@7.4-tree mdxbench',
                 'stream@5.10 builtin', 'babelstream@5.0 builtin'):
        assert want in found, (want, found)
    assert spackcheck.check_lock(ROOT / 'spack' / 'local' / 'spack.lock') == []
    view = ROOT / 'spack' / 'local' / '.spack-env' / 'view'
    for exe in ('bin/ior', 'bin/fio', 'bin/iperf3', 'bin/netperf', 'bin/netserver',
                'bin/stream_c.exe', 'bin/omp-stream',
                'libexec/osu-micro-benchmarks/mpi/pt2pt/osu_latency',
                'libexec/osu-micro-benchmarks/mpi/collective/osu_alltoall'):
        assert os.access(view / exe, os.X_OK), exe
    assert run([str(view / 'bin' / 'fio'), '--version']).stdout.strip() == 'fio-3.38'
    assert run([str(view / 'bin' / 'iperf3'), '--version']).stdout.startswith('iperf 3.18 ')
    # IOR with its S3 backend (ior +s3, IorS3)
    res = run([str(view / 'bin' / 'ior'), '-h'])
    assert 'S3-libs3' in res.stdout + res.stderr
    # checksums are never switched off
    res = run([spack, 'config', 'get', 'config'])
    assert 'checksum: false' not in res.stdout


def test_a_second_build_reuses_what_was_built(spack):
    t0 = time.monotonic()
    res = run(['bash', 'ci/spack-build.sh', 'local'], timeout=600)
    secs = time.monotonic() - t0
    assert res.returncode == 0, res.stderr[-3000:]
    assert ('spack/local: concretized already (nothing it reads changed since '
            'spack/local/.spack-env/mdxbench-concretized)') in res.stderr, res.stderr
    assert ': 0 package(s) installed now' in res.stderr, res.stderr
    print(f'warm spack/local build: {secs:.1f} s')


def test_an_archive_that_differs_from_its_checksum_is_refused(spack, tmp_path):
    '''A mirror whose iperf3 3.18 archive (3.18-tree) was altered by one byte: Spack
    refuses it (the sha256 our package pins), and nothing is installed.'''
    sha = 'dad3cbb4f2badaaeea927aaf86c9e528657f1bd34b0b0b4626b8a70d642f2db5'
    good = ROOT.parent / 'shared' / 'spack' / 'mirror' / '_source-cache' / 'archive' / 'da' / f'{sha}.tar.gz'
    src = os.environ.get('MDXBENCH_SPACK_MIRROR')
    if src:
        good = pathlib.Path(src) / '_source-cache' / 'archive' / 'da' / f'{sha}.tar.gz'
    if not good.is_file():
        pytest.skip(f'no iperf3 3.18 archive in the mirror ({good}) to alter')
    bad = tmp_path / 'mirror' / '_source-cache' / 'archive' / 'da' / f'{sha}.tar.gz'
    bad.parent.mkdir(parents=True)
    bad.write_bytes(good.read_bytes() + b'\0')
    scope = tmp_path / 'scope'
    scope.mkdir()
    (scope / 'mirrors.yaml').write_text(
        f"mirrors::\n  altered: {{url: 'file://{tmp_path / 'mirror'}', source: true, binary: false}}\n")
    (scope / 'config.yaml').write_text(
        f'config:\n  source_cache: {tmp_path / "cache"}\n  build_stage: [{tmp_path / "stage"}]\n')
    (scope / 'repos.yaml').write_text(
        f'repos:\n  mdxbench: {ROOT / "spack" / "repo" / "spack_repo" / "mdxbench"}\n')
    res = run([spack, '-C', str(scope), 'fetch', 'iperf3@3.18-tree'], timeout=600)
    out = res.stdout + res.stderr
    assert res.returncode != 0, out[-3000:]
    print(out[-1500:])
    assert 'sha256 checksum failed' in out.lower(), out[-3000:]


def test_an_archive_no_package_of_ours_pins_is_not_added_to_the_mirror(tmp_path):
    other = tmp_path / 'other.tar.gz'
    other.write_bytes(b'not an archive of ours')
    res = run(['bash', 'ci/spack.sh', 'setup'],
              env={'MDXBENCH_STATE_DIR': str(tmp_path / 'state'), 'MDXBENCH_SPACK_ARCHIVES': str(other)})
    assert res.returncode != 0
    assert f'{other} (sha256 ' in res.stderr and 'is pinned by no package of spack/repo' in res.stderr
    assert not list((tmp_path / 'state').rglob('_source-cache'))


def _git_repo(tarball, where):
    """A git repository of one commit holding what ``tarball`` holds: a stand-in for the
    upstream repository at the pinned commit."""
    where.mkdir(parents=True)
    subprocess.run(['tar', '-xzf', str(tarball), '-C', str(where), '--strip-components=1'],
                   check=True)
    git = ['git', '-C', str(where), '-c', 'user.name=t', '-c', 'user.email=t@t']
    subprocess.run(git + ['init', '-q'], check=True)
    subprocess.run(git + ['add', '-A', '-f'], check=True)
    subprocess.run(git + ['commit', '-q', '-m', 'pinned'], check=True)
    return subprocess.run(git + ['rev-parse', 'HEAD'], capture_output=True, text=True,
                          check=True).stdout.strip()


def _venv_without_spack(tmp_path):
    """A venv that is the project's (its Python and packages, clingo among them) but
    whose bin/ is its own: ci/spack.sh links its wrapper there."""
    real = pathlib.Path(sys.executable).parent.parent
    venv = tmp_path / 'venv'
    (venv / 'bin').mkdir(parents=True)
    shutil.copy(real / 'pyvenv.cfg', venv / 'pyvenv.cfg')
    (venv / 'lib').symlink_to(real / 'lib')
    (venv / 'bin' / 'python').symlink_to(pathlib.Path(sys.executable).resolve())
    return venv


def test_a_newcomer_without_spack_gets_the_pinned_one_and_an_altered_one_is_refused(tmp_path):
    """Issue 41: no spack on PATH, no archives named: ci/spack.sh fetches Spack and its
    builtin repository with git from the pins of spack/pins.env, verifies the trees it
    uses, and sets them up as from archives. The remotes are local file:// repositories
    made from ../shared/spack's archives (never the internet), at the pinned trees; one
    file changed in the package repository's remote is refused, naming the path, and leaves
    no Spack."""
    tar = os.environ.get('MDXBENCH_SPACK_TARBALL')
    pkgs = os.environ.get('MDXBENCH_SPACK_PACKAGES_TARBALL')
    if not (tar and pkgs):
        pytest.skip('no Spack archives named (MDXBENCH_SPACK_TARBALL, _PACKAGES_TARBALL) '
                    'to make the remotes from')
    core = _git_repo(tar, tmp_path / 'remote' / 'spack')
    builtin = _git_repo(pkgs, tmp_path / 'remote' / 'spack-packages')
    venv = _venv_without_spack(tmp_path)
    env = {'PATH': '/usr/sbin:/usr/bin:/sbin:/bin', 'HOME': str(tmp_path),
           'MDXBENCH_STATE_DIR': str(tmp_path / 'state'), 'MDXBENCH_VENV': str(venv),
           'MDXBENCH_SPACK_GIT': f"file://{tmp_path / 'remote' / 'spack'}",
           'MDXBENCH_SPACK_COMMIT': core,
           'MDXBENCH_SPACK_PACKAGES_GIT': f"file://{tmp_path / 'remote' / 'spack-packages'}",
           'MDXBENCH_SPACK_PACKAGES_COMMIT': builtin}
    res = subprocess.run(['bash', 'ci/spack.sh', 'setup'], cwd=ROOT, env=env, capture_output=True,
                         text=True, timeout=900)
    assert res.returncode == 0, res.stderr[-4000:]
    assert f'Spack: spack at {core} verified (bin=' in res.stderr, res.stderr[-3000:]
    assert f'Spack: spack-packages at {builtin} verified (repos=' in res.stderr
    state = tmp_path / 'state' / 'spack'
    assert (state / 'mode').read_text().strip() == 'own'
    assert (state / 'origin').read_text().strip() == 'fetched'
    ver = subprocess.run([str(state / 'bin' / 'spack'), '--version'], capture_output=True,
                         text=True, env=env, timeout=HANG_S)
    assert ver.stdout.startswith('1.2.0.dev0'), ver.stdout + ver.stderr
    st = subprocess.run(['bash', 'ci/spack.sh', 'status'], cwd=ROOT, env=env,
                        capture_output=True, text=True, timeout=HANG_S)
    assert st.returncode == 0 and '(own): 1.2.0.dev0' in st.stdout, st.stdout + st.stderr

    # one file of the builtin repository changed upstream: its tree differs from the pin
    changed = tmp_path / 'remote' / 'spack-packages' / 'repos' / 'spack_repo' / 'builtin' / \
        'packages' / 'stream' / 'package.py'
    changed.write_text(changed.read_text() + '\n# altered\n')
    git = ['git', '-C', str(tmp_path / 'remote' / 'spack-packages'), '-c', 'user.name=t',
           '-c', 'user.email=t@t']
    subprocess.run(git + ['commit', '-q', '-am', 'altered'], check=True)
    altered = subprocess.run(git + ['rev-parse', 'HEAD'], capture_output=True, text=True,
                             check=True).stdout.strip()
    env2 = dict(env, MDXBENCH_STATE_DIR=str(tmp_path / 'state2'),
                MDXBENCH_SPACK_PACKAGES_COMMIT=altered)
    res = subprocess.run(['bash', 'ci/spack.sh', 'setup'], cwd=ROOT, env=env2,
                         capture_output=True, text=True, timeout=900)
    assert res.returncode == 0, res.stderr[-3000:]          # no Spack is no failure ...
    assert 'the tree of repos is ' in res.stderr and 'refused' in res.stderr, res.stderr[-3000:]
    assert (tmp_path / 'state2' / 'spack' / 'mode').read_text().strip() == 'none'
    assert 'the pinned Spack could not be fetched' in res.stderr


def test_the_gpu_benchmarks_build_for_the_architecture_their_environment_names(spack):
    '''Compiling needs no GPU (issue 56): ci/spack-gpu.sh builds the GPU roots of spack/mdx1
    (cuda_arch=80) and spack/gpunode (cuda_arch=90) with real Spack and PyPI's CUDA 13.0
    (ci/cuda.sh); each binary holds its architecture's code and PTX, as cuobjdump lists them
    (gpu-burn's: the fatbin it loads). Issue 61: nccl-tests and gpu-burn among them.'''
    from mdxbench.parsers import cuobjdump

    t0 = time.monotonic()
    status = os.environ.get('MDXBENCH_GPU_BUILD')
    if status:
        # ci/test.sh: ci/install.sh started the build beside the first tests
        while not os.path.exists(status):
            assert time.monotonic() - t0 < 1800, f'no GPU build status in {status} after 30 min'
            time.sleep(2)
        rc, log = open(status).read().split(maxsplit=1)
        assert rc == '0', pathlib.Path(log.strip()).read_text()[-4000:]
        print(f'GPU builds: waited {time.monotonic() - t0:.0f} s for the background build')
    else:
        res = run(['bash', 'ci/spack-gpu.sh'], timeout=1500)
        assert res.returncode == 0, res.stderr[-4000:]
        print(f'GPU builds: {time.monotonic() - t0:.0f} s')
    state = pathlib.Path(os.environ.get('MDXBENCH_STATE_DIR') or ROOT / '.mdxbench')
    built = [line.split('\t') for line in
             (state / 'spack' / 'gpu-build' / 'binaries.tsv').read_text().splitlines()]
    assert sorted((env, pkg, arch) for env, pkg, arch, _ in built) == sorted(
        (env, pkg, arch) for env, arch in (('mdx1', '80'), ('gpunode', '90'))
        for pkg in ('babelstream', 'nvbandwidth', 'cuda-samples-p2p', 'nccl-tests', 'gpu-burn'))
    # the environments concretized by real Spack, their roots what the checks need
    for env in GPU_BUILT:
        assert spackcheck.check_lock(state / 'spack' / 'gpu-build' / 'spack' / env
                                     / 'spack.lock') == [], env
    tool = run(['bash', 'ci/cuda.sh', 'prefix']).stdout.strip() + '/bin/cuobjdump'
    for env, pkg, arch, binary in built:
        listing = run([tool, '--list-elf', binary]).stdout + run([tool, '--list-ptx', binary]).stdout
        listed = cuobjdump.parse(listing)
        assert cuobjdump.missing(listed, arch) == [], (env, pkg, listed)
        # nothing for another architecture than the one asked for
        assert listed['elf'] == [f'sm_{arch}'], (env, pkg, listed)
