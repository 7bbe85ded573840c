'''The counting windows of PerfCountersFft, measured (issue 43, item 1): the FFT kernel
built with the machine's mpicc and FFTW, run under scripts/perf-timed.sh with perf's
software events (page faults and task clock count without a hardware PMU). Guidi et al.'s
window (one transform from the first touch of its data: Table IV's page faults are the
50,000^2 x 16 B / 4 KiB of it) counts one fault a 4 KiB page of the array; the timed phases
of repetitions count none of them.'''
import os
import subprocess

import pytest

from conftest import ROOT
from mdxbench.parsers import fft, perfstat

N = 1024


@pytest.fixture(scope='module')
def kernel(tmp_path_factory):
    d = tmp_path_factory.mktemp('perf-window')
    res = subprocess.run(['mpicc', '-O2', '-o', str(d / 'fftw-mpi-bench'),
                          str(ROOT / 'checks' / 'apps' / 'src' / 'fftw-mpi-bench.c'),
                          '-lfftw3_mpi', '-lfftw3', '-lm'], capture_output=True, text=True)
    assert res.returncode == 0, res.stderr
    return d


def counted(kernel, window, reps, **env):
    out = kernel / f'perf-{window}.csv'
    res = subprocess.run(
        ['bash', str(ROOT / 'reframe' / 'mdxbench' / 'scripts' / 'perf-timed.sh'), 'perf',
         str(out), 'page-faults,task-clock', '--', str(kernel / 'fftw-mpi-bench'), str(N),
         str(reps)], capture_output=True, text=True, cwd=kernel, timeout=300,
        env=dict(os.environ, MDXBENCH_THP='off', MDXBENCH_PERF_WINDOW=window, **env))
    assert res.returncode == 0, res.stdout + res.stderr
    return fft.parse(res.stdout), perfstat.parse(out.read_text())['events']


def test_the_papers_window_counts_the_first_touch_and_the_timed_one_does_not(kernel):
    pages = N * N * 16 // 4096                  # the kernel's one N x N complex array
    run_k, run_ev = counted(kernel, 'run', 1)
    timed_k, timed_ev = counted(kernel, 'timed', 3)
    assert run_k['perf_counting'] == 'one-run' and timed_k['perf_counting'] == 'timed-phases'
    assert pages <= run_ev['page-faults'] <= pages * 1.01 + 16, (run_ev, pages)
    assert timed_ev['page-faults'] < pages * 0.01, (timed_ev, pages)
    print(f'issue 43 item 1: N={N}: one run {run_ev["page-faults"]:.0f} page faults '
          f'({pages} pages of data), timed phases x3 {timed_ev["page-faults"]:.0f}')


def test_the_papers_window_refuses_repetitions(kernel):
    res = subprocess.run([str(kernel / 'fftw-mpi-bench'), str(N), '3'], capture_output=True,
                         text=True, timeout=300, env=dict(os.environ, MDXBENCH_PERF_WINDOW='run'))
    assert res.returncode != 0
    assert 'MDXBENCH_PERF_WINDOW=run counts one transform: REPEATS must be 1, not 3' in \
        res.stderr, res.stderr


def test_the_papers_window_plans_as_fftw_measured_and_still_counts_the_first_touch(kernel):
    '''Guidi et al.'s counts are of FFTW's measured plan: one process measures it and writes
    FFTW's wisdom (MDXBENCH_PERF_WINDOW=plan), the counted one plans from that wisdom
    without measuring -- its page faults are still the data's first touch, one a page. A
    run whose wisdom holds no plan for its size fails, naming the file.'''
    wisdom = kernel / 'fft.wisdom'
    res = subprocess.run([str(kernel / 'fftw-mpi-bench'), str(N), '1'], capture_output=True,
                         text=True, timeout=300, cwd=kernel,
                         env=dict(os.environ, MDXBENCH_PERF_WINDOW='plan',
                                  MDXBENCH_FFTW_WISDOM=str(wisdom)))
    assert res.returncode == 0 and wisdom.stat().st_size > 0, res.stdout + res.stderr
    pages = N * N * 16 // 4096
    run_k, run_ev = counted(kernel, 'run', 1, MDXBENCH_FFTW_WISDOM=str(wisdom))
    assert run_k['plan'] == 'measured-wisdom' and run_k['perf_counting'] == 'one-run', run_k
    assert pages <= run_ev['page-faults'] <= pages * 1.01 + 16, (run_ev, pages)
    estimate_k, _ = counted(kernel, 'run', 1)
    assert estimate_k['plan'] == 'estimate'
    other = subprocess.run([str(kernel / 'fftw-mpi-bench'), str(N // 2), '1'],
                           capture_output=True, text=True, timeout=300,
                           env=dict(os.environ, MDXBENCH_PERF_WINDOW='run',
                                    MDXBENCH_FFTW_WISDOM=str(wisdom)))
    assert other.returncode != 0
    assert f'could not plan N={N // 2} on 1 ranks from the wisdom of {wisdom}' in other.stderr
    print(f'issue 60 item 4: N={N}: the measured plan from wisdom, {run_ev["page-faults"]:.0f} '
          f'page faults ({pages} pages of data)')
