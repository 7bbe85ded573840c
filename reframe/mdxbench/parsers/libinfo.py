'''The BLAS and LAPACK libraries a benchmark resolves, as ``mdxbench/scripts/libinfo.sh``
prints them from ``ldd`` in the job's own environment::

    mdxbench-lib: libblas.so.3 /usr/lib/x86_64-linux-gnu/libmkl_rt.so
'''
import os
import re

from . import ParseError, require

_LINE = re.compile(r'^mdxbench-lib: (\S+) (\S+)\s*$', re.M)


def parse(text):
    '''``{soname: resolved file}``; empty when the program loads no BLAS or LAPACK.'''
    require(text is not None, 'no libinfo.sh output')
    other = [ln for ln in text.splitlines() if ln.strip() and not _LINE.match(ln)]
    if other:
        raise ParseError(f'libinfo.sh output has a line it does not print: {other[0][:120]!r}')
    return dict(_LINE.findall(text))


def blas(libs):
    '''The file that serves BLAS: what ``libblas.so.3`` resolves to, else a BLAS library
    linked directly (``libopenblas*``, ``libmkl_rt*``); None when there is none.'''
    if 'libblas.so.3' in libs:
        return libs['libblas.so.3']
    for soname, path in sorted(libs.items()):
        if soname.startswith(('libopenblas', 'libmkl_rt', 'libblis', 'libflexiblas')):
            return path
    return None


def same_file(a, b):
    return os.path.basename(a) == os.path.basename(b) or os.path.realpath(a) == os.path.realpath(b)
