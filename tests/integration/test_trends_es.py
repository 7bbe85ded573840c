'''Change points and trend pages from the real Elasticsearch, from perflogs and from a
Parquet export, on the real history recorded on `local` with a step put into its second
half (HpccStream's Triad 30% lower: this VM's Triad is bimodal, 32 to 60 GB/s, the compute node's kernel changed, an event recorded
in between); the trend page opened in headless Chromium, with a negative control.'''
import json
import re
import shutil

from hang import HANG_S
from conftest import ROOT, mdxbench
from mdxbench.post.site import trends
from test_report import open_in_chromium

HISTORY = ROOT / 'tests' / 'fixtures' / 'perflogs' / 'history-local'


def stepped_history(tmp_path):
    '''The real history, with Triad x 0.7 and kernel "<k>-updated" from the middle run on;
    returns (perflog dir, time of a run well before the step, time of the first run after).'''
    plogs = tmp_path / 'perflogs'
    shutil.copytree(HISTORY, plogs)
    f = plogs / 'local' / 'debug' / 'HpccStream.log'
    lines = f.read_text().splitlines()
    header, body = lines[0], lines[1:]
    half = len(body) // 2
    for i in range(half, len(body)):
        line = re.sub(r'\|triad\|([0-9.eE+-]+)\|',
                      lambda m: f'|triad|{float(m.group(1)) * 0.7:.4f}|', body[i])
        body[i] = re.sub(r'"node_kernel":\s*"([^"]+)"', r'"node_kernel":"\1-updated"', line)
        assert body[i] != line
    f.write_text('\n'.join([header] + body) + '\n')
    t_early, t_after = body[half // 2].split('|')[0], body[half].split('|')[0]
    return plogs, t_early, t_after


def summary(out):
    data = json.loads(out)
    return sorted((c['check'], c['perf_var'], c['run'], c['verdict']) for c in data['change_points'])


def test_change_points_from_es_perflogs_and_parquet_agree_and_are_explained(es, tmp_path):
    plogs, t_early, _ = stepped_history(tmp_path)
    env = dict(es['env'], MDXBENCH_EVENTS=str(tmp_path / 'events.jsonl'))
    res = mdxbench('event', 'add', 'local', 'kernel update', '--time', t_early, env=env)
    assert res.returncode == 0, res.stderr
    res = mdxbench('ingest', str(plogs), '--state', str(tmp_path / 'state.json'), env=env)
    assert res.returncode == 0, res.stdout + res.stderr

    from_logs = mdxbench('changes', str(plogs), '--format', 'json', env=env)
    from_es = mdxbench('changes', '--from-es', '--format', 'json', env=env)
    exp = mdxbench('export', '--from-es', '--out', str(tmp_path / 'store.parquet'), env=env)
    assert exp.returncode == 0, exp.stderr
    from_pq = mdxbench('changes', '--parquet', str(tmp_path / 'store.parquet'), '--format',
                       'json', env=env)
    for r in (from_logs, from_es, from_pq):
        assert r.returncode == 1, r.stdout[-2000:] + r.stderr      # a regression: exit 1
    got = summary(from_logs.stdout)
    assert got == summary(from_es.stdout) == summary(from_pq.stdout)
    assert [(c, v, verdict) for c, v, _, verdict in got] == [('HpccStream', 'triad', 'regression')]

    cp = json.loads(from_es.stdout)['change_points'][0]
    assert cp['effect'] < -0.1 and cp['changed'].get('kernel'), cp
    assert any(k.endswith('-updated') for k in cp['changed']['kernel'][1])
    assert {'binary', 'suite'} <= set(cp['unchanged'])
    # the event was recorded long before the step: not between its runs
    assert cp['events'] == [] and 'no recorded event' in cp['explanation']


def test_trend_page_renders_offline_in_chromium_and_the_check_can_fail(es, tmp_path):
    plogs, _, t_after = stepped_history(tmp_path)
    env = dict(es['env'], MDXBENCH_EVENTS=str(tmp_path / 'events.jsonl'))
    assert mdxbench('event', 'add', 'local', 'kernel update', '--time', t_after,
                    env=env).returncode == 0
    assert mdxbench('ingest', str(plogs), '--state', str(tmp_path / 'state.json'),
                    env=env).returncode == 0
    res = mdxbench('report', '--from-es', '--out', str(tmp_path / 'report'), env=env)
    assert res.returncode == 0, res.stdout + res.stderr
    page = tmp_path / 'report' / 'trends.html'
    text = page.read_text()
    assert 'src="http' not in text                                     # nothing fetched
    assert (page.parent / 'trends' / 'plotly.min.js').stat().st_size > 1_000_000
    n = int(re.search(r'data-charts="(\d+)"', text).group(1))
    assert n == 9                                 # HpccStream x 6 + SockperfPingPong x 3
    # the series with a change point is listed first in the index
    first = trends.index_rows(page)[0]
    assert (first['check'], first['perf_var'], first['verdict']) == \
        ('HpccStream', 'triad', 'regression'), first

    # the index draws every series; the series opened (its link: #id) draws its chart
    dom, console = open_in_chromium(page, tmp_path, '#' + first['id'])
    assert dom.returncode == 0, dom.stderr[-2000:]
    assert len(re.findall(r'<tr id="s[0-9a-f]{16}"', dom.stdout)) == n
    assert dom.stdout.count('js-plotly-plot') == 1, 'the opened chart did not render'
    assert dom.stdout.count('class="main-svg"') >= 1
    assert console == []
    assert 'kernel update' in dom.stdout           # the event's rule is labelled

    # negative control: without Plotly's script no chart renders, and we notice
    broken = tmp_path / 'report' / 'broken.html'
    broken.write_text(text.replace('<script src="trends/plotly.min.js"></script>', ''))
    dom2, console2 = open_in_chromium(broken, tmp_path, '#' + first['id'])
    assert dom2.stdout.count('js-plotly-plot') == 0 and console2, 'a broken page went unnoticed'


def test_references_proposed_from_the_real_history_are_enforced_by_reframe(services, tmp_path):
    '''`local` has no paper figure: proposing from its recorded history gives thresholds
    that the next ReFrame run of the same check carries and judges.'''
    from conftest import VENV_BIN, run
    from mdxbench import perflog

    refs = tmp_path / 'refs'
    shutil.copytree(ROOT / 'site-configs' / 'references', refs)
    res = mdxbench('references', 'propose', '--system', 'local', str(HISTORY),
                   '--reference-dir', str(refs), '--out', str(refs / 'measured-local.yaml'))
    assert res.returncode == 0, res.stdout + res.stderr
    assert '9 series proposed, 0 kept paper figures, 0 without a proposal' in res.stdout
    import yaml
    data = yaml.safe_load((refs / 'measured-local.yaml').read_text())
    p50 = next(e for e in data['SockperfPingPong']['local:debug'] if e['var'] == 'p50_rtt')
    assert p50['when'] == {'placement': 'loopback'} and p50['lower'] is None
    assert p50['source'].startswith('measured: 36 runs 2026-11-23..2026-11-23, suite ')

    env = {'MDXBENCH_PERFLOG_DIR': str(tmp_path / 'perflogs'),
           'MDXBENCH_REFERENCE_DIR': str(refs),
           'RFM_CONFIG_FILES': str(ROOT / 'site-configs' / 'settings.py')}
    ran = run([str(VENV_BIN / 'reframe'), '-c', 'checks/network/tcp.py', '-n',
               'SockperfPingPong.*loopback', '-r', '--system', 'local', '--prefix',
               str(tmp_path / 'rfm'), '--nocolor', '-S', 'duration=2'], env=env, timeout=600)
    recs = [r for f in (tmp_path / 'perflogs').rglob('*.log')
            for ln in f.read_text().splitlines()[1:] for r in perflog.parse_line(ln)]
    assert recs, ran.stdout[-3000:]
    got = {r['perf_var']: r for r in recs}
    assert got['p50_rtt']['perf_ref'] == p50['value']
    assert got['p50_rtt']['perf_upper_thres'] == p50['upper']
    # what ReFrame must have judged, from the value and the proposed bounds (relative to
    # the reference; None: unbounded on that side)
    for var, r in got.items():
        ref, lo, hi, v = (r['perf_ref'], r['perf_lower_thres'], r['perf_upper_thres'],
                          r['perf_value'])
        assert ref, (var, 'no reference carried')
        ok = (lo is None or v >= ref * (1 + lo)) and (hi is None or v <= ref * (1 + hi))
        assert r['perf_result'] == ('pass' if ok else 'fail'), (var, v, ref, lo, hi)
    all_pass = all(r['perf_result'] == 'pass' for r in got.values())
    assert (ran.returncode == 0) == all_pass, (ran.returncode, ran.stdout[-3000:])
    assert got['p50_rtt']['meta']['reference_source']['p50_rtt'] == p50['source']

    # the landing page of a cycle over that run (issue 57): the latest run of each series
    # against the reference ReFrame carried, coloured as ReFrame judged it, drawn by
    # Plotly in headless Chromium; its screenshot stays in the test's directory
    import subprocess

    from test_published_site import chromium
    from test_report import CHROMIUM_FLAGS

    cyc = mdxbench('cycle', '--system', 'local', '--no-ingest', '--perflogs',
                   str(tmp_path / 'perflogs'), env={'MDXBENCH_STATE_DIR': str(tmp_path / 'st'),
                                                    'MDXBENCH_EVENTS': str(tmp_path / 'ev')})
    assert cyc.returncode == 0, cyc.stdout[-3000:] + cyc.stderr[-3000:]
    index = tmp_path / 'st' / 'cycle' / 'local' / 'site' / 'index.html'
    dom, console = chromium(index.as_uri(), tmp_path)
    assert console == [], console
    chart = dom.split('id="latest-chart"')[1]
    fails = sum(r['perf_result'] == 'fail' for r in got.values())
    assert f'data-bars="{len(got)}" data-fail="{fails}"' in chart[:80], chart[:200]
    # one bar per series, each in the colour of ReFrame's result
    bars = re.findall(r'<g class="point"><path[^>]*style="[^"]*fill: (rgb\([^)]*\))', chart)
    colours = {'pass': 'rgb(44, 160, 44)', 'fail': 'rgb(214, 39, 40)'}
    assert sorted(bars) == sorted(colours[r['perf_result']] for r in got.values()), bars
    shot = tmp_path / 'landing-page.png'
    res = subprocess.run(['chromium', *CHROMIUM_FLAGS, f'--user-data-dir={tmp_path / "shot"}',
                          '--window-size=1300,900', f'--screenshot={shot}', index.as_uri()],
                         capture_output=True, text=True, timeout=HANG_S)
    assert res.returncode == 0 and shot.stat().st_size > 20_000, res.stderr[-2000:]
    print(f'landing page screenshot: {shot}')
