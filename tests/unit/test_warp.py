"""MinIO warp: the report parser on the real warp 1.0.8 outputs of tests/fixtures/upstream (text
and --json), and the shell helper that hands S3 keys to the job."""
import json
import os
import pathlib
import stat
import subprocess

import pytest

from hang import HANG_S
from mdxbench.parsers import ParseError, warp
from mdxbench.storage import CREDENTIALS_SCRIPT


def test_get_text_report(upstream_output):
    r = warp.parse(upstream_output('warp-1.0.8-get.out'))
    assert r['format'] == 'text'
    # the preparation upload of a GET run is reported, and skipped: not a figure
    assert r['reports']['PUT'] == {'op': 'PUT', 'skipped': True}
    get = warp.select(r, 'get')
    assert (get['concurrency'], get['mibs'], get['obj_s']) == (4, 764.04, 764.04)
    assert get['segments'] == 19 and get['errors'] is None
    assert (get['fastest_mibs'], get['median_mibs'], get['slowest_mibs']) == (1016.5, 728.0, 600.7)
    assert (get['fastest_obj_s'], get['median_obj_s'], get['slowest_obj_s']) == (1016.52, 727.97, 600.72)


def test_put_text_report(upstream_output):
    r = warp.parse(upstream_output('warp-1.0.8-put.out'))
    assert set(r['reports']) == {'PUT'}
    put = warp.select(r, 'PUT')
    assert (put['concurrency'], put['mibs'], put['obj_s']) == (4, 135.74, 135.74)
    assert (put['fastest_mibs'], put['median_mibs'], put['slowest_mibs']) == (199.5, 127.0, 107.7)


def test_get_json_report(upstream_output):
    r = warp.parse(upstream_output('warp-1.0.8-get-json.out'))
    assert r['format'] == 'json' and r['reports']['PUT']['skipped']
    get = warp.select(r, 'get')
    assert get['mibs'] == pytest.approx(821180580.2 / 2**20)      # "average_bps": 821180580.2
    assert get['mibs'] == pytest.approx(783.14, abs=0.01)         # 1 MiB objects: MiB/s = obj/s
    assert (get['obj_s'], get['concurrency'], get['errors']) == (783.14, 4, 0)
    assert (get['ran_s'], get['requests'], get['segments']) == (19.966, 15634, 19)
    assert get['median_mibs'] == pytest.approx(754733362 / 2**20)
    assert get['fastest_obj_s'] == 1223.86 and get['slowest_obj_s'] == 611.77
    assert get['reqs_ms'] == {'dur_avg': 5, 'dur_median': 4, 'dur_90': 9, 'dur_99': 19,
                              'fastest': 1, 'slowest': 54}
    assert get['ttfb_ms'] == {'average': 4, 'median': 4, 'p90': 7, 'p99': 15}


def test_the_skipped_preparation_is_no_figure(upstream_output):
    for name in ('warp-1.0.8-get.out', 'warp-1.0.8-get-json.out'):
        with pytest.raises(ParseError, match='PUT: too few samples'):
            warp.select(warp.parse(upstream_output(name)), 'put')


def test_select_names_what_warp_reported(upstream_output):
    with pytest.raises(ParseError, match=r'no GET operation \(it reported: PUT\)'):
        warp.select(warp.parse(upstream_output('warp-1.0.8-put.out')), 'get')


def test_failed_requests_in_the_json_report_fail(upstream_output):
    """The real JSON report with its error count raised, as warp writes it for a run
    whose requests failed: the operation is refused, never a figure."""
    text = upstream_output('warp-1.0.8-get-json.out')
    head, _, tail = text.partition('\n{')
    doc, end = json.JSONDecoder().raw_decode('{' + tail)
    doc['operations'][1]['errors'] = 3
    doc['operations'][1]['first_errors'] = ['connection reset by peer']
    bad = head + '\n' + json.dumps(doc, indent=2) + tail[end - 1:]
    with pytest.raises(ParseError, match='3 requests failed .first: connection reset'):
        warp.select(warp.parse(bad), 'get')


