'''In CI a skipped test is a failed test (issue 41), and so is an expected failure (issue 58).

A skip hides what did not run: a missing directory, package or binary turns a test green
without testing anything. ``xfail`` hides the same, and more quietly: an xfailed test, an
xpassed one and ``xfail(run=False)`` (which never runs) all leave the run green. Where
``MDXBENCH_CI=1`` (``.ci/run`` sets it), every test or module that skips, in any phase
(collection, a fixture's setup, the test itself), and every test marked xfail, whatever
its outcome, is reported as failed instead, with the reason it gave -- unless its node id
is in the allowlist (``tests/ci-allowed-skips.txt``, or the file that
``MDXBENCH_CI_ALLOWED_SKIPS`` names), one line per test: ``NODEID  # why it may skip``.
An entry names one test (``file.py::test``, with its parameters where it has them); a
module, or a line without its reason, is an error naming the line, and so is a listed test
that ran instead of skipping (the entry is stale), so the list cannot rot. The goal is an
empty list.

Registered by ``tests/conftest.py``'s ``pytest_configure``; a plain ``pytest`` outside CI
is not affected.
'''
import os
import pathlib

import pytest

DEFAULT_ALLOWLIST = pathlib.Path(__file__).resolve().parent / 'ci-allowed-skips.txt'


def in_ci():
    return os.environ.get('MDXBENCH_CI') == '1'


def allowlist_path():
    return pathlib.Path(os.environ.get('MDXBENCH_CI_ALLOWED_SKIPS') or DEFAULT_ALLOWLIST)


def read_allowlist(path):
    '''{node id: reason} from the allowlist; a line without a reason is an error naming the
    file and line.'''
    allowed = {}
    if not path.is_file():
        return allowed
    for n, line in enumerate(path.read_text().splitlines(), 1):
        text = line.strip()
        if not text or text.startswith('#'):
            continue
        nodeid, sep, why = text.partition('#')
        if not sep or not why.strip():
            raise pytest.UsageError(f'{path}:{n}: an allowed skip needs its reason after "#": {text!r}')
        nodeid = nodeid.strip()
        if '::' not in nodeid or not nodeid.rpartition('::')[2]:
            raise pytest.UsageError(f'{path}:{n}: an allowed skip names one test '
                                    f'(FILE.py::TEST), not a whole module: {nodeid!r}')
        allowed[nodeid] = why.strip()
    return allowed


def _reason(longrepr):
    # a skip's longrepr is (file, line, 'Skipped: why')
    if isinstance(longrepr, tuple) and len(longrepr) == 3:
        return str(longrepr[2]).removeprefix('Skipped: ')
    return str(longrepr)


class SkipsFail:
    def __init__(self, path):
        self.path = path
        self.allowed = read_allowlist(path)
        self.used = set()
        self.failed = []
        self.ran = set()

    def _judge(self, nodeid, rep):
        xfail = hasattr(rep, 'wasxfail')
        if rep.when == 'call' and not rep.skipped and not xfail and nodeid in self.allowed:
            self.ran.add(nodeid)        # allowed to skip, yet it ran: the entry is stale
        if not (rep.skipped or xfail):
            return
        if nodeid in self.allowed:
            self.used.add(nodeid)
            return
        if xfail:
            # xfailed (skipped, wasxfail), xfail(run=False) (skipped at setup, '[NOTRUN]'),
            # or xpassed (passed, wasxfail): a green run that tested nothing it asserts
            why = (f'marked xfail ({"it passed" if rep.passed else "it failed"}): '
                   f'{rep.wasxfail or "no reason given"}')
        else:
            why = _reason(rep.longrepr)
        self.failed.append((nodeid, why))
        rep.outcome = 'failed'
        rep.longrepr = (f'{"xfail" if xfail else "skipped"} in CI: {why}\n'
                        f'A {"test marked xfail" if xfail else "skip"} in CI is a failure '
                        f'(MDXBENCH_CI=1). Make it run and pass, or name '
                        f'"{nodeid}  # <reason>" in {self.path}.')

    # The reports as pytest logs them, first of all the hooks that read them (the session's
    # count of failures, the terminal): the same in one process and, under pytest-xdist
    # (ci/test.sh's unit phase), in the controller, which receives every worker's reports
    @pytest.hookimpl(tryfirst=True)
    def pytest_runtest_logreport(self, report):
        self._judge(report.nodeid, report)

    @pytest.hookimpl(tryfirst=True)
    def pytest_collectreport(self, report):
        # a module that skips as a whole (importorskip at its top) skips at collection
        self._judge(report.nodeid, report)

    def pytest_sessionfinish(self, session, exitstatus):
        if self.ran:
            session.exitstatus = pytest.ExitCode.TESTS_FAILED

    def pytest_terminal_summary(self, terminalreporter):
        tr = terminalreporter
        tr.section('skips in CI (MDXBENCH_CI=1)')
        tr.write_line(f'allowlist {self.path}: {len(self.allowed)} entr'
                      f'{"y" if len(self.allowed) == 1 else "ies"}, {len(self.used)} used')
        for nodeid, why in self.failed:
            tr.write_line(f'SKIP IS FAILURE {nodeid}: {why}')
        for nodeid in sorted(self.ran):
            tr.write_line(f'STALE ALLOWED SKIP {nodeid} (it did not skip): remove it from {self.path}')


def configure(config):
    # not in a pytest-xdist worker: its reports are judged where they arrive
    if in_ci() and not hasattr(config, 'workerinput'):
        config.pluginmanager.register(SkipsFail(allowlist_path()), 'mdxbench-ci-skips')
