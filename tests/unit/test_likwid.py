'''likwid-bench sweeps: outputs captured from Debian's likwid 5.2 on this machine.'''
import sys

import pytest

from mdxbench import catalog
from mdxbench.parsers import ParseError, likwid

SWEEP = 'likwid/likwid-5.2-copy_avx-sweep-4x3.out'


def _check_module():
    return sys.modules[catalog.check_classes()['LikwidCacheSweep'].__module__]


def test_sweep(fixture_text):
    r = likwid.parse_sweep(fixture_text(SWEEP))
    assert r['version'] == '5.2' and r['kernel'] == 'copy_avx' and r['runs'] == 12
    # likwid rounds a working set down to whole AVX blocks (16kB: 15872 bytes)
    assert r['sizes'] == {'16kB': 15872, '512kB': 512000, '16MB': 16000000, '128MB': 128000000}
    assert list(r['curve']) == sorted(r['sizes'].values())
    assert set(r['repeats'].values()) == {3}
    # medians of the three runs each (MByte/s / 1000)
    assert r['curve'][15872] == pytest.approx(230.43352)
    assert r['curve'][128000000] == pytest.approx(27.88835)
    lo, hi = r['spread'][128000000]
    assert lo == pytest.approx(24.33596) and hi == pytest.approx(30.59699)
    # each level slower than the one before, as on any machine
    c = list(r['curve'].values())
    assert c == sorted(c, reverse=True)


def test_cut_off_sweep(fixture_text):
    text = fixture_text(SWEEP)
    cut = text[:text.rindex('MByte/s:')]
    with pytest.raises(ParseError, match='size=128MB rep=3: no complete result'):
        likwid.parse_sweep(cut)


def test_failed_likwid_run(fixture_text):
    text = fixture_text('likwid/likwid-5.2-unknown-kernel.out')
    with pytest.raises(ParseError, match='Unknown test case nosuchkernel|no "Threaded Memory'):
        likwid.parse_sweep(text)


def test_not_a_sweep(fixture_text):
    with pytest.raises(ParseError, match='not a likwid-bench sweep'):
        likwid.parse_sweep(fixture_text('hpcc/hpcc-1.5.0-debian-np2-n6000.out'))
    with pytest.raises(ParseError, match='empty'):
        likwid.parse_sweep('')


def test_sweep_sizes_cover_every_level():
    mod = _check_module()
    facts = {'l1d_bytes': 49152, 'l2_bytes': 2097152, 'llc_bytes': 110100480}
    sizes, levels = mod.sweep_sizes(facts)
    assert levels == {'l1': 25, 'l2': 1049, 'l3': 55050, 'memory': 440402}
    assert set(levels.values()) <= set(sizes) and sizes == sorted(sizes)
    assert sizes[0] == 8 and max(sizes) == 440402
    with pytest.raises(ValueError, match='lack l1d_bytes, l2_bytes'):
        mod.sweep_sizes({'llc_bytes': 1})
