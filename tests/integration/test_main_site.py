'''The operator's view the main job leaves (ci/main.sh: one `mdxbench cycle` per system, the
systems' index over them), served over HTTP as a login node would and crawled in headless
Chromium: every link resolves on the server, every system is listed, each system's trend
page has one chart per series with every run of it; and a second run opened no incident
from this machine's run-to-run noise.

* Today's main job: conftest.main_job (ci/main.sh itself on `local`, short runs, this CI's
  perflogs in today's record format), then ci/main.sh again on a few checks, adding to the
  same history and site.
* Old records: the perflogs of two main jobs of 2026-11 (tests/fixtures/perflogs/
  main-job-{1,2}: `local` and the namespace cluster `nscluster`, records before job nodes,
  Spack specs and split marks existed), one cycle per system after each run: they are
  still read and published.'''
import functools
import http.server
import json
import pathlib
import re
import threading
import urllib.request

import polars as pl
import pytest

from conftest import MAIN_SHORT, main_job_run, mdxbench
from mdxbench.post.site import trends as trend_pages
from test_published_site import chromium, crawl

FIXTURES = pathlib.Path(__file__).resolve().parents[1] / 'fixtures' / 'perflogs'
RUNS = [FIXTURES / 'main-job-1', FIXTURES / 'main-job-2']
SYSTEMS = ('local', 'nscluster')


def series_runs(dirs):
    '''{series: number of its records with a value} from the perflogs themselves.'''
    from mdxbench.post.analysis import changes
    from mdxbench.post.store import records

    df = records.from_perflogs([str(d) for d in dirs])
    counts = df.filter(pl.col('value').is_not_null()).group_by(changes.SERIES).len()
    return {tuple(r[:-1]): r[-1] for r in counts.rows()}


@pytest.fixture(scope='module')
def main_site(tmp_path_factory):
    '''(cycle directory, [cycle results]) after one cycle per system per run.'''
    tmp = tmp_path_factory.mktemp('main-site')
    env = {'MDXBENCH_STATE_DIR': str(tmp / 'state'),
           'MDXBENCH_EVENTS': str(tmp / 'events.jsonl')}
    results = []
    for i in range(len(RUNS)):
        for system in SYSTEMS:
            out = tmp / f'cycle-{system}-{i + 1}.json'
            res = mdxbench('cycle', '--system', system, '--no-ingest', '--perflogs',
                           *[str(r / system) for r in RUNS[:i + 1]], '--json', str(out),
                           env=env, timeout=600)
            results.append((system, i + 1, res, json.loads(out.read_text())))
    return tmp / 'state' / 'cycle', results


def test_old_records_second_run_adds_to_the_history_and_opens_no_incident(main_site):
    _, results = main_site
    for system, run, res, record in results:
        assert res.returncode == 0, (system, run, res.stdout[-3000:], res.stderr[-3000:])
        assert record['new'] == [] and record['exit_code'] == 0, (system, run, record)
    # the second cycle of each system read both runs: more records than the first
    first = {s: r['records'] for s, n, _, r in results if n == 1}
    second = {s: r['records'] for s, n, _, r in results if n == 2}
    assert all(second[s] > first[s] > 0 for s in SYSTEMS), (first, second)


def serve(root):
    '''Serve ``root`` over HTTP: (base URL, server).'''
    handler = functools.partial(http.server.SimpleHTTPRequestHandler, directory=str(root))
    handler.log_message = lambda *a: None
    server = http.server.ThreadingHTTPServer(('127.0.0.1', 0), handler)
    server.handle_error = lambda *a: None     # Chromium closing a connection early
    threading.Thread(target=server.serve_forever, daemon=True).start()
    return f'http://127.0.0.1:{server.server_address[1]}/', server


@pytest.fixture
def served(main_site):
    '''The base URL of the old records' cycles directory served over HTTP for the test.'''
    base, server = serve(main_site[0])
    yield base
    server.shutdown()


