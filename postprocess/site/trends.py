'''Trend pages: one chart per series (system, partition, environment, check with its
parameters, perf variable), offline (a cluster's login node reaches no CDN), at any number
of series, as asv publishes its graphs: ``trends.html`` is an index of the series, drawn
in the browser from ``trends/index.js`` and filtered there by system, partition, check
and verdict; a series' chart is drawn when it is opened (a row's link, or
``trends.html#<id>``), from its own file ``trends/<id>.js``; Plotly's JavaScript is
``trends/plotly.min.js``, once. The files are scripts, not JSON fetched, so that the page
works from the disk (``file://``) as well as served. A series' id is a hash of its keys:
links stay valid from one cycle to the next, and a series whose chart is the same is not
written again.

Each chart shows the values over time (passed and failed runs marked apart), the recorded
system events as vertical rules, the change points (``mdxbench changes``) as dashed rules,
the median of each segment between change points (the baseline the latest runs are held
to), and the reference with its tolerance band where the records carry one. Hovering a
point shows its job id, nodes, suite commit and binary. The index lists the series with a
change point first.'''
import datetime as dt
import functools
import hashlib
import html
import json
import pathlib
import statistics

import polars as pl

from mdxbench.post.store import events as events_store

from mdxbench.post.analysis import changes

COLORS = {'pass': '#1f77b4', 'fail': '#d62728'}
VERDICT_COLORS = {'regression': '#d62728', 'improvement': '#2ca02c', 'no-direction': '#7f7f7f'}


@functools.lru_cache(maxsize=4096)
def _provenance(meta_text):
    '''What a point's hover says of its ``meta``: the runs of a series mostly share it, so
    it is read once.'''
    try:
        meta = json.loads(meta_text) if meta_text else {}
    except ValueError:
        meta = {}
    binary = changes.PROVENANCE['binary'](meta) or '?'
    return (f"suite {(meta.get('suite_commit') or '?')[:12]}<br>binary {binary}<br>"
            f"kernel {meta.get('node_kernel') or '?'}")


def _hover(meta_text, row):
    return f"job {row['jobid']}<br>nodes {row['nodes'] or '?'}<br>{_provenance(meta_text)}"


def _iso(t):
    return t.isoformat() if hasattr(t, 'isoformat') else t


def _vline(x, line):
    return {'type': 'line', 'xref': 'x', 'x0': x, 'x1': x, 'yref': 'paper', 'y0': 0, 'y1': 1,
            'line': line}


def chart(series_rows, key, cps, events):
    '''The Plotly figure of one series as plain data (``{'data', 'layout'}``, JSON as it
    is): ``series_rows`` its records in time order. Built without Plotly's figure objects,
    whose checking of every property cost about 30 ms a chart.'''
    t = [_iso(r['time']) for r in series_rows]
    data, shapes, notes = [], [], []
    for res in ('pass', 'fail', None):
        pts = [(x, r) for x, r in zip(t, series_rows) if (r['result'] or None) == res]
        if not pts:
            continue
        data.append({
            'type': 'scatter', 'mode': 'markers', 'x': [x for x, _ in pts],
            'y': [r['value'] for _, r in pts],
            'name': {'pass': 'passed', 'fail': 'failed', None: 'no reference'}[res],
            'marker': {'color': COLORS.get(res, '#9467bd'), 'size': 7,
                       'symbol': 'x' if res == 'fail' else 'circle'},
            'text': [_hover(r['meta'], r) for _, r in pts],
            'hovertemplate': '%{x|%Y-%m-%d %H:%M}<br>%{y:.4g} ' + key['unit'] + '<br>%{text}'
                             '<extra></extra>'})
    # the segments between change points, each at its median: the baseline
    edges = [0] + [c['run'] - 1 for c in cps] + [len(series_rows)]
    for a, b in zip(edges, edges[1:]):
        med = statistics.median(r['value'] for r in series_rows[a:b])
        data.append({'type': 'scatter', 'mode': 'lines', 'x': [t[a], t[b - 1]], 'y': [med, med],
                     'line': {'color': '#ff7f0e', 'width': 2}, 'name': 'segment median',
                     'showlegend': a == 0, 'hoverinfo': 'skip'})
    last = series_rows[-1]
    if last['ref']:
        ref = last['ref']
        lo = ref * (1 + last['lower']) if last['lower'] is not None else None
        hi = ref * (1 + last['upper']) if last['upper'] is not None else None
        shapes.append({'type': 'line', 'xref': 'paper', 'x0': 0, 'x1': 1, 'yref': 'y',
                       'y0': ref, 'y1': ref, 'line': {'color': '#2ca02c', 'dash': 'dot'}})
        notes.append({'xref': 'paper', 'x': 1, 'yref': 'y', 'y': ref, 'showarrow': False,
                      'xanchor': 'right', 'yanchor': 'bottom',
                      'text': f'reference {ref:.4g}'})
        if lo is not None or hi is not None:
            vals = [r['value'] for r in series_rows]
            shapes.append({'type': 'rect', 'xref': 'paper', 'x0': 0, 'x1': 1, 'yref': 'y',
                           'y0': lo if lo is not None else min(vals + [ref]) * 0.9,
                           'y1': hi if hi is not None else max(vals + [ref]) * 1.1,
                           'fillcolor': '#2ca02c', 'opacity': 0.08, 'line': {'width': 0}})
    for e in events:
        x = _iso(e['_time'])
        shapes.append(_vline(x, {'color': '#555', 'width': 1}))
        notes.append({'x': x, 'y': 1, 'yref': 'paper', 'text': html.escape(e['name']),
                      'showarrow': False, 'xanchor': 'left', 'font': {'size': 10}})
    for c in cps:
        x, color = t[c['run'] - 1], VERDICT_COLORS[c['verdict']]
        shapes.append(_vline(x, {'color': color, 'dash': 'dash'}))
        notes.append({'x': x, 'y': 0, 'yref': 'paper', 'showarrow': False, 'xanchor': 'left',
                      'text': f"{c['effect']:+.0%}", 'font': {'size': 10, 'color': color}})
    xaxis = {}
    if len(set(t)) == 1:      # one point: a day either side
        day = dt.timedelta(days=1)
        xaxis['range'] = [_iso(series_rows[0]['time'] - day), _iso(series_rows[0]['time'] + day)]
    better = key['better'] or 'undeclared'
    return {'data': data, 'layout': {
        'title': {'text': f"{html.escape(key['check'])} \u2014 {key['perf_var']} "
                          f"({key['unit']}, {better} is better) [{key['environ']}]",
                  'font': {'size': 13}},
        'height': 320, 'margin': {'l': 60, 'r': 20, 't': 40, 'b': 40},
        'xaxis': xaxis, 'yaxis': {'title': {'text': key['unit']}},
        'legend': {'orientation': 'h', 'y': -0.2}, 'shapes': shapes, 'annotations': notes}}


