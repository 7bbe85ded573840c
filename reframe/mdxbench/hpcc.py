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
