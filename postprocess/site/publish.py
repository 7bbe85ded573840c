'''The published site of a system's cycles: a static directory that any web server on a
login node serves (``mdxbench site serve``, nginx, Apache), with relative links only and
nothing fetched from elsewhere (Plotly's JavaScript is one file in the site)::

    index.html                 the system: the latest run of each series against its
                               reference (a chart, pass and fail coloured), its last
                               cycle and result, incidents (open first)
    incident-<id>.html         one page per incident: cause, state and its history, how to
                               acknowledge, each series' chart with the change marked and
                               the provenance either side of it
    feed.xml                   the Atom feed of the incidents (:mod:`.feed`)
    report/index.html          the papers' tables with the measured columns, and figures
    report/trends.html         the index of every series over time, each chart in
                               report/trends/<bucket>/<id>.js (:mod:`.trends`)
    report/trends/plotly.min.js  the charts' library, once: every page loads it

With the default layout (``<state>/cycle/<system>/site``), ``<state>/cycle/index.html``
lists every system's last cycle and open incidents, linking to their sites: serve
``<state>/cycle`` to publish them all.
'''
import html
import json
import pathlib

import polars as pl

from mdxbench.post import exits
from mdxbench.post.analysis import changes, explain
from mdxbench.post.analysis.incidents import open_regressions
from mdxbench.post.site import feed, report, text, trends
from mdxbench.post.store import events as events_store

#: the one copy of Plotly in a site: the trend page's
PLOTLY = 'report/trends/plotly.min.js'
#: incident pages chart at most this many series (the worst first); the rest are listed
MAX_CHARTS = 24
#: the index lists this many series' sensitivity (least sensitive first); trends has all
MAX_SENSITIVITY_ROWS = 50
#: exit codes of a cycle, for people
ORDER = {'new': 0, 'reopened': 1, 'open': 2, 'acknowledged': 3, 'resolved': 4}

STYLE = '''body { font-family: sans-serif; margin: 2em; max-width: 1200px; }
table { border-collapse: collapse; margin-bottom: 1.5em; }
th, td { border: 1px solid #999; padding: 0.2em 0.5em; text-align: left; vertical-align: top; }
th { background: #eee; }
.new, .reopened, .open { color: #d62728; font-weight: bold; }
.acknowledged { color: #a60; } .resolved { color: #2ca02c; }
.fail { color: #d62728; font-weight: bold; } .pass { color: #2ca02c; }
svg.spark { vertical-align: middle; }
code, pre { background: #f4f4f4; padding: 0.1em 0.3em; }
nav a { margin-right: 1em; }'''

PAGE = '''<!DOCTYPE html>
<html lang="en"><head><meta charset="utf-8"><title>{title}</title>
<link rel="alternate" type="application/atom+xml" title="incidents" href="feed.xml">
{head}<style>{style}</style></head>
<body data-page="{kind}"{attrs}>
<nav><a href="index.html">{system}</a><a href="report/index.html">papers' tables</a>
<a href="report/trends.html">trends</a><a href="feed.xml">feed</a></nav>
{body}
</body></html>
'''


def esc(v):
    return html.escape(str(v))


def page(path, title, system, body, kind, head='', attrs=''):
    path.write_text(PAGE.format(title=esc(title), head=head, style=STYLE, kind=kind,
                                attrs=attrs, system=esc(system), body=body))
    return path


def _state(inc):
    return f'<span class="{esc(inc["state"])}">{esc(inc["state"])}</span>'


def _partition(inc):
    '''An incident's scope: its partition, or every partition of the system.'''
    return inc['partition'] or 'all partitions'


def _cause(inc):
    '''The cause, said once: an event, new nodes or "nothing recorded" say what they are;
    a provenance change is named as one.'''
    return f'provenance changed: {inc["cause"]}' if inc['kind'] == 'provenance' else inc['cause']


