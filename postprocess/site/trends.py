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

A series' file holds its data, not a figure: the points (time, value, result, job, nodes)
as Polars writes them, a batch of series at a time, and what is drawn besides them; the
page's own script (``trends.js``, shipped beside it) draws the chart, so that publishing
costs about as much as the data it writes. Each chart shows the values over time (passed
and failed runs marked apart), the recorded system events as vertical rules, the change
points (the cycle's when it hands them over) as dashed rules whose label tells what
changed with them, the median of each segment between change points (the baseline the
latest runs are held to), and the reference with its tolerance band where the records
carry one. Hovering a point shows its job id and nodes. The index lists the series with a
change point first. The incident pages draw their series with the same script.'''
import datetime as dt
import hashlib
import json
import pathlib

import polars as pl

from mdxbench.post.store import events as events_store

from mdxbench.post.analysis import changes

#: series whose chart data is built at once: the site's memory follows a batch, not the
#: history
BATCH = 5000

#: significant digits of a value in a chart's data (the hover shows 4)
DIGITS = 7


def _title(key):
    better = key['better'] or 'undeclared'
    return (f"{key['check']} \u2014 {key['perf_var']} ({key['unit']}, {better} is better) "
            f"[{key['environ']}]")


def _epoch(t):
    return t.timestamp() if hasattr(t, 'timestamp') else \
        dt.datetime.fromisoformat(t).timestamp()


def _extras(key, ref, cps, events):
    '''What a series' chart draws besides its points: title, unit, the reference and its
    band, the events (time in seconds since the epoch, name), the change points (run,
    verdict, effect, explanation).'''
    band = None
    if ref['ref']:
        band = {'ref': ref['ref'],
                'lo': ref['ref'] * (1 + ref['lower']) if ref['lower'] is not None else None,
                'hi': ref['ref'] * (1 + ref['upper']) if ref['upper'] is not None else None}
    return {'title': _title(key), 'unit': key['unit'], 'ref': band,
            'events': [{'t': _epoch(e['_time']), 'name': e['name']} for e in events],
            'cps': [{'run': c['run'], 'verdict': c['verdict'], 'effect': c['effect'],
                     'explanation': c.get('explanation')} for c in cps]}


def _points(d):
    '''Each series of ``d`` (records laid out by ``changes.series_index``) as one row: its
    keys, runs, first and last time, last reference, and ``data``: its points as JSON text
    (``t``: seconds since the epoch, the first absolute and the others from the previous
    run; ``v`` the values; ``r`` a letter a run, p passed, f failed, n no reference;
    ``job`` and ``nodes``), built by Polars, without a Python object per record.'''
    e = pl.col('time').dt.epoch('s')
    g = d.group_by(changes.SERIES, maintain_order=True).agg(
        pl.len().alias('n'), pl.col('time').first().alias('first'),
        pl.col('time').last().alias('last'),
        pl.col('ref').last(), pl.col('lower').last(), pl.col('upper').last(),
        e.diff().fill_null(e.first()).alias('t'),
        pl.col('value').round_sig_figs(DIGITS).alias('v'),
        pl.col('result').replace_strict({'pass': 'p', 'fail': 'f'}, default='n',
                                        return_dtype=pl.Utf8).str.join('').alias('r'),
        pl.col('jobid').cast(pl.Utf8).alias('job'), pl.col('nodes').cast(pl.Utf8))
    return g.with_columns(pl.struct('t', 'v', 'r', 'job', 'nodes').struct.json_encode()
                          .alias('data')).drop('t', 'v', 'r', 'job', 'nodes')


def _series_events(evs, key, first, last):
    return [e for e in evs if e['system'] == key['system']
            and e.get('partition') in (None, key['partition'])
            and first <= e['_time'] <= last]


def charts(d, cps_of, evs, bounded=True):
    '''(series keys, runs, id, the text of its chart file) of each series of ``d``
    (records laid out by ``changes.series_index``), ``BATCH`` series at a time;
    ``cps_of(key tuple)`` its change points, ``evs`` the timed events (``bounded``: only
    those within the series' first and last run).'''
    g = d.group_by(changes.SERIES, maintain_order=True).agg(pl.len().alias('n'))
    start = 0
    for lo in range(0, g.height, BATCH):
        n = int(g['n'][lo:lo + BATCH].sum())
        for row in _points(d.slice(start, n)).iter_rows(named=True):
            key = {k: row[k] for k in changes.SERIES}
            ident = series_id(key)
            sevs = _series_events(evs, key, row['first'], row['last']) if bounded else \
                [e for e in evs if e['system'] == key['system']
                 and e.get('partition') in (None, key['partition'])]
            extras = _extras(key, row, cps_of(tuple(key[k] for k in changes.SERIES)), sevs)
            yield key, row['n'], ident, (f'mdxbenchChart({json.dumps(ident)}, {row["data"]}, '
                                         f'{json.dumps(extras, default=str)});\n')
        start += n


def chart_data(text, ident):
    '''(the points, what is drawn besides them) of the text of the chart file of series
    ``ident``.'''
    head = f'mdxbenchChart({json.dumps(ident)}, '
    if not text.startswith(head) or not text.endswith(');\n'):
        raise ValueError(f'trends: not the chart file of {ident}: {text[:80]!r}')
    return tuple(json.loads('[' + text[len(head):-3] + ']'))


def script_path():
    '''The chart-drawing and index script shipped with the site (``trends.js``).'''
    return pathlib.Path(__file__).with_name('trends.js')


def write_script(directory):
    '''``trends.js`` in ``directory`` (written when it differs).'''
    directory.mkdir(parents=True, exist_ok=True)
    _write_if_changed(directory / 'trends.js', script_path().read_text())


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
<script src="trends/trends.js"></script>
<style>
body {{ font-family: sans-serif; margin: 2em; }}
table {{ border-collapse: collapse; margin-bottom: 1.5em; }}
th, td {{ border: 1px solid #999; padding: 0.2em 0.5em; text-align: left; }}
.regression {{ color: #d62728; font-weight: bold; }}
.improvement {{ color: #2ca02c; }}
.chart {{ max-width: 1100px; }}
</style></head>
<body data-charts="{ncharts}" data-shown="{shown}">
<h1>mdxbench trends</h1>
<p>{nseries} series, {nrecords} records, {ncps} change points. Open a series for its chart:
values over time (failed runs as crosses), recorded events as grey rules, change points as
dashed rules (red: regression, green: improvement; hover the label for what changed), the
median of each segment between change points (orange), the reference and its tolerance
band (green) where one applies.</p>
<p><label>system:partition <select id="f-target"><option value="">all</option></select></label>
<label>verdict <select id="f-verdict"><option value="">all</option>
<option>regression</option><option>improvement</option><option>no-direction</option>
<option value="none">no change point</option></select></label>
<label>check <input id="f-check" size="30" placeholder="part of the name"></label>
<span id="shown"></span></p>
<table><thead><tr><th>system:partition</th><th>check</th><th>perf var</th><th>runs</th>
<th>latest change point</th><th>minimum detectable effect</th></tr></thead>
<tbody id="series"></tbody></table>
<script src="trends/index.js"></script>
<script>mdxbenchStart();</script>
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
    _replace(path, text)
    return True


def _replace(path, text):
    tmp = path.with_name(path.name + '.tmp')
    tmp.write_text(text)
    tmp.replace(path)


def _digest(text):
    return hashlib.blake2b(text.encode(), digest_size=12).hexdigest()


#: the digests of the chart files as last written, beside them: a series whose chart did
#: not change is not written again, and not read to know it
DIGESTS = '.digests.json'


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
    folder = path.parent / 'trends'
    write_plotly(folder)
    write_script(folder)
    evs = events_store.timed(events)
    cps = changes.find(df, evs) if change_points is None else list(change_points)
    by_series = {}
    for c in cps:
        by_series.setdefault(tuple(c[k] for k in changes.SERIES), []).append(c)
    for v in by_series.values():
        v.sort(key=lambda c: c['run'])
    mdes = {tuple(e[k] for k in changes.SERIES): e for e in sensitivity or ()}
    try:
        before = json.loads((folder / DIGESTS).read_text())
    except (OSError, ValueError):
        before = {}

    d, _ = changes.series_index(df)
    index, digests = [], {}
    for key, n, ident, chart_text in charts(d, lambda k: by_series.get(k, []), evs):
        k = tuple(key[f] for f in changes.SERIES)
        scps = by_series.get(k, [])
        last = scps[-1] if scps else None
        index.append({'id': ident, 'target': f"{key['system']}:{key['partition']}",
                      'check': key['check'], 'perf_var': key['perf_var'], 'runs': n,
                      'verdict': last['verdict'] if last else None,
                      'effect': f"{last['effect']:+.1%}" if last else None,
                      'since': f"{last['time'][:10]} (run {last['run']})" if last else None,
                      'mde': text.mde(mdes[k]) if k in mdes else 'not computed',
                      '_order': (not scps, key['system'], key['partition'], key['check'],
                                 key['perf_var'])})
        digests[ident] = _digest(chart_text)
        file = folder / f'{ident}.js'
        if before.get(ident) != digests[ident] or not file.exists():
            _replace(file, chart_text)
    for old in folder.glob('s*.js'):
        if old.stem not in digests:
            old.unlink()
    _replace(folder / DIGESTS, json.dumps(digests))
    index.sort(key=lambda r: r.pop('_order'))
    _write_if_changed(folder / 'index.js', 'mdxbenchIndex(' + json.dumps(index) + ');\n')
    _write_if_changed(path, PAGE.format(ncharts=len(index), nseries=len(index),
                                        nrecords=d.height, ncps=len(cps), shown=SHOWN))
    return len(index), cps
