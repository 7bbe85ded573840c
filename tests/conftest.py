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
