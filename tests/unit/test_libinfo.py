'''Which BLAS a benchmark resolved in its job: libinfo.sh outputs captured here for Debian's
hpcc with the machine's BLAS (OpenBLAS), with MKL through use-blas.sh, and for fio.'''
import pytest

from mdxbench.parsers import ParseError, libinfo

MKL = '/usr/lib/x86_64-linux-gnu/libmkl_rt.so'


def test_openblas(fixture_text):
    libs = libinfo.parse(fixture_text('libinfo/libinfo-hpcc-openblas.out'))
    assert libs == {
        'libblas.so.3': '/usr/lib/x86_64-linux-gnu/openblas-serial/libblas.so.3',
        'libopenblas.so.0': '/usr/lib/x86_64-linux-gnu/openblas-serial/libopenblas-r0.3.21.so'}
    assert libinfo.blas(libs) == libs['libblas.so.3']
    assert not libinfo.same_file(MKL, libinfo.blas(libs))     # what the mkl check refuses


def test_mkl_through_use_blas(fixture_text):
    libs = libinfo.parse(fixture_text('libinfo/libinfo-hpcc-mkl.out'))
    assert libinfo.blas(libs) == MKL and libinfo.same_file(MKL, libinfo.blas(libs))


def test_a_program_without_blas(fixture_text):
    assert libinfo.blas(libinfo.parse(fixture_text('libinfo/libinfo-fio-none.out'))) is None


def test_foreign_lines_are_refused(fixture_text):
    with pytest.raises(ParseError, match='does not print'):
        libinfo.parse(fixture_text('sockperf/sockperf-3.7-ping-pong-tcp.out'))