def test_old_records_published_site_lists_both_systems_and_a_chart_per_series(served, tmp_path):
    expected = {system: series_runs([r / system for r in RUNS]) for system in SYSTEMS}
    # most series were measured by both runs
    assert all(sum(n == 2 for n in e.values()) >= len(e) // 2 for e in expected.values())
    assert_site(served, expected, tmp_path)


def assert_site(base, expected_by_system, tmp_path):
    '''The systems' index at ``base`` lists exactly the systems of ``expected_by_system``
    ({system: {series: runs}}), each with a chart per series holding every run.'''
    pages, problems = crawl(base, tmp_path)
    assert problems == []
    assert {u: c for u, (_, c) in pages.items() if c} == {}
    index = pages[base + 'index.html'][0]
    rows = re.findall(r'<a href="([\w-]+)/site/index.html">', index)
    assert sorted(rows) == sorted(expected_by_system), index[-2000:]
    for system, expected in expected_by_system.items():
        site = base + f'{system}/site/'
        assert {site + 'index.html', site + 'report/index.html',
                site + 'report/trends.html'} <= set(pages), sorted(pages)
        trends = pages[site + 'report/trends.html'][0]
        # the index, drawn in the browser: a row per series with its runs
        assert int(trends.split('data-charts="')[1].split('"')[0]) == len(expected)
        found = re.findall(r'<tr id="(s[0-9a-f]{16})">.*?</a></td><td>[^<]*</td><td>(\d+)</td>',
                           trends)
        runs = [int(n) for _, n in found]
        assert len(runs) == len(expected)
        assert sorted(runs) == sorted(expected.values()), system
        # every series' chart is served, with as many points as the index says
        for ident, n in found:
            with urllib.request.urlopen(site + f'report/trends/{ident[1:3]}/{ident}.js',
                                        timeout=10) as r:
                earlier, drawn = trend_pages.chart_data(r.read().decode(), ident)
            latest = {}
            if drawn['latest']:
                with urllib.request.urlopen(site + 'report/trends/' + drawn['latest'],
                                            timeout=10) as r:
                    latest = trend_pages.latest_data(r.read().decode())
            assert len((earlier or {}).get('v', [])) + len(latest.get(ident, {}).get('v', [])) \
                == int(n)
        # and a series opened (its link, #id) is drawn by Plotly in the browser, with all
        # its points
        dom, console = chromium(site + f'report/trends.html#{found[0][0]}', tmp_path)
        assert dom.count('js-plotly-plot"') == 1 and console == [], (system, console)
        assert dom.count('class="point"') == int(found[0][1]), system
        assert re.search(r'data-ms="\d+"', dom)
        report = pages[site + 'report/index.html'][0]
        assert report.count('<table') >= 5


# --- today's main job ------------------------------------------------------------------
#: the second main job: three short cases, enough for series with two runs (anchored: a
#: bare 'StreamOmp' also selects BabelStreamOmp, and HpccStream's 3 minutes with it)
SECOND = ['-n', '^StreamOmp%threads=one-thread$', '-n', '^NetperfTcpRR%placement=loopback$',
          '-n', '^SockperfPingPong%placement=loopback$']


@pytest.fixture(scope='module')
def main_twice(main_job):
    '''ci/main.sh a second time on a few checks, into the first run's history and site.'''
    res, report = main_job_run(main_job['tmp'], main_job['env'], *MAIN_SHORT, *SECOND,
                               stage='rfm-second')
    return main_job, res, report


def _cycle_records(out):
    m = re.findall(r'^mdxbench cycle: (\d+) records', out, re.M)
    assert m, out[-3000:]
    return int(m[-1])


def test_the_main_jobs_second_run_adds_to_the_history_and_opens_no_incident(main_twice):
    first, res, report = main_twice
    assert first['res'].returncode == 0, first['res'].stdout[-5000:]
    assert res.returncode == 0, res.stdout[-5000:] + res.stderr[-3000:]
    assert report and {tc['name'].split()[0] for r in report['runs'] for tc in r['testcases']
                       if tc['result'] == 'pass'} >= {'StreamOmp', 'NetperfTcpRR', 'SockperfPingPong'}
    assert _cycle_records(res.stdout) > _cycle_records(first['res'].stdout) > 0
    incidents = first['tmp'] / 'main' / 'cycle' / 'local' / 'incidents.json'
    assert not incidents.exists() or json.loads(incidents.read_text())['incidents'] == {}
    # today's records carry what the old ones lack: the job's nodes, and for Spack's
    # builds the hash of the concrete spec kept beside the perflogs
    from mdxbench import perflog
    recs = [r for f in (first['tmp'] / 'perflogs').rglob('*.log')
            for ln in f.read_text().splitlines()[1:] for r in perflog.parse_line(ln)]
    assert recs and all(r['meta'].get('job_nodes') for r in recs), recs[0]['meta']
    hashes = {r['meta']['binary']['spack_hash'] for r in recs
              if (r['meta'].get('binary') or {}).get('spack_hash')}
    assert hashes and all((first['tmp'] / 'perflogs' / 'specs' / f'{h}.json').is_file()
                          for h in hashes), hashes


def test_the_main_jobs_site_lists_the_system_and_a_chart_per_series(main_twice, tmp_path):
    first, _, _ = main_twice
    expected = series_runs([first['tmp'] / 'perflogs'])
    assert sum(n == 2 for n in expected.values()) >= 3, expected     # the second run's
    base, server = serve(first['tmp'] / 'main' / 'cycle')
    try:
        assert_site(base, {'local': expected}, tmp_path)
    finally:
        server.shutdown()