def incident_rows(incidents):
    '''The index's incident table rows, still regressing first, then newest.'''
    items = sorted(incidents.values(), key=lambda i: (ORDER.get(i['state'], 9),
                                                       i['first_seen']), reverse=False)
    return '\n'.join(
        f'<tr><td><a href="incident-{esc(i["id"])}.html">{esc(i["id"])}</a></td>'
        f'<td>{_state(i)}</td><td>{esc(i["first_seen"][:16])}</td>'
        f'<td>{esc(_partition(i))}</td><td>{esc(_cause(i))}</td><td>{len(i["series"])}</td>'
        f'<td>{i["series"][0]["effect"]:+.1%} {esc(i["series"][0]["check"])} '
        f'{esc(i["series"][0]["perf_var"])}</td></tr>' for i in items)


def sensitivity_section(sens):
    '''How small a regression each series can see (least sensitive first).'''
    if not sens:
        return '<h2>Sensitivity</h2><p>No series yet.</p>'
    target = sens[0]['target']
    known = [e for e in sens if e['mde'] is not None]
    under = sum(e['mde'] <= target for e in known)
    rows = sorted(sens, key=lambda e: -(e['mde'] if e['mde'] is not None else 9))
    body = '\n'.join(
        f'<tr><td>{esc(e["system"])}:{esc(e["partition"])}</td><td>{esc(e["check"])}</td>'
        f'<td>{esc(e["perf_var"])}</td><td>{e["runs"]}</td><td>'
        + (f'{e["noise_cv"]:.1%}' if e.get('noise_cv') is not None else '-')
        + f'</td><td>{esc(text.mde(e))}</td></tr>' for e in rows[:MAX_SENSITIVITY_ROWS])
    folded = '' if 2 * len(known) >= len(sens) else ' (folded until most series have enough runs)'
    return f'''<details id="sensitivity-details"{' open' if not folded else ''}>
<summary><h2 style="display:inline">Sensitivity</h2>{folded}</summary>
<p id="sensitivity-summary">{under} of {len(sens)} series can see a {target:.0%} step (95%
of the time, within 2 runs); {len(known) - under} cannot, {len(sens) - len(known)} have no
figure yet. The minimum detectable effect is simulated on each series' own residuals
(docs: results, "How small a regression each series can see"); repetitions per run
(the median taken) shrink it.</p>
<table id="sensitivity"><thead><tr><th>system:partition</th><th>check</th><th>perf var</th>
<th>runs</th><th>noise (robust CV)</th><th>minimum detectable effect</th></tr></thead><tbody>
{body}
</tbody></table></details>'''


#: the colours of the latest runs' chart: as ReFrame judged each against its reference
RESULT_COLOURS = {'pass': '#2ca02c', 'fail': '#d62728'}


#: the runs a series' sparkline on the landing page draws (its last ones)
SPARK_RUNS = 30


def sparkline(values, result=None, width=120, height=22):
    '''An inline SVG line of ``values`` (a series' last runs, oldest first), its last point
    a dot in the colour of ReFrame's ``result`` of that run.'''
    v = [float(x) for x in values][-SPARK_RUNS:]
    if not v:
        return ''
    lo, hi = min(v), max(v)
    span = (hi - lo) or 1.0
    step = (width - 4) / max(len(v) - 1, 1)
    pts = [(2 + i * step, height - 2 - (x - lo) / span * (height - 4)) for i, x in enumerate(v)]
    line = ' '.join(f'{x:.1f},{y:.1f}' for x, y in pts)
    colour = RESULT_COLOURS.get(result, '#555')
    return (f'<svg class="spark" width="{width}" height="{height}" role="img" '
            f'aria-label="{len(v)} runs, {lo:.4g} to {hi:.4g}"><polyline points="{line}" '
            f'fill="none" stroke="#777" stroke-width="1"/><circle cx="{pts[-1][0]:.1f}" '
            f'cy="{pts[-1][1]:.1f}" r="2.5" fill="{colour}"/></svg>')


