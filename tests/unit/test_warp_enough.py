'''scripts/warp-enough.sh: warp run again with twice the duration where the measured
operation had too few samples (issue 41: a shortened run must not fail for lack of time on
a slower machine). A stand-in `warp` replays real warp 1.0.0 outputs
(tests/fixtures/warp/): too few samples below 8 s, a full report from 8 s on.'''
import pathlib
import stat
import subprocess

import pytest

from hang import HANG_S
from mdxbench.parsers import warp

ROOT = pathlib.Path(__file__).resolve().parents[2]
SCRIPT = ROOT / 'reframe' / 'mdxbench' / 'scripts' / 'warp-enough.sh'
FIX = ROOT / 'tests' / 'fixtures' / 'warp'


def fake_warp(tmp_path, short, full, enough_from=8):
    '''A `warp` that prints ``short`` for a --duration under ``enough_from`` seconds and
    ``full`` from there on, and logs each duration it was given.'''
    exe = tmp_path / 'warp'
    exe.write_text(f'''#!/bin/bash
for a in "$@"; do case $a in --duration=*) d=${{a#--duration=}} ;; esac; done
case $d in *m) d=$((${{d%m}} * 60)) ;; *s) d=${{d%s}} ;; esac
echo "$d" >> {tmp_path}/calls
if (( d < {enough_from} )); then cat {FIX / short}; else cat {FIX / full}; fi
''')
    exe.chmod(exe.stat().st_mode | stat.S_IXUSR)
    return exe


def run(tmp_path, op, extend, exe, duration):
    return subprocess.run(['bash', str(SCRIPT), op, str(extend), str(exe), op,
                           '--obj.size=10MiB', f'--duration={duration}', '--json'],
                          cwd=tmp_path, capture_output=True, text=True, timeout=HANG_S)


def test_too_few_samples_doubles_the_duration_until_warp_has_enough(tmp_path):
    exe = fake_warp(tmp_path, 'warp-1.0.0-put-1s-json.out', 'warp-1.0.0-put-8s-json.out')
    res = run(tmp_path, 'put', 3, exe, '2s')
    assert res.returncode == 0, res.stderr
    assert (tmp_path / 'calls').read_text().split() == ['2', '4', '8']
    assert (tmp_path / 'warp-durations.txt').read_text().split() == ['2', '4', '8']
    assert 'warp PUT had too few samples in 2s: running it again for 4s' in res.stderr
    # only the last run's report reaches the parser, and it has the figure
    rep = warp.select(warp.parse(res.stdout), 'put')
    assert rep['mibs'] > 0 and not rep['skipped']


def test_minutes_are_read_as_seconds(tmp_path):
    exe = fake_warp(tmp_path, 'warp-1.0.0-put-1s-json.out', 'warp-1.0.0-put-8s-json.out',
                    enough_from=100)
    run(tmp_path, 'put', 1, exe, '1m')
    assert (tmp_path / 'calls').read_text().split() == ['60', '120']
    assert (tmp_path / 'warp-durations.txt').read_text().split() == ['60', '120']


def test_the_bound_is_kept_and_the_parser_then_says_why(tmp_path):
    exe = fake_warp(tmp_path, 'warp-1.0.0-put-1s-json.out', 'warp-1.0.0-put-8s-json.out',
                    enough_from=1000)
    res = run(tmp_path, 'put', 2, exe, '3')
    assert res.returncode == 0
    assert (tmp_path / 'warp-durations.txt').read_text().split() == ['3', '6', '12']
    with pytest.raises(Exception, match='too few samples'):
        warp.select(warp.parse(res.stdout), 'put')


def test_a_get_runs_preparation_does_not_extend_only_the_get_does(tmp_path):
    '''A GET run's upload is reported as a skipped PUT: not the measured operation.'''
    exe = fake_warp(tmp_path, 'warp-1.0.0-get-1s-json.out', 'warp-1.0.0-put-8s-json.out')
    res = run(tmp_path, 'get', 0, exe, '1s')
    assert (tmp_path / 'warp-durations.txt').read_text().split() == ['1']
    # the GET itself had too few samples in 1 s: with extensions allowed, it is run again
    res = run(tmp_path, 'get', 1, exe, '1s')
    assert res.returncode == 0
    assert (tmp_path / 'warp-durations.txt').read_text().split() == ['1', '2']
    # a PUT report read for a PUT run is not extended
    exe = fake_warp(tmp_path, 'warp-1.0.0-put-8s-json.out', 'warp-1.0.0-put-8s-json.out')
    res = run(tmp_path, 'put', 3, exe, '5s')
    assert (tmp_path / 'warp-durations.txt').read_text().split() == ['5']


def test_a_failed_warp_is_not_run_again_and_keeps_its_exit_code(tmp_path):
    exe = tmp_path / 'warp'
    exe.write_text('#!/bin/bash\necho "warp: <ERROR> connection refused"\nexit 3\n')
    exe.chmod(0o755)
    res = run(tmp_path, 'put', 3, exe, '5s')
    assert res.returncode == 3 and 'connection refused' in res.stdout
    assert (tmp_path / 'warp-durations.txt').read_text().split() == ['5']
