'''Issue 61: nccl-tests' and gpu-burn's parsers, and the throttle reading around a burn, on
outputs derived from each tool's print code (tests/fixtures/gpu/derive.py: no GPU here;
the figures a stated model's) and on the real H200's nvidia-smi -q -x. Expected values are
read off the fixtures' text, as a person reads them.'''
import pytest

from mdxbench.parsers import ParseError, gpuburn, nccl, nvsmi

GPU = 'gpu/'
BUS = [f'0000:00:{6 + i:02x}' for i in range(8)]


# --- nccl-tests ----------------------------------------------------------------------------
def test_an_all_reduce_on_eight_gpus_reads_as_printed(fixture_text):
    r = nccl.parse(fixture_text(GPU + 'nccl-tests-2.17.6-all_reduce-8gpu-no-p2p.out'))
    assert (r['version'], r['nccl_headers'], r['nccl_library']) == ('2.17.6', 23203, 23203)
    assert (r['program'], r['nthreads'], r['ngpus'], r['validation']) == \
        ('all_reduce_perf', 1, 8, 1)
    assert (r['min_bytes'], r['max_bytes'], r['iters']) == (8, 8589934592, 20)
    assert [k['bus_id'] for k in r['ranks']] == BUS
    assert [k['rank'] for k in r['ranks']] == [k['device'] for k in r['ranks']] == list(range(8))
    assert {(k['host'], k['name']) for k in r['ranks']} == {('mdx1-gpu01', 'NVIDIA H200')}
    assert len(r['rows']) == 31                     # 8 B .. 8 GiB, doubling
    first, last = r['rows'][0], r['rows'][-1]
    assert (first['size'], first['count'], first['type'], first['redop'], first['root']) == \
        (8, 2, 'float', 'sum', -1)
    assert first['out_of_place'] == first['in_place'] == {'time_us': 33.07, 'algbw': 0.0,
                                                         'busbw': 0.0, 'wrong': 0}
    # the 1 MiB row: every column where the header puts it
    mib = next(x for x in r['rows'] if x['size'] == 1048576)
    assert (mib['count'], mib['in_place']) == (262144, {'time_us': 99.34, 'algbw': 10.56,
                                                        'busbw': 18.47, 'wrong': 0})
    assert last['out_of_place'] == {'time_us': 542914.0, 'algbw': 15.82, 'busbw': 27.69,
                                    'wrong': 0}
    assert (r['out_of_bounds'], r['avg_busbw'], r['error']) == (0, 12.9543, None)
    assert nccl.figures(r) == {'busbw_largest': 27.69, 'largest_bytes': 8589934592,
                               'busbw_avg': 12.9543, 'wrong': 0}
    assert nccl.wrong_results(r) == []


def test_an_all_gather_prints_the_gathered_size_and_no_reduction(fixture_text):
    '''all_gather's size is what each rank receives, its count what each sends (8 ranks:
    the first sizes round to nothing, getCollByteCount's 16-byte multiple).'''
    r = nccl.parse(fixture_text(GPU + 'nccl-tests-2.17.6-all_gather-8gpu-no-p2p.out'))
    assert [(x['size'], x['count'], x['redop']) for x in r['rows'][:5]] == [
        (0, 0, 'none'), (0, 0, 'none'), (0, 0, 'none'), (0, 0, 'none'), (128, 4, 'none')]
    assert r['rows'][-1]['size'] == 8589934592 and r['rows'][-1]['count'] == 268435456


def test_across_two_nodes_every_rank_and_host_is_read(fixture_text):
    r = nccl.parse(fixture_text(GPU + 'nccl-tests-2.17.6-all_reduce-2x8gpu.out'))
    assert r['ngpus'] == 1 and len(r['ranks']) == 16
    assert [k['host'] for k in r['ranks']] == ['mdx1-gpu01'] * 8 + ['mdx1-gpu02'] * 8
    assert [k['device'] for k in r['ranks']] == list(range(8)) * 2
    assert nccl.figures(r)['busbw_largest'] == 12.5


