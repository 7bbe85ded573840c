'''Every check class in checks/ is accounted for by this CI run (issue 41): a case of it
passed in one of the ReFrame sessions the integration tests started -- on `local` (the
suite of test_end_to_end) or on the namespace cluster (test_cluster, test_fleet_acceptance,
test_incident_split) -- or it skipped for a reason that a test proved true independently
of the check's own code (conftest.prove_skip: the binary searched for on the job's PATH,
`perf stat` run directly). A check that yields no case anywhere (a `valid_systems` or
parameter mistake) fails here, by name.

The sessions come from ReFrame's results storage (conftest.CHECKS_DB). The file's name
makes it run last. Run again by hand on a kept database:
``MDXBENCH_CHECKS_DB=.mdxbench/ci-results/session-N.db pytest tests/integration/test_zz_every_check.py``.
'''
import json
import os
import pathlib
import sqlite3

import pytest

from conftest import ACCOUNTING, CHECKS_DB, PROVEN_SKIPS_FILE
from mdxbench import catalog

#: the modules whose ReFrame sessions account for the checks
SUITE = ('test_end_to_end.py', 'test_cluster.py', 'test_fleet_acceptance.py')


def stored_cases(db):
    '''(class name, result, system:partition, display name) of every case of every stored
    session.'''
    with sqlite3.connect(db) as conn:
        blobs = [b for (b,) in conn.execute('SELECT json_blob FROM sessions')]
    out = []
    for blob in blobs:
        for run in json.loads(blob)['runs']:
            for tc in run['testcases']:
                out.append((tc['name'].split()[0], tc['result'],
                            f"{tc['system']}:{tc['partition']}", tc['display_name']))
    return out


def account(classes, cases, proven):
    '''{class: how it is accounted for} and the classes that are not.'''
    passed = {}
    for name, result, where, shown in cases:
        if result == 'pass':
            passed.setdefault(name, {}).setdefault(where, 0)
            passed[name][where] += 1
    how, missing = {}, []
    for name in sorted(classes):
        if name in passed:
            how[name] = 'ran: ' + ', '.join(f'{n} on {w}' for w, n in sorted(passed[name].items()))
        elif name in proven:
            how[name] = 'skipped, reason proven: ' + proven[name]
        else:
            seen = sorted({f'{r} on {w}' for n, r, w, _ in cases if n == name})
            missing.append(f"{name}: {', '.join(seen) if seen else 'no case in any session'}")
    return how, missing


def test_account_is_strict():
    '''A class with no case, or only failed and skipped ones, is missing; a proven skip
    counts.'''
    classes = {'A': None, 'B': None, 'C': None, 'D': None}
    cases = [('A', 'pass', 'local:debug', 'A'), ('B', 'fail', 'local:debug', 'B'),
             ('C', 'skip', 'local:debug', 'C')]
    how, missing = account(classes, cases, {'C': 'no PMU (perf stat)'})
    assert set(how) == {'A', 'C'}
    assert missing == ['B: fail on local:debug', 'D: no case in any session']


def test_every_check_class_ran_or_skipped_for_a_proven_reason(request):
    db = pathlib.Path(os.environ.get('MDXBENCH_CHECKS_DB') or CHECKS_DB)
    proven_file = db.with_suffix('.proven.json') if os.environ.get('MDXBENCH_CHECKS_DB') \
        else PROVEN_SKIPS_FILE
    if not os.environ.get('MDXBENCH_CHECKS_DB'):
        ran = {pathlib.Path(str(item.fspath)).name for item in request.session.items}
        if not set(SUITE) <= ran:
            # a partial run (-k, one file): not every check was asked for. In CI the whole
            # suite runs, and a skip there is a failure anyway
            pytest.skip(f'the modules that run the checks ({", ".join(SUITE)}) are not all in '
                        'this session')
    assert db.is_file(), f'no ReFrame results database at {db}: no session was stored'
    classes = catalog.check_classes()
    cases = stored_cases(db)
    proven = json.loads(proven_file.read_text()) if proven_file.is_file() else {}
    how, missing = account(classes, cases, proven)
    ACCOUNTING[:] = [f'{len(how)} of {len(classes)} check classes accounted for, from '
                     f'{len(cases)} cases in {db}'] + [f'  {n}: {h}' for n, h in how.items()] \
        + [f'  NOT ACCOUNTED FOR {m}' for m in missing]
    assert not missing, '\n'.join(ACCOUNTING)