def write_plotly(directory):
    '''Plotly's JavaScript in ``directory``, written once per version of it.'''
    import plotly
    from plotly.offline import get_plotlyjs

    directory.mkdir(parents=True, exist_ok=True)
    path = directory / 'plotly.min.js'
    stamp = directory / '.plotly-version'
    if not path.exists() or not stamp.exists() or stamp.read_text() != plotly.__version__:
        path.write_text(get_plotlyjs())
        stamp.write_text(plotly.__version__)
    return path


def series_id(key):
    '''A series' id in the trend pages: a hash of its keys, the same in every cycle.'''
    return 's' + hashlib.sha256(json.dumps([key[k] for k in changes.SERIES]).encode()) \
        .hexdigest()[:16]


PAGE = '''<!DOCTYPE html>
<html lang="en"><head><meta charset="utf-8"><title>mdxbench trends</title>
<script src="trends/plotly.min.js"></script>
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
<p>{nseries} series, {nrecords} records, {ncps} change points. Open a series for its chart:
values over time (failed runs as crosses), recorded events as grey rules, change points as
dashed rules (red: regression, green: improvement), the median of each segment between
change points (orange), the reference and its tolerance band (green) where one applies.</p>
<p><label>system:partition <select id="f-target"><option value="">all</option></select></label>
<label>verdict <select id="f-verdict"><option value="">all</option>
<option>regression</option><option>improvement</option><option>no-direction</option>
<option value="none">no change point</option></select></label>
<label>check <input id="f-check" size="30" placeholder="part of the name"></label>
<span id="shown"></span></p>
<table><thead><tr><th>system:partition</th><th>check</th><th>perf var</th><th>runs</th>
<th>latest change point</th><th>minimum detectable effect</th></tr></thead>
<tbody id="series"></tbody></table>
<script>
var ROWS = [], SHOWN = {shown};
function mdxbenchIndex(rows) {{ ROWS = rows; }}
function esc(t) {{ var d = document.createElement('div'); d.textContent = t; return d.innerHTML; }}
function render() {{
  var tgt = document.getElementById('f-target').value, ver = document.getElementById('f-verdict').value,
      chk = document.getElementById('f-check').value.toLowerCase(), body = document.getElementById('series'),
      out = [], n = 0;
  ROWS.forEach(function (r) {{
    if ((tgt && r.target !== tgt) || (chk && r.check.toLowerCase().indexOf(chk) < 0)
        || (ver === 'none' && r.verdict) || (ver && ver !== 'none' && r.verdict !== ver)) return;
    n += 1;
    if (n > SHOWN && r.id !== location.hash.slice(1)) return;
    out.push('<tr id="' + r.id + '"><td>' + esc(r.target) + '</td><td><a href="#' + r.id + '">'
      + esc(r.check) + '</a></td><td>' + esc(r.perf_var) + '</td><td>' + r.runs + '</td><td>'
      + (r.verdict ? '<span class="' + r.verdict + '">' + r.verdict + ' ' + r.effect
         + '</span> since ' + r.since : '&ndash;') + '</td><td>' + esc(r.mde) + '</td></tr>');
  }});
  body.innerHTML = out.join('');
  document.getElementById('shown').textContent = n > SHOWN ?
    'the first ' + SHOWN + ' of ' + n + ' matching series (filter to see others)' : n + ' matching series';
  open_(location.hash.slice(1));
}}
function mdxbenchChart(id, fig) {{
  var div = document.getElementById('chart-' + id);
  if (div) Plotly.newPlot(div, fig.data, fig.layout, {{responsive: true, displaylogo: false}});
}}
function open_(id) {{
  var row = document.getElementById(id);
  if (!id || !row || document.getElementById('chart-' + id)) return;
  var tr = document.createElement('tr'), td = document.createElement('td'), div = document.createElement('div');
  td.colSpan = 6; div.id = 'chart-' + id; div.className = 'chart';
  td.appendChild(div); tr.appendChild(td); row.parentNode.insertBefore(tr, row.nextSibling);
  var s = document.createElement('script'); s.src = 'trends/' + id + '.js'; document.head.appendChild(s);
}}
window.addEventListener('hashchange', function () {{ open_(location.hash.slice(1)); }});
</script>
<script src="trends/index.js"></script>
<script>
var targets = [];
ROWS.forEach(function (r) {{ if (targets.indexOf(r.target) < 0) targets.push(r.target); }});
targets.forEach(function (t) {{
  var o = document.createElement('option'); o.textContent = t; document.getElementById('f-target').appendChild(o);
}});
['f-target', 'f-verdict', 'f-check'].forEach(function (id) {{
  document.getElementById(id).addEventListener('input', render);
}});
render();
</script>
</body></html>
'''