def test_a_wrong_result_is_named_by_size_and_placement_whatever_the_bandwidth(fixture_text):
    '''From 64 MiB on the data check found 2.09715e+06 wrong elements (as %6g prints
    2,097,152) in both placements; the footer counts 16 such measurements. The bandwidth is
    the passing run's: only the check tells.'''
    r = nccl.parse(fixture_text(GPU + 'nccl-tests-2.17.6-all_reduce-8gpu-wrong.out'))
    ok = nccl.parse(fixture_text(GPU + 'nccl-tests-2.17.6-all_reduce-8gpu-no-p2p.out'))
    assert nccl.figures(r)['busbw_largest'] == nccl.figures(ok)['busbw_largest']
    wrong = nccl.wrong_results(r)
    assert len(wrong) == 16 and r['out_of_bounds'] == 16
    assert wrong[0] == '67108864 B out of place: 2097150 wrong element(s)'
    assert wrong[1] == '67108864 B in place: 2097150 wrong element(s)'
    assert wrong[-1].startswith('8589934592 B in place: ')
    # the footer alone, where a row's count was lost, still fails
    r['rows'] = [dict(x, out_of_place=dict(x['out_of_place'], wrong=0),
                      in_place=dict(x['in_place'], wrong=0)) for x in r['rows']]
    assert nccl.wrong_results(r) == ['16 measurement(s) out of bounds']


def test_one_wrong_element_fails(fixture_text):
    '''The smallest wrong result nccl-tests can print, one element in one placement of one
    size, fails as a million do.'''
    text = fixture_text(GPU + 'nccl-tests-2.17.6-all_reduce-8gpu-no-p2p.out')
    row = next(line for line in text.splitlines() if line.lstrip().startswith('1048576 '))
    r = nccl.parse(text.replace(row, row[:-6] + f'{1:6g}'))
    assert nccl.wrong_results(r) == ['1048576 B in place: 1 wrong element(s)']


def test_a_run_without_its_data_check_checked_nothing(fixture_text):
    '''nccl-tests -c 0 prints N/A for #wrong (writeBenchmarkLineBody's other branch):
    nothing was checked, which is no pass.'''
    text = fixture_text(GPU + 'nccl-tests-2.17.6-sendrecv-8gpu-no-p2p.out')
    lines = [line[:-8] + '     N/A' if line[:1] == ' ' and line.endswith('       0') else line
             for line in text.splitlines()]
    unchecked = '\n'.join(lines).replace('validation: 1', 'validation: 0')
    r = nccl.parse(unchecked)
    assert r['rows'][0]['in_place']['wrong'] is None and nccl.figures(r)['wrong'] is None
    assert nccl.wrong_results(r) == ['sendrecv_perf ran without its data check (#wrong N/A, '
                                     'validation 0): its results were not checked']


def test_a_cut_or_foreign_nccl_output_fails_saying_what_is_missing(fixture_text):
    text = fixture_text(GPU + 'nccl-tests-2.17.6-all_reduce-8gpu-no-p2p.out')
    cut = text[:text.index('  268435456')]
    with pytest.raises(ParseError, match=r'no footer .* after 25 row\(s\), the last of '
                                         r'134217728 B: the run stopped before its end'):
        nccl.parse(cut)
    with pytest.raises(ParseError, match='not the output of nccl-tests 2.x'):
        nccl.parse(fixture_text(GPU + 'gpu-burn-a113ce7-8gpu-60s.out'))
    with pytest.raises(ParseError, match='empty'):
        nccl.parse('')


_ALL_REDUCE = GPU + 'nccl-tests-2.17.6-all_reduce-8gpu-no-p2p.out'
_ROW_1M = ('     1048576        262144     float     sum      -1    99.34   10.56   18.47       0'
           '    99.34   10.56   18.47       0')


@pytest.mark.parametrize('column, what', [(5, 'time'), (6, 'algbw'), (7, 'busbw'),
                                          (8, '#wrong'), (9, 'time'), (10, 'algbw'),
                                          (11, 'busbw'), (12, '#wrong')])
def test_a_row_with_a_figure_that_is_no_number_fails_naming_row_and_column(
        fixture_text, column, what):
    text = fixture_text(_ALL_REDUCE)
    assert _ROW_1M in text
    cols = _ROW_1M.split()
    cols[column] = 'nan?'
    bad = '  '.join(cols)
    with pytest.raises(ParseError) as err:
        nccl.parse(text.replace(_ROW_1M, bad))
    assert str(err.value) == f'nccl-tests row "{bad}": {what} "nan?" is no number'


