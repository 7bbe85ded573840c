'''McCalpin STREAM (Spack's stream_c.exe). No STREAM build and no real STREAM output exist
here (not in Debian or PyPI; Spack cannot be installed), so the parser's figures are tested
on any ``stream-*.out`` placed in ../shared/fixtures and skipped with that reason until one
is; its refusals are tested on real outputs of other tools.'''
import pytest

from mdxbench.parsers import ParseError, stream



def test_empty():
    with pytest.raises(ParseError, match='empty'):
        stream.parse('\n')


def test_babelstream_is_not_stream(shared_fixture):
    with pytest.raises(ParseError, match='not McCalpin STREAM'):
        stream.parse(shared_fixture('babelstream-5.0-omp.out'))


def test_hpcc_is_not_stream(fixture_text):
    with pytest.raises(ParseError, match='not McCalpin STREAM'):
        stream.parse(fixture_text('hpcc/hpcc-1.5.0-debian-np2-n6000.out'))


@pytest.mark.real_outputs('stream-*.out', 'no STREAM build is to be had here')
def test_real_stream_outputs(real_output):
    text = real_output.read_text()
    r = stream.parse(text)
    assert r['array_elements'] > 0 and r['threads'] >= 1
    assert all(r[k] > 0 for k in stream.KERNELS_LOWER), r
    with pytest.raises(ParseError):                     # cut before the table's last row
        stream.parse(text[:text.index('Triad:')])
    with pytest.raises(ParseError, match='Solution Validates'):
        stream.parse(text[:text.index('Solution Validates')])


@pytest.mark.real_outputs('osu-7.4-*.out', '../shared is absent')
def test_the_real_outputs_marker_finds_existing_files(real_output):
    '''The mechanism above, on outputs that do exist: one test per OSU fixture.'''
    assert real_output.name.startswith('osu-7.4-') and 'OSU MPI' in real_output.read_text()