@pytest.mark.parametrize('name, cut, message', [
    # throughput split cut off
    ('warp-1.0.8-get.out', ' * 50% Median', 'GET: no median, slowest second'),
    # block cut before its average
    ('warp-1.0.8-get.out', '* Average: 764', r'GET: no " \* Average: X MiB/s'),
    # before the report
    ('warp-1.0.8-put.out', 'Operation: PUT', 'no warp 1.0.x report .*: warp did not finish'),
    # JSON cut off
    ('warp-1.0.8-get-json.out', '"single_sized_requests"', 'JSON report is incomplete'),
])
def test_cut_off_reports_are_refused(upstream_output, name, cut, message):
    text = upstream_output(name)
    with pytest.raises(ParseError, match=message):
        warp.select(warp.parse(text[:text.index(cut)]), 'get' if 'get' in name else 'put')


def test_empty_output():
    with pytest.raises(ParseError, match='empty'):
        warp.parse('  \n')


@pytest.mark.parametrize('other, message', [
    ('iperf3/iperf3-3.12-loopback-Z-P4.json', 'JSON report has no "operations" list'),
    ('hpcc/hpcc-1.5.0-debian-np2-n6000.out', 'no warp 1.0.x report')])
def test_other_tools_output_is_refused(fixture_text, other, message):
    with pytest.raises(ParseError, match=message):
        warp.select(warp.parse(fixture_text(other)), 'get')


def _source(tmp_path, env, *args):
    '''Run the helper as a job script does; return (exit code, stdout+stderr, keys seen).'''
    out = tmp_path / 'keys'
    script = (f'. {CREDENTIALS_SCRIPT}; mdxbench_s3_credentials "$@" || exit $?; '
              f'printf "%s\\n%s\\n" "$WARP_ACCESS_KEY" "$WARP_SECRET_KEY" > {out}')
    base = {k: v for k, v in os.environ.items() if not k.startswith('WARP_')}
    p = subprocess.run(['bash', '-c', script, 'job', *args], env={**base, **env},
                       capture_output=True, text=True, timeout=HANG_S)
    keys = out.read_text().splitlines() if out.exists() else None
    return p.returncode, p.stdout + p.stderr, keys


def _credfile(tmp_path, mode, text):
    f = tmp_path / 'cred'
    f.write_text(text)
    f.chmod(mode)
    return f


def test_credentials_from_a_0600_file(tmp_path):
    secret = 'wJalr/XUtnFEMI=K7MDENG+bPxRfi'      # '=' inside a key must survive
    f = _credfile(tmp_path, 0o600, f'# S3DS\naccess_key = AKIAEXAMPLE\nsecret_key="{secret}"\n')
    code, said, keys = _source(tmp_path, {}, 's3ds', str(f))
    assert code == 0 and keys == ['AKIAEXAMPLE', secret]
    assert 'AKIAEXAMPLE' not in said and secret not in said and str(f) in said


def test_aws_style_names_and_no_trailing_newline(tmp_path):
    f = _credfile(tmp_path, 0o400, 'aws_access_key_id=AK\naws_secret_access_key=SK')
    code, _, keys = _source(tmp_path, {}, 's3ds', str(f))
    assert code == 0 and keys == ['AK', 'SK']


def test_a_file_others_can_read_is_refused(tmp_path):
    f = _credfile(tmp_path, 0o644, 'access_key=ak-5d2\nsecret_key=sk-8e4\n')
    code, said, keys = _source(tmp_path, {}, 's3ds', str(f))
    assert code == 1 and keys is None
    assert str(f) in said and 'mode 644' in said and 'sk-8e4' not in said