def test_an_average_that_is_no_number_fails_naming_its_line(fixture_text):
    text = fixture_text(_ALL_REDUCE).replace('# Avg bus bandwidth    : 12.9543',
                                             '# Avg bus bandwidth    : -nan')
    with pytest.raises(ParseError) as err:
        nccl.parse(text)
    assert str(err.value) == ('nccl-tests row "# Avg bus bandwidth    : -nan": the average '
                              'bus bandwidth "-nan" is no number')


def test_lines_around_and_between_the_rows_are_passed_over(fixture_text):
    """Under MPI and with NCCL_DEBUG set, other programs' lines share nccl-tests' stdout:
    a launcher's warning before its first line and NCCL's own INFO lines among the rows
    (``host:pid:tid [rank] NCCL INFO ...``) -- every row is still read."""
    text = fixture_text(_ALL_REDUCE)
    text = ('--------------------------------------------------------------------------\n'
            'WARNING: There was an error initializing an OpenFabrics device.\n' + text)
    text = text.replace(_ROW_1M + '\n', _ROW_1M + '\nmdx1-gpu01:4100:4100 [0] NCCL INFO '
                        'Channel 00/02 : 0 1 2 3 4 5 6 7\n')
    r = nccl.parse(text)
    assert r['version'] == '2.17.6' and len(r['rows']) == 31
    assert r['rows'][-1]['size'] == 8589934592


def test_each_missing_part_of_a_run_is_said_word_for_word(fixture_text):
    text = fixture_text(_ALL_REDUCE)
    with pytest.raises(ParseError) as err:
        nccl.parse('\n'.join(ln for ln in text.splitlines() if not ln.startswith('#  Rank')))
    assert str(err.value) == ('no "#  Rank N Group N Pid N on HOST device N [bus] NAME" line: '
                              'the device report is missing')
    with pytest.raises(ParseError) as err:
        nccl.parse(text[:text.index('           8             2')])
    assert str(err.value) == ('no result row ("size count type redop root time algbw busbw '
                              '#wrong ..."): the run stopped before its first size')
    with pytest.raises(ParseError) as err:
        nccl.parse(fixture_text(GPU + 'gpu-burn-a113ce7-8gpu-60s.out'))
    assert str(err.value) == ('no "# nccl-tests version V nccl-headers=N nccl-library=N" '
                              'line: not the output of nccl-tests 2.x (or the program did not '
                              'start)')
    # each line of the footer missing alone: the run did not end as nccl-tests ends one
    for line in ('# Out of bounds values : 0 OK', '# Avg bus bandwidth    : 12.9543',
                 '# Collective test concluded: all_reduce_perf'):
        assert line in text
        with pytest.raises(ParseError, match=r'^all_reduce_perf: no footer .* after 31 '
                                             r'row\(s\), the last of 8589934592 B'):
            nccl.parse(text.replace(line, '#'))



def test_the_headers_and_library_versions_and_an_empty_or_headless_run_word_for_word(
        fixture_text):
    """The two NCCL versions nccl-tests prints are each its own (a build against other
    headers than the library it loads: the line as it prints it then, other numbers);
    every refusal before the rows, word for word."""
    text = fixture_text(_ALL_REDUCE)
    line = '# nccl-tests version 2.17.6 nccl-headers=23203 nccl-library=23203'
    assert line in text
    r = nccl.parse(text.replace(line, line.replace('nccl-library=23203', 'nccl-library=22807')))
    assert (r['nccl_headers'], r['nccl_library']) == (23203, 22807)
    for empty in ('', '  \n\n'):
        with pytest.raises(ParseError) as err:
            nccl.parse(empty)
        assert str(err.value) == 'nccl-tests output is empty'
    start = '# Collective test starting: all_reduce_perf'
    with pytest.raises(ParseError) as err:
        nccl.parse(text.replace(start, '#'))
    assert str(err.value) == 'no "# Collective test starting:" line'
    [params] = [ln for ln in text.splitlines() if ln.startswith('# nThread ')]
    with pytest.raises(ParseError) as err:
        nccl.parse(text.replace(params, '#'))
    assert str(err.value) == 'no "# nThread N nGpus N minBytes ... validation: N" line'


