'''The trend pages: an index of the series, a chart per series in its own file drawn when
it is opened, offline, series with a change point listed first, events and references
drawn, unchanged charts not written again (generated series, not benchmark output).'''
import datetime as dt
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
    '''(the points, what is drawn besides them) of a series' files.'''
    return trends.series_points(path.parent / 'trends', ident)[:2]


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


def _hpcc(n):
    out = rows(gauss(50, n), check='HpccStream', var='copy')
    for r in out:
        r.update(ref=50.0, lower=-0.1, upper=None)
    return out


def test_ids_stay_unchanged_charts_are_not_rewritten_and_gone_series_removed(tmp_path):
    page = tmp_path / 'trends.html'
    df = records.frame(_hpcc(28) + rows(stepped(100, 30, 15, 0.8)) +
                       rows([7.0], check='Single', var='x', system='local', part='debug'))
    trends.write(df, page)
    ids = {r['check']: r['id'] for r in trends.index_rows(page)}
    files = {i: trends.series_file(tmp_path / 'trends', i) for i in ids.values()}
    for f in files.values():
        os.utime(f, (1, 1))
    # one more run of HpccStream only, in the same month; the lone series is gone
    trends.write(records.frame(_hpcc(29) + rows(stepped(100, 30, 15, 0.8))), page)
    again = {r['check']: r['id'] for r in trends.index_rows(page)}
    assert again == {k: v for k, v in ids.items() if k != 'Single'}
    # all in the latest month: the series' files hold what is drawn besides the runs
    assert os.stat(files[ids['BabelStreamOmp']]).st_mtime == 1        # the same chart
    assert os.stat(files[ids['HpccStream']]).st_mtime == 1            # a new run only
    assert len(_chart(page, ids['HpccStream'])[0]['v']) == 29
    assert not files[ids['Single']].exists()


def _months(n):
    '''A stepped series and a steady one, ``n`` daily runs from 2026-09-01.'''
    return rows(stepped(100, n, 10, 0.8)) + rows(gauss(50, n, seed=3), check='HpccStream')


def test_a_nights_new_run_rewrites_a_bucket_not_the_series_earlier_runs(tmp_path):
    '''A series' earlier runs are in its own file, written again only when they (or its
    change points, events, reference) changed; the runs of the newest record's month are
    in its bucket's file: a night's new run rewrites that.'''
    page = tmp_path / 'trends.html'
    folder = tmp_path / 'trends'
    hist = _months(45)                               # 2026-09-01 .. 2026-10-15
    trends.write(records.frame(hist), page)
    ids = {r['check']: r['id'] for r in trends.index_rows(page)}
    pts, drawn, (earlier, recent) = trends.series_points(folder, ids['BabelStreamOmp'])
    assert drawn['latest'] == f'latest-{ids["BabelStreamOmp"][1:3]}.js'
    # September's 30 runs, then October's 15, each part's first time absolute
    assert len(earlier['v']) == 30 and len(recent['v']) == 15
    assert earlier['t'][0] == T0.timestamp()
    assert recent['t'][0] == (T0 + dt.timedelta(days=30)).timestamp()
    assert pts['v'] == [float(f'{r["value"]:.7g}') for r in hist[:45]]
    assert pts['job'] == [r['jobid'] for r in hist[:45]] and pts['r'] == 'p' * 45
    assert [c['run'] for c in drawn['cps']] == [11]    # runs counted over both parts

    ident = ids['HpccStream']
    main = trends.series_file(folder, ident)
    latest = folder / trends.series_points(folder, ident)[1]['latest']
    os.utime(latest, (1, 1))
    os.utime(main, (1, 1))
    # the next night: one more run in October
    trends.write(records.frame(_months(46)), page)
    assert os.stat(main).st_mtime == 1 and os.stat(latest).st_mtime > 1
    assert len(trends.series_points(folder, ident)[0]['v']) == 46
    # an earlier run corrected: the series' file is written again
    fixed = _months(46)
    fixed[50]['value'] += 1                          # HpccStream's 5th run
    trends.write(records.frame(fixed), page)
    assert os.stat(main).st_mtime > 1
    assert trends.series_points(folder, ident)[0]['v'][4] == float(f'{fixed[50]["value"]:.7g}')
    # the month turns: October joins the earlier runs, November is the latest
    trends.write(records.frame(_months(62)), page)
    pts, _, (earlier, recent) = trends.series_points(folder, ident)
    assert (len(earlier['v']), len(recent['v']), len(pts['v'])) == (61, 1, 62)


def test_a_series_file_is_known_by_its_runs_whatever_their_order(tmp_path):
    '''The records read in another order rebuild no series' file; two earlier runs whose
    values are swapped (their sum and sum of squares unchanged) rebuild it.'''
    page = tmp_path / 'trends.html'
    folder = tmp_path / 'trends'
    hist = _months(46)
    trends.write(records.frame(hist), page)
    ident = {r['check']: r['id'] for r in trends.index_rows(page)}['HpccStream']
    main = trends.series_file(folder, ident)
    os.utime(main, (1, 1))
    trends.write(records.frame(hist).sample(fraction=1.0, shuffle=True, seed=4), page)
    assert os.stat(main).st_mtime == 1
    swapped = [dict(r) for r in hist]
    swapped[50]['value'], swapped[51]['value'] = hist[51]['value'], hist[50]['value']
    trends.write(records.frame(swapped), page)
    assert os.stat(main).st_mtime > 1
    assert trends.series_points(folder, ident)[0]['v'][4:6] == \
        [float(f'{hist[k]["value"]:.7g}') for k in (51, 50)]


def test_a_cycles_change_points_are_drawn_not_found_again(tmp_path, monkeypatch):
    '''The cycle hands its change points to the site: the trend pages are the same, and
    the detector is not run a second time (issue 33: the site never recomputes them).'''
    from mdxbench.post.analysis import scan

    df = records.frame(rows(gauss(50, 30), check='HpccStream', var='copy') +
                       rows(stepped(100, 30, 15, 0.8)))
    (tmp_path / 'found').mkdir()
    (tmp_path / 'given').mkdir()
    n, cps = trends.write(df, tmp_path / 'found' / 'trends.html')
    assert [c['check'] for c in cps] == ['BabelStreamOmp']

    def no_second_scan(*a, **k):
        raise AssertionError('change points found again')

    monkeypatch.setattr(scan, 'find', no_second_scan)
    n2, cps2 = trends.write(df, tmp_path / 'given' / 'trends.html', change_points=cps)
    assert (n2, cps2) == (n, cps)
    for f in (tmp_path / 'found' / 'trends').rglob('*.js'):
        rel = f.relative_to(tmp_path / 'found')
        assert (tmp_path / 'given' / rel).read_text() == f.read_text(), rel
    assert (tmp_path / 'given' / 'trends.html').read_text() == \
        (tmp_path / 'found' / 'trends.html').read_text()