def latest_section(system, latest, runs=None):
    '''The latest run of each series against its reference, as ReFrame judged it: one
    horizontal bar per series (from the reference, 1, to measured / reference), coloured
    pass or fail; then every series at a glance, its last runs as a small line (``runs``:
    {series key: values, oldest first}), its latest figure and reference, and how to get a
    reference for those without. Returns (HTML, whether a chart is drawn).'''
    if latest is None or not latest.height:
        return '<h2>Latest runs</h2><p>No run yet.</p>', False
    runs = runs or {}
    refd = latest.filter(pl.col('ref').is_not_null() & (pl.col('ref') != 0)) \
        .with_columns((pl.col('value') / pl.col('ref')).alias('ratio'))
    nbare = latest.height - refd.height
    label = [f'{p}+{e} {c} {v}' for p, e, c, v in
             refd.select('partition', 'environ', 'check', 'perf_var').rows()]
    hover = [f'{v:.4g} {u} against {r:.4g} {u} ({(v / r - 1):+.1%}), {t:%Y-%m-%d %H:%M}'
             f'<br>bounds {lo if lo is not None else "-"} .. {hi if hi is not None else "-"}'
             for v, r, u, lo, hi, t in refd.select('value', 'ref', 'unit', 'lower', 'upper',
                                                   'time').rows()]
    results = refd['result'].fill_null('-').to_list()
    nfail = results.count('fail')
    # each bar from the reference (1) to the measured ratio: left is below it
    figure = {'data': [{'type': 'bar', 'orientation': 'h', 'y': label, 'base': 1,
                        'x': [r - 1 for r in refd['ratio'].to_list()], 'text': hover,
                        'hoverinfo': 'y+text', 'textposition': 'none',
                        'marker': {'color': [RESULT_COLOURS.get(r, '#7f7f7f')
                                             for r in results]}}],
              'layout': {'height': 120 + 22 * refd.height, 'margin': {'l': 420, 'r': 20,
                                                                     't': 10, 'b': 40},
                         'xaxis': {'title': {'text': 'measured / reference'}},
                         'yaxis': {'autorange': 'reversed'},
                         'shapes': [{'type': 'line', 'x0': 1, 'x1': 1, 'y0': 0, 'y1': 1,
                                     'yref': 'paper', 'line': {'dash': 'dash'}}]}}
    chart = (f'''<p id="latest-summary">{refd.height} series with a reference: {nfail} failed it
in their latest run, {refd.height - nfail} passed (green pass, red fail, as ReFrame judged).</p>
<div id="latest-chart" data-bars="{refd.height}" data-fail="{nfail}"></div>
<script>Plotly.newPlot('latest-chart', {json.dumps(figure['data'])},
{json.dumps(figure['layout'])}, {{responsive: true, displayModeBar: false}});</script>'''
             if refd.height else '<p id="latest-summary">No series has a reference yet.</p>')
    hint = (f'''<p id="without-reference">{nbare} series without a reference:
<code>mdxbench references propose --system {esc(system)}</code> proposes one for each from its
stable runs.</p>''' if nbare else '')
    rows = '\n'.join(_glance_row(r, runs) for r in latest.iter_rows(named=True))
    glance = f'''<h2>Every series at a glance</h2>
{hint}
<table id="glance"><thead><tr><th>partition+environ</th><th>check</th><th>perf var</th>
<th>last {SPARK_RUNS} runs</th><th>latest</th><th>reference</th><th>result</th></tr></thead><tbody>
{rows}
</tbody></table>'''
    return f'<h2>Latest runs against their references</h2>\n{chart}\n{glance}', \
        bool(refd.height)


def _glance_row(r, runs):
    key = tuple(r[k] for k in changes.SERIES)
    ref = f'{r["ref"]:.4g}' if r['ref'] else '-'
    ident = trends.series_id(r)
    return (f'<tr><td>{esc(r["partition"])}+{esc(r["environ"])}</td>'
            f'<td><a href="report/trends.html#{ident}">'
            f'{esc(r["check"])}</a></td><td>{esc(r["perf_var"])}</td>'
            f'<td>{sparkline(runs.get(key, [r["value"]]), r["result"])}</td>'
            f'<td>{r["value"]:.4g} {esc(r["unit"])}</td><td>{ref}</td>'
            f'<td class="{esc(r["result"] or "")}">{esc(r["result"] or "-")}</td></tr>')


