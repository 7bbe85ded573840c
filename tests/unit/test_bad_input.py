'''The operator's first hour (issue 57): every command refuses what it does not know before
any work, in one line on standard error that names the option, file or field, and exits
USAGE (2) -- never 0, and never FOUND (1), which means a regression or a failed node to a
cron job. A fault of mdxbench itself is one line and INTERNAL (70); --debug shows its
traceback.'''
import gzip
import os
import pathlib
import re
import shutil
import subprocess
import sys

import pytest

from hang import HANG_S
from conftest import FIXTURES, ROOT
from mdxbench import perflog
from mdxbench.post import cli, exits

PERFLOG = FIXTURES / 'perflogs' / 'local-debug-HpccStream.log'


@pytest.fixture
def state(tmp_path, monkeypatch):
    '''An empty state directory (events, cycles, perflogs) for the command.'''
    d = tmp_path / 'state'
    d.mkdir()
    monkeypatch.setenv('MDXBENCH_STATE_DIR', str(d))
    monkeypatch.delenv('MDXBENCH_PERFLOG_DIR', raising=False)
    return d


def refused(capsys, *argv):
    '''Run ``mdxbench argv`` in this process: (exit code, its one stderr line).'''
    code = cli.main(list(argv))
    err = capsys.readouterr().err
    assert 'Traceback' not in err, err
    lines = err.strip('\n').split('\n')
    assert len(lines) == 1, err
    return code, lines[0]


def test_an_unknown_system_is_refused_listing_the_known_ones(capsys, state):
    for argv in (['changes', '--system', 'nosuchsystem'],
                 ['cycle', '--system', 'nosuchsystem', '--no-ingest'],
                 ['accept', '--system', 'nosuchsystem', '--partition', 'debug'],
                 ['acceptance', '--system', 'nosuchsystem'],
                 ['incident', 'list', '--system', 'nosuchsystem'],
                 ['references', 'propose', '--system', 'nosuchsystem'],
                 ['schedule', 'install', '--system', 'nosuchsystem', '--at', '@daily']):
        code, line = refused(capsys, *argv)
        assert code == exits.USAGE, argv
        words = argv[:2] if argv[0] in ('incident', 'references', 'schedule') else argv[:1]
        assert line.startswith(f'mdxbench {" ".join(words)}: error: argument --system: '
                               "unknown system 'nosuchsystem'"), line
        assert 'local, mdx1, mdx2' in line, line


def test_an_event_of_an_unknown_system_or_partition_is_not_recorded(capsys, state):
    code, line = refused(capsys, 'event', 'add', 'nosuchsys', 'kernel 6.1')
    assert code == exits.USAGE and "unknown system 'nosuchsys'" in line, line
    code, line = refused(capsys, 'event', 'add', 'local', 'kernel 6.1', '--partition', 'gpu')
    assert code == exits.USAGE, line
    assert "system local has no partition 'gpu': its partitions are debug" in line, line
    code, line = refused(capsys, 'event', 'add', 'local', 'kernel 6.1', '--time', 'yesterday')
    assert code == exits.USAGE and "argument --time: 'yesterday' is not an ISO time" in line
    assert list(state.rglob('*')) == []       # nothing recorded
    # the good one is recorded: the refusals above are of the values, not of the command
    assert cli.main(['event', 'add', 'local', 'kernel 6.1', '--partition', 'debug',
                     '--time', '2026-11-01T00:00:00+00:00']) == exits.OK
    assert 'kernel 6.1' in capsys.readouterr().out


def test_a_time_without_zone_or_not_a_time_names_its_option(capsys, state):
    code, line = refused(capsys, 'summary', '--no-es', '--since', 'notadate', str(PERFLOG))
    assert (code, line) == (exits.USAGE, "mdxbench summary: error: argument --since: "
                            "'notadate' is not an ISO time (e.g. 2026-11-01T00:00:00+00:00) "
                            '(see mdxbench summary --help)')
    code, line = refused(capsys, 'regress', '--since', '2026-11-01T00:00:00', str(PERFLOG))
    assert code == exits.USAGE and 'needs a time zone' in line, line
    code, line = refused(capsys, 'changes', '--since', '2026-13-01T00:00:00+00:00')
    assert code == exits.USAGE and 'argument --since' in line, line


