import os
import pathlib

import pytest

import ci_skips

ROOT = pathlib.Path(__file__).resolve().parents[1]
FIXTURES = ROOT / 'tests' / 'fixtures'
UPSTREAM = FIXTURES / 'upstream'


def pytest_configure(config):
    ci_skips.configure(config)      # in CI (MDXBENCH_CI=1) a skip is a failure


@pytest.fixture(autouse=True)
def keep_slurm_conf():
    '''Loading a system's configuration points SLURM_CONF at that system's Slurm (in this
    process, for ReFrame's sbatch and squeue): undo it after each test, or a later test's
    Slurm commands would read another system's slurm.conf -- one that does not exist makes
    each of them wait for DNS lookups (a 2.5 min ReFrame dry run).'''
    saved = os.environ.get('SLURM_CONF')
    yield
    if saved is None:
        os.environ.pop('SLURM_CONF', None)
    else:
        os.environ['SLURM_CONF'] = saved


@pytest.fixture
def fixture_text():
    def _read(rel):
        return (FIXTURES / rel).read_text()

    return _read


@pytest.fixture
def upstream_output():
    '''Text of a real output of an upstream build (tests/fixtures/upstream: IOR, OSU,
    BabelStream, STREAM, warp, netperf, Intel MKL LINPACK; provenance in the fixtures
    README).'''
    def _read(name):
        return (UPSTREAM / name).read_text()

    return _read


def pytest_terminal_summary(terminalreporter):
    '''Minutes per test module (setup, call and teardown of its tests): the per-module table
    of CI's time (docs/testing.md) from every run's own output.'''
    import collections

    per = collections.Counter()
    for reports in terminalreporter.stats.values():
        for rep in reports:
            nodeid = getattr(rep, 'nodeid', None)
            duration = getattr(rep, 'duration', None)
            if nodeid and duration is not None and getattr(rep, 'when', None):
                per[nodeid.split('::')[0]] += duration
    if per:
        terminalreporter.section('minutes per test module')
        for path, secs in per.most_common():
            terminalreporter.write_line(f'{secs / 60:6.1f}  {path}')
        terminalreporter.write_line(f'{sum(per.values()) / 60:6.1f}  in all')