def test_the_environment_wins_over_the_file(tmp_path):
    code, said, keys = _source(tmp_path, {'WARP_ACCESS_KEY': 'env-ak-7f3', 'WARP_SECRET_KEY': 'env-sk-9c1'},
                               'hyperstore', str(tmp_path / 'absent'))
    assert code == 0 and keys == ['env-ak-7f3', 'env-sk-9c1'] and 'environment' in said
    assert 'env-ak-7f3' not in said and 'env-sk-9c1' not in said


def test_no_credentials_names_the_file_and_the_variables(tmp_path):
    code, said, keys = _source(tmp_path, {'WARP_ACCESS_KEY': 'only-one'}, 's3ds',
                               str(tmp_path / 'absent'))
    assert code == 1 and keys is None
    assert str(tmp_path / 'absent') in said and 'WARP_SECRET_KEY' in said


def test_a_file_without_the_secret_line(tmp_path):
    f = _credfile(tmp_path, 0o600, 'access_key=AK\n')
    code, said, _ = _source(tmp_path, {}, 's3ds', str(f))
    assert code == 1 and 'lacks' in said and str(f) in said
    assert stat.S_IMODE(f.stat().st_mode) == 0o600


def test_job_scripts_name_the_key_file_never_a_key(tmp_path):
    '''ReFrame's dry run writes the job scripts of a configured S3 target without running
    them. warp is absent here, so the binary is pointed at `env` for this dry run only
    (no benchmark runs, no figure is produced): what is checked is the script itself.'''
    import sys

    root = pathlib.Path(__file__).resolve().parents[2]
    env = dict(os.environ, RFM_CONFIG_FILES=str(root / 'site-configs' / 'settings.py'),
               MDXBENCH_STATE_DIR=str(tmp_path / 'state'),
               MDXBENCH_MDX2_S3DS_ENDPOINT='s3ds.example.org:443',
               MDXBENCH_MDX2_S3DS_CREDENTIALS=str(tmp_path / 's3ds.cred'),
               WARP_ACCESS_KEY='ak-in-env-3b9', WARP_SECRET_KEY='sk-in-env-6a1')
    (tmp_path / 'state').mkdir()
    exe = pathlib.Path(sys.executable).parent / 'reframe'
    res = subprocess.run(
        [str(exe), '-c', 'checks/storage/warp.py', '--dry-run', '--system', 'mdx2:vc16m32g',
         '-S', 'bench_binary=env', '--nocolor',
         '-n', 'WarpObjectStorage%target=s3ds%op=get%concurrency=16$',
         '-n', 'WarpMultiClient%target=s3ds%op=put%clients=3$'],
        capture_output=True, text=True, env=env, cwd=root, timeout=300)
    out = res.stdout + res.stderr
    assert res.returncode == 0, out
    scripts = {p.parent.name.split('_')[0]: p.read_text()
               for p in (tmp_path / 'state').rglob('rfm_job.sh')}
    assert set(scripts) == {'WarpObjectStorage', 'WarpMultiClient'}, out
    for name, text in scripts.items():
        assert f'mdxbench_s3_credentials s3ds "{tmp_path}/s3ds.cred"' in text, text
        assert 'ak-in-env-3b9' not in text and 'sk-in-env-6a1' not in text
        assert '--host=s3ds.example.org:443' in text and '--tls' in text
        assert '--bucket=mdxbench-warp' in text and '--obj.size=10MiB' in text
    assert '--concurrent=16' in scripts['WarpObjectStorage']
    assert '--objects=2500' in scripts['WarpObjectStorage']
    assert '--warp-client=$agents' in scripts['WarpMultiClient']
    assert 'ak-in-env-3b9' not in out and 'sk-in-env-6a1' not in out


