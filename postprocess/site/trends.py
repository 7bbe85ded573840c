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

from mdxbench.post.analysis import changes, kept, scan

#: records of the history handled at once while the pages are written (a share of the
#: series, by a hash of their keys): the memory this takes beside the records follows it
BATCH_ROWS = 2_000_000

#: significant digits of a value in a chart's data (the hover shows 4)
DIGITS = 7

#: the columns the trend pages read of the records
COLUMNS = changes.SERIES + ['time', 'value', 'result', 'jobid', 'nodes', 'ref', 'lower',
                            'upper']


def _title(key):
    better = key['better'] or 'undeclared'
    return (f"{key['check']} \u2014 {key['perf_var']} ({key['unit']}, {better} is better) "
            f"[{key['environ']}]")


def epoch_seconds(t):
    return t.timestamp() if hasattr(t, 'timestamp') else \
        dt.datetime.fromisoformat(t).timestamp()


def chart_extras(key, ref, cps, events, latest):
    '''What a series' chart draws besides its points: title, unit, the reference and its
    band, the events (time in seconds since the epoch, name), the change points (run,
    verdict, effect, explanation); ``latest``: the file of its latest month's runs, or
    None.'''
    band = None
    if ref['ref']:
        band = {'ref': ref['ref'],
                'lo': ref['ref'] * (1 + ref['lower']) if ref['lower'] is not None else None,
                'hi': ref['ref'] * (1 + ref['upper']) if ref['upper'] is not None else None}
    return {'title': _title(key), 'unit': key['unit'], 'ref': band, 'latest': latest,
            'events': [{'t': epoch_seconds(e['_time']), 'name': e['name']} for e in events],
            'cps': [{'run': c['run'], 'verdict': c['verdict'], 'effect': c['effect'],
                     'explanation': c.get('explanation')} for c in cps]}


def points_json(d):
    '''{series number: its points as JSON text} of the records ``d`` (laid out by
    ``changes.series_index``, with ``_sid``): ``t`` seconds since the epoch, the first
    absolute and the others from the previous run; ``v`` the values; ``r`` a letter a run
    (p passed, f failed, n no reference); ``job`` and ``nodes``. Built by Polars, without
    a Python object per record.'''
    e = pl.col('time').dt.epoch('s')
    g = d.group_by('_sid', maintain_order=True).agg(
        e.diff().fill_null(e.first()).alias('t'),
        pl.col('value').round_sig_figs(DIGITS).alias('v'),
        pl.col('result').replace_strict({'pass': 'p', 'fail': 'f'}, default='n',
                                        return_dtype=pl.Utf8).str.join('').alias('r'),
        pl.col('jobid').cast(pl.Utf8).alias('job'), pl.col('nodes').cast(pl.Utf8))
    return dict(zip(g['_sid'], g.select(pl.struct('t', 'v', 'r', 'job', 'nodes')
                                        .struct.json_encode())[:, 0]))


def series_events(evs, key, first, last, bounded):
    return [e for e in evs if e['system'] == key['system']
            and e.get('partition') in (None, key['partition'])
            and (not bounded or first <= e['_time'] <= last)]


def _narrow(df, have, keyed=True):
    '''The records' columns the pages read (those absent null), with ``_sid``; without
    the series keys unless ``keyed``.'''
    return df.select([pl.col(c) if c in have else pl.lit(None, dtype=pl.Float64
                                                          if c in ('ref', 'lower', 'upper')
                                                          else pl.Utf8).alias(c)
                      for c in COLUMNS if keyed or c not in changes.SERIES] + ['_sid'])


def known_key(n, h, t):
    return f'{n} {h} {t}'


#: a run's part of what its series' earlier runs are known by
RUN_HASH = kept.RUN_HASH


def bucket(ident):
    '''The share of the series ``ident`` belongs to (256, by its id): its file is in the
    folder of that name, and its latest month's runs in ``latest-<bucket>.js``.'''
    return ident[1:3]


