'''Trend pages: one chart per series (system, partition, environment, check with its
parameters, perf variable), in one self-contained offline HTML file (``trends.html`` of
``mdxbench report``): Plotly's JavaScript is embedded once, since a cluster's login node
reaches no CDN.

Each chart shows the values over time (passed and failed runs marked apart), the recorded
system events as vertical rules, the change points (``mdxbench changes``) as dashed rules,
the median of each segment between change points (the baseline the latest runs are held
to), and the reference with its tolerance band where the records carry one. Hovering a
point shows its job id, nodes, suite commit and binary. The index at the top lists the
series, those with a change point first.'''
import datetime as dt
import html
import json

import polars as pl

from mdxbench.post.store import events as events_store

from mdxbench.post.analysis import changes

COLORS = {'pass': '#1f77b4', 'fail': '#d62728'}
VERDICT_COLORS = {'regression': '#d62728', 'improvement': '#2ca02c', 'no-direction': '#7f7f7f'}


def _hover(meta_text, row):
    try:
        meta = json.loads(meta_text) if meta_text else {}
    except ValueError:
        meta = {}
    binary = changes.PROVENANCE['binary'](meta) or '?'
    return (f"job {row['jobid']}<br>nodes {row['nodes'] or '?'}<br>"
            f"suite {(meta.get('suite_commit') or '?')[:12]}<br>binary {binary}<br>"
            f"kernel {meta.get('node_kernel') or '?'}")


