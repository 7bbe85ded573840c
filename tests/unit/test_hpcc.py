import pytest

from mdxbench import hpcc as launch
from mdxbench.parsers import ParseError, hpcc

FILES = ['hpcc/hpcc-1.5.0-debian-np2-n7104.out', 'hpcc/hpcc-1.5.0-debian-np2-n6000.out']


# the figures hpccoutf.txt prints (GB/s per process): StarSTREAM_Copy, StarSTREAM_Triad,
# SingleSTREAM_Copy, SingleSTREAM_Triad
PRINTED = {FILES[0]: (24.6712, 30.7146, 26.2851, 30.7146),
           FILES[1]: (30.1848, 35.4319, 34.23, 37.7624)}


@pytest.mark.parametrize('name', FILES)
def test_stream_from_real_output(fixture_text, name):
    res = hpcc.stream(fixture_text(name))
    assert res['version'] == '1.5.0'
    assert res['processes'] == 2
    # all-core figures are the per-process StarSTREAM figures times the 2 processes
    star_copy, star_triad, single_copy, single_triad = PRINTED[name]
    assert res['copy'] == pytest.approx(2 * star_copy)
    assert res['triad'] == pytest.approx(2 * star_triad)
    assert res['copy_1t'] == pytest.approx(single_copy)
    assert res['triad_1t'] == pytest.approx(single_triad)
    assert res['scale'] > 0 and res['add'] > 0


def test_hpl_from_real_output(fixture_text):
    res = hpcc.hpl(fixture_text(FILES[1]))
    assert res['n'] == 6000 and res['nb'] == 192
    assert res['gflops'] == pytest.approx(10.0584)


def test_truncated_output_fails_loudly(fixture_text):
    text = fixture_text(FILES[0])
    cut = text.index('End of Summary section.')
    with pytest.raises(ParseError, match='truncated'):
        hpcc.stream(text[:cut])

    with pytest.raises(ParseError, match='did not finish'):
        hpcc.stream(text[:text.index('Begin of Summary section.')])


def test_empty_output_fails_loudly():
    with pytest.raises(ParseError, match='empty'):
        hpcc.stream('')


def test_failed_run_is_not_a_result(fixture_text):
    text = fixture_text(FILES[0]).replace('Success=1', 'Success=0')
    with pytest.raises(ParseError, match='Success'):
        hpcc.stream(text)


def test_missing_key_is_named(fixture_text):
    text = fixture_text(FILES[0]).replace('StarSTREAM_Triad=', 'StarSTREAM_Tried=')
    with pytest.raises(ParseError, match='StarSTREAM_Triad'):
        hpcc.stream(text)


def test_problem_size_covers_four_times_the_llc():
    llc = 32 * 1024**2
    n = launch.stream_problem_size(llc, factor=4, nb=192)
    assert n % 192 == 0
    # sum over processes of one STREAM array: N^2 / 3 doubles
    assert n * n / 3 * 8 >= 4 * llc
    assert (n - 192) ** 2 / 3 * 8 < 4 * llc
    with pytest.raises(ValueError, match='llc_bytes'):
        launch.stream_problem_size(None)


def test_input_file_and_grid():
    assert hpcc.process_grid(2) == (1, 2)
    assert hpcc.process_grid(16) == (4, 4)
    assert hpcc.process_grid(7) == (1, 7)
    lines = hpcc.input_file(7104, 192, 1, 2).splitlines()
    assert len(lines) == 36
    assert lines[5].split()[0] == '7104' and lines[7].split()[0] == '192'
    assert lines[10].split()[0] == '1' and lines[11].split()[0] == '2'


def test_input_file_matches_debian_example():
    import pathlib

    example = pathlib.Path('/usr/share/doc/hpcc/examples/_hpccinf.txt')
    if not example.exists():
        pytest.skip(f'{example} is absent (Debian package hpcc not installed)')

    ours = [ln.split() for ln in hpcc.input_file(1000, 80, 2, 2).splitlines()]
    theirs = [ln.split() for ln in example.read_text().splitlines()]
    assert ours == theirs
