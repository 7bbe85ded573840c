'''The site a cycle publishes, served over HTTP as a login node would (Python's
http.server) and opened in headless Chromium (Debian's): every link and script of every
page resolves on the same server (nothing from elsewhere), no page logs a console error,
and the incident page draws its series with the change marked. Negative controls: a
missing incident page and a missing script are caught.'''
import functools
import html.parser
import http.server
import json
import shutil
import subprocess
import threading
import urllib.error
import urllib.parse
import urllib.request

import pytest

from hang import HANG_S
from conftest import mdxbench
from histories import slowed_sockperf
from test_report import CHROMIUM_FLAGS


class Links(html.parser.HTMLParser):
    def __init__(self):
        super().__init__()
        self.found = []

    def handle_starttag(self, tag, attrs):
        self.found += [v for k, v in attrs if k in ('href', 'src') and v]


@pytest.fixture
def served(tmp_path):
    '''(site directory, base URL) of a cycle's site over the slowed real sockperf history.'''
    plogs = slowed_sockperf(tmp_path)
    env = {'MDXBENCH_STATE_DIR': str(tmp_path / 'state'),
           'MDXBENCH_EVENTS': str(tmp_path / 'events.jsonl')}
    res = mdxbench('cycle', '--system', 'local', '--no-ingest', '--perflogs', str(plogs),
                   '--json', str(tmp_path / 'cycle.json'), env=env)
    assert res.returncode == 1, res.stdout + res.stderr
    site = tmp_path / 'state' / 'cycle' / 'local' / 'site'
    handler = functools.partial(http.server.SimpleHTTPRequestHandler, directory=str(site))
    handler.log_message = lambda *a: None
    server = http.server.ThreadingHTTPServer(('127.0.0.1', 0), handler)
    threading.Thread(target=server.serve_forever, daemon=True).start()
    yield site, f'http://127.0.0.1:{server.server_address[1]}/'
    server.shutdown()


def chromium(url, tmp_path):
    '''(DOM after the scripts ran, console errors) of a page in headless Chromium.'''
    exe = shutil.which('chromium')
    if exe is None:
        pytest.fail('chromium is not installed: ci/install.sh installs Debian\'s chromium')
    res = subprocess.run([exe, *CHROMIUM_FLAGS, f'--user-data-dir={tmp_path / "chromium"}',
                          '--dump-dom', url], capture_output=True, text=True, timeout=HANG_S)
    assert res.returncode == 0, res.stderr[-2000:]
    return res.stdout, [ln for ln in res.stderr.splitlines()
                        if 'CONSOLE' in ln or 'Uncaught' in ln or 'Failed to load' in ln]


def crawl(base, tmp_path):
    '''Every page reachable from index.html: {url: (dom, console errors)}, and the
    problems: links that do not resolve on the same server, or that leave it.'''
    seen, todo, problems = {}, [base + 'index.html'], []
    while todo:
        url = todo.pop()
        if url in seen:
            continue
        dom, console = chromium(url, tmp_path)
        seen[url] = (dom, console)
        parser = Links()
        parser.feed(dom)
        for link in parser.found:
            target = urllib.parse.urljoin(url, link).split('#')[0]
            if not target.startswith(base):
                problems.append(f'{url}: {link} leaves the site')
                continue
            try:
                with urllib.request.urlopen(target, timeout=10) as r:
                    kind = r.headers.get_content_type()
            except urllib.error.HTTPError as err:
                problems.append(f'{url}: {link} -> HTTP {err.code}')
                continue
            if kind == 'text/html' and target not in seen:
                todo.append(target)
    return seen, problems


def test_every_page_of_the_site_loads_links_and_draws(served, tmp_path):
    site, base = served
    pages, problems = crawl(base, tmp_path)
    assert problems == []
    assert {u.removeprefix(base) for u in pages} >= {'index.html', 'report/index.html',
                                                    'report/trends.html'}
    assert {u: c for u, (_, c) in pages.items() if c} == {}
    record = json.loads((tmp_path / 'cycle.json').read_text())
    [ident] = record['new']
    dom = pages[base + f'incident-{ident}.html'][0]
    # Plotly drew both series, each with the change marked (a dashed rule, the effect)
    assert dom.count('js-plotly-plot"') == 2
    assert '+48%' in dom and '+44%' in dom
    assert 'mdxbench incident ack --system local ' + ident in dom
    index = pages[base + 'index.html'][0]
    assert f'incident-{ident}.html' in index and 'exit 1: a new regression incident' in index
    # how small a regression each of the 3 series can see, on the index and the incident
    assert 'of 3 series can see a 5% step' in index
    assert index.split('id="sensitivity"')[1].split('</table>')[0].count('<tr>') == 4
    assert dom.count('repetitions for 5%') + dom.count('repetition for 5%') >= 2
    feed = urllib.request.urlopen(base + 'feed.xml').read().decode()
    assert f'incident-{ident}.html' in feed


def test_a_missing_page_and_a_missing_script_are_caught(served, tmp_path):
    site, base = served
    [page] = site.glob('incident-*.html')
    (site / 'report' / 'trends' / 'plotly.min.js').unlink()
    dom, console = chromium(base + page.name, tmp_path)
    assert console and 'js-plotly-plot"' not in dom
    page.unlink()
    _, problems = crawl(base, tmp_path)
    assert any(f'{page.name} -> HTTP 404' in p for p in problems), problems
