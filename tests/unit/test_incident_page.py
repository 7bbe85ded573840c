'''The incident page as an operator meets it (issue 28): a node slowed, then restored above
its earlier level -- the incident is resolved, its chart draws every segment (the slow runs
and the recovered ones at their own medians, the recovery marked), and its scope and cause
are said once, in words. Generated histories (test input for the grouping and the page, not
benchmark output).'''
import datetime as dt
import re

from mdxbench.post.analysis import incidents, kept
from mdxbench.post.site import publish, trends
from mdxbench.post.store import records

from test_changes import T0, gauss, rows
from test_incidents import found_in


def test_a_recovered_node_is_resolved_and_every_segment_is_drawn(tmp_path):
    x = gauss(100, 90, seed=7)
    x[30:60] *= 0.7              # a CPU quota on the node
    x[60:] *= 1.06               # quota lifted: back above the old level
    rs = rows(x)
    ev = {'system': 'mdx2', 'name': 'quota on n1', 'partition': None,
          'time': (T0 + dt.timedelta(days=29, hours=12)).isoformat()}
    found = incidents.group(found_in(rs, [ev]))
    assert len(found) == 1 and found[0]['kind'] == 'event' and found[0]['went_away']
    state = incidents.update({}, found, '2026-11-23T00:00:00+00:00')
    inc, = state.values()
    assert inc['state'] == 'resolved'
    publish.write(tmp_path, 'mdx2', state, None, kept.Table(records.frame(rs)), [ev])
    html = (tmp_path / f'incident-{inc["id"]}.html').read_text()
    assert '<tr><th>partition</th><td>all partitions</td></tr>' in html
    cause = re.search(r'<tr><th>cause</th><td>(.*?)</td></tr>', html).group(1)
    assert cause.startswith('event &quot;quota on n1&quot;') and 'event: event' not in html, cause
    assert '>None<' not in html
    # three segments (~100, ~70, ~106): both change points of the series are handed to
    # the chart (the trend pages' script draws each segment at its median), the regression
    # and the recovery
    ident = re.search(r'<div class="chart" id="chart-(s[0-9a-f]{16})"></div><script>', html)[1]
    text = html[html.index(f'mdxbenchChart("{ident}", '):]
    pts, drawn = trends.chart_data(text[:text.index(');\n') + 3], ident)
    assert len(pts['v']) == 90
    assert [(c['run'], c['verdict']) for c in drawn['cps']] == [(31, 'regression'),
                                                                  (61, 'improvement')]
    assert round(drawn['cps'][0]['effect'], 2) == -0.3 and 0.5 < drawn['cps'][1]['effect'] < 0.6
    assert [e['name'] for e in drawn['events']] == ['quota on n1']
    assert '<script src="report/trends/trends.js"></script>' in html
    assert (tmp_path / 'report' / 'trends' / 'trends.js').exists()
