'''The landing page of a system's site (issue 57) shows before it tells: the latest run of
each series against its reference, read from the history a cycle keeps (the records table
or the scan's kept chunks, the same answer), and the sensitivity table folded while most
series have too few runs. The chart with references that ReFrame carried and judged is
drawn in Chromium by tests/integration/test_trends_es.py.'''
import pathlib
import re

import polars as pl

from hang import HANG_S
from mdxbench.post.analysis import changes, kept, scan
from mdxbench.post.site import publish
from mdxbench.post.store import records

HISTORY = pathlib.Path(__file__).parents[1] / 'fixtures' / 'perflogs' / 'history-local'


def _last_of_each(df):
    '''{series key: value of its last record}, by a walk over the records one by one (the
    records' names as the store gives them: renamed parameter values under their current
    names).'''
    last = {}
    for r in df.rows(named=True):
        key = tuple(r[k] for k in changes.SERIES)
        if key not in last or r['time'] >= last[key][0]:
            last[key] = (r['time'], r['value'])
    return {k: v for k, (_, v) in last.items()}


def test_the_latest_run_of_each_series_is_its_last_in_the_perflogs():
    df = records.from_perflogs([HISTORY])
    latest = kept.Table(df).latest()
    got = {tuple(r[:len(changes.SERIES)]): r[len(changes.SERIES)]
           for r in latest.select([*changes.SERIES, 'value']).rows()}
    expected = _last_of_each(df)
    assert len(expected) == 9 and got == expected


def test_the_kept_history_gives_the_same_latest_runs(tmp_path):
    df = records.from_perflogs([HISTORY])
    store = tmp_path / 'h.parquet'
    records.to_parquet(df, store)
    scan.find([str(store)], [], keep=tmp_path / 'keep', chunk_rows=100)
    by_kept = kept.Kept(tmp_path / 'keep').latest()
    by_table = kept.Table(df).latest()
    cols = [*changes.SERIES, 'value', 'ref', 'result']
    assert by_kept.height == by_table.height == 9
    assert by_kept.select(cols).rows() == by_table.select(cols).rows()
    assert (by_kept['time'].cast(pl.Int64) == by_table['time'].cast(pl.Int64)).all()


def test_series_without_a_reference_are_listed_with_how_to_get_one():
    '''This machine's history carries no reference (`local` has no paper figure): no bar,
    each series listed under the folded note that proposes references.'''
    table = kept.Table(records.from_perflogs([HISTORY]))
    latest = table.latest()
    runs = dict(table.each_series(list(latest.select(changes.SERIES).iter_rows())))
    html, drawn = publish.latest_section('local', latest, runs)
    assert not drawn and 'id="latest-chart"' not in html
    assert 'No series has a reference yet.' in html
    assert '9 series without a reference:\n<code>mdxbench references propose --system local' \
        in html
    # every series at a glance: a row each, its last runs a line of as many points
    body = html.split('id="glance"')[1].split('<tbody>')[1].split('</tbody>')[0]
    assert body.count('<tr>') == 9 and body.count('<svg class="spark"') == 9
    assert set(len(v) for v in runs.values()) == {36}
    lines = re.findall(r'<polyline points="([^"]*)"', body)
    assert [len(p.split()) for p in lines] == [publish.SPARK_RUNS] * 9


def test_a_sparkline_follows_its_values():
    '''The line's highest point is the largest value's, its lowest the smallest's (SVG's y
    grows downwards), the last point's dot in the colour of the run's result.'''
    svg = publish.sparkline([3.0, 1.0, 2.0, 5.0, 4.0], 'fail', width=100, height=20)
    pts = [tuple(map(float, p.split(','))) for p in
           re.search(r'points="([^"]*)"', svg).group(1).split()]
    ys = [y for _, y in pts]
    assert ys.index(min(ys)) == 3 and ys.index(max(ys)) == 1
    assert [x for x, _ in pts] == sorted(x for x, _ in pts)
    assert f'fill="{publish.RESULT_COLOURS["fail"]}"' in svg
    assert re.search(r'cx="([\d.]+)" cy="([\d.]+)"', svg).groups() == \
        tuple(f'{c:.1f}' for c in pts[-1])