def test_the_last_error_nccl_printed_at_the_end_is_read(fixture_text):
    """nccl-tests ends a run with ``writeErrors`` (src/util.cu of 2.17.6): ``# error: `` and
    NCCL's last error (ncclGetLastError) where it has one, else an empty line -- what the
    fixtures, runs without error, end with. That last line as writeErrors prints it with
    an error: the text is read, trimmed; none is None."""
    text = fixture_text(_ALL_REDUCE)
    assert nccl.parse(text)['error'] is None and text.endswith('all_reduce_perf\n\n')
    told = text[:-1] + "# error: NET/IB : No device found. \n"
    assert nccl.parse(told)['error'] == 'NET/IB : No device found.'
    # only at the start of a line: the text of a row or an INFO line is not the footer's
    assert nccl.parse(text.replace('# Avg bus', 'x # error: y\n# Avg bus'))['error'] is None


# --- gpu-burn ------------------------------------------------------------------------------
def test_gpu_burn_on_eight_gpus_reads_each_gpu(fixture_text):
    '''The last report of the run: "2988 (53600 Gflop/s) - 2739 (53546 Gflop/s) - ...";
    every GPU OK, no error, 62 C at the end.'''
    r = gpuburn.parse(fixture_text(GPU + 'gpu-burn-a113ce7-8gpu-60s.out'))
    assert r['seconds'] == 60 and r['doubles'] is True and len(r['gpus']) == 8
    assert [g['gflops'] for g in r['gpus'][:3]] == [53600.0, 53546.0, 53493.0]
    assert {g['verdict'] for g in r['gpus']} == {'OK'}
    assert {g['errors'] for g in r['gpus']} == {0}
    assert {g['temp_c'] for g in r['gpus']} == {62}
    assert not any(g['died'] for g in r['gpus'])
    assert gpuburn.faults(r) == []


def test_the_first_batch_and_stale_reports_are_no_figure(fixture_text):
    '''A report repeats every GPU's latest batch (GPU 1's "0 (0 Gflop/s)" before its first);
    GPU 0's first batch, with the start in it, printed 41437 Gflop/s: the figure is the
    median of its later batches, each counted once.'''
    text = fixture_text(GPU + 'gpu-burn-a113ce7-8gpu-60s.out')
    assert "proc'd: 249 (41437 Gflop/s) - 0 (0 Gflop/s)" in text
    r = gpuburn.parse(text)
    assert r['gpus'][0]['gflops'] == 53600.0 and r['gpus'][1]['gflops'] == 53546.0
    # GPU 0 finished 12 batches (2988 / 249); 11 after the first
    assert r['gpus'][0]['reports'] == 2988 // 249 - 1


def test_a_faulty_gpu_is_named_with_its_errors_and_bus_id(fixture_text):
    r = gpuburn.parse(fixture_text(GPU + 'gpu-burn-a113ce7-8gpu-60s-faulty-gpu3.out'))
    bad = [g for g in r['gpus'] if g['verdict'] != 'OK']
    assert [g['index'] for g in bad] == [3]
    assert r['gpus'][3]['errors'] > 0 and r['gpus'][3]['errors'] % 4096 == 0
    assert all(g['errors'] == 0 for g in r['gpus'] if g['index'] != 3)
    faults = gpuburn.faults(r, [f'00000000:00:{6 + i:02X}.0' for i in range(8)])
    assert faults == [f'GPU 3 (00000000:00:09.0): FAULTY, {r["gpus"][3]["errors"]} wrong '
                      'result(s)']


def test_a_gpu_whose_process_died_fails(fixture_text):
    '''gpu-burn prints proc'd -1 and "(DIED!)" for a GPU whose process ended.'''
    text = fixture_text(GPU + 'gpu-burn-a113ce7-1gpu-60s.out')
    last = text.rindex("proc'd: ")
    end = text.index('temps:', last)
    died = text[:last] + "proc'd: -1 (0 Gflop/s)   errors: 0  (DIED!)   " + text[end:]
    r = gpuburn.parse(died)
    assert r['gpus'][0]['died'] and gpuburn.faults(r) == ['GPU 0: its process died']


