'''Output of mdxbench's FFT application kernel (checks/apps/src/fftw-mpi-bench.c): a
2-D complex FFT with FFTW MPI, its time split into computation (local 1-D FFTs) and
communication (the MPI transpose), medians over the repetitions, in seconds.'''
import re

from . import ParseError, require

_HEAD = re.compile(r'^fftw-mpi-bench fftw=(\S+) n=(\d+) ranks=(\d+) reps=(\d+) '
                   r'check_rel_err=(\S+)\s*$', re.M)
_PAGES = re.compile(r'^pages thp_system=(\S+) thp_process=(\S+) perf_counting=(\S+)'
                    r'(?: plan=(\S+))?\s*$', re.M)
_REP = re.compile(r'^rep=(\d+) compute_s=(\S+) comm_s=(\S+) total_s=(\S+)\s*$', re.M)
_SUMMARY = re.compile(r'^summary n=(\d+) ranks=(\d+) reps=(\d+) median_compute_s=(\S+) '
                      r'median_comm_s=(\S+) median_total_s=(\S+) gflops=(\S+)\s*$', re.M)


def parse(text):
    '''``{'version', 'n', 'ranks', 'reps', 'check_rel_err', 'median_compute_s',
    'median_comm_s', 'median_total_s', 'gflops', 'comm_percent', 'total_s', 'thp_system',
    'thp_process', 'perf_counting', 'plan'}`` (``total_s``: every repetition's total, for
    the spread; the last four from the "pages" line, None in output of kernels before it
    (``plan``: before it said so): the system's transparent huge page mode, ``off`` where
    the process opted out, what perf counted: ``timed-phases`` (each repetition's timed
    phases), ``one-run`` (one transform from the first touch of its data: Guidi et al.'s
    window) or ``none``, and how FFTW planned: ``measured``, ``estimate`` or
    ``measured-wisdom`` (the measured plan, read from wisdom an earlier process wrote)).'''
    require(text and text.strip(), 'fftw-mpi-bench output is empty')
    err = re.search(r'^fftw-mpi-bench: .*$', text, re.M)
    require(not err, f'the kernel refused to run or failed: {err.group(0) if err else ""}')
    head = _HEAD.search(text)
    require(head, 'no "fftw-mpi-bench fftw=... n=... ranks=... reps=... check_rel_err=..." '
                  'header: the program did not start (compile or launch failure?)')
    version, n, ranks, reps, rel = head.groups()
    try:
        rel = float(rel)
    except ValueError:
        raise ParseError(f'check_rel_err={rel!r} is not a number') from None
    require(rel < 1e-9, f'the FFT is wrong: relative error {rel:g} against FFTW\'s own plan')
    reps_seen = [m for m in _REP.finditer(text)]
    require(len(reps_seen) == int(reps),
            f'{len(reps_seen)} of the {reps} repetitions were printed: the run was cut off')
    summ = _SUMMARY.search(text)
    require(summ, 'no "summary ..." line: the run stopped before its medians')
    require(summ.group(1, 2, 3) == (n, ranks, reps),
            f'summary n/ranks/reps {summ.group(1, 2, 3)} differ from the header {(n, ranks, reps)}')
    comp, comm, total, gflops = (float(x) for x in summ.group(4, 5, 6, 7))
    require(total > 0, 'median total time is not positive')
    return {
        'version': version.removeprefix('fftw-'), 'n': int(n), 'ranks': int(ranks),
        'reps': int(reps), 'check_rel_err': rel, 'median_compute_s': comp,
        'median_comm_s': comm, 'median_total_s': total, 'gflops': gflops,
        'comm_percent': 100.0 * comm / (comp + comm) if comp + comm > 0 else 0.0,
        'total_s': [float(m.group(4)) for m in reps_seen],
        **dict(zip(('thp_system', 'thp_process', 'perf_counting', 'plan'),
                   pages.groups() if (pages := _PAGES.search(text)) else (None,) * 4)),
    }
