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

from conftest import ROOT, run

sys.path.insert(0, str(ROOT / 'spack' / 'tools'))
import spackcheck  # noqa: E402

ENVS = [e.name for e in spackcheck.environment_dirs(ROOT / 'spack')]


@pytest.fixture(scope='module')
def spack():
    res = run(['bash', 'ci/spack.sh', 'path'])
    if res.returncode != 0:
        if os.environ.get('MDXBENCH_SPACK_TARBALL'):
            pytest.fail('MDXBENCH_SPACK_TARBALL is set, yet ci/spack.sh has no Spack: '
                        'ci/install.sh did not set it up')
        pytest.skip('no Spack here (no spack on PATH, MDXBENCH_SPACK_TARBALL unset)')
    return res.stdout.strip()


def test_every_environment_concretizes_with_real_spack(spack, tmp_path):
    '''All four environments, on a copy of spack/ (the checkout's lockfiles stay), two at a
    time (one core each), then their roots checked against spack/tools/needs.yaml.'''
    copy = tmp_path / 'spack'
    shutil.copytree(ROOT / 'spack', copy,
                    ignore=shutil.ignore_patterns('.spack-env', 'spack.lock'))
    pending, running, done = list(ENVS), {}, {}
    while pending or running:
        while pending and len(running) < 2:
            env = pending.pop(0)
            log = open(tmp_path / f'{env}.log', 'w')
            running[env] = (subprocess.Popen([spack, '-e', str(copy / env), 'concretize', '--fresh'],
                                             stdout=log, stderr=subprocess.STDOUT),
                            time.monotonic(), log)
        for env, (proc, t0, log) in list(running.items()):
            if proc.poll() is not None:
                log.close()
                done[env] = (proc.returncode, time.monotonic() - t0)
                del running[env]
        time.sleep(1)
    print({env: f'{secs:.0f} s' for env, (_, secs) in done.items()})
    for env, (rc, _) in done.items():
        assert rc == 0, (env, (tmp_path / f'{env}.log').read_text()[-4000:])
    errors = [e for env in ENVS for e in spackcheck.check_lock(copy / env / 'spack.lock')]
    assert errors == []


def test_local_is_built_from_the_mirror_as_the_checks_need(spack):
    '''ci/install.sh built spack/local (ci/spack-build.sh local): the papers' versions, our
    repository's where builtin has none, every check's binary in the view.'''
    res = run([spack, '-e', 'spack/local', 'find', '--format', '{name}@{version} {namespace}'])
    assert res.returncode == 0, res.stderr
    found = set(res.stdout.split('\n'))
    for want in ('ior@4.0.0 builtin', 'fio@3.38 mdxbench', 'iperf3@3.18 mdxbench',
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
    # checksums are never switched off
    res = run([spack, 'config', 'get', 'config'])
    assert 'checksum: false' not in res.stdout


def test_a_second_build_reuses_what_was_built(spack):
    t0 = time.monotonic()
    res = run(['bash', 'ci/spack-build.sh', 'local'], timeout=600)
    secs = time.monotonic() - t0
    assert res.returncode == 0, res.stderr[-3000:]
    assert 'concretized already (nothing it reads changed)' in res.stderr
    assert ': 0 package(s) installed now' in res.stderr, res.stderr
    print(f'warm spack/local build: {secs:.1f} s')


def test_an_archive_that_differs_from_its_checksum_is_refused(spack, tmp_path):
    '''A mirror whose iperf3 3.18 archive was altered by one byte: Spack refuses it (the
    sha256 our package pins), and nothing is installed.'''
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
    res = run([spack, '-C', str(scope), 'fetch', 'iperf3@3.18'], timeout=600)
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