#: rows of the index drawn at once (the others by filtering): the page opens at any scale
SHOWN = 500


def index_rows(path):
    '''The index of the trend page ``path`` (its ``trends/index.js``) as a list of dicts.'''
    text = (pathlib.Path(path).parent / 'trends' / 'index.js').read_text()
    return json.loads(text[len('mdxbenchIndex('):text.rindex(')')])


def _write_if_changed(path, text):
    '''Write ``text`` to ``path`` unless it holds it already; whether it was written.'''
    if path.exists() and path.read_text() == text:
        return False
    tmp = path.with_name(path.name + '.tmp')
    tmp.write_text(text)
    tmp.replace(path)
    return True


def write(df, path, events=(), sensitivity=None, change_points=None):
    '''Write the trend page for the records of ``df`` to ``path`` and its series' files
    beside it (``trends/``); returns the number of charts and the change points. The files
    of series whose chart did not change are not written again; those of series no longer
    in the records are removed. ``sensitivity``: the series' minimum detectable effects
    (:mod:`mdxbench.post.analysis.sensitivity`), shown in the index. ``change_points``:
    those a cycle already found on the same records and events (:func:`changes.find`),
    drawn as they are; None: found here.'''
    from mdxbench.post.site import text

    path = pathlib.Path(path)
    charts = path.parent / 'trends'
    write_plotly(charts)
    evs = events_store.timed(events)
    cps = changes.find(df, evs) if change_points is None else list(change_points)
    by_series = {}
    for c in cps:
        by_series.setdefault(tuple(c[k] for k in changes.SERIES), []).append(c)

    d, g = changes.series_index(df)
    mdes = {tuple(e[k] for k in changes.SERIES): e for e in sensitivity or ()}
    entries = []
    for key, start, n in zip(g.select(changes.SERIES).iter_rows(named=True), g['start'],
                             g['n']):
        k = tuple(key[f] for f in changes.SERIES)
        entries.append((key, start, n, sorted(by_series.get(k, []), key=lambda c: c['run'])))
    entries.sort(key=lambda e: (not e[3], e[0]['system'], e[0]['partition'], e[0]['check'],
                                e[0]['perf_var']))

    index, written = [], set()
    for key, start, n, scps in entries:
        k = tuple(key[f] for f in changes.SERIES)
        ident = series_id(key)
        rows = d.slice(start, n).to_dicts()
        sevs = [e for e in evs if e['system'] == key['system']
                and e.get('partition') in (None, key['partition'])
                and rows[0]['time'] <= e['_time'] <= rows[-1]['time']]
        last = scps[-1] if scps else None
        index.append({'id': ident, 'target': f"{key['system']}:{key['partition']}",
                      'check': key['check'], 'perf_var': key['perf_var'], 'runs': n,
                      'verdict': last['verdict'] if last else None,
                      'effect': f"{last['effect']:+.1%}" if last else None,
                      'since': f"{last['time'][:10]} (run {last['run']})" if last else None,
                      'mde': text.mde(mdes[k]) if k in mdes else 'not computed'})
        fig = json.dumps(chart(rows, key, scps, sevs), default=str)
        _write_if_changed(charts / f'{ident}.js', f'mdxbenchChart({json.dumps(ident)}, {fig});\n')
        written.add(f'{ident}.js')
    for old in charts.glob('s*.js'):
        if old.name not in written:
            old.unlink()
    _write_if_changed(charts / 'index.js', 'mdxbenchIndex(' + json.dumps(index) + ');\n')
    _write_if_changed(path, PAGE.format(ncharts=len(entries), nseries=len(entries),
                                        nrecords=d.height, ncps=len(cps), shown=SHOWN))
    return len(entries), cps
