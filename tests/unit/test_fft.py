'''The FFT application kernel's output: captured from checks/apps/src/fftw-mpi-bench.c,
built with Debian's Open MPI and FFTW 3.3.10 and run on this machine.'''
import pytest

from mdxbench.parsers import ParseError, fft

GOOD = 'fftw/fftw-mpi-bench-3.3.10-np2-n2048.out'


def test_medians_and_split(fixture_text):
    r = fft.parse(fixture_text(GOOD))
    assert (r['n'], r['ranks'], r['reps'], r['version']) == (2048, 2, 10, '3.3.10-sse2-avx')
    assert r['median_compute_s'] == pytest.approx(1.381345e-02)
    assert r['median_comm_s'] == pytest.approx(1.244769e-02)
    assert r['median_total_s'] == pytest.approx(2.629996e-02)
    assert r['gflops'] == pytest.approx(17.5427)
    assert r['comm_percent'] == pytest.approx(100 * 1.244769 / (1.381345 + 1.244769))
    assert len(r['total_s']) == 10 and min(r['total_s']) == pytest.approx(2.548458e-02)
    # the printed GFLOPS are 5 N^2 log2(N^2) over the median total time
    assert r['gflops'] == pytest.approx(5 * 2048**2 * 22 / r['median_total_s'] / 1e9, rel=1e-4)


def test_refused_size(fixture_text):
    with pytest.raises(ParseError, match='refused to run or failed: .*N=3 leaves some of the 2'):
        fft.parse(fixture_text('fftw/fftw-mpi-bench-3.3.10-np2-n3-refused.out'))


def test_cut_off_runs(fixture_text):
    text = fixture_text(GOOD)
    with pytest.raises(ParseError, match='no "summary'):
        fft.parse(text[:text.index('summary')])
    with pytest.raises(ParseError, match='9 of the 10 repetitions'):
        fft.parse(text[:text.index('rep=10')])
    with pytest.raises(ParseError, match='header'):
        fft.parse(text[text.index('rep=1 '):])


def test_other_output(fixture_text):
    with pytest.raises(ParseError, match='empty'):
        fft.parse('')
    with pytest.raises(ParseError, match='header'):
        fft.parse(fixture_text('sockperf/sockperf-3.7-ping-pong-tcp.out'))


def test_pages_line_thp_and_perf_counting(fixture_text):
    '''The kernel says the system's THP mode, whether it opted out (MDXBENCH_THP=off) and
    whether perf counted the timed phases only; output of kernels before that line has
    none of it.'''
    old = fft.parse(fixture_text(GOOD))
    assert (old['thp_system'], old['thp_process'], old['perf_counting']) == (None,) * 3
    mpi = fft.parse(fixture_text('fftw/fftw-mpi-bench-3.3.10-np2-n2048-pages.out'))
    assert (mpi['thp_system'], mpi['thp_process'], mpi['perf_counting']) == \
        ('madvise', 'system', 'none')
    timed = fft.parse(fixture_text('fftw/fftw-mpi-bench-3.3.10-np1-n1024-thp-off-perf-timed.out'))
    assert (timed['thp_system'], timed['thp_process'], timed['perf_counting']) == \
        ('madvise', 'off', 'timed-phases')
    assert (timed['n'], timed['ranks'], timed['reps']) == (1024, 1, 3)
    one = fft.parse(fixture_text('fftw/fftw-mpi-bench-3.3.10-np1-n1024-thp-off-perf-run.out'))
    assert (one['perf_counting'], one['reps'], len(one['total_s'])) == ('one-run', 1, 1)


def test_the_plan_the_kernel_says_it_made(fixture_text):
    '''How FFTW planned: measured from the wisdom an earlier process wrote (the paper's
    window since issue 60), FFTW's estimate, or measured; output before the kernel said so
    has None. The wisdom-writing run prints its own line, not a result.'''
    run = fft.parse(fixture_text('fftw/fftw-mpi-bench-3.3.10-np1-n1024-thp-off-perf-run-wisdom.out'))
    assert (run['plan'], run['perf_counting'], run['thp_process']) == \
        ('measured-wisdom', 'one-run', 'off')
    before = fft.parse(fixture_text('fftw/fftw-mpi-bench-3.3.10-np1-n1024-thp-off-perf-run.out'))
    assert before['plan'] is None and before['perf_counting'] == 'one-run'
    plan = fixture_text('fftw/fftw-mpi-bench-3.3.10-np1-n1024-plan-wisdom.out')
    assert plan.startswith('fftw-mpi-bench plan n=1024 ranks=1 wisdom=fft.wisdom')
    with pytest.raises(ParseError, match='no "fftw-mpi-bench fftw='):
        fft.parse(plan)
    # the job's standard output: the wisdom run's line, then the counted run's
    both = fft.parse(plan + fixture_text(
        'fftw/fftw-mpi-bench-3.3.10-np1-n1024-thp-off-perf-run-wisdom.out'))
    assert both['plan'] == 'measured-wisdom'
