import os
import pathlib
import subprocess

import pytest

ROOT = pathlib.Path(__file__).resolve().parents[1]
FIXTURES = ROOT / 'tests' / 'fixtures'
SHARED_FIXTURES = ROOT.parent / 'shared' / 'fixtures'


@pytest.fixture
def fixture_text():
    def _read(rel):
        return (FIXTURES / rel).read_text()

    return _read


@pytest.fixture
def shared_fixture():
    '''Text of a file of ../shared/fixtures; skips when ../shared is absent (a user's clone).'''
    def _read(name):
        path = SHARED_FIXTURES / name
        if not path.exists():
            pytest.skip(f'{path} is absent: ../shared is only beside the project in CI '
                        'and developer checkouts')

        return path.read_text()

    return _read


def pytest_generate_tests(metafunc):
    '''``@pytest.mark.real_outputs(PATTERN, WHY)`` on a test taking ``real_output``: one
    test per file of ../shared/fixtures matching PATTERN (see pending_outputs).'''
    mark = metafunc.definition.get_closest_marker('real_outputs')
    if mark is not None and 'real_output' in metafunc.fixturenames:
        metafunc.parametrize('real_output', pending_outputs(*mark.args))


def pending_outputs(pattern, why):
    '''Parameters for a test over the real outputs ``pattern`` in ../shared/fixtures, for
    tools no registry here provides: one per file, or a single skipped one whose reason
    says that none exists yet and ``why``.'''
    found = sorted(SHARED_FIXTURES.glob(pattern)) if SHARED_FIXTURES.is_dir() else []
    if found:
        return [pytest.param(p, id=p.name) for p in found]

    return [pytest.param(None, id='none', marks=pytest.mark.skip(
        reason=f'no real output {pattern} in {SHARED_FIXTURES}: {why}'))]