def test_numbers_out_of_range_are_refused(capsys, state):
    for argv, option in ((['acceptance', '--z', '-5'], '--z'),
                         (['acceptance', '--z', '0'], '--z'),
                         (['acceptance', '--min-effect', '1.5'], '--min-effect'),
                         (['regress', '--baseline-runs', '0'], '--baseline-runs'),
                         (['regress', '--z', 'nan'], '--z'),
                         (['changes', '--max-pvalue', 'x'], '--max-pvalue'),
                         (['accept', '--system', 'local', '--partition', 'debug',
                           '--retests', '-1'], '--retests'),
                         (['ingest', '--lock-wait', '-3'], '--lock-wait')):
        code, line = refused(capsys, *argv)
        assert code == exits.USAGE and f'argument {option}: ' in line, (argv, line)
    # the bounds themselves are taken
    assert cli.parse(['acceptance', '--z', '0.5', '--min-effect', '1']).min_effect == 1.0


def test_two_sources_of_records_are_refused(capsys, state, tmp_path):
    parquet = tmp_path / 'h.parquet'
    parquet.write_bytes(b'PAR1')
    code, line = refused(capsys, 'regress', '--from-es', '--parquet', str(parquet))
    assert code == exits.USAGE
    assert 'argument --parquet: not allowed with argument --from-es' in line, line
    code, line = refused(capsys, 'regress', '--from-es', str(PERFLOG))
    assert code == exits.USAGE and 'name two sources: give one' in line, line
    code, line = refused(capsys, 'regress', '--parquet', str(tmp_path / 'missing.parquet'))
    assert code == exits.USAGE and 'missing.parquet: no such file' in line, line
    code, line = refused(capsys, 'summary', '--no-es', str(tmp_path / 'nope'))
    assert code == exits.USAGE and 'nope: no such file or directory' in line, line


def test_an_output_that_cannot_be_written_is_refused_before_any_work(capsys, state,
                                                                      tmp_path):
    afile = tmp_path / 'afile'
    afile.write_text('')
    readonly = '/proc/mdxbench-out'     # a read-only file system, for root too
    for argv, option in ((['report', '--out', str(afile / 'site'), str(PERFLOG)], '--out'),
                         (['report', '--out', readonly, str(PERFLOG)], '--out'),
                         (['export', '--out', str(afile / 'x.parquet'), str(PERFLOG)], '--out'),
                         (['export', '--out', str(tmp_path), str(PERFLOG)], '--out'),
                         (['cycle', '--system', 'local', '--no-ingest', '--site', readonly],
                          '--site'),
                         (['regress', '--json', f'{readonly}/t.json', str(PERFLOG)], '--json'),
                         (['accept', '--system', 'local', '--partition', 'debug', '--out',
                           str(afile)], '--out')):
        code, line = refused(capsys, *argv)
        assert code == exits.USAGE, (argv, line)
        assert f'argument {option}: cannot write the output there: ' in line, (argv, line)
    assert not list(tmp_path.glob('*.parquet')) and afile.read_text() == ''
    # a directory that can be made is taken, and made by the command only
    assert cli.parse(['report', '--out', str(tmp_path / 'new' / 'site'), str(PERFLOG)])
    assert not (tmp_path / 'new').exists()


def test_a_report_that_is_not_json_names_the_file(capsys, state, tmp_path):
    broken = tmp_path / 'broken.json'
    broken.write_text('{"runs": [\n')
    code, line = refused(capsys, 'session', '--report', str(broken))
    assert code == exits.USAGE
    assert line.startswith(f'mdxbench session: {broken}: not a ReFrame JSON report ('), line
    code, line = refused(capsys, 'session', '--report', str(tmp_path / 'none.json'))
    assert code == exits.USAGE and 'none.json: no such file' in line, line
    # a real report is read (ReFrame's own, of a run on local)
    real = tmp_path / 'report.json'
    with gzip.open(FIXTURES / 'reframe' / 'run-report-local-spack.json.gz') as fp:
        real.write_bytes(fp.read())
    assert cli.main(['session', '--report', str(real)]) == exits.OK


def test_a_configuration_error_of_the_site_is_one_line(capsys, state, tmp_path,
                                                       monkeypatch):
    '''accept on a system whose site file does not expand (an unset variable): the
    SiteConfigError is a usage error in one line, not a traceback with exit 1.'''
    site = tmp_path / 'site-configs'
    shutil.copytree(ROOT / 'site-configs', site)
    f = site / 'systems' / 'local.yaml'
    f.write_text(f.read_text().replace("time_limit:", "time_limit: '${MDXBENCH_NO_SUCH_VAR}'\n    x_limit:", 1))
    import mdxbench
    monkeypatch.setattr(mdxbench, 'REPO_ROOT', tmp_path)
    from mdxbench.post.fleet import jobs
    monkeypatch.setattr(jobs, 'REPO_ROOT', tmp_path)
    code, line = refused(capsys, 'accept', '--system', 'local', '--partition', 'debug',
                        '--dry-run', '--no-suspects')
    assert code == exits.USAGE, line
    assert 'MDXBENCH_NO_SUCH_VAR' in line and 'local.yaml' in line, line


