'''The summary of a ReFrame session, on a real run's output and report (tests/fixtures/
reframe: the Spack-built checks on `local`, 20 passed and 18 skipped).'''
import gzip
import json
import pathlib

from mdxbench.post.analysis import session
from mdxbench.post.site import text

FIX = pathlib.Path(__file__).resolve().parents[1] / 'fixtures' / 'reframe'


def _real():
    report = json.loads(gzip.decompress((FIX / 'run-report-local-spack.json.gz').read_bytes()))
    return report, (FIX / 'reframe-output-local-spack.log').read_text()


def test_skips_are_grouped_by_reason_with_counts():
    report, output = _real()
    s = session.summarize(report, output)
    assert s['results'] == {'pass': 20, 'skip': 18}
    assert s['unexplained_skips'] == []
    groups = {g: n for g, n, _ in s['skips']}
    assert groups == {
        'local:debug has N node(s); placement different-hosts needs N': 6,
        'local:debug has N node(s); placement same-host needs N': 6,
        'local:debug has N node(s); this run needs N': 2,
        next(g for g in groups if g.startswith('IOR reads back on N node(s)')): 4}
    # biggest group first, each with an example case
    assert [n for _, n, _ in s['skips']] == sorted((n for _, n, _ in s['skips']), reverse=True)
    assert all(ex for _, _, ex in s['skips'])


def test_minutes_per_area_count_each_job_once():
    report, output = _real()
    s = session.summarize(report, output)
    areas = {a: (n, m) for a, n, m in s['areas']}
    assert set(areas) == {'storage', 'network', 'memory'}
    assert areas['storage'][0] == 8 and areas['network'][0] == 9 and areas['memory'][0] == 3
    # the jobs' own wall time (submission to completion), not time_total's queue waits
    jobs = [t for r in report['runs'] for t in r['testcases'] if t['result'] == 'pass']
    total = sum(t['job_completion_time_unix'] - t['job_submit_time'] for t in jobs) / 60
    assert abs(sum(m for _, m in areas.values()) - total) < 1e-9
    assert total < sum(t['time_total'] for t in jobs) / 60
    shown = text.session(s)
    assert shown.startswith('cases: 38 (20 pass, 18 skip)') and 'minutes per area' in shown


def test_a_skip_without_its_reason_is_said():
    report, _ = _real()
    s = session.summarize(report, '')
    assert len(s['unexplained_skips']) == 18
    assert s['skips'] == [('(no reason in the output)', 18, s['skips'][0][2])]


def test_reason_groups_keep_words_and_drop_figures_and_paths():
    r = ("xlinpack_xeon64 (intel-mkl-linpack) is not installed on local:debug with environment "
         "spack: not found on PATH=/a/b:/usr/bin (Intel's download)")
    assert session.reason_group(r) == ("xlinpack_xeon64 (intel-mkl-linpack) is not installed on "
                                       "local:debug with environment spack (Intel's download)")
    assert session.area('/x/checks/network/osu.py') == 'network' and session.area(None) == 'other'
