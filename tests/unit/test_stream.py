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


def test_runs_repeated_give_the_best_of_each_kernel_over_them(upstream_output):
    """StreamOmp made longer (``repetitions``) runs the binary again: its real output of
    three runs gives each kernel's best rate of the three (as STREAM takes the best of its
    iterations), each from whichever run had it; every run must be whole and validate."""
    text = upstream_output('stream-5.10-spack-omp2-x3.out')
    r = stream.parse(text)
    assert (r['version'], r['array_elements'], r['threads'], r['runs']) == \
        ('5.10', 120000000, 2, 3)
    # the best of the three runs, MB/s as printed: Copy and Add and Triad of the third,
    # Scale of the second
    assert [r[k] for k in stream.KERNELS_LOWER] == pytest.approx(
        [40265.1 / 1e3, 36244.2 / 1e3, 33768.8 / 1e3, 33281.3 / 1e3])
    # one run alone is that run's figures
    second = text.index('STREAM version', text.index('STREAM version') + 1)
    assert stream.parse(text[:second])['runs'] == 1
    assert stream.parse(text[:second])['copy'] == pytest.approx(39.1397)
    # a run cut short (the job's time limit) is an error naming it, not a smaller best
    with pytest.raises(ParseError, match='STREAM run 3 of 3: .*Solution Validates'):
        stream.parse(text[:text.rindex('Solution Validates')])
    # runs of other arrays are not repetitions of one run
    other = upstream_output('stream-5.10-omp2.out')
    with pytest.raises(ParseError, match='run 2 of 2: array_elements 20000000'):
        stream.parse(text[:second] + other)


def _lines_without(text, start):
    return ''.join(ln for ln in text.splitlines(keepends=True) if not ln.startswith(start))


@pytest.mark.parametrize('alter, message', [
    (lambda t: '\n', 'STREAM output is empty'),
    (lambda t: t.replace('STREAM version $Revision: 5.10 $', 'STREAM version 5.10'),
     'no "STREAM version $Revision: 5.x $" banner: not McCalpin STREAM output'),
    (lambda t: t.replace('$Revision: 5.10 $', '$Revision: 4.0 $'),
     'STREAM version 4.0: only 5.x is understood'),
    (lambda t: _lines_without(t, 'Array size'), 'no "Array size = N (elements)" line'),
    (lambda t: t[:t.index('Function')],
     'no "Function  Best Rate MB/s  Avg time  Min time  Max time" table: the run stopped '
     'before its results'),
    (lambda t: t[:t.index('Scale:')] + t[t.index('Add:'):],
     'no complete "Scale:" row in the STREAM table (truncated output?)'),
    (lambda t: _lines_without(t, 'Solution Validates'),
     'no "Solution Validates" line: the run stopped before validating its arrays'),
], ids=['empty', 'banner', 'version', 'array-size', 'table', 'row', 'validates'])
def test_each_refusal_word_for_word(upstream_output, alter, message):
    '''The real one-thread output, cut or altered once each.'''
    with pytest.raises(ParseError) as err:
        stream.parse(alter(upstream_output('stream-5.10-omp1.out')))
    assert str(err.value) == message


def test_a_run_whose_arrays_fail_streams_own_check_is_refused_with_its_words(upstream_output):
    '''STREAM found an element of a[] wrong after its kernels (a fault injected in memory,
    as a bad DIMM would): its rates are no measurement of a working node; the refusal quotes
    STREAM's line.'''
    with pytest.raises(ParseError) as err:
        stream.parse(upstream_output('stream-5.10-spack-failed-validation.out'))
    assert str(err.value) == ('STREAM results are wrong: Failed Validation on array a[], '
                              'AvgRelAbsErr > epsilon (1.000000e-13)')


def test_a_serial_build_counts_one_thread(upstream_output):
    '''STREAM without OpenMP prints no thread lines: one thread.'''
    r = stream.parse(_lines_without(upstream_output('stream-5.10-omp2.out'), 'Number of Threads'))
    assert r['threads'] == 1 and r['runs'] == 1


def test_runs_of_another_thread_count_are_not_repetitions(upstream_output):
    one, two = upstream_output('stream-5.10-omp1.out'), upstream_output('stream-5.10-omp2.out')
    with pytest.raises(ParseError) as err:
        stream.parse(one + two)
    assert str(err.value) == ('STREAM run 2 of 2: threads 2, run 1 1: not repetitions of one '
                              'run')
    with pytest.raises(ParseError) as err:
        stream.parse(one + two[:two.index('Function')])
    assert str(err.value).startswith('STREAM run 2 of 2: no "Function  Best Rate MB/s')