def test_the_split_seconds_units_are_warps_binary_prefixes():
    '''warp prints a second of the throughput split in B, KiB, MiB, GiB or TiB per second
    by its size (warp 1.0.0 ``pkg/bench/ops.go``, ``Throughput.String``: MiB below 10 GiB/s,
    so none of our captures, at most 1.6 GiB/s here, prints GiB): binary prefixes, each
    1024 of the one before -- a GiB/s is 1024 MiB/s, not 1000.'''
    prefixes = ['B', 'KiB', 'MiB', 'GiB', 'TiB']
    assert set(warp._UNITS) == set(prefixes)
    for k, unit in enumerate(prefixes):
        assert warp._UNITS[unit] * 2 ** 20 == 2 ** (10 * k), unit


def _json_altered(upstream_output, alter):
    '''The real warp 1.0.8 GET JSON report, its document altered by ``alter``.'''
    text = upstream_output('warp-1.0.8-get-json.out')
    head, _, tail = text.partition('\n{')
    doc, end = json.JSONDecoder().raw_decode('{' + tail)
    alter(doc)
    return head + '\n' + json.dumps(doc, indent=2) + tail[end - 1:]


def _drop(key):
    def alter(doc):
        del doc['operations'][1][key]
    return alter


@pytest.mark.parametrize('alter, message', [
    (lambda d: d.update(mixed=True),
     'warp JSON report of a mixed benchmark: only get/put reports are read'),
    (lambda d: d['operations'].append(d['operations'][1]),
     'warp JSON report has two GET operations'),
    (_drop('throughput'), "warp JSON report, operations[1]: missing or malformed field "
                          "'throughput' (not a warp 1.0.x report?)"),
    (_drop('concurrency'), "warp JSON report, operations[1]: missing or malformed field "
                           "'concurrency' (not a warp 1.0.x report?)"),
])
def test_a_json_report_it_cannot_read_is_refused_word_for_word(upstream_output, alter,
                                                               message):
    with pytest.raises(ParseError) as err:
        warp.parse(_json_altered(upstream_output, alter))
    assert str(err.value) == message


def test_the_json_report_read_whole(upstream_output):
    '''Every field the checks record, from the real report: the GET's requests and hosts,
    its failed requests (those of the operation and of its throughput summed), the version
    from warp's own line (none printed: "unknown").'''
    r = warp.parse(upstream_output('warp-1.0.8-get-json.out'))
    get = r['reports']['GET']
    assert r['version'] == 'unknown' and r['format'] == 'json'
    assert (get['op'], get['hosts'], get['clients'], get['errors']) == ('GET', 1, 1, 0)
    assert r['reports']['PUT'] == {'op': 'PUT', 'skipped': True}

    def errors(doc):
        doc['operations'][1]['errors'] = 2
        doc['operations'][1]['throughput']['errors'] = 3
        doc['operations'][1]['first_errors'] = ['x' * 300, 'b', 'c', 'd']
    bad = warp.parse(_json_altered(upstream_output, errors))['reports']['GET']
    assert bad['errors'] == 5
    assert bad['first_errors'] == ['x' * 200, 'b', 'c']
    with pytest.raises(ParseError) as err:
        warp.select(warp.parse(_json_altered(upstream_output, errors)), 'get')
    assert str(err.value) == f"warp GET: 5 requests failed (first: {'x' * 200})"


def test_select_names_what_warp_did_and_did_not_report(upstream_output):
    r = warp.parse(upstream_output('warp-1.0.8-put.out'))
    with pytest.raises(ParseError) as err:
        warp.select(r, 'get')
    assert str(err.value) == 'warp reported no GET operation (it reported: PUT)'
    with pytest.raises(ParseError) as err:
        warp.select({'version': 'x', 'reports': {}}, 'get')
    assert str(err.value) == 'warp reported no GET operation (it reported: nothing)'
    with pytest.raises(ParseError) as err:
        warp.select(warp.parse(upstream_output('warp-1.0.8-get.out')), 'put')
    assert str(err.value) == ('warp PUT: too few samples, warp skipped it (run longer: raise '
                              'duration, or lower concurrency)')
    assert warp.select(r, 'put')['version'] == r['version']