def test_the_sensitivity_table_is_folded_until_most_series_have_a_figure():
    def sens(n, known):
        return [{'target': 0.05, 'mde': 0.02 if i < known else None, 'system': 's',
                 'partition': 'p', 'check': f'c{i}', 'perf_var': 'v', 'runs': 3,
                 'noise_cv': None} for i in range(n)]

    assert '<details id="sensitivity-details">' in publish.sensitivity_section(sens(4, 1))
    assert '<details id="sensitivity-details" open>' in publish.sensitivity_section(sens(4, 2))


def test_the_papers_figures_are_drawn_on_the_report_s_axes():
    '''The iperf3 figure's squares are the papers' iperf3 figures, at their stream counts,
    each once (Iperf3OneQueue repeats two of Iperf3Throughput's): read from papers.yaml
    here, not through the references module.'''
    import matplotlib

    matplotlib.use('Agg')
    import matplotlib.pyplot as plt
    import yaml

    from mdxbench.post.site import report

    papers = yaml.safe_load((pathlib.Path(__file__).parents[2] / 'site-configs' /
                             'references' / 'papers.yaml').read_text())
    expected = {(float(e['when']['streams']), e['value'])
                for c in ('Iperf3Throughput', 'Iperf3OneQueue')
                for entries in papers[c].values() for e in entries}
    fig, ax = plt.subplots()
    report._paper_points(ax, ('Iperf3Throughput', 'Iperf3OneQueue'), 'throughput', 'streams')
    drawn = [tuple(map(float, c.get_offsets()[0])) for c in ax.collections]
    plt.close(fig)
    assert len(expected) == 4 and sorted(drawn) == sorted(expected)


def test_site_serve_serves_the_published_site_and_refuses_a_directory_without_one(tmp_path):
    '''`mdxbench site serve` in its own process: the cycles' directory a cycle published
    (one cycle over real perflogs), served on a free port; a directory with no site is
    refused in one line, exit 2.'''
    import os
    import subprocess
    import sys
    import urllib.request

    exe = pathlib.Path(sys.executable).parent / 'mdxbench'
    env = dict(os.environ, MDXBENCH_STATE_DIR=str(tmp_path / 'state'),
               MDXBENCH_EVENTS=str(tmp_path / 'events.jsonl'))
    cyc = subprocess.run([str(exe), 'cycle', '--system', 'local', '--no-ingest', '-q',
                          '--perflogs', str(HISTORY)], env=env, capture_output=True, text=True,
                         timeout=600)
    assert cyc.returncode == 0, cyc.stdout[-2000:] + cyc.stderr[-2000:]
    # -q: the cycle's lines, no table of incidents
    assert all(ln.startswith('mdxbench cycle: ') for ln in cyc.stdout.splitlines()), cyc.stdout
    assert 'mdxbench cycle: 324 records (perflogs), 0 change points' in cyc.stdout
    srv = subprocess.Popen([str(exe), 'site', 'serve', '--port', '0'], env=env, text=True,
                           stdout=subprocess.PIPE, stderr=subprocess.DEVNULL)
    try:
        line = srv.stdout.readline()
        assert line.startswith(f"mdxbench site: serving {tmp_path / 'state' / 'cycle'} at "
                               'http://127.0.0.1:'), line
        base = line.split(' at ')[1].split()[0]
        with urllib.request.urlopen(base + 'index.html', timeout=HANG_S) as r:
            assert 'local/site/index.html' in r.read().decode()
        with urllib.request.urlopen(base + 'local/site/index.html', timeout=HANG_S) as r:
            assert 'Latest runs against their references' in r.read().decode()
    finally:
        srv.terminate()
        srv.wait(timeout=HANG_S)
    empty = tmp_path / 'empty'
    empty.mkdir()
    res = subprocess.run([str(exe), 'site', 'serve', '--dir', str(empty)], env=env,
                         capture_output=True, text=True, timeout=HANG_S)
    assert res.returncode == 2 and res.stderr.strip() == (
        f'mdxbench site: {empty}: no index.html: no site published there yet (mdxbench cycle '
        '--system SYSTEM publishes one)'), res.stderr
