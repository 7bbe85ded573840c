'''HPC Challenge (hpcc 1.5, Debian's package): the ``Summary section`` of ``hpccoutf.txt``.'''
import re

from . import ParseError, require

_BEGIN = 'Begin of Summary section.'
_END = 'End of Summary section.'
_VERSION = re.compile(r'HPC Challenge Benchmark version (\S+)')


def parse_summary(text):
    '''Return ``{'version': str, 'values': {key: float|str}}`` from an hpcc output file.

    The summary must be complete (both its begin and end markers), report ``Success=1``,
    and hold every key a caller may ask for as a number.
    '''
    require(text and text.strip(), 'hpcc output is empty: expected hpccoutf.txt with a '
            f'{_BEGIN!r} block')
    begin = text.find(_BEGIN)
    require(begin >= 0, f'no {_BEGIN!r} in the hpcc output: the run did not finish or '
            'this is not hpcc 1.5 output')
    end = text.find(_END, begin)
    require(end >= 0, f'{_BEGIN!r} without {_END!r}: truncated hpcc output')
    values = {}
    for line in text[begin + len(_BEGIN):end].splitlines():
        line = line.strip()
        if not line:
            continue

        key, sep, val = line.partition('=')
        require(sep, f'unexpected line in the hpcc summary: {line!r} (expected key=value)')
        try:
            values[key] = float(val)
        except ValueError:
            values[key] = val

    m = _VERSION.search(text)
    if m:
        version = m.group(1)
    elif {'VersionMajor', 'VersionMinor', 'VersionMicro'} <= values.keys():
        version = '{:.0f}.{:.0f}.{:.0f}'.format(
            values['VersionMajor'], values['VersionMinor'], values['VersionMicro'])
    else:
        raise ParseError('hpcc output names no version (expected "HPC Challenge '
                         'Benchmark version X" or VersionMajor/Minor/Micro)')

    require(values.get('Success') == 1.0,
            f"hpcc summary reports Success={values.get('Success')!r}, expected 1")
    return {'version': version, 'values': values}


def summary_value(parsed, key):
    '''A numeric summary value, or ParseError naming the missing key.'''
    val = parsed['values'].get(key)
    if not isinstance(val, float):
        raise ParseError(f'hpcc summary has no numeric {key!r}' +
                         ('' if val is None else f' (got {val!r})'))

    return val


def stream(text):
    '''STREAM figures (GB/s): all processes (StarSTREAM per process x processes) and one
    process alone (SingleSTREAM), as in Guidi et al., Table II.'''
    parsed = parse_summary(text)
    nprocs = summary_value(parsed, 'CommWorldProcs')
    out = {'version': parsed['version'],
           'vector_size': summary_value(parsed, 'STREAM_VectorSize'),
           'processes': nprocs}
    for kernel in ('Copy', 'Scale', 'Add', 'Triad'):
        out[f'{kernel.lower()}'] = summary_value(parsed, f'StarSTREAM_{kernel}') * nprocs
        out[f'{kernel.lower()}_1t'] = summary_value(parsed, f'SingleSTREAM_{kernel}')

    return out


def hpl(text):
    '''HPL figures: GFLOPS, N, NB and seconds.'''
    parsed = parse_summary(text)
    return {'version': parsed['version'],
            'gflops': summary_value(parsed, 'HPL_Tflops') * 1000.0,
            'n': summary_value(parsed, 'HPL_N'),
            'nb': summary_value(parsed, 'HPL_NB'),
            'seconds': summary_value(parsed, 'HPL_time'),
            'processes': summary_value(parsed, 'CommWorldProcs')}


def input_file(n, nb, p, q):
    '''The text of ``hpccinf.txt`` for one HPL problem size N, block NB and a P x Q grid
    (the layout of Debian's /usr/share/doc/hpcc/examples/_hpccinf.txt).'''
    if p * q < 1 or n < nb:
        raise ValueError(f'invalid hpcc input: N={n} NB={nb} P={p} Q={q}')

    lines = [
        'HPLinpack benchmark input file',
        'Innovative Computing Laboratory, University of Tennessee',
        'HPL.out      output file name (if any)',
        '8            device out (6=stdout,7=stderr,file)',
        '1            # of problems sizes (N)',
        f'{n}         Ns',
        '1            # of NBs',
        f'{nb}        NBs',
        '0            PMAP process mapping (0=Row-,1=Column-major)',
        '1            # of process grids (P x Q)',
        f'{p}         Ps',
        f'{q}         Qs',
        '16.0         threshold',
        '1            # of panel fact',
        '2            PFACTs (0=left, 1=Crout, 2=Right)',
        '1            # of recursive stopping criterium',
        '4            NBMINs (>= 1)',
        '1            # of panels in recursion',
        '2            NDIVs',
        '1            # of recursive panel fact.',
        '1            RFACTs (0=left, 1=Crout, 2=Right)',
        '1            # of broadcast',
        '1            BCASTs (0=1rg,1=1rM,2=2rg,3=2rM,4=Lng,5=LnM)',
        '1            # of lookahead depth',
        '1            DEPTHs (>=0)',
        '2            SWAP (0=bin-exch,1=long,2=mix)',
        '64           swapping threshold',
        '0            L1 in (0=transposed,1=no-transposed) form',
        '0            U  in (0=transposed,1=no-transposed) form',
        '1            Equilibration (0=no,1=yes)',
        '8            memory alignment in double (> 0)',
        '##### This line (no. 32) is ignored (it serves as a separator). ######',
        '0                      \t\tNumber of additional problem sizes for PTRANS',
        '1200 10000 30000        \tvalues of N',
        '0                       \tnumber of additional blocking sizes for PTRANS',
        '40 9 8 13 13 20 16 32 64       \tvalues of NB',
    ]
    return '\n'.join(lines) + '\n'


def process_grid(nprocs):
    '''The most square P x Q grid with P <= Q.'''
    p = int(nprocs ** 0.5)
    while nprocs % p:
        p -= 1

    return p, nprocs // p