def index_body(system, incidents, last, ncharts, sens=(), latest=None, runs=None):
    last = last or {}
    code = last.get('exit')
    open_n = len(open_regressions(incidents))
    rows = incident_rows(incidents) or '<tr><td colspan="7">no incident</td></tr>'
    latest_html, _ = latest_section(system, latest, runs)
    return f'''<h1>mdxbench: {esc(system)}</h1>
{latest_html}
<h2>Last cycle</h2>
<table id="last-cycle">
<tr><th>time</th><td>{esc(last.get('time', '-'))}</td></tr>
<tr><th>result</th><td data-exit="{esc(code)}">exit {esc(code)}: {esc(exits.CYCLE.get(code, '-'))}</td></tr>
<tr><th>records</th><td>{esc(last.get('records', '-'))} ({esc(last.get('source', '-'))})</td></tr>
<tr><th>change points</th><td>{esc(last.get('change_points', '-'))}</td></tr>
<tr><th>new incidents</th><td>{esc(', '.join(last.get('new') or []) or 'none')}</td></tr>
<tr><th>notified</th><td>{esc(', '.join(last.get('notified') or []) or 'none')}; notify
failed: {esc(', '.join(last.get('failed') or []) or 'none')}</td></tr>
</table>
<h2>Incidents ({open_n} still regressing, {len(incidents)} in all)</h2>
<table id="incidents"><thead><tr><th>id</th><th>state</th><th>first seen</th>
<th>partition</th><th>cause</th><th>series</th><th>worst</th></tr></thead><tbody>
{rows}
</tbody></table>
<p>The <a href="report/index.html">papers' tables</a> with the measured columns; the
<a href="report/trends.html">trends</a> of every series ({ncharts}); the
<a href="feed.xml">Atom feed</a> of the incidents, for feed readers and chat tools.</p>
{sensitivity_section(list(sens))}'''


def _provenance(changed):
    if not changed:
        return 'no provenance change'
    return '<br>'.join(f'{esc(k)}: {esc(", ".join(b) or "?")} &rarr; {esc(", ".join(a) or "?")}'
                       for k, (b, a) in changed.items())


def incident_body(system, inc, charts, mdes=None):
    mdes = mdes or {}
    hist = '\n'.join(f'<tr><td>{esc(h["time"][:19])}</td><td>{esc(h["state"])}'
                     + (f' (split: {esc(h["split"])})' if h.get('split') else '') + '</td></tr>'
                     for h in inc['history'])
    series = '\n'.join(
        f'<tr><td>{esc(s["partition"])}</td><td>{esc(s["environ"])}</td><td>{esc(s["check"])}</td>'
        f'<td>{esc(s["perf_var"])}</td><td>{s["effect"]:+.1%}</td>'
        f'<td>{s["before"]:.4g} &rarr; {s["after"]:.4g} {esc(s["unit"])}</td>'
        f'<td>{esc(s["time"][:16])} (run {esc(s["run"])}, job {esc(s["jobid"])})</td>'
        f'<td>{_provenance(s["changed"])}</td><td>{"yes" if s["went_away"] else "no"}</td>'
        f'<td>{esc(text.mde(mdes[k]) if (k := _key(inc, s)) in mdes else "not computed")}</td></tr>'
        for s in inc['series'])
    ack = inc.get('ack')
    ack_html = (f'<p>Acknowledged {esc(ack["time"][:16])}'
                + (f' by {esc(ack["by"])}' if ack.get('by') else '')
                + f': {esc(ack["note"])}</p>') if ack else ''
    more = len(inc['series']) - len(charts)
    return f'''<h1>Incident {esc(inc["id"])}: {_state(inc)}</h1>
<p id="cause">{esc(feed.title(inc))}</p>
<table><tr><th>system</th><td>{esc(system)}</td></tr>
<tr><th>partition</th><td>{esc(_partition(inc))}</td></tr>
<tr><th>cause</th><td>{esc(_cause(inc))}</td></tr>
<tr><th>first seen</th><td>{esc(inc["first_seen"])}</td></tr>
<tr><th>change starts</th><td>{esc(inc["start"])}</td></tr></table>
{ack_html}
{split_section(system, inc)}
<h2>How to acknowledge</h2>
<pre>mdxbench incident ack --system {esc(system)} {esc(inc["id"])} --note "what is done about it"</pre>
<h2>State history</h2>
<table><tr><th>time</th><th>state</th></tr>{hist}</table>
<h2>Series ({len(inc["series"])}, worst first)</h2>
<table id="series"><thead><tr><th>partition</th><th>environ</th><th>check</th><th>perf var</th>
<th>effect</th><th>before &rarr; after</th><th>first changed run</th>
<th>provenance either side</th><th>went away</th><th>minimum detectable effect</th>
</tr></thead><tbody>
{series}
</tbody></table>
<h2>Charts</h2>
<p>Values over time; dashed rules mark the series' change points (the incident's, and a
later recovery in green), grey rules the recorded events, orange lines the median of each
segment.{
    f' {more} more series are in the <a href="report/trends.html">trends</a>.' if more > 0 else ''}</p>
{''.join(charts)}'''


