'''McCalpin STREAM (Spack's stream_c.exe): the parser on the real STREAM 5.10 outputs of
tests/fixtures/upstream (1 and 2 OpenMP threads), and its refusals of other tools' outputs.'''
import pytest

from mdxbench.parsers import ParseError, stream



def test_empty():
    with pytest.raises(ParseError, match='empty'):
        stream.parse('\n')


def test_babelstream_is_not_stream(upstream_output):
    with pytest.raises(ParseError, match='not McCalpin STREAM'):
        stream.parse(upstream_output('babelstream-5.0-omp.out'))


def test_hpcc_is_not_stream(fixture_text):
    with pytest.raises(ParseError, match='not McCalpin STREAM'):
        stream.parse(fixture_text('hpcc/hpcc-1.5.0-debian-np2-n6000.out'))


@pytest.mark.parametrize('name, threads, copy, scale, add, triad', [
    ('stream-5.10-omp1.out', 1, 34024.8, 36305.5, 33162.6, 31885.2),
    ('stream-5.10-omp2.out', 2, 24621.2, 22703.0, 30268.8, 22802.9),
])
def test_real_stream_outputs(upstream_output, name, threads, copy, scale, add, triad):
    text = upstream_output(name)
    r = stream.parse(text)
    assert (r['version'], r['array_elements'], r['threads']) == ('5.10', 20000000, threads)
    # STREAM prints MB/s (1e6 B/s); the parser gives GB/s
    assert [r[k] for k in stream.KERNELS_LOWER] == pytest.approx(
        [copy / 1e3, scale / 1e3, add / 1e3, triad / 1e3])
    with pytest.raises(ParseError, match='Triad'):        # cut before the table's last row
        stream.parse(text[:text.index('Triad:')])
    with pytest.raises(ParseError, match='Solution Validates'):
        stream.parse(text[:text.index('Solution Validates')])