def test_a_fault_of_mdxbench_is_one_line_and_debug_shows_the_traceback(capsys, state,
                                                                      monkeypatch):
    from mdxbench.post.commands import summary

    def fault(**options):
        return {}['no such key']       # a bug: KeyError

    monkeypatch.setattr(summary, 'run', fault)
    code, line = refused(capsys, 'summary', '--no-es', str(PERFLOG))
    assert code == exits.INTERNAL == 70
    assert line == ("mdxbench summary: internal error: KeyError: 'no such key' (rerun with "
                    '--debug for the traceback, and please report it)'), line
    with pytest.raises(KeyError):
        cli.main(['summary', '--debug', '--no-es', str(PERFLOG)])
    with pytest.raises(KeyError):
        cli.main(['--debug', 'summary', '--no-es', str(PERFLOG)])
    with pytest.raises(KeyError):
        cli.main(['summary', '-v', '--no-es', str(PERFLOG)])


@pytest.mark.parametrize('kind', ['ConnectionTimeout', 'ConnectionError'])
def test_elasticsearch_that_stops_answering_mid_command_is_pending_not_a_fault(
        capsys, state, monkeypatch, kind):
    '''A connection timeout or error that reaches the command (a cluster node lost, a
    cluster too busy to answer in time: seen in CI's cluster test, 2026-12-01, as "internal
    error: ConnectionTimeout") is PENDING (75), said in one line: not now, and not a fault
    of mdxbench -- the next run takes it up.'''
    import elasticsearch
    from mdxbench.post.commands import summary

    def lost(**options):
        raise getattr(elasticsearch, kind)('Connection timed out')

    monkeypatch.setattr(summary, 'run', lost)
    code, line = refused(capsys, 'summary', '--no-es', str(PERFLOG))
    assert code == exits.PENDING == 75, line
    assert line.startswith(f'mdxbench summary: Elasticsearch did not answer: {kind}: '
                           'Connection ') and line.endswith('; run again'), line


def test_the_installed_command_prints_no_traceback(tmp_path):
    '''The console script itself, in a fresh process, on one bad value of each kind.'''
    env = dict(os.environ, MDXBENCH_STATE_DIR=str(tmp_path))
    exe = shutil.which('mdxbench', path=os.path.dirname(sys.executable)) or 'mdxbench'
    for argv in (['changes', '--system', 'nosuchsystem'],
                 ['summary', '--since', 'notadate'],
                 ['session', '--report', str(PERFLOG)]):
        res = subprocess.run([exe, *argv], capture_output=True, text=True, env=env,
                             timeout=HANG_S)
        assert res.returncode == exits.USAGE, (argv, res.stderr)
        assert len(res.stderr.strip().splitlines()) == 1, (argv, res.stderr)
        assert 'Traceback' not in res.stderr


def test_a_truncated_perflog_line_says_so(tmp_path):
    '''A real line of a real perflog, cut after its check name: the message says truncated,
    not "not an mdxbench-perflog-v1 line" beside the tag it found.'''
    line = PERFLOG.read_text().splitlines()[1]
    cut = '|'.join(line.split('|')[:6]) + '\n'
    with pytest.raises(perflog.PerflogError) as err:
        perflog.parse_line(cut)
    assert str(err.value).startswith('truncated line: 6 columns'), err.value
    assert 'not an' not in str(err.value)


def test_summary_reports_an_unfinished_last_line(capsys, state, tmp_path):
    '''The perflog's last line still being written (no newline): summary says so and does
    not count it, as ingest leaves it for its next run.'''
    f = tmp_path / 'p.log'
    text = PERFLOG.read_text()
    lines = text.splitlines()
    f.write_text('\n'.join(lines[:-1]) + '\n' + lines[-1][:80])
    assert cli.main(['summary', '--no-es', str(f)]) == exits.OK
    out = capsys.readouterr()
    assert f'{f}:{len(lines)}: unfinished (no newline yet)' in out.err
    assert f'perflog records: ' in out.out and 'unfinished lines: 1' in out.out


# -- references, validated when loaded -----------------------------------------------------

PAPERS = ROOT / 'site-configs' / 'references' / 'papers.yaml'
#: BabelStreamOmp's entry for mdx2's 16-vCPU flavour, as papers.yaml states it
TRIAD_16 = '{var: triad, value: 164, unit: GB/s, lower: -0.15, upper: null,'