def charts(df, cps_of, evs, bounded=True, cut=None, build=lambda ident, known: True,
           keys=None):
    '''Each series of the records ``df`` as (keys, runs, id, the text of its file, what
    that text is known by, the JSON text of its runs since ``cut``), a share of the series
    at a time (the records of about ``BATCH_ROWS``, by a hash of their keys).

    A series' file holds its runs before ``cut`` (all of them when ``cut`` is None) and
    what is drawn besides them; it is known by those runs' number, the sum of a hash of
    each one's time and value (:data:`RUN_HASH`), the last one's time, and the text of the
    rest; it is built only
    where ``build(id, what it is known by)`` says so (None otherwise).
    ``cps_of(key tuple)``: a series' change points; ``evs``: the timed events
    (``bounded``: only those between its first and last run). ``keys``: each series' keys
    by ``_sid`` where ``df`` has its runs without them (a kept chunk of the scan).'''
    have = df.collect_schema().names()
    if '_sid' not in have:
        df = df.with_columns(kept.series_hash().alias('_sid'))
    shares = max(1, -(-df.height // BATCH_ROWS))
    for share in range(shares):
        sel = pl.col('value').is_not_null()
        if shares > 1:
            sel = sel & (pl.col('_sid') % shares == share)
        d = _narrow(df.filter(sel), have, keys is None)
        early = pl.col('time') < cut if cut is not None else pl.lit(True)
        # what a series is known by, without sorting its runs: the latest reference is
        # that of the last run in time, then value order (as changes.series_index lays
        # them out)
        g = d.group_by('_sid').agg(
            *[pl.col(k).first() for k in changes.SERIES if keys is None],
            pl.len().alias('n'), pl.col('time').min().alias('first'),
            pl.col('time').max().alias('last'),
            *[pl.col(c).sort_by(['time', 'value']).last() for c in ('ref', 'lower', 'upper')],
            early.sum().alias('_n0'), RUN_HASH.filter(early).sum().alias('_h'),
            pl.col('time').filter(early).max().alias('_t')).sort('_sid')
        if keys is not None:
            g = g.join(keys, on='_sid', how='left', maintain_order='left')
        rows = []
        for row in g.iter_rows(named=True):
            key = {k: row[k] for k in changes.SERIES}
            ident = series_id(key)
            latest = cut is not None and row['n'] > row['_n0']
            extras = json.dumps(chart_extras(
                key, row, cps_of(tuple(key[k] for k in changes.SERIES)),
                series_events(evs, key, row['first'], row['last'], bounded),
                f'latest-{bucket(ident)}.js' if latest else None), default=str)
            known = text_digest(known_key(row['_n0'], row['_h'], row['_t']) + extras)
            rows.append((row, key, ident, extras, known, build(ident, known), latest))
        # the points of the series built and of the latest month, in time order, those at
        # the same time in value order (a change point's run counts them so)
        order = ['_sid', 'time', 'value']
        want = [row['_sid'] for row, *_, made, _ in rows if made]
        earlier = points_json(d.filter(early & pl.col('_sid').is_in(want)).sort(order)) \
            if want else {}
        recent = points_json(d.filter(~early).sort(order)) if cut is not None else {}
        for row, key, ident, extras, known, made, _ in rows:
            text = (f'mdxbenchChart({json.dumps(ident)}, {earlier.get(row["_sid"], "null")}, '
                    f'{extras});\n') if made else None
            yield key, row['n'], ident, text, known, recent.get(row['_sid'])


def _call(text, head, what):
    '''The arguments of the one JavaScript call ``text`` (``head``, JSON arguments,
    ``);``) as a list.'''
    if not text.startswith(head) or not text.endswith(');\n'):
        raise ValueError(f'trends: not {what}: {text[:80]!r}')
    return json.loads('[' + text[len(head):-3] + ']')


def chart_data(text, ident):
    '''(the points, what is drawn besides them) of the text of the file of series
    ``ident``.'''
    return tuple(_call(text, f'mdxbenchChart({json.dumps(ident)}, ',
                       f'the chart file of {ident}'))


def series_file(folder, ident):
    return pathlib.Path(folder) / bucket(ident) / f'{ident}.js'


def _series_files(folder):
    '''The ids of the series whose files are in ``folder``, listed once (a stat per series
    cost 2.6 s at 100,000 series).'''
    import os

    out = set()
    for b in (os.scandir(folder) if pathlib.Path(folder).is_dir() else ()):
        if b.is_dir() and len(b.name) == 2:
            out.update(e.name[:-3] for e in os.scandir(b.path)
                       if e.name.startswith('s') and e.name.endswith('.js'))
    return out


def latest_data(text):
    '''{series id: its latest month's points} of the text of a ``latest-<bucket>.js``.'''
    return _call(text, 'mdxbenchLatest(', 'a file of latest runs')[1]


def series_points(folder, ident):
    '''(the points of series ``ident``, its earlier runs and its latest month's
    together; what is drawn besides them; the parts as its files in ``folder`` hold
    them).'''
    pts, extras = chart_data(series_file(folder, ident).read_text(), ident)
    parts = [p for p in (pts, latest_data((pathlib.Path(folder) / extras['latest'])
                                          .read_text())[ident]
                         if extras['latest'] else None) if p]
    return {k: ''.join(p[k] for p in parts) if k == 'r' else [x for p in parts for x in p[k]]
            for k in ('t', 'v', 'r', 'job', 'nodes')}, extras, parts


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


def text_digest(text):
    return hashlib.blake2b(text.encode(), digest_size=12).hexdigest()


#: the digests of the chart files as last written, beside them: a series whose chart did
#: not change is not written again, and not read to know it
DIGESTS = '.digests.json'


month_of = kept.month_of            #: (the month a time falls in)


def by_series(cps):
    '''{series key tuple: its change points in run order}.'''
    out = {}
    for c in cps:
        out.setdefault(tuple(c[k] for k in changes.SERIES), []).append(c)
    for v in out.values():
        v.sort(key=lambda c: c['run'])
    return out


def previous(folder):
    '''(the digests of the series files as last written, the ids of those present).'''
    try:
        before = json.loads((pathlib.Path(folder) / DIGESTS).read_text())
    except (OSError, ValueError):
        before = {}
    return before, _series_files(folder)


def pages(folder, items, cps_of, mdes, present):
    '''Write the series files of :func:`charts`' ``items`` (those built) into ``folder``;
    (the index rows, {id: digest}, {bucket: the latest runs' JSON parts}).
    ``cps_of``: {key tuple: change points}; ``mdes``: {key tuple: sensitivity entry}.'''
    from mdxbench.post.site import text

    index, digests, latest, made = [], {}, {}, set()
    for key, n, ident, chart_text, known, recent in items:
        k = tuple(key[f] for f in changes.SERIES)
        scps = cps_of.get(k, [])
        last = scps[-1] if scps else None
        index.append({'id': ident, 'target': f"{key['system']}:{key['partition']}",
                      'check': key['check'], 'perf_var': key['perf_var'], 'runs': n,
                      'verdict': last['verdict'] if last else None,
                      'effect': f"{last['effect']:+.1%}" if last else None,
                      'since': f"{last['time'][:10]} (run {last['run']})" if last else None,
                      'mde': text.mde(mdes[k]) if k in mdes else 'not computed',
                      '_order': (not scps, *(str(key[f]) for f in (
                          'system', 'partition', 'check', 'perf_var', 'environ', 'unit',
                          'better')), ident)})
        digests[ident] = known
        if chart_text is not None:
            file = series_file(folder, ident)
            if ident in present:
                _replace(file, chart_text)
            else:
                # a new file is created in place: nobody reads it before the index names
                # it, and a file left half-written has no digest kept, so it is built again
                if file.parent.name not in made:
                    file.parent.mkdir(exist_ok=True)
                    made.add(file.parent.name)
                with open(file, 'w') as f:
                    f.write(chart_text)
        if recent is not None:
            latest.setdefault(bucket(ident), []).append(f'{json.dumps(ident)}:{recent}')
    return index, digests, latest


def finish(path, index, digests, latest, present, ncps):
    '''The rest of the trend page ``path`` once every series' file is written: files of
    series gone removed, the latest runs' files, the digests, the index and the page;
    the number of charts.'''
    path = pathlib.Path(path)
    folder = path.parent / 'trends'
    for ident in present:
        if ident not in digests:
            series_file(folder, ident).unlink()
    for b, parts in latest.items():
        _write_if_changed(folder / f'latest-{b}.js',
                          f'mdxbenchLatest({json.dumps(b)}, {{{",".join(sorted(parts))}}});\n')
    for old in folder.glob('latest-*.js'):
        if old.stem.removeprefix('latest-') not in latest:
            old.unlink()
    _replace(folder / DIGESTS, json.dumps(digests, sort_keys=True))
    index.sort(key=lambda r: r.pop('_order'))
    _write_if_changed(folder / 'index.js', 'mdxbenchIndex(' + json.dumps(index) + ');\n')
    _write_if_changed(path, PAGE.format(ncharts=len(index), nseries=len(index),
                                        nrecords=sum(r['runs'] for r in index),
                                        ncps=ncps, shown=SHOWN))
    return len(index)


def start(path):
    '''The trend page's folder (``trends/`` beside ``path``), its scripts written.'''
    folder = pathlib.Path(path).parent / 'trends'
    write_plotly(folder)
    write_script(folder)
    return folder


def write(df, path, events=(), sensitivity=None, change_points=None):
    '''Write the trend page for the records of ``df`` to ``path`` and its series' files
    beside it (``trends/``); returns the number of charts and the change points.

    A series' file, ``trends/<bucket>/<id>.js``, holds its runs before the month of the
    newest record and what is drawn besides them: it is built and written only when those
    changed (known by the runs' number, the sums of their values and squares, the last
    one's time and the text of the rest, kept in ``trends/.digests.json``). The runs of
    that month are in ``trends/latest-<bucket>.js``, one file for a 256th of the series:
    a nightly cycle writes 256 files and the series whose change points, events or
    reference moved, not a file per series. Files of series no longer in the records are
    removed. ``sensitivity``: the series' minimum detectable effects
    (:mod:`mdxbench.post.analysis.sensitivity`), shown in the index. ``change_points``:
    those a cycle already found on the same records and events (:func:`changes.find`),
    drawn as they are; None: found here. A cycle writes the same pages from its kept
    scan copy, a chunk of series at a time (:mod:`mdxbench.post.site.kept`).'''
    folder = start(path)
    evs = events_store.timed(events)
    cps = scan.find(df, evs) if change_points is None else list(change_points)
    cps_of = by_series(cps)
    mdes = {tuple(e[k] for k in changes.SERIES): e for e in sensitivity or ()}
    before, present = previous(folder)
    cut = df.select(pl.col('time').filter(pl.col('value').is_not_null()).max()).item()
    cut = month_of(cut) if cut is not None else None

    def build(ident, known):
        # a series' file is built unless it is known unchanged and it is there
        return before.get(ident) != known or ident not in present

    index, digests, latest = pages(folder, charts(df, lambda k: cps_of.get(k, []), evs,
                                                  cut=cut, build=build),
                                   cps_of, mdes, present)
    return finish(path, index, digests, latest, present, len(cps)), cps
