'''Intel oneAPI MKL LINPACK benchmarks: the MPI ``xhpl_intel64_*`` (HPL output) and the
shared-memory ``xlinpack_xeon64``. A run that stopped before its final result line is a
:class:`PartialResult` carrying the last reported Mflops -- never a result.'''
import re

from . import PartialResult, require

# HPL result line: T/V  N  NB  P  Q  Time  Gflops   (Intel's adds columns after Gflops)
_HPL_RESULT = re.compile(
    r'^(W\S+)\s+(\d+)\s+(\d+)\s+(\d+)\s+(\d+)\s+([0-9.]+)\s+([0-9.]+(?:[eE][+-]?\d+)?)', re.M)
_HPL_PASSED = re.compile(r'\|\|Ax-b\|\|_oo/\(eps\*\(\|\|A\|\|_oo\*\|\|x\|\|_oo\+\|\|b\|\|_oo\)\*N\)=\s*\S+\s*\.+\s*(PASSED|FAILED)')
_PROGRESS = re.compile(r'Column=(\d+)\s+Fraction=([0-9.]+)\s+Kernel=\s*[0-9.]+\s+Mflops=([0-9.]+)')
_SHM_HEADER = re.compile(r'^Size\s+LDA\s+Align\.\s+Average\s+Maximal', re.M)


def mp_linpack(text):
    '''HPL-format output of Intel's MPI LINPACK (or netlib HPL).'''
    require(text and text.strip(), 'LINPACK output is empty')
    m = None
    for m in _HPL_RESULT.finditer(text):
        pass

    if m is None:
        progress = _PROGRESS.findall(text)
        if progress:
            col, frac, mflops = progress[-1]
            raise PartialResult(
                f'no HPL result line (T/V N NB P Q Time Gflops): the run stopped at '
                f'fraction {frac} (column {int(col)}) of the factorisation',
                {'fraction': float(frac), 'mflops': float(mflops),
                 'gflops': float(mflops) / 1000.0})

        require(False, 'no HPL result line and no progress line: not LINPACK output')

    passed = _HPL_PASSED.findall(text)
    require(passed, 'HPL result line without the residual check (PASSED/FAILED): truncated?')
    require(all(p == 'PASSED' for p in passed), 'HPL residual check FAILED: the result is wrong')
    return {'version': 'hpl', 'gflops': float(m.group(7)), 'n': int(m.group(2)),
            'nb': int(m.group(3)), 'p': int(m.group(4)), 'q': int(m.group(5)),
            'seconds': float(m.group(6))}


def shm_linpack(text):
    '''``xlinpack_xeon64`` output: the "Performance Summary (GFlops)" table; the best
    Maximal GFlops over the problem sizes.'''
    require(text and text.strip(), 'LINPACK output is empty')
    s = text.find('Performance Summary (GFlops)')
    require(s >= 0, 'no "Performance Summary (GFlops)": the run stopped before its summary')
    h = _SHM_HEADER.search(text, s)
    require(h, 'summary without "Size LDA Align. Average Maximal" header')
    best = None
    for line in text[h.end():].splitlines():
        parts = line.split()
        if len(parts) == 5 and parts[0].isdigit():
            val = float(parts[4])
            best = val if best is None else max(best, val)
        elif parts and not parts[0].isdigit():
            break

    require(best is not None, 'LINPACK summary table has no rows')
    v = re.search(r'Intel\(R\) Optimized LINPACK Benchmark data\s*\n.*?(\d[\w.]*)', text)
    require('Residual checks PASSED' in text or 'PASSED' in text[s:],
            'LINPACK residual checks did not pass')
    return {'version': v.group(1) if v else 'unknown', 'gflops': best}