def test_a_burn_cut_before_its_verdict_fails(fixture_text):
    text = fixture_text(GPU + 'gpu-burn-a113ce7-8gpu-60s.out')
    with pytest.raises(ParseError, match=r'no "Tested N GPUs:" verdict after \d+ report\(s\)'):
        gpuburn.parse(text[:text.index('Killing processes')])
    with pytest.raises(ParseError, match='not gpu-burn output'):
        gpuburn.parse(fixture_text(GPU + 'nccl-tests-2.17.6-sendrecv-8gpu-no-p2p.out'))


def test_errors_are_summed_over_the_summaries_that_reset_them(fixture_text):
    """gpu-burn zeroes its error counts after each "Summary at:" line (its listenClients):
    GPU 3's count at the last report before each summary is 0, 0, 4096, 8192, 8192, 8192
    in the faulty fixture (read off its text): 28672 wrong results in all, not the 8192
    its last report shows."""
    r = gpuburn.parse(fixture_text(GPU + 'gpu-burn-a113ce7-8gpu-60s-faulty-gpu3.out'))
    assert r['gpus'][3]['errors'] == 4096 + 8192 + 8192 + 8192


def _gpu_entries(text, gpu, old, new):
    """``text`` with GPU ``gpu``'s entry of every report's ``old`` field (proc'd, errors or
    temps) replaced by ``new``, as gpu-burn's print code writes one (a report is a line of
    its own once read as text: its carriage return a newline)."""
    ends = {"proc'd": '  errors: ', 'errors': '  temps: ', 'temps': None}
    out = []
    for line in text.split('\n'):
        if "proc'd: " in line and f'{old}: ' in line:
            head, rest = line.split(f'{old}: ', 1)
            cut = rest.index(ends[old]) if ends[old] else len(rest)
            parts = rest[:cut].split(' - ')
            parts[gpu] = new
            line = head + f'{old}: ' + ' - '.join(parts) + rest[cut:]
        out.append(line)
    return '\n'.join(out)



def test_a_windows_count_is_its_last_reports_even_when_it_grew_just_before_the_summary(
        fixture_text):
    """The faulty run with the last window's reports after GPU 3's count grew to 8192 left
    out (a window whose count grows in its last report, as when a batch ends just before
    the summary): the sum is still the windows' last counts, 28672 -- not the count of the
    report before the last (4096 there)."""
    text = fixture_text(GPU + 'gpu-burn-a113ce7-8gpu-60s-faulty-gpu3.out')
    end = text.rindex('\n\tSummary at:')
    grew = text.index('errors: 0 - 0 - 0 - 8192', text.rindex('errors: 0 - 0 - 0 - 4096', 0, end))
    # (read as text, gpu-burn's carriage returns are line ends)
    short = text[:text.index('\n', grew)] + text[end:]
    window = short[short.rindex('Summary at:', 0, short.rindex('Summary at:')):
                   short.rindex('Summary at:')]
    counts = [seg.split('errors: ')[1].split(' - ')[3].split()[0]
              for seg in window.splitlines() if 'errors: ' in seg]
    assert counts[-2:] == ['4096', '8192'], counts[-3:]
    assert gpuburn.parse(short)['gpus'][3]['errors'] == 28672


def test_a_temperature_not_read_yet_and_a_gpu_that_never_finished_a_batch(fixture_text):
    """Where gpu-burn has no temperature for a GPU it prints "--" (its print code:
    ``clientTemp != 0 ? "%d C " : "-- "``); a GPU whose process never reported a batch stays
    at "0 (0 Gflop/s)": no figure and no temperature, not a crash."""
    text = fixture_text(GPU + 'gpu-burn-a113ce7-8gpu-60s.out')
    text = _gpu_entries(text, 7, 'temps', '-- ')
    text = _gpu_entries(text, 7, "proc'd", '0 (0 Gflop/s) ')
    r = gpuburn.parse(text)
    assert r['gpus'][7]['temp_c'] is None and r['gpus'][7]['gflops'] is None
    assert r['gpus'][7]['reports'] == 0
    assert r['gpus'][6]['temp_c'] == 62 and r['gpus'][6]['gflops'] == 53278.0


@pytest.mark.parametrize('field, entry', [("proc'd", '249 (41437 GFLOPS) '),
                                          ('errors', 'x ')])
