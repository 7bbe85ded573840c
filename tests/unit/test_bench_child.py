'''The bench's child processes (issue 62 item 4): a measurement is a function of
``mdxbench.post.bench.children`` run by ``python -m mdxbench.post.bench.child``, in an
interpreter of its own -- its figures, its own peak memory, and a failure that says why.'''
import pytest

from mdxbench.post.bench import child, regress


def test_a_child_returns_the_functions_figures_and_its_own_peak(tmp_path):
    path = tmp_path / 'store.parquet'
    # 1,000 series, every 50th dropped by 20% in its last 3 runs: 20 regressions
    regress.make_store(path, 20000)
    fast = child.run('regress_scan', path=str(path), mode='polars')
    slow = child.run('regress_scan', path=str(path), mode='python')
    assert fast['regressions'] == slow['regressions'] == 20
    # the child's peak, not this process's (pytest with polars loaded holds more than a
    # bare interpreter's 10 MiB, and the Python row loop holds every row)
    for figures in (fast, slow):
        assert 10 < figures['peak_mib'] < 2048 and figures['seconds'] > 0
    assert slow['peak_mib'] != fast['peak_mib']


def test_a_failing_child_raises_with_its_own_error_and_names_itself(tmp_path):
    with pytest.raises(RuntimeError, match=r'(?s)bench child \(polars\) failed: .*'
                       r'(No such file|not found|FileNotFound)'):
        child.run('regress_scan', 'bench child (polars)',
                  path=str(tmp_path / 'absent.parquet'), mode='polars')
    with pytest.raises(RuntimeError, match="has no attribute 'no_such_measurement'"):
        child.run('no_such_measurement')

