'''In CI a skip is a failure (tests/ci_skips.py), and CI does not start without Spack's
archives (.ci/run). Each case runs a real pytest (or .ci/run) in a subprocess; the CI cases also under
pytest-xdist's two workers, as ci/test.sh runs the unit tests.'''
import os
import pathlib
import shutil
import subprocess
import sys

import pytest

from hang import HANG_S

ROOT = pathlib.Path(__file__).resolve().parents[2]

TESTS = '''
import pytest

def test_runs():
    assert 1 + 1 == 2

def test_skips():
    pytest.skip('no such tool here')
'''


#: the other ways a test can be green without having asserted anything (issue 58)
QUIET = '''
import pytest

@pytest.fixture
def tool():
    pytest.skip('the fixture found no tool')

def test_setup_skips(tool):
    assert tool

@pytest.mark.xfail(reason='known bug 1')
def test_xfails():
    assert 1 + 1 == 3

@pytest.mark.xfail(reason='known bug 2')
def test_xpasses():
    assert 1 + 1 == 2

@pytest.mark.xfail(run=False, reason='it hangs')
def test_never_runs():
    assert False

def test_xfail_called():
    pytest.xfail('not today')
'''


def pytest_in(tmp_path, *, ci, allowlist=None, module_skip=False, workers=0, tests=TESTS):
    (tmp_path / 'conftest.py').write_text(
        'import ci_skips\n\ndef pytest_configure(config):\n    ci_skips.configure(config)\n')
    (tmp_path / 'test_mod.py').write_text(tests)
    if module_skip:
        (tmp_path / 'test_whole.py').write_text(
            "import pytest\npytest.importorskip('no_such_module_anywhere')\n\ndef test_x():\n    pass\n")
    env = {k: v for k, v in os.environ.items() if not k.startswith('MDXBENCH_CI')}
    env['PYTHONPATH'] = str(ROOT / 'tests')
    if ci:
        env['MDXBENCH_CI'] = '1'
    if allowlist is not None:
        (tmp_path / 'allowed.txt').write_text(allowlist)
        env['MDXBENCH_CI_ALLOWED_SKIPS'] = str(tmp_path / 'allowed.txt')
    else:
        env['MDXBENCH_CI_ALLOWED_SKIPS'] = str(tmp_path / 'none.txt')
    xdist = ['-n', str(workers)] if workers else []
    return subprocess.run([sys.executable, '-m', 'pytest', '-p', 'no:cacheprovider', '-q',
                           *xdist, '--rootdir', str(tmp_path), str(tmp_path)],
                          capture_output=True, text=True, env=env, cwd=tmp_path, timeout=HANG_S)


def test_outside_ci_a_skip_is_a_skip(tmp_path):
    res = pytest_in(tmp_path, ci=False)
    assert res.returncode == 0, res.stdout
    assert '1 passed, 1 skipped' in res.stdout


@pytest.mark.parametrize('workers', [0, 2])
def test_in_ci_a_skip_fails_with_its_reason(tmp_path, workers):
    res = pytest_in(tmp_path, ci=True, workers=workers)
    assert res.returncode == 1, res.stdout
    assert '1 failed, 1 passed' in res.stdout, res.stdout
    assert 'skipped in CI: no such tool here' in res.stdout
    assert 'SKIP IS FAILURE test_mod.py::test_skips: no such tool here' in res.stdout


@pytest.mark.parametrize('workers', [0, 2])
def test_in_ci_a_module_skipped_at_collection_fails(tmp_path, workers):
    res = pytest_in(tmp_path, ci=True, module_skip=True, workers=workers)
    # a collection error: pytest stops before running anything (exit 2); pytest-xdist runs
    # what the workers collected and fails the run (exit 1)
    assert res.returncode == (1 if workers else 2), res.stdout
    assert 'ERROR test_whole.py' in res.stdout, res.stdout
    assert "SKIP IS FAILURE test_whole.py: could not import 'no_such_module_anywhere'" in res.stdout


@pytest.mark.parametrize('workers', [0, 2])
def test_an_allowed_skip_with_its_reason_passes(tmp_path, workers):
    res = pytest_in(tmp_path, ci=True, allowlist='test_mod.py::test_skips  # needs a GPU\n',
                    workers=workers)
    assert res.returncode == 0, res.stdout
    assert '1 passed, 1 skipped' in res.stdout and '1 entry, 1 used' in res.stdout


def test_outside_ci_xfail_and_setup_skips_pass(tmp_path):
    res = pytest_in(tmp_path, ci=False, tests=QUIET)
    assert res.returncode == 0, res.stdout
    assert '1 skipped, 3 xfailed, 1 xpassed' in res.stdout, res.stdout