def test_a_report_with_an_entry_gpu_burn_does_not_print_fails_naming_it(fixture_text, field,
                                                                          entry):
    text = _gpu_entries(fixture_text(GPU + 'gpu-burn-a113ce7-8gpu-60s.out'), 2, field, entry)
    with pytest.raises(ParseError, match=r'^gpu-burn report "10\.0%  proc\'d: .*": not '
                                         r'"N \(G Gflop/s\)" and "E" for every GPU$'):
        gpuburn.parse(text)


def test_what_is_not_a_whole_gpu_burn_run_fails_saying_what_is_missing(fixture_text):
    text = fixture_text(GPU + 'gpu-burn-a113ce7-8gpu-60s.out')
    with pytest.raises(ParseError, match='^gpu-burn output is empty$'):
        gpuburn.parse(' \n\t\n')
    with pytest.raises(ParseError, match=r'^no "Burning for N seconds\." line: not gpu-burn '
                                         r'output \(or it did not start\)$'):
        gpuburn.parse(text.replace('Burning for', 'Burnt for'))
    with pytest.raises(ParseError, match=r'^gpu-burn: no progress report \("proc\'d: \.\.\. '
                                         r'errors: \.\.\. temps: \.\.\."\): no GPU finished '
                                         r'a batch$'):
        gpuburn.parse(text[:text.index("10.0%  proc'd")])
    # the fixture's last report is at 100.0%
    with pytest.raises(ParseError, match=r'after \d+ report\(s\), the last at 100\.0%: the '
                                         r'run stopped before its end$'):
        gpuburn.parse(text[:text.index('Killing processes')])
    last = text.rindex("proc'd: ")
    seven = text[:last] + "proc'd: " + text[last:].split(' - ', 1)[1]
    seven = seven[:seven.rindex('errors: ')] + 'errors: ' + \
        seven[seven.rindex('errors: '):].split(' - ', 1)[1]
    seven = seven[:seven.rindex('temps: ')] + 'temps: ' + \
        seven[seven.rindex('temps: '):].split(' - ', 1)[1]
    with pytest.raises(ParseError, match='^gpu-burn: its reports name different numbers of '
                                         'GPUs$'):
        gpuburn.parse(seven)
    with pytest.raises(ParseError, match=r'^gpu-burn: "Tested 7 GPUs" with verdicts for GPUs '
                                         r'\[0, 1, 2, 3, 4, 5, 6, 7\], its reports name 8$'):
        gpuburn.parse(text.replace('Tested 8 GPUs:', 'Tested 7 GPUs:'))


# --- the clocks held down during the burn (nvidia-smi -q -x before and after) ---------------
def _held(xml, reason, us):
    tag = nvsmi.EVENT_COUNTERS[reason]
    old = f'<{tag}>0 us</{tag}>'
    assert old in xml, tag
    return xml.replace(old, f'<{tag}>{us} us</{tag}>')


def test_the_real_h200_counts_no_throttle_and_reads_its_temperature(fixture_text):
    g = nvsmi.parse_xml(fixture_text(GPU + 'nvidia-smi-q-h200.xml'))[0]
    assert (g['temperature.gpu'], g['clocks.sm']) == (38, 345)
    assert g['event_us'] == dict.fromkeys(nvsmi.EVENT_COUNTERS, 0)


def test_a_gpu_held_down_by_heat_during_the_burn_fails_and_the_power_cap_is_recorded(
        fixture_text):
    '''12.5 s of hardware thermal slowdown between the readings fails at a limit of 0 s and
    of 12 s, passes at 12.5 s (the most allowed is allowed); 40 s at the software power cap
    is recorded, not judged, where the limits name it not.'''
    real = fixture_text(GPU + 'nvidia-smi-q-h200.xml')
    after = _held(_held(real, 'hw_thermal_slowdown', 12500000), 'sw_power_cap', 40000000)
    before, later = nvsmi.parse_xml(real), nvsmi.parse_xml(after)
    held, wrong = nvsmi.throttled(before, later, {'hw_thermal_slowdown': 0})
    assert held['00000000:00:06.0']['hw_thermal_slowdown'] == 12.5
    assert held['00000000:00:06.0']['sw_power_cap'] == 40.0
    assert wrong == ['GPU 0 (00000000:00:06.0): hw_thermal_slowdown for 12.5 s under the '
                     'load, at most 0 s allowed']
    assert nvsmi.throttled(before, later, {'hw_thermal_slowdown': 12})[1] != []
    assert nvsmi.throttled(before, later, {'hw_thermal_slowdown': 12.5})[1] == []
    assert nvsmi.throttled(before, later, None)[1] == []
    with pytest.raises(ParseError, match='unknown reason'):
        nvsmi.throttled(before, later, {'too_hot': 0})


