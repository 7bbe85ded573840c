'''The operator's view the main job leaves (ci/main.sh: one `mdxbench cycle` per system, the
systems' index over them), built from the real perflogs of two main jobs on this machine
(tests/fixtures/perflogs/main-job-{1,2}: `local`, and the namespace cluster `nscluster`),
one cycle per system after each run as the main job does, then served over HTTP as a login
node would and crawled in headless Chromium: every link resolves on the server, both
systems are listed, each system's trend page has one chart per series, with both runs on
every series both runs measured; and the second run opened no incident from this
machine's run-to-run noise.'''
import functools
import http.server
import json
import pathlib
import re
import threading
import urllib.request

import polars as pl
import pytest

from conftest import mdxbench
from mdxbench.post.site import trends as trend_pages
from test_published_site import chromium, crawl

FIXTURES = pathlib.Path(__file__).resolve().parents[1] / 'fixtures' / 'perflogs'
RUNS = [FIXTURES / 'main-job-1', FIXTURES / 'main-job-2']
SYSTEMS = ('local', 'nscluster')


def series_runs(system, runs):
    '''{series: number of the runs that measured it} from the perflogs themselves.'''
    from mdxbench.post.analysis import changes
    from mdxbench.post.store import records

    seen = {}
    for run in runs:
        df = records.from_perflogs([run / system])
        for key in df.filter(pl.col('value').is_not_null()).select(changes.SERIES).unique().rows():
            seen[key] = seen.get(key, 0) + 1
    return seen


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


def test_the_second_run_adds_to_the_history_and_opens_no_incident(main_site):
    _, results = main_site
    for system, run, res, record in results:
        assert res.returncode == 0, (system, run, res.stdout[-3000:], res.stderr[-3000:])
        assert record['new'] == [] and record['exit_code'] == 0, (system, run, record)
    # the second cycle of each system read both runs: more records than the first
    first = {s: r['records'] for s, n, _, r in results if n == 1}
    second = {s: r['records'] for s, n, _, r in results if n == 2}
    assert all(second[s] > first[s] > 0 for s in SYSTEMS), (first, second)


@pytest.fixture
def served(main_site):
    '''The base URL of the cycles' directory served over HTTP for the test.'''
    root, _ = main_site
    handler = functools.partial(http.server.SimpleHTTPRequestHandler, directory=str(root))
    handler.log_message = lambda *a: None
    server = http.server.ThreadingHTTPServer(('127.0.0.1', 0), handler)
    server.handle_error = lambda *a: None     # Chromium closing a connection early
    threading.Thread(target=server.serve_forever, daemon=True).start()
    yield f'http://127.0.0.1:{server.server_address[1]}/'
    server.shutdown()


def test_the_published_site_lists_both_systems_and_a_chart_per_series(served, tmp_path):
    base = served
    pages, problems = crawl(base, tmp_path)
    assert problems == []
    assert {u: c for u, (_, c) in pages.items() if c} == {}
    index = pages[base + 'index.html'][0]
    rows = re.findall(r'<a href="([\w-]+)/site/index.html">', index)
    assert sorted(rows) == sorted(SYSTEMS), index[-2000:]
    for system in SYSTEMS:
        site = base + f'{system}/site/'
        assert {site + 'index.html', site + 'report/index.html',
                site + 'report/trends.html'} <= set(pages), sorted(pages)
        trends = pages[site + 'report/trends.html'][0]
        expected = series_runs(system, RUNS)
        # the index, drawn in the browser: a row per series with its runs; both runs on
        # what both measured
        assert int(trends.split('data-charts="')[1].split('"')[0]) == len(expected)
        found = re.findall(r'<tr id="(s[0-9a-f]{16})">.*?</a></td><td>[^<]*</td><td>(\d+)</td>',
                           trends)
        runs = [int(n) for _, n in found]
        assert len(runs) == len(expected)
        assert sorted(runs) == sorted(expected.values()), system
        assert sum(n == 2 for n in runs) >= len(expected) // 2, (system, runs)
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
