'''The test suite's own layout: pytest imports test modules by basename (rootdir import
mode, no packages), so two modules of one name in tests/unit and tests/integration stop
the whole run at collection -- a fresh-clone CI met that once.'''
import collections
import pathlib

TESTS = pathlib.Path(__file__).resolve().parents[1]


def test_test_modules_have_unique_basenames():
    seen = collections.defaultdict(list)
    for f in TESTS.rglob('test_*.py'):
        seen[f.name].append(str(f.relative_to(TESTS)))
    twice = {name: paths for name, paths in seen.items() if len(paths) > 1}
    assert not twice, f'test modules sharing a basename (rename one): {twice}'
    assert len(seen) > 40       # the rglob found the suite