def _effect(e):
    if not e:
        return ''
    if e.get('low') is None:
        return f'{e["estimate"]:+.1%}'
    return (f'{e["estimate"]:+.1%} ({e["low"]:+.1%} to {e["high"]:+.1%}), '
            f'{esc(e.get("reading", ""))}')


def split_section(system, inc):
    '''Was it the system or the software: the split's verdict and, per series, the two
    effects with their intervals; before any split, the command that runs one (where a
    binary changed with the incident).'''
    sp = inc.get('split')
    if not sp:
        if not any('binary' in (s.get('changed') or {}) for s in inc['series']):
            return ''
        return (f'<h2>System or software?</h2>\n<p>The benchmark binary changed with this '
                f'incident. Run the previous build beside the new one on the same node:</p>\n'
                f'<pre>mdxbench incident split --system {esc(system)} {esc(inc["id"])}</pre>')
    rows = '\n'.join(
        f'<tr><td>{esc(r["check"])} {esc(r["perf_var"])}</td><td>{esc(r.get("node") or "")}</td>'
        f'<td class="verdict">{esc(r["verdict"])}</td>'
        f'<td>{_effect(r.get("software"))}</td><td>{_effect(r.get("system"))}</td>'
        f'<td>{esc(r.get("rounds", ""))}</td>'
        f'<td>{esc((r.get("old_hash") or "?")[:7])} &rarr; {esc((r.get("new_hash") or "?")[:7])}</td>'
        f'<td>{esc(r["reason"])}</td></tr>' for r in sp['series'])
    left = ''.join(f'<li>{esc(w)}</li>' for w in sp.get('not_split') or [])
    return f'''<h2>System or software? <span id="split-verdict">{esc(sp["verdict"])}</span></h2>
<p>Split {esc(sp["time"][:16])}: the previous build installed again by Spack and run beside
the new one on the same node, interleaved ({esc(sp["seconds"])} s, jobs
{esc(", ".join(f"{n} {j}" for n, j in sorted(sp["jobs"].items())) or "none")}{
    f"; series: {esc(sp['tally'])}" if sp.get("tally") else ""}).
<em>software</em>: the old build is back at the old level; <em>system</em>: both builds are at
the new level; <em>both</em>: each costs part of it.</p>
<table id="split"><thead><tr><th>series</th><th>node</th><th>verdict</th>
<th>software: new / old build today</th><th>system: old build today / before</th>
<th>rounds</th><th>builds</th><th>why</th></tr></thead><tbody>
{rows}
</tbody></table>{f"<p>Not split:</p><ul>{left}</ul>" if left else ""}'''


SERIES_OF_INCIDENT = ('partition', 'environ', 'check', 'perf_var', 'unit')