@pytest.mark.parametrize('workers', [0, 2])
def test_in_ci_xfail_in_every_form_and_a_setup_skip_fail(tmp_path, workers):
    res = pytest_in(tmp_path, ci=True, tests=QUIET, workers=workers)
    assert res.returncode == 1, res.stdout
    # a setup phase that fails is an error: the fixture's skip and xfail(run=False)
    assert res.stdout.splitlines()[-1].startswith('3 failed, 2 errors'), res.stdout
    for line in ('test_mod.py::test_setup_skips: the fixture found no tool',
                 'test_mod.py::test_xfails: marked xfail (it failed): known bug 1',
                 'test_mod.py::test_xpasses: marked xfail (it passed): known bug 2',
                 'test_mod.py::test_never_runs: marked xfail (it failed): [NOTRUN] it hangs',
                 'test_mod.py::test_xfail_called: marked xfail (it failed): not today'):
        assert f'SKIP IS FAILURE {line}' in res.stdout, (line, res.stdout)


def test_in_ci_an_allowed_xfail_passes(tmp_path):
    res = pytest_in(tmp_path, ci=True, tests=QUIET, allowlist=''.join(
        f'test_mod.py::{t}  # reason {t}\n' for t in
        ('test_setup_skips', 'test_xfails', 'test_xpasses', 'test_never_runs',
         'test_xfail_called')))
    assert res.returncode == 0, res.stdout
    assert '5 entries, 5 used' in res.stdout, res.stdout


def test_an_allowlist_entry_for_a_whole_module_is_refused_naming_the_line(tmp_path):
    res = pytest_in(tmp_path, ci=True, module_skip=True,
                    allowlist='test_mod.py::test_skips  # x\ntest_whole.py  # all of it\n')
    assert res.returncode != 0
    assert (f"{tmp_path / 'allowed.txt'}:2: an allowed skip names one test (FILE.py::TEST), "
            f"not a whole module: 'test_whole.py'") in res.stdout + res.stderr


def test_an_allowed_skip_without_a_reason_is_refused_naming_the_line(tmp_path):
    res = pytest_in(tmp_path, ci=True, allowlist='# header\ntest_mod.py::test_skips\n')
    assert res.returncode != 0
    assert f"{tmp_path / 'allowed.txt'}:2: an allowed skip needs its reason" in res.stdout + res.stderr


@pytest.mark.parametrize('workers', [0, 2])
def test_an_allowed_skip_that_no_longer_skips_fails_the_run(tmp_path, workers):
    res = pytest_in(tmp_path, ci=True, allowlist='test_mod.py::test_skips  # x\n'
                                                  'test_mod.py::test_runs  # it used to skip\n',
                    workers=workers)
    assert res.returncode == 1, res.stdout
    assert 'STALE ALLOWED SKIP test_mod.py::test_runs' in res.stdout


def test_the_allowlist_of_this_repository_is_empty():
    '''The goal of issue 41; an entry added here must say why in this test too.'''
    from ci_skips import DEFAULT_ALLOWLIST, read_allowlist

    assert read_allowlist(DEFAULT_ALLOWLIST) == {}


def test_ci_run_fails_at_once_without_the_spack_directory(tmp_path):
    '''.ci/run in a clone with no ../shared/spack beside it: exit 1 naming the path, before
    anything is installed or run.'''
    clone = tmp_path / 'clone'
    (clone / '.ci').mkdir(parents=True)
    shutil.copy(ROOT / '.ci' / 'run', clone / '.ci' / 'run')
    (clone / 'ci').mkdir()
    (clone / 'ci' / 'test.sh').write_text('echo RAN-THE-TESTS\n')
    res = subprocess.run(['bash', '.ci/run'], cwd=clone, capture_output=True, text=True, timeout=HANG_S)
    assert res.returncode == 1
    assert f'{tmp_path}/shared/spack is absent' in res.stderr
    assert 'RAN-THE-TESTS' not in res.stdout
    # with the directory there, it goes on to the test command, marked as CI
    (tmp_path / 'shared' / 'spack').mkdir(parents=True)
    (clone / 'ci' / 'test.sh').write_text('echo "RAN-THE-TESTS ci=$MDXBENCH_CI tar=$MDXBENCH_SPACK_TARBALL"\n')
    res = subprocess.run(['bash', '.ci/run'], cwd=clone, capture_output=True, text=True, timeout=HANG_S,
                         env={'PATH': os.environ['PATH']})
    assert res.returncode == 0, res.stderr
    assert f'RAN-THE-TESTS ci=1 tar={tmp_path}/shared/spack/spack-1.2.0.dev0.tar.gz' in res.stdout