def chart(series_rows, key, cps, events):
    '''A Plotly figure for one series: ``series_rows`` its records in time order.'''
    import plotly.graph_objects as go

    fig = go.Figure()
    t = [r['time'] for r in series_rows]
    for res in ('pass', 'fail', None):
        pts = [r for r in series_rows if (r['result'] or None) == res]
        if not pts:
            continue
        fig.add_trace(go.Scatter(
            x=[r['time'] for r in pts], y=[r['value'] for r in pts], mode='markers',
            name={'pass': 'passed', 'fail': 'failed', None: 'no reference'}[res],
            marker={'color': COLORS.get(res, '#9467bd'), 'size': 7,
                    'symbol': 'x' if res == 'fail' else 'circle'},
            text=[_hover(r['meta'], r) for r in pts],
            hovertemplate='%{x|%Y-%m-%d %H:%M}<br>%{y:.4g} ' + key['unit'] + '<br>%{text}'
                          '<extra></extra>'))
    # the segments between change points, each at its median: the baseline
    edges = [0] + [c['run'] - 1 for c in cps] + [len(series_rows)]
    for a, b in zip(edges, edges[1:]):
        seg = sorted(r['value'] for r in series_rows[a:b])
        med = seg[len(seg) // 2] if len(seg) % 2 else (seg[len(seg) // 2 - 1] + seg[len(seg) // 2]) / 2
        fig.add_trace(go.Scatter(x=[t[a], t[b - 1]], y=[med, med], mode='lines',
                                 line={'color': '#ff7f0e', 'width': 2},
                                 name='segment median', showlegend=a == 0,
                                 hoverinfo='skip'))
    last = series_rows[-1]
    if last['ref']:
        ref = last['ref']
        lo = ref * (1 + last['lower']) if last['lower'] is not None else None
        hi = ref * (1 + last['upper']) if last['upper'] is not None else None
        fig.add_hline(y=ref, line={'color': '#2ca02c', 'dash': 'dot'},
                      annotation_text=f'reference {ref:.4g}')
        if lo is not None or hi is not None:
            vals = [r['value'] for r in series_rows]
            fig.add_hrect(y0=lo if lo is not None else min(vals + [ref]) * 0.9,
                          y1=hi if hi is not None else max(vals + [ref]) * 1.1,
                          fillcolor='#2ca02c', opacity=0.08, line_width=0)
    for e in events:
        fig.add_vline(x=e['_time'], line={'color': '#555', 'width': 1})
        fig.add_annotation(x=e['_time'], y=1, yref='paper', text=html.escape(e['name']),
                           showarrow=False, xanchor='left', font={'size': 10})
    for c in cps:
        x = series_rows[c['run'] - 1]['time']
        fig.add_vline(x=x, line={'color': VERDICT_COLORS[c['verdict']], 'dash': 'dash'})
        fig.add_annotation(x=x, y=0, yref='paper', showarrow=False, xanchor='left',
                           text=f"{c['effect']:+.0%}", font={'size': 10,
                                                             'color': VERDICT_COLORS[c['verdict']]})
    if len({r['time'] for r in series_rows}) == 1:      # one point: a day either side
        fig.update_xaxes(range=[t[0] - dt.timedelta(days=1), t[0] + dt.timedelta(days=1)])
    better = key['better'] or 'undeclared'
    fig.update_layout(
        title={'text': f"{html.escape(key['check'])} \u2014 {key['perf_var']} "
                       f"({key['unit']}, {better} is better) [{key['environ']}]",
               'font': {'size': 13}},
        height=320, margin={'l': 60, 'r': 20, 't': 40, 'b': 40},
        yaxis_title=key['unit'], legend={'orientation': 'h', 'y': -0.2})
    return fig


PAGE = '''<!DOCTYPE html>
<html lang="en"><head><meta charset="utf-8"><title>mdxbench trends</title>
<script>{plotlyjs}</script>
<style>
body {{ font-family: sans-serif; margin: 2em; }}
table {{ border-collapse: collapse; margin-bottom: 1.5em; }}
th, td {{ border: 1px solid #999; padding: 0.2em 0.5em; text-align: left; }}
.regression {{ color: #d62728; font-weight: bold; }}
.improvement {{ color: #2ca02c; }}
.chart {{ max-width: 1100px; }}
</style></head>
<body data-charts="{ncharts}">
<h1>mdxbench trends</h1>
<p>{nseries} series, {nrecords} records, {ncps} change points. One chart per series:
values over time (failed runs as crosses), recorded events as grey rules, change points as
dashed rules (red: regression, green: improvement), the median of each segment between
change points (orange), the reference and its tolerance band (green) where one applies.</p>
<h2>Series</h2>
<table><thead><tr><th>system:partition</th><th>check</th><th>perf var</th><th>runs</th>
<th>latest change point</th><th>minimum detectable effect</th></tr></thead><tbody>
{index}
</tbody></table>
{sections}
</body></html>
'''


def write(df, path, events=(), sensitivity=None, change_points=None):
    '''Write the trend page for the records of ``df`` to ``path``; returns the number of
    charts and the change points. ``sensitivity``: the series' minimum detectable
    effects (:mod:`mdxbench.post.analysis.sensitivity`), shown in the index.
    ``change_points``: those a cycle already found on the same records and events
    (:func:`changes.find`), drawn as they are; None: found here.'''
    from mdxbench.post.site import text
    import plotly.io as pio
    from plotly.offline import get_plotlyjs

    evs = events_store.timed(events)
    cps = changes.find(df, evs) if change_points is None else list(change_points)
    by_series = {}
    for c in cps:
        by_series.setdefault(tuple(c[k] for k in changes.SERIES), []).append(c)

    d, g = changes.series_index(df)
    mdes = {tuple(e[k] for k in changes.SERIES): e for e in sensitivity or ()}
    entries = []
    for i, (key, start, n) in enumerate(zip(g.select(changes.SERIES).iter_rows(named=True),
                                            g['start'], g['n'])):
        k = tuple(key[f] for f in changes.SERIES)
        scps = sorted(by_series.get(k, []), key=lambda c: c['run'])
        entries.append((key, start, n, scps, f'series-{i}'))
    entries.sort(key=lambda e: (not e[3], e[0]['system'], e[0]['partition'], e[0]['check'],
                                e[0]['perf_var']))

    index, sections, current = [], [], None
    for key, start, n, scps, anchor in entries:
        k = tuple(key[f] for f in changes.SERIES)
        rows = d.slice(start, n).to_dicts()
        sevs = [e for e in evs if e['system'] == key['system']
                and e.get('partition') in (None, key['partition'])
                and rows[0]['time'] <= e['_time'] <= rows[-1]['time']]
        last = scps[-1] if scps else None
        index.append(
            f'<tr><td>{html.escape(key["system"])}:{html.escape(key["partition"])}</td>'
            f'<td><a href="#{anchor}">{html.escape(key["check"])}</a></td>'
            f'<td>{html.escape(key["perf_var"])}</td><td>{n}</td><td>'
            + (f'<span class="{last["verdict"]}">{last["verdict"]} {last["effect"]:+.1%}</span>'
               f' since {last["time"][:10]} (run {last["run"]})' if last else '&ndash;')
            + '</td><td>' + html.escape(text.mde(mdes[k]) if k in mdes else 'not computed')
            + '</td></tr>')
        target = f'{key["system"]}:{key["partition"]}'
        if target != current:
            sections.append(f'<h2>{html.escape(target)}</h2>')
            current = target
        fig = chart(rows, key, scps, sevs)
        sections.append(f'<div class="chart" id="{anchor}">'
                        + pio.to_html(fig, full_html=False, include_plotlyjs=False,
                                      div_id=f'{anchor}-plot', config={'responsive': True, 'displaylogo': False})
                        + '</div>')

    page = PAGE.format(plotlyjs=get_plotlyjs(), ncharts=len(entries), nseries=len(entries),
                       nrecords=d.height, ncps=len(cps), index='\n'.join(index),
                       sections='\n'.join(sections))
    path.write_text(page)
    return len(entries), cps