def _full_keys(history, incs):
    '''{the incident key of a series (system and :data:`SERIES_OF_INCIDENT`): its whole
    key} for the incidents' series that do not carry ``better`` (incidents stored before
    they did), from the history's series; empty where every one carries it.'''
    if all('better' in s for inc in incs for s in inc['series']):
        return {}
    return {tuple(r[f] for f in ('system', *SERIES_OF_INCIDENT)): r
            for r in history.counts().select(changes.SERIES).iter_rows(named=True)}


def _merged(folder, ident, latest_of):
    '''(the points of series ``ident``, its earlier runs' and its latest month's as one
    run-ordered whole; what the trend pages draw beside them), from the trend pages' own
    files in ``folder``; None where the series has none. ``latest_of``: a cache of the
    files of latest runs, read once each.'''
    import orjson

    head = f'mdxbenchChart({json.dumps(ident)}, '.encode()
    try:
        text = trends.series_file(folder, ident).read_bytes()
        if not text.startswith(head) or not text.endswith(b');\n'):
            raise ValueError(ident)
        pts, extras = orjson.loads(b'[' + text[len(head):-3] + b']')
    except (OSError, ValueError):
        return None
    if extras['latest']:
        if extras['latest'] not in latest_of:
            late = (pathlib.Path(folder) / extras['latest']).read_bytes()
            latest_of[extras['latest']] = orjson.loads(
                b'[' + late[len(b'mdxbenchLatest('):-3] + b']')[1]
        late = latest_of[extras['latest']].get(ident)
        if late and pts:
            # times are kept as differences from the run before, the first absolute
            late = dict(late, t=[late['t'][0] - sum(pts['t'])] + late['t'][1:])
            pts = {k: pts[k] + late[k] for k in ('t', 'v', 'r', 'job', 'nodes')}
        elif late:
            pts = late
    return (pts, extras) if pts else None


def _key(inc, s):
    return (inc['system'], *(s[f] for f in SERIES_OF_INCIDENT))


def series_charts(site, inc, events, change_points=None, full_keys=None, latest_of=None):
    '''The charts of the incident's series (at most MAX_CHARTS, worst first), each a div
    and the script that draws it (the trend pages' ``mdxbenchChart``), with every change
    point of the series (the cycle's ``change_points`` when given, else found on its runs),
    so that each segment is drawn at its own median (the recovery after the regression
    too), the incident's own among them; every recorded event of its system drawn. The
    runs are those of the trend pages' own files (``site/report/trends``), written first:
    no history is read again. ``change_points``: a list, or ``trends.by_series`` of one
    (handed over once per publish); ``full_keys``: :func:`_full_keys`.'''
    import orjson

    folder = pathlib.Path(site) / 'report' / 'trends'
    latest_of = {} if latest_of is None else latest_of
    cycle = change_points if isinstance(change_points, dict) or change_points is None \
        else trends.by_series(change_points)
    out, done = [], set()
    for s in inc['series'][:MAX_CHARTS]:
        if 'better' in s:
            key = dict(zip(changes.SERIES, (*_key(inc, s), s['better'])))
        else:
            key = (full_keys or {}).get(_key(inc, s))
        if key is None:
            continue
        ident = trends.series_id(key)
        got = None if ident in done else _merged(folder, ident, latest_of)
        if got is None:
            continue
        done.add(ident)
        pts, extras = got
        k = tuple(key[f] for f in changes.SERIES)
        if cycle is not None:
            cps = [dict(c) for c in cycle.get(k, [])]
        else:
            cps = [{'run': c['index'] + 1, 'verdict': explain.verdict(key['better'], c['effect']),
                    'effect': c['effect']}
                   for c in changes.detect(pts['v'])]
        if not any(c['run'] == s['run'] for c in cps):
            cps.append({'run': s['run'], 'verdict': explain.verdict(key['better'], s['effect']),
                        'effect': s['effect']})
        drawn = dict(extras, latest=None, events=[
            {'t': trends.epoch_seconds(e['_time']), 'name': e['name']}
            for e in trends.series_events(events, key, None, None, False)],
            cps=[{'run': c['run'], 'verdict': c['verdict'], 'effect': c['effect'],
                  'explanation': c.get('explanation')} for c in sorted(cps, key=lambda c: c['run'])])
        out.append(f'<div class="chart" id="chart-{ident}"></div><script>mdxbenchChart('
                   f'{json.dumps(ident)}, {orjson.dumps(pts).decode()}, '
                   f'{orjson.dumps(drawn, default=str).decode()});\n</script>')
    return out


