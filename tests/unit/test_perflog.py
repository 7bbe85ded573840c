import json

import pytest

from mdxbench import perflog


def _line(fixture_text):
    lines = fixture_text('perflogs/local-debug-HpccStream.log').splitlines(keepends=True)
    assert perflog.is_header(lines[0])
    return lines[1]


def test_real_perflog_line_gives_one_record_per_perf_variable(fixture_text):
    recs = perflog.parse_line(_line(fixture_text))
    assert [r['perf_var'] for r in recs] == ['copy', 'scale', 'add', 'triad',
                                             'copy_1t', 'triad_1t']
    r = recs[3]
    assert r['system'] == 'local' and r['partition'] == 'debug'
    assert r['environ'] == 'native' and r['check'] == 'HpccStream'
    assert r['perf_value'] == pytest.approx(61.4292)
    assert r['perf_unit'] == 'GB/s'
    assert r['perf_lower_thres'] is None and r['perf_result'] == 'pass'
    assert r['jobid'] == '4' and r['nodelist'] == ['vm']
    assert r['meta']['bench'] == 'hpcc' and r['meta']['bench_version'] == '1.5.0'
    assert r['meta']['command'].startswith('srun ')
    assert len(r['meta']['suite_commit']) >= 40


def test_reframe_format_matches_the_fields():
    fmt = perflog.reframe_format()
    assert fmt.count('|') == len(perflog.FIXED_FIELDS)
    assert fmt.split('|')[1] == perflog.FORMAT_TAG
    assert perflog.reframe_format_perfvars().endswith('|')


@pytest.mark.parametrize('cut, message', [
    (-1, "field 'perf_result' of 'triad_1t': .* got 'pas': truncated line"),
    (-3, "field 'perf_result' of 'triad_1t': .* got 'p': truncated line"),
    (-5, 'groups of 7 per performance variable, got 52 columns: truncated line'),
    (-30, 'groups of 7 per performance variable, got 47 columns: truncated line')])
def test_truncated_line_is_an_error(fixture_text, cut, message):
    line = _line(fixture_text).rstrip('\n')
    with pytest.raises(perflog.PerflogError, match=message):
        perflog.parse_line(line[:cut])


def test_stray_separator_is_an_error(fixture_text):
    line = _line(fixture_text).replace('|native|', '|nat|ive|')
    with pytest.raises(perflog.PerflogError, match='columns'):
        perflog.parse_line(line)


def test_other_format_is_rejected(fixture_text):
    line = _line(fixture_text).replace(perflog.FORMAT_TAG, 'something-else')
    with pytest.raises(perflog.PerflogError, match='not an mdxbench-perflog-v1 line'):
        perflog.parse_line(line)


def test_non_numeric_value_names_the_field(fixture_text):
    line = _line(fixture_text).replace('|61.4292|', '|fast|')
    with pytest.raises(perflog.PerflogError, match="'perf_value'"):
        perflog.parse_line(line)


def test_empty_line():
    with pytest.raises(perflog.PerflogError, match='empty'):
        perflog.parse_line('\n')


def test_meta_escapes_the_separator_and_round_trips():
    meta = {'command': 'ior -a POSIX | tee out', 'curve': {'8': 1.5}}
    text = perflog.encode_meta(meta)
    assert '|' not in text and '\n' not in text
    assert json.loads(text) == meta


def test_a_failed_test_keeps_its_records_without_values(fixture_text):
    '''ReFrame logs a test that failed before its performance stage with None values.'''
    line = _line(fixture_text)
    cols = line.rstrip('\n').split('|')
    cols[9], cols[10] = 'None', 'fail'          # nodelist, result
    for k in range(12, len(cols), 7):           # value and perf result of every variable
        cols[k + 1], cols[k + 6] = 'None', 'None'
    recs = perflog.parse_line('|'.join(cols))
    assert len(recs) == 6 and all(r['perf_value'] is None for r in recs)
    assert recs[0]['nodelist'] == [] and recs[0]['perf_result'] is None
    cols[10] = 'pass'
    with pytest.raises(perflog.PerflogError, match='has no value but the test result'):
        perflog.parse_line('|'.join(cols))


def test_dry_run_lines_are_no_records_and_not_malformed(fixture_text, tmp_path):
    """ReFrame 4.10 writes a perflog line for each --dry-run case (captured from the site
    test's dry run of aws-pcluster): result pass, no job, no values. It is no measurement:
    DryRunLine, not PerflogError; the records reader skips it, and a real line with a
    missing value is still an error."""
    from mdxbench.post.store.records import iter_perflog_records

    text = fixture_text('perflogs/aws-pcluster-c7i-4xlarge-FftwMpi2d-dryrun.log')
    lines = text.splitlines()[1:]
    assert len(lines) == 4
    for line in lines:
        with pytest.raises(perflog.DryRunLine):
            perflog.parse_line(line)
    f = tmp_path / 'FftwMpi2d.log'
    f.write_text(text)
    errors = []
    assert list(iter_perflog_records([f], errors)) == [] and errors == []
    # the same line with a job id is a run that passed without values: malformed
    with pytest.raises(perflog.PerflogError, match='has no value'):
        perflog.parse_line(lines[0].replace('|null||pass|', '|123|n1|pass|'))


def test_the_jobs_own_node_list_wins_over_accountings(fixture_text):
    '''A two-node IOR line of the namespace cluster carries the nodes the job itself saw
    (meta.job_nodes, from SLURM_JOB_NODELIST). CI once got a nodelist of one node from
    Slurm's accounting for such a job: the record names the nodes the job ran on.'''
    header, line = fixture_text('perflogs/nscluster-nodes-Ior-2nodes.log').splitlines()
    assert perflog.is_header(header)
    recs = perflog.parse_line(line)
    assert {r['perf_var'] for r in recs} == {'write_bw', 'read_bw'}
    assert all(r['nodelist'] == ['mdxnode1', 'mdxnode3'] for r in recs)
    assert recs[0]['meta']['job_nodes'] == recs[0]['meta']['nodes_chosen']

    cols = line.split('|')
    assert cols[9] == 'mdxnode1,mdxnode3'
    cols[9] = 'mdxnode1'                 # what the accounting said in CI
    assert perflog.parse_line('|'.join(cols))[0]['nodelist'] == ['mdxnode1', 'mdxnode3']

    bad = line.replace('"job_nodes":["mdxnode1","mdxnode3"]', '"job_nodes":"mdxnode1"')
    assert bad != line
    with pytest.raises(perflog.PerflogError, match='job_nodes'):
        perflog.parse_line(bad)