def _listing(tmp_path, entry):
    '''``reframe -l`` of BabelStream on local with papers.yaml's mdx2 triad entry replaced.'''
    refs = tmp_path / 'references'
    refs.mkdir()
    text = PAPERS.read_text()
    assert text.count(TRIAD_16) == 1
    (refs / 'papers.yaml').write_text(text.replace(TRIAD_16, entry))
    env = {k: v for k, v in os.environ.items() if not k.startswith('RFM_')}
    env.update(RFM_CONFIG_FILES=str(ROOT / 'site-configs' / 'settings.py'),
               MDXBENCH_REFERENCE_DIR=str(refs), MDXBENCH_STATE_DIR=str(tmp_path / 's'))
    exe = pathlib.Path(sys.executable).parent / 'reframe'
    return subprocess.run([str(exe), '-c', 'checks/memory/babelstream.py', '-l', '--system',
                           'local', '--nocolor'], capture_output=True, text=True, env=env,
                          cwd=ROOT, timeout=300)


@pytest.mark.parametrize('entry, says', [
    ('{var: triad, value: 16x4, unit: GB/s, lower: -0.15, upper: null,',
     "BabelStreamOmp.mdx2:vc16m32g[0].value: expected a positive number, got '16x4'"),
    ('{var: triad, value: 164, unit: furlongs, lower: -0.15, upper: null,',
     "BabelStreamOmp.mdx2:vc16m32g[0] (check BabelStreamOmp, system mdx2:vc16m32g).unit: "
     "'furlongs', but BabelStreamOmp reports triad in 'GB/s'"),
    ('{var: triad, value: 164, unit: GB/s, lower: null, upper: 0.15,',
     '(check BabelStreamOmp, system mdx2:vc16m32g).lower: None, but higher triad is better'),
    ('{var: triad, value: 164, unit: GB/s, lower: 0.15, upper: null,',
     '(check BabelStreamOmp, system mdx2:vc16m32g).lower: 0.15, but higher triad is better'),
], ids=['not-a-number', 'unit', 'no-bound-on-the-worse-side', 'bound-above-the-value'])
def test_a_bad_reference_fails_the_listing_naming_file_check_system_and_field(tmp_path,
                                                                                entry, says):
    res = _listing(tmp_path, entry)
    assert res.returncode != 0, res.stdout
    assert 'Found 0 check(s)' not in res.stdout
    assert f'reference error: {tmp_path}/references/papers.yaml: ' in res.stdout, res.stdout
    assert says in res.stdout, res.stdout[-3000:]


def test_the_good_references_list_the_checks(tmp_path):
    '''The same listing with papers.yaml's entry as it is: the refusals above are of the
    entries, not of the listing.'''
    res = _listing(tmp_path, TRIAD_16)
    assert res.returncode == 0, res.stdout
    assert re.search(r'Found [1-9]\d* check\(s\)', res.stdout), res.stdout


def test_mdxbench_refuses_a_non_numeric_reference_in_one_line(capsys, state, tmp_path,
                                                              monkeypatch):
    refs = tmp_path / 'references'
    refs.mkdir()
    (refs / 'papers.yaml').write_text(PAPERS.read_text().replace(
        TRIAD_16, TRIAD_16.replace('value: 164', 'value: 16x4')))
    monkeypatch.setenv('MDXBENCH_REFERENCE_DIR', str(refs))
    code, line = refused(capsys, 'report', '--out', str(tmp_path / 'site'), str(PERFLOG))
    assert code == exits.USAGE
    assert line == (f'mdxbench report: {refs}/papers.yaml: BabelStreamOmp.mdx2:vc16m32g[0].'
                    "value: expected a positive number, got '16x4'"), line


# -- accept's progress -----------------------------------------------------------------------

def test_accept_progress_counts_the_jobs_as_squeue_shows_them():
    '''jobs._tell from squeue's states: gone from the queue is done, R and CG running, the
    rest (PD, or not seen yet) queued; a line only when a count changes; none quiet.'''
    import io

    from mdxbench.post.fleet import jobs
    from mdxbench.post.site import text

    out = io.StringIO()
    progress = text.JobProgress(stream=out)
    states = {'11': 'R', '12': 'PD', '13': 'PD', '14': 'CG'}
    jobs._tell(progress, 'nodes', 6, states, ['10', '11', '12', '13', '14'], 1)
    jobs._tell(progress, 'nodes', 6, states, ['10', '11', '12', '13', '14'], 1)
    jobs._tell(progress, 'nodes', 6, {}, ['10', '11', '12', '13', '14', '15'], 0)
    assert out.getvalue().splitlines() == [
        'mdxbench accept: nodes: 1 of 6 jobs done, 2 running, 2 queued, 1 to submit',
        'mdxbench accept: nodes: 6 of 6 jobs done, 0 running, 0 queued, 0 to submit']
    quiet = io.StringIO()
    jobs._tell(text.JobProgress(quiet=True, stream=quiet), 'nodes', 5, {}, ['10'], 4)
    assert quiet.getvalue() == ''