def write(site, system, incidents, last_cycle, history, events=(), sensitivity=(),
          change_points=None):
    '''Write the whole site of ``system`` into ``site``; the paths of its pages.
    ``history``: a :mod:`mdxbench.post.analysis.kept` history (a cycle's kept scan: every
    page written a chunk of series at a time; or a table's). ``change_points``: the
    cycle's on the same records (the trend page draws them instead of finding them
    again).'''
    site = pathlib.Path(site)
    site.mkdir(parents=True, exist_ok=True)
    # Plotly once, the trend page's (report/trends/), which every page of the site loads;
    # a copy at the top of a site written before is removed
    for stale in (site / 'plotly.min.js', site / '.plotly-version'):
        stale.unlink(missing_ok=True)
    evs = events_store.timed(events)
    report.write(history, site / 'report', list(sensitivity), change_points)
    mdes = {(e['system'], *(e[f] for f in SERIES_OF_INCIDENT)): e for e in sensitivity}
    ncharts = history.nseries()
    head = f'<script src="{PLOTLY}"></script><script src="report/trends/trends.js"></script>'
    latest = history.latest()
    runs = dict(history.each_series(list(latest.select(changes.SERIES).iter_rows())))
    pages = [page(site / 'index.html', f'mdxbench: {system}', system,
                  index_body(system, incidents, last_cycle, ncharts, sensitivity, latest,
                             runs), 'index', head=f'<script src="{PLOTLY}"></script>')]
    # the incidents' charts from the trend pages' files just written (no history read)
    full_keys, latest_of = _full_keys(history, list(incidents.values())), {}
    cycle = trends.by_series(change_points) if change_points is not None else None
    for inc in incidents.values():
        charts = series_charts(site, inc, evs, cycle, full_keys, latest_of)
        pages.append(page(site / f'incident-{inc["id"]}.html', f'incident {inc["id"]}', system,
                          incident_body(system, inc, charts, mdes), 'incident', head=head,
                          attrs=f' data-charts="{len(charts)}" data-state="{esc(inc["state"])}"'))
    feed.write(incidents, site / 'feed.xml', system)
    return pages


SYSTEMS_PAGE = '''<!DOCTYPE html>
<html lang="en"><head><meta charset="utf-8"><title>mdxbench: systems</title>
<style>{style}</style></head>
<body data-page="systems">
<h1>mdxbench: systems</h1>
<table id="systems"><thead><tr><th>system</th><th>last cycle</th><th>result</th>
<th>still regressing</th><th>incidents</th></tr></thead><tbody>
{rows}
</tbody></table>
</body></html>
'''


def write_systems_index(root):
    '''``root/index.html`` over the systems whose cycles keep their state and site in
    ``root/<system>/`` (the default layout).'''
    from mdxbench.post.store.incidents import IncidentFile

    rows = []
    for state in sorted(pathlib.Path(root).glob('*/incidents.json')):
        system = state.parent.name
        if not (state.parent / 'site' / 'index.html').exists():
            continue
        f = IncidentFile(state)
        last = f.last_cycle or {}
        still = len(open_regressions(f.incidents))
        rows.append(f'<tr><td><a href="{esc(system)}/site/index.html">{esc(system)}</a></td>'
                    f'<td>{esc(last.get("time", "-"))}</td><td>exit {esc(last.get("exit"))}: '
                    f'{esc(exits.CYCLE.get(last.get("exit"), "-"))}</td>'
                    f'<td class="{"new" if still else ""}">{still}</td>'
                    f'<td>{len(f.incidents)}</td></tr>')
    path = pathlib.Path(root) / 'index.html'
    path.write_text(SYSTEMS_PAGE.format(style=STYLE, rows='\n'.join(rows)))
    return path
