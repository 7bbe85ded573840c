'''The trend pages: an index of the series, a chart per series in its own file drawn when
it is opened, offline, series with a change point listed first, events and references
drawn, unchanged charts not written again (generated series, not benchmark output).'''
import datetime as dt
import json
import os
import re

from mdxbench.post.store import records
from mdxbench.post.site import trends

from test_changes import T0, gauss, rows, stepped


def _records():
    steady = rows(gauss(50, 30), check='HpccStream', var='copy')
    for r in steady:
        r.update(ref=50.0, lower=-0.1, upper=None)
    return records.frame(steady + rows(stepped(100, 30, 15, 0.8)) +
                         rows([7.0], check='Single', var='x', system='local', part='debug'))


def _chart(path, ident):
    '''(the points, what is drawn besides them) of a series' chart file.'''
    text = (path.parent / 'trends' / f'{ident}.js').read_text()
    return trends.chart_data(text, ident)


def test_an_index_and_a_chart_per_series_in_its_own_file_changes_first(tmp_path):
    ev = [{'system': 'mdx2', 'partition': None, 'name': 'BIOS update',
           'time': (T0 + dt.timedelta(days=14, hours=12)).isoformat()}]
    page = tmp_path / 'trends.html'
    n, cps = trends.write(_records(), page, ev)
    text = page.read_text()
    assert n == 3 and re.search(r'data-charts="3"', text)
    assert [c['check'] for c in cps] == ['BabelStreamOmp']
    # Plotly once, beside the page, nothing from the network; the page itself is small
    assert '<script src="trends/plotly.min.js">' in text and 'src="http' not in text
    assert (tmp_path / 'trends' / 'plotly.min.js').stat().st_size > 1_000_000
    assert len(text) < 20_000
    index = trends.index_rows(page)
    assert [r['check'] for r in index] == ['BabelStreamOmp', 'Single', 'HpccStream']
    assert index[0]['verdict'] == 'regression' and index[0]['effect'].startswith('-2')
    assert index[0]['since'].endswith('(run 16)') and index[1]['verdict'] is None
    assert [r['runs'] for r in index] == [30, 1, 30]
    # each series' chart: its points in time order, the event, the change point, the
    # reference and its band
    pts, drawn = _chart(page, index[0]['id'])
    assert len(pts['v']) == len(pts['t']) == len(pts['r']) == len(pts['job']) == 30
    assert pts['r'] == 'p' * 30 and pts['v'][16] < 0.9 * pts['v'][14]
    assert all(step == 86400 for step in pts['t'][1:])
    assert pts['t'][0] == T0.timestamp()
    assert [e['name'] for e in drawn['events']] == ['BIOS update']
    [cp] = drawn['cps']
    assert cp['run'] == 16 and cp['verdict'] == 'regression' and 'BIOS update' in cp['explanation']
    steady, drawn = _chart(page, index[2]['id'])
    assert drawn['ref'] == {'ref': 50.0, 'lo': 45.0, 'hi': None} and drawn['cps'] == []
    assert drawn['title'].startswith('HpccStream \u2014 copy') and set(steady['r']) <= {'p', 'f'}
    assert len({r['id'] for r in index}) == 3
    # the page's script, which draws them, is beside it
    assert 'function mdxbenchChart(' in (tmp_path / 'trends' / 'trends.js').read_text()


def test_ids_stay_unchanged_charts_are_not_rewritten_and_gone_series_removed(tmp_path):
    page = tmp_path / 'trends.html'
    df = _records()
    trends.write(df, page)
    ids = {r['check']: r['id'] for r in trends.index_rows(page)}
    files = {i: tmp_path / 'trends' / f'{i}.js' for i in ids.values()}
    for f in files.values():
        os.utime(f, (1, 1))
    # one more run of HpccStream only; the lone series is gone
    more = rows(gauss(50, 31), check='HpccStream', var='copy')
    for r in more:
        r.update(ref=50.0, lower=-0.1, upper=None)
    trends.write(records.frame(more + rows(stepped(100, 30, 15, 0.8))), page)
    again = {r['check']: r['id'] for r in trends.index_rows(page)}
    assert again == {k: v for k, v in ids.items() if k != 'Single'}
    assert os.stat(files[ids['BabelStreamOmp']]).st_mtime == 1        # the same chart
    assert os.stat(files[ids['HpccStream']]).st_mtime > 1             # a new run
    assert not files[ids['Single']].exists()


def test_a_cycles_change_points_are_drawn_not_found_again(tmp_path, monkeypatch):
    '''The cycle hands its change points to the site: the trend pages are the same, and
    the detector is not run a second time (issue 33: the site never recomputes them).'''
    from mdxbench.post.analysis import changes

    df = records.frame(rows(gauss(50, 30), check='HpccStream', var='copy') +
                       rows(stepped(100, 30, 15, 0.8)))
    (tmp_path / 'found').mkdir()
    (tmp_path / 'given').mkdir()
    n, cps = trends.write(df, tmp_path / 'found' / 'trends.html')
    assert [c['check'] for c in cps] == ['BabelStreamOmp']

    def no_second_scan(*a, **k):
        raise AssertionError('change points found again')

    monkeypatch.setattr(changes, 'find', no_second_scan)
    n2, cps2 = trends.write(df, tmp_path / 'given' / 'trends.html', change_points=cps)
    assert (n2, cps2) == (n, cps)
    for f in (tmp_path / 'found' / 'trends').iterdir():
        assert (tmp_path / 'given' / 'trends' / f.name).read_text() == f.read_text(), f.name
    assert (tmp_path / 'given' / 'trends.html').read_text() == \
        (tmp_path / 'found' / 'trends.html').read_text()
