'''The trend page: one chart per series in one offline file, series with a change point
listed first, events and references drawn (generated series, not benchmark output).'''
import datetime as dt
import re

from mdxbench.post.store import records
from mdxbench.post.site import trends

from test_changes import T0, gauss, rows, stepped


def test_one_offline_page_with_a_chart_per_series_changes_first(tmp_path):
    steady = rows(gauss(50, 30), check='HpccStream', var='copy')
    for r in steady:
        r.update(ref=50.0, lower=-0.1, upper=None)
    df = records.frame(steady + rows(stepped(100, 30, 15, 0.8)) +
                       rows([7.0], check='Single', var='x', system='local', part='debug'))
    ev = [{'system': 'mdx2', 'partition': None, 'name': 'BIOS update',
           'time': (T0 + dt.timedelta(days=14, hours=12)).isoformat()}]
    n, cps = trends.write(df, tmp_path / 'trends.html', ev)
    text = (tmp_path / 'trends.html').read_text()
    assert n == 3 and re.search(r'data-charts="3"', text)
    assert [c['check'] for c in cps] == ['BabelStreamOmp']
    assert '<script src=' not in text and len(text) > 1_000_000      # Plotly inside
    index = text.split('<tbody>')[1].split('</tbody>')[0].split('</tr>')
    assert 'BabelStreamOmp' in index[0] and 'regression -2' in index[0]
    assert 'BIOS update' in text and 'reference 50' in text
    # one chart per series, each its own div; the lone point gets a day either side
    assert text.count('class="chart"') == 3
    assert '<h2>local:debug</h2>' in text and '<h2>mdx2:vc16m32g</h2>' in text


def test_a_cycles_change_points_are_drawn_not_found_again(tmp_path, monkeypatch):
    '''The cycle hands its change points to the site: the trend page is the same page, and
    the detector is not run a second time (issue 33: the site never recomputes them).'''
    from mdxbench.post.analysis import changes

    df = records.frame(rows(gauss(50, 30), check='HpccStream', var='copy') +
                       rows(stepped(100, 30, 15, 0.8)))
    n, cps = trends.write(df, tmp_path / 'found.html')
    assert [c['check'] for c in cps] == ['BabelStreamOmp']

    def no_second_scan(*a, **k):
        raise AssertionError('change points found again')

    monkeypatch.setattr(changes, 'find', no_second_scan)
    n2, cps2 = trends.write(df, tmp_path / 'given.html', change_points=cps)
    assert (n2, cps2) == (n, cps)
    strip = lambda t: re.sub(r'[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}',
                             'ID', t)       # Plotly's random div ids
    assert strip((tmp_path / 'given.html').read_text()) == \
        strip((tmp_path / 'found.html').read_text())