def test_a_run_that_did_not_finish_says_what_warp_said(upstream_output, fixture_text):
    '''The real PUT output cut before its report: warp did not finish. warp's own run
    against a port where nothing listens (captured): the refusal quotes warp's error.'''
    text = upstream_output('warp-1.0.8-put.out')
    cut = text[:text.index('Operation: PUT')]
    with pytest.raises(ParseError) as err:
        warp.parse(cut)
    assert str(err.value) == ('no warp 1.0.x report (neither the --json report nor '
                              '"Operation: OP. Concurrency: N" blocks): warp did not finish')
    with pytest.raises(ParseError) as err:
        warp.parse(fixture_text('warp/warp-1.0.0-get-refused.out'))
    assert str(err.value) == (
        'no warp 1.0.x report (neither the --json report nor "Operation: OP. Concurrency: '
        'N" blocks): warp did not finish (it said: warp: <ERROR> Error preparing server. '
        'Get "http://127.0.0.1:9/warp-benchmark-bucket/?location=": dial tcp 127.0.0.1:9: '
        'connect: connection refused.)')


_NOT_FINISHED = ('no warp 1.0.x report (neither the --json report nor "Operation: OP. '
                 'Concurrency: N" blocks): warp did not finish (it said: ')


@pytest.mark.parametrize('capture, said', [
    # the console's error alone, its line 443 characters long: its beginning and its end,
    # where warp says what is wrong
    ('get-long-host', 'warp: <ERROR> Unable to create MinIO client. Endpoint: node001-node002-'
     'node003-node004-node005-node006-node007-node008-n ... 034-node035-node036-node037-'
     'node038-node039-node040-s3.invalid:9000 does not follow ip address or domain name '
     'standards.'),
    # a line of 240 characters, the most said whole
    ('get-unknown-host', 'warp: <ERROR> Error preparing server. Get "http://node001-node002-'
     'node003-node004-xxxxxxxs3.invalid:900/warp-benchmark-bucket/?location=": dial tcp: '
     'lookup node001-node002-node003-node004-xxxxxxxs3.invalid on 10.255.255.53:53: no such '
     'host.'),
    ('put-bad-key', 'warp: <ERROR> Error preparing server. The Access Key Id you provided does '
     'not exist in our records.'),
    # urfave/cli's refusal of an argument: no "error" in it
    ('put-bad-flag', 'Incorrect Usage: flag provided but not defined: -bogus'),
    # the Go runtime out of memory (ulimit -v) after warp's first lines: its fatal error, not
    # the runtime's line before it nor the goroutines' dump after it
    ('put-out-of-memory', 'fatal error: out of memory'),
], ids=['long-line', 'line-of-240', 'bad-key', 'bad-flag', 'out-of-memory'])
def test_a_failed_run_says_warps_own_words(fixture_text, capture, said):
    """warp 1.0.0's real failures (tests/fixtures/README.md): the refusal says what warp
    said, word for word."""
    with pytest.raises(ParseError) as err:
        warp.parse(fixture_text(f'warp/warp-1.0.0-{capture}.out'))
    assert str(err.value) == _NOT_FINISHED + said + ')'


def test_a_report_on_a_terminal_is_read_through_its_colours(fixture_text):
    """warp run on a terminal (script(1): colours on, carriage returns, progress redrawn)
    writes ANSI sequences before its report's lines ("\\x1b[97mOperation: PUT"): the
    figures are those the terminal showed."""
    text = fixture_text('warp/warp-1.0.0-put-tty-text.out')
    assert '\x1b[97mOperation: PUT. Concurrency: 4' in text and '\x1b[m' in text
    r = warp.parse(text)
    assert r['format'] == 'text' and list(r['reports']) == ['PUT']
    assert r['reports']['PUT'] == {
        'op': 'PUT', 'skipped': False, 'concurrency': 4, 'mibs': 114.80, 'obj_s': 114.80,
        'errors': None, 'segments': 2, 'fastest_mibs': 124.0, 'fastest_obj_s': 124.03,
        'median_mibs': 124.0, 'median_obj_s': 124.03, 'slowest_mibs': 105.8,
        'slowest_obj_s': 105.77}


