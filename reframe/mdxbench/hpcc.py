'''Launch helpers for Debian's HPC Challenge (``hpcc``), the STREAM and HPL of ``local``.'''
import math


def stream_problem_size(llc_bytes, factor=4, nb=192):
    '''HPL N such that each STREAM array, summed over the processes that run at once
    (StarSTREAM), is at least ``factor`` times the last-level cache. hpcc sizes each
    process's vectors to N^2 / (3 * nprocs) doubles, so the sum is N^2 / 3 doubles whatever
    the process count: N = sqrt(3 * factor * LLC / 8), rounded up to a multiple of NB.
    (The one-process SingleSTREAM array is then factor / nprocs times the LLC.)'''
    if not llc_bytes or llc_bytes <= 0:
        raise ValueError('the partition declares no last-level cache size (extras.facts.llc_bytes)')

    n = math.sqrt(3 * factor * llc_bytes / 8)
    return int(math.ceil(n / nb) * nb)


def write_input(stagedir, n, nprocs, nb=192):
    '''Write hpccinf.txt for N on the squarest grid of nprocs; return (p, q).'''
    import os

    from mdxbench.parsers import hpcc

    p, q = hpcc.process_grid(nprocs)
    with open(os.path.join(stagedir, 'hpccinf.txt'), 'w') as fp:
        fp.write(hpcc.input_file(n, nb, p, q))

    return p, q


def linpack_input(sizes, trials=2, alignment=4):
    '''Input file of Intel's shared-memory LINPACK (``xlinpack_xeon64 -i FILE``), the
    layout of its ``lininput_xeon64``.'''
    sizes = list(sizes)
    return '\n'.join([
        'mdxbench Intel(R) LINPACK data file (layout of lininput_xeon64)',
        'Intel(R) LINPACK data',
        f'{len(sizes)}  # number of tests',
        ' '.join(map(str, sizes)) + '  # problem sizes',
        ' '.join(str(n + (8 if n % 2 == 0 else 0)) for n in sizes) + '  # leading dimensions',
        ' '.join(str(trials) for _ in sizes) + '  # times to run a test',
        ' '.join(str(alignment) for _ in sizes) + '  # alignment values (in KBytes)',
    ]) + '\n'