def test_the_sites_throttle_limits_fail_heat_and_the_brake_not_the_power_cap(fixture_text):
    '''mdx1's and gpunode's extras.gpu_burn.max_throttle_s: any second of thermal slowdown
    or power brake fails; the software power cap, which a DGEMM at the power limit meets
    on any GPU, does not.'''
    import yaml
    from mdxbench import REPO_ROOT

    real = fixture_text(GPU + 'nvidia-smi-q-h200.xml')
    before = nvsmi.parse_xml(real)
    for system in ('mdx1', 'gpunode'):
        doc = yaml.safe_load((REPO_ROOT / 'site-configs' / 'systems' / f'{system}.yaml')
                             .read_text())
        limits = doc['partitions'][0]['extras']['gpu_burn']['max_throttle_s']
        for reason in ('hw_thermal_slowdown', 'sw_thermal_slowdown', 'hw_power_brake_slowdown'):
            after = nvsmi.parse_xml(_held(real, reason, 1000000))
            assert len(nvsmi.throttled(before, after, limits)[1]) == 1, (system, reason)
        capped = nvsmi.parse_xml(_held(real, 'sw_power_cap', 250000000))
        assert nvsmi.throttled(before, capped, limits)[1] == [], system


def test_a_gpu_missing_from_a_reading_is_named(fixture_text):
    eight = nvsmi.parse_xml(fixture_text(GPU + 'nvidia-smi-q-8gpu.xml'))
    _, wrong = nvsmi.throttled(eight, eight[:7], {})
    assert wrong == ['GPU 7 (00000000:00:0D.0): not in the reading after the load']


def test_the_time_held_is_what_the_counter_grew_by_and_a_counter_one_reading_lacks_is_not_judged(
        fixture_text):
    '''The counters count from the driver's start: 5 s of thermal slowdown before the load
    and 17.5 s after it is 12.5 s under the load. A counter the first reading lacks (an
    older driver's, "N/A") is not compared, even where a limit names it.'''
    real = fixture_text(GPU + 'nvidia-smi-q-h200.xml')
    before = _held(real, 'hw_thermal_slowdown', 5000000)
    tag = nvsmi.EVENT_COUNTERS['sw_power_cap']
    before = before.replace(f'<{tag}>0 us</{tag}>', f'<{tag}>N/A</{tag}>')
    after = _held(_held(real, 'hw_thermal_slowdown', 17500000), 'sw_power_cap', 3000000)
    held, wrong = nvsmi.throttled(nvsmi.parse_xml(before), nvsmi.parse_xml(after),
                                  {'hw_thermal_slowdown': 12, 'sw_power_cap': 0})
    assert held['00000000:00:06.0']['hw_thermal_slowdown'] == 12.5
    assert 'sw_power_cap' not in held['00000000:00:06.0']
    assert wrong == ['GPU 0 (00000000:00:06.0): hw_thermal_slowdown for 12.5 s under the '
                     'load, at most 12 s allowed']


def test_a_gpu_new_after_the_load_is_named_and_the_others_still_judged(fixture_text):
    '''GPU 0 is not in the reading before the load (it fell off the bus and came back);
    GPU 3's 2 s of power brake is still found.'''
    xml = fixture_text(GPU + 'nvidia-smi-q-8gpu.xml')
    eight = nvsmi.parse_xml(xml)
    later = nvsmi.parse_xml(xml)
    later[3]['event_us'] = dict(later[3]['event_us'], hw_power_brake_slowdown=2000000)
    _, wrong = nvsmi.throttled(eight[1:], later, {'hw_power_brake_slowdown': 0})
    assert wrong == ['GPU 0 (00000000:00:06.0): not in the reading before the load',
                     'GPU 3 (00000000:00:09.0): hw_power_brake_slowdown for 2.0 s under the '
                     'load, at most 0 s allowed']


