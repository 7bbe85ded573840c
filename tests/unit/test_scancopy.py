'''A kept scan copy: a second scan routes only the new file and detects again only the
series its runs could move, and finds and explains what a scan from nothing finds
(``mdxbench bench``'s generated histories, test input for the statistics, not benchmark
output).'''
import json

import pytest

from mdxbench.post.analysis import scan
from mdxbench.post.analysis.scancopy import ScanCopy
from mdxbench.post.bench import changes as bench_changes


def _same(a, b):
    return json.dumps(a, sort_keys=True, default=str) == json.dumps(b, sort_keys=True,
                                                                      default=str)


@pytest.fixture
def nights(tmp_path):
    '''A year's first 120 nights of 300 series (10% of them with a step), then 5 nights.'''
    meta = bench_changes.real_meta()
    first = tmp_path / 'history' / 'a.parquet'
    first.parent.mkdir()
    bench_changes.make_store(first, 300, 120, seed=5, share=0.1, meta=meta, chunk=100)
    more = tmp_path / 'history' / 'b.parquet'
    bench_changes.make_store(more, 300, 125, seed=5, share=0.1, meta=meta, chunk=100,
                             first_run=120, span=120)
    return first, more


@pytest.mark.parametrize('nproc', [1, 2])
def test_a_second_scan_routes_the_new_file_and_detects_few_series(nights, tmp_path, nproc):
    first, more = nights
    keep = tmp_path / 'scan'
    kw = dict(nproc=nproc, chunk_rows=10_000, keep=keep)
    assert _same(scan.find([first], **kw), scan.find([first], nproc=1, chunk_rows=10_000))
    first_scan = ScanCopy(keep).manifest['last']
    assert first_scan['routed'] == 1 and first_scan['detected'] == first_scan['series'] == 300
    assert first_scan['kept'] == 0 and first_scan['explained'] >= 20
    got = scan.find([first, more], **kw)
    assert _same(got, scan.find([first, more], nproc=1, chunk_rows=10_000))
    assert len(got) >= 20
    last = ScanCopy(keep).manifest['last']
    assert last['routed'] == 1 and last['series'] == 300 and last['detected'] <= 30, last
    # the change points explained before are not read again
    assert last['kept'] >= first_scan['explained'] - 3 and last['explained'] <= 5, last


def test_a_changed_file_is_routed_again_and_its_series_detected_whole(nights, tmp_path):
    first, more = nights
    keep = tmp_path / 'scan'
    scan.find([first, more], nproc=1, chunk_rows=10_000, keep=keep)
    # the first file written again with other values: no state of it still holds
    bench_changes.make_store(first, 300, 120, seed=6, share=0.1, chunk=100)
    got = scan.find([first, more], nproc=1, chunk_rows=10_000, keep=keep)
    assert _same(got, scan.find([first, more], nproc=1, chunk_rows=10_000))
    last = ScanCopy(keep).manifest['last']
    assert (last['routed'], last['detected'], last['series']) == (1, 300, 300)
    assert last['kept'] == 0, 'explanations of changed runs kept'
    scan.find([first, more], nproc=1, chunk_rows=10_000, keep=keep, full=True)
    last = ScanCopy(keep).manifest['last']
    assert (last['routed'], last['detected'], last['series']) == (2, 300, 300)