def test_the_version_warp_printed_before_its_report_is_kept(fixture_text):
    '''The check runs `warp --version` before warp itself: "warp version 1.0.0 - (dev)"
    (warp 1.0.0 built by ci/install.sh, captured with its JSON report).'''
    r = warp.parse(fixture_text('warp/warp-1.0.0-version-put-3s-json.out'))
    assert (r['version'], r['format']) == ('1.0.0', 'json')
    assert r['reports']['PUT']['concurrency'] == 4


def test_two_measured_operations_of_a_text_report_keep_their_own_seconds(fixture_text):
    '''A GET of 3,000 small objects: its preparation PUT had samples enough to be reported
    (5 seconds) before the GET (2 seconds), each block's fastest, median and slowest second
    its own -- the PUT's slowest in KiB/s, as warp printed it.'''
    r = warp.parse(fixture_text('warp/warp-1.0.0-get-3000-small-text.out'))['reports']
    put, get = r['PUT'], r['GET']
    assert (put['op'], put['skipped'], put['segments'], get['segments']) == ('PUT', False, 5, 2)
    assert (put['mibs'], get['mibs'], get['obj_s']) == (2.01, 6.02, 1540.55)
    assert (put['fastest_mibs'], put['median_mibs']) == (2.3, 2.1)
    assert put['slowest_mibs'] == pytest.approx(1562.4 / 1024) and put['slowest_obj_s'] == 390.61
    assert (get['fastest_mibs'], get['median_mibs'], get['slowest_mibs']) == (6.1, 6.1, 6.0)


def test_a_report_of_random_sizes_has_no_single_size_percentiles(fixture_text):
    '''warp put --obj.randsize reports its requests by size ("multi_sized_requests"), not
    one size's percentiles: read without them.'''
    put = warp.parse(fixture_text('warp/warp-1.0.0-put-randsize-json.out'))['reports']['PUT']
    assert put['skipped'] is False and put['errors'] == 0
    assert 'reqs_ms' not in put and 'ttfb_ms' not in put


def _no_first_errors(doc):
    doc['operations'][1]['errors'] = 2
    doc['operations'][1].pop('first_errors', None)


@pytest.mark.parametrize('make, op, message', [
    (lambda up, fx: '  \n', 'get', 'warp output is empty'),
    (lambda up, fx: (lambda t: t[:t.index(' * 50% Median')])(up('warp-1.0.8-get.out')), 'get',
     'warp report GET: no median, slowest second in its throughput split (cut-off report?)'),
    (lambda up, fx: (lambda t: t[:t.rindex('Throughput, split')])(up('warp-1.0.8-get.out')),
     'get', 'warp report GET: no "Throughput, split into N x 1s:" section (cut-off report?)'),
    (lambda up, fx: up('warp-1.0.8-get.out') + up('warp-1.0.8-get.out'), 'get',
     'warp output has two "Operation: PUT" blocks'),
    (lambda up, fx: fx('iperf3/iperf3-3.12-loopback-Z-P4.json'), 'get',
     'warp JSON report has no "operations" list'),
    (lambda up, fx: up('warp-1.0.8-get.out'), 'delete',
     'warp reported no DELETE operation (it reported: GET, PUT)'),
    (lambda up, fx: _json_altered(up, _no_first_errors), 'get', 'warp GET: 2 requests failed'),
], ids=['empty', 'seconds', 'split', 'two-blocks', 'not-warp', 'not-reported', 'failed'])
def test_each_refusal_word_for_word(upstream_output, fixture_text, make, op, message):
    '''Real outputs cut, doubled or altered once each (and another tool's), refused with
    what was expected, word for word.'''
    with pytest.raises(ParseError) as err:
        warp.select(warp.parse(make(upstream_output, fixture_text)), op)
    assert str(err.value) == message