def test_unknown_throttle_reasons_and_a_counter_that_is_no_count_are_refused_naming_them(
        fixture_text):
    real = fixture_text(GPU + 'nvidia-smi-q-h200.xml')
    gpus = nvsmi.parse_xml(real)
    with pytest.raises(ParseError) as err:
        nvsmi.throttled(gpus, gpus, {'too_hot': 0, 'hot': 1})
    assert str(err.value) == ('throttle limits: unknown reason(s) hot, too_hot; known: '
                              'sw_power_cap, sync_boost, sw_thermal_slowdown, '
                              'hw_thermal_slowdown, hw_power_brake_slowdown')
    tag = nvsmi.EVENT_COUNTERS['sync_boost']
    with pytest.raises(ParseError) as err:
        nvsmi.parse_xml(real.replace(f'<{tag}>0 us</{tag}>', f'<{tag}>lots</{tag}>'))
    assert str(err.value) == (f"nvidia-smi -q -x, GPU 0 (00000000:00:06.0): <{tag}> = "
                              "'lots': expected a count")


# --- acceptance: the burn-in's per-GPU figures, judged against the node's other GPUs -------
def _burn_records(fixture_text, gpu, name, factor):
    '''The burn of 8 GPUs as GpuBurn records it (its per_gpu_table: unit and direction),
    GPU ``gpu``'s ``name`` figure multiplied by ``factor``: gflops from the derived run,
    temp_end the real H200's idle 38 C after it (every GPU alike).'''
    import datetime as dt
    import json

    from mdxbench import catalog
    from mdxbench.gpu import per_gpu_var
    from mdxbench.post.store import records

    table = catalog.check_classes()['GpuBurn'].per_gpu_table.default_value
    burn = gpuburn.parse(fixture_text(GPU + 'gpu-burn-a113ce7-8gpu-60s.out'))
    temp = nvsmi.parse_xml(fixture_text(GPU + 'nvidia-smi-q-h200.xml'))[0]['temperature.gpu']
    t0 = dt.datetime(2026, 12, 2, 3, 0, tzinfo=dt.timezone.utc)
    rows = []
    for g in burn['gpus']:
        for fig, value in (('gflops', g['gflops']), ('temp_end', temp)):
            _, unit, better = table[fig]
            rows.append({'time': (t0 + dt.timedelta(seconds=g['index'])).isoformat(),
                         'system': 'mdx1', 'partition': 'gpu', 'environ': 'spack',
                         'check': 'GpuBurn', 'perf_var': per_gpu_var(g['index'], fig),
                         'value': value * (factor if (g['index'], fig) == (gpu, name) else 1),
                         'unit': unit, 'better': better, 'ref': None, 'result': 'pass',
                         'jobid': '1', 'nodes': 'mdx1-gpu01', 'tags': 'acceptance,gpu,burn-in',
                         'meta': json.dumps({'tags': ['acceptance', 'gpu', 'burn-in']})})
    return records.frame(rows)


@pytest.mark.parametrize('name, factor, fails', [
    ('gflops', 0.6, True), ('gflops', 1.4, False),       # slower fails, faster does not
    ('temp_end', 1.4, True), ('temp_end', 0.6, False),   # hotter fails, cooler does not
])
def test_a_burned_gpu_slower_or_hotter_than_its_peers_fails_naming_it(
        fixture_text, name, factor, fails):
    '''GpuBurn's figures enter node acceptance as every per-GPU figure does (verdicts.judge,
    PEER_GPU_EFFECT): GPU 6 at 60% of its peers' Gflop/s, or 40% hotter than they end the
    burn, fails the node naming GPU 6; the other way round is no failure (Gflop/s: higher is
    better; the end temperature: lower).'''
    from mdxbench.post.fleet import verdicts

    [v] = verdicts.judge(_burn_records(fixture_text, 6, name, factor))
    assert (v['verdict'] == 'fail') is fails, v
    if fails:
        [reason] = v['reasons']
        assert reason.startswith(f'GpuBurn gpu6_{name}=') and 'GPU 6 40% worse' in reason, reason
