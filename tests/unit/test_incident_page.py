'''The incident page as an operator meets it (issue 28): a node slowed, then restored above
its earlier level -- the incident is resolved, its chart draws every segment (the slow runs
and the recovered ones at their own medians, the recovery marked), and its scope and cause
are said once, in words. Generated histories (test input for the grouping and the page, not
benchmark output).'''
import datetime as dt
import re

from mdxbench.post.analysis import incidents
from mdxbench.post.site import publish
from mdxbench.post.store import records

from test_changes import T0, gauss, rows
from test_incidents import scan


def test_a_recovered_node_is_resolved_and_every_segment_is_drawn(tmp_path):
    x = gauss(100, 90, seed=7)
    x[30:60] *= 0.7              # a CPU quota on the node
    x[60:] *= 1.06               # quota lifted: back above the old level
    rs = rows(x)
    ev = {'system': 'mdx2', 'name': 'quota on n1', 'partition': None,
          'time': (T0 + dt.timedelta(days=29, hours=12)).isoformat()}
    found = incidents.group(scan(rs, [ev]))
    assert len(found) == 1 and found[0]['kind'] == 'event' and found[0]['went_away']
    state = incidents.update({}, found, '2026-11-23T00:00:00+00:00')
    inc, = state.values()
    assert inc['state'] == 'resolved'
    publish.write(tmp_path, 'mdx2', state, None, records.frame(rs), [ev])
    html = (tmp_path / f'incident-{inc["id"]}.html').read_text()
    assert '<tr><th>partition</th><td>all partitions</td></tr>' in html
    cause = re.search(r'<tr><th>cause</th><td>(.*?)</td></tr>', html).group(1)
    assert cause.startswith('event &quot;quota on n1&quot;') and 'event: event' not in html, cause
    assert '>None<' not in html
    # three segments at their own medians (~100, ~70, ~106): two change points drawn, the
    # regression in red, the recovery in green
    chart = html[html.index('id="chart-0"'):]
    assert chart.count('"name":"segment median"') == 3, chart.count('segment median')
    assert '#d62728' in chart and '#2ca02c' in chart
    assert '"text":"-30%"' in chart and re.search(r'"text":"\+5\d%"', chart), \
        re.findall(r'"text":"[+-]\d+%"', chart)
