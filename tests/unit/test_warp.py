'''MinIO warp: the report parser, and the shell helper that hands S3 keys to the job.

No warp binary is to be had on this machine (not in Debian or PyPI, and the Go module
proxy refuses github.com/minio/warp), so no real warp output exists here yet: the parser's
figures are tested on any ``warp-*.out`` placed in ../shared/fixtures, and skipped with that
reason until one is. Everything else below runs.'''
import os
import pathlib
import re
import stat
import subprocess

import pytest

from mdxbench.parsers import ParseError, warp
from mdxbench.storage import CREDENTIALS_SCRIPT



@pytest.mark.parametrize('text, seconds', [
    ('9m57s', 597), ('57s', 57), ('1m1s', 61), ('374.5ms', 0.3745), ('1h2m3s', 3723),
    ('2.102s', 2.102), ('900us', 0.0009),
])
def test_go_durations(text, seconds):
    assert warp.go_duration(text) == pytest.approx(seconds)


@pytest.mark.parametrize('text', ['5 minutes', '', '3x', '1m 2s'])
def test_bad_go_durations(text):
    with pytest.raises(ParseError, match='Go duration'):
        warp.go_duration(text)


def test_empty_output():
    with pytest.raises(ParseError, match='empty'):
        warp.parse('  \n')


@pytest.mark.parametrize('other', ['iperf3/iperf3-3.12-loopback-Z-P4.json',
                                   'hpcc/hpcc-1.5.0-debian-np2-n6000.out'])
def test_other_tools_output_is_refused(fixture_text, other):
    path = pathlib.Path(__file__).resolve().parents[1] / 'fixtures' / other
    if not path.exists():
        pytest.fail(f'captured fixture {path} is missing')
    with pytest.raises(ParseError, match='no "Report: OP. Concurrency: N. Ran: T" block'):
        warp.parse(fixture_text(other))


def _parsed(**rep):
    base = {'op': 'GET', 'concurrency': 8, 'ran_s': 60.0, 'mibs': 100.0, 'obj_s': 10.0,
            'errors': 0}
    base.update(rep)
    return {'version': '1.0.8', 'reports': {base['op']: base}}


def test_select_names_what_warp_reported():
    with pytest.raises(ParseError, match=r'no "Report: PUT" block \(it reported: GET\)'):
        warp.select(_parsed(), 'put')


def test_select_refuses_failed_requests():
    with pytest.raises(ParseError, match='3 requests failed'):
        warp.select(_parsed(errors=3), 'get')


def test_select_flattens_the_operation():
    r = warp.select(_parsed(mibs=250.5), 'GET')
    assert r['mibs'] == 250.5 and r['version'] == '1.0.8' and r['concurrency'] == 8


@pytest.mark.real_outputs('warp-*.out', 'warp cannot be installed here')
def test_real_warp_outputs(real_output):
    text = real_output.read_text()
    r = warp.parse(text)
    assert r['reports'], path
    for op, rep in r['reports'].items():
        assert rep['concurrency'] >= 1 and rep['ran_s'] > 0 and rep['obj_s'] > 0, (op, rep)
        if op in ('GET', 'PUT') and rep.get('median_obj_s'):
            # fixed-size objects: MiB per object is the same in the average and the median
            assert rep['mibs'] / rep['obj_s'] == pytest.approx(
                rep['median_mibs'] / rep['median_obj_s'], rel=0.05), (op, rep)
    # a cut-off report is an error, not a smaller number
    head = text.index('Report: ')
    with pytest.raises(ParseError):
        warp.parse(text[:head + len('Report: GET. Concurrency: 1.')])


def _source(tmp_path, env, *args):
    '''Run the helper as a job script does; return (exit code, stdout+stderr, keys seen).'''
    out = tmp_path / 'keys'
    script = (f'. {CREDENTIALS_SCRIPT}; mdxbench_s3_credentials "$@" || exit $?; '
              f'printf "%s\\n%s\\n" "$WARP_ACCESS_KEY" "$WARP_SECRET_KEY" > {out}')
    base = {k: v for k, v in os.environ.items() if not k.startswith('WARP_')}
    p = subprocess.run(['bash', '-c', script, 'job', *args], env={**base, **env},
                       capture_output=True, text=True, timeout=30)
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
         '-n', 'WarpMultiClient%target=s3ds%op=put%clients=3$',
         '-n', 'WarpObjectStorage%target=hyperstore%op=put%concurrency=1$'],
        capture_output=True, text=True, env=env, cwd=root, timeout=300)
    out = res.stdout + res.stderr
    assert res.returncode == 0, out
    # hyperstore has no endpoint configured: skipped, and the reason says what to set
    assert re.search(r"SKIP.*target=hyperstore.*no endpoint: set "
                     r"extras\.object_targets\.hyperstore\.endpoint", out), out
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
