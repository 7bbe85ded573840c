'''The papers' tables and figures from stored results, as PNG files and one static HTML
page (``mdxbench report --out DIR``), with the trend pages beside it (``trends.html``,
:mod:`mdxbench.post.site.trends`). Tables are data (postprocess/site/tables.yaml); each cell is the
median of the latest runs of a measurement, beside the paper's figure where the references
have one; every other system:partition present in the data gets a column of its own.'''
import html
import json
import pathlib

import polars as pl
import yaml

from mdxbench import references

TABLES = pathlib.Path(__file__).with_name('tables.yaml')
LATEST = 5
#: what a cell measured by a stand-in says instead of the paper's figure
STAND_IN = "{check}: not the paper's method"


def _with_params(df):
    '''Measured records with their check class; parameters are the perflog's own
    structured field (``meta.params``, the ``params`` column), never re-read from names.'''
    df = df.filter(pl.col('value').is_not_null())
    return df.with_columns(pl.col('check').str.split(' ').list.first().alias('check_class'))


def cell(df, target, check, var, params):
    system, partition = target.split(':')
    sel = df.filter((pl.col('system') == system) & (pl.col('partition') == partition)
                    & (pl.col('check_class') == check) & (pl.col('perf_var') == var))
    for k, v in params.items():
        sel = sel.filter(pl.col('params').str.contains(f'"{k}": "{v}"', literal=True))

    if sel.height == 0:
        return None

    return sel.sort('time').tail(LATEST)['value'].median()


def measured_columns(df, table):
    '''A column for each system:partition that has records of the table's measurements
    but is not one of its declared columns: the machine a user just measured stands beside
    the papers' figures.'''
    declared = {c['target'] for c in table['columns']}
    want = pl.lit(False)
    for r in table['rows']:
        for m in measurements(r):
            want = want | ((pl.col('check_class') == m['check']) & (pl.col('perf_var') == m['var']))
    found = df.filter(want).select((pl.col('system') + ':' + pl.col('partition')).alias('t')) \
        .unique().sort('t')['t'].to_list()
    return [{'label': f'{t} (measured)', 'target': t} for t in found if t not in declared]


def measurements(row):
    '''The row's measurement, then its stand-ins (``also``: the same quantity measured by
    another check, e.g. HPCC's HPL where MKL's LINPACK is not installed), in order; each
    with its own parameters.'''
    return [{'check': row['check'], 'var': row['var'], 'params': row.get('params') or {}}] + \
        [dict(m, params=m.get('params') or {}) for m in row.get('also') or []]


def paper_value(entries, check, target, var, params):
    '''The paper's figure for a cell: (value, source, the other reading where the paper can
    be read two ways), or Nones.'''
    for e in entries:
        if (e['check'] == check and e['target'] == target and e['var'] == var and
                all(str(params.get(k)) == str(v) for k, v in (e.get('when') or {}).items())):
            return e['value'], e['source'], e.get('ambiguous')

    return None, None, None


def build_tables(df, tables=None):
    df = _with_params(df)
    entries = references.load()
    out = []
    for t in tables or yaml.safe_load(TABLES.read_text()):
        t = dict(t, columns=t['columns'] + measured_columns(df, t))
        rows = []
        for r in t['rows']:
            cells = []
            for c in t['columns']:
                v, via = None, None
                for m in measurements(r):
                    v = cell(df, c['target'], m['check'], m['var'],
                             dict(m['params'], **c.get('params', {})))
                    if v is not None:
                        via = m['check'] if m['check'] != r['check'] else None
                        break
                # the paper's figure only beside a cell measured by the paper's method
                p, src, amb = (None, None, None) if via else paper_value(
                    entries, r['check'], c['target'], r['var'],
                    dict(r.get('params') or {}, **c.get('params', {})))
                cells.append({'measured': v, 'via': via, 'paper': p, 'source': src,
                              'ambiguous': amb,
                              'method': STAND_IN.format(check=via) if via else None})

            ratio, ratio_via = None, None
            if t.get('ratio'):
                labels = [c['label'] for c in t['columns']]
                a, b = (cells[labels.index(x)] for x in t['ratio'])
                # a ratio only of two cells measured the same way
                if a['measured'] and b['measured'] and a['via'] == b['via']:
                    ratio, ratio_via = a['measured'] / b['measured'], a['via']

            rows.append({'label': r['label'], 'check': r['check'], 'cells': cells,
                         'ratio': ratio, 'ratio_via': ratio_via})

        out.append({'id': t['id'], 'title': t['title'],
                    'columns': [c['label'] for c in t['columns']],
                    'ratio': t.get('ratio'), 'rows': rows})

    return out


def _fmt(v):
    return '&ndash;' if v is None else f'{v:.4g}'


def tables_html(tables):
    parts = []
    for t in tables:
        head = ''.join(f'<th>{html.escape(c)}</th>' for c in t['columns'])
        if t['ratio']:
            head += f'<th>{html.escape(" / ".join(t["ratio"]))}</th>'

        body = ''
        for r in t['rows']:
            tds = ''
            for c in r['cells']:
                paper = (f' <span class="paper" title="{html.escape(c["source"] or "")}">'
                         f'(paper {_fmt(c["paper"])})</span>') if c['paper'] else ''
                if c.get('ambiguous'):
                    paper += (f' <span class="ambiguous">(the paper is ambiguous here: '
                              f'{html.escape(c["ambiguous"])})</span>')
                via = (f' <span class="via">({html.escape(c["method"])})</span>'
                       if c.get('via') and c['measured'] is not None else '')
                tds += f'<td>{_fmt(c["measured"])}{via}{paper}</td>'

            if t['ratio']:
                how = (f' <span class="via">(both {html.escape(r["ratio_via"])})</span>'
                       if r.get('ratio_via') else '')
                tds += f'<td>{_fmt(r["ratio"])}{how}</td>'

            body += f'<tr><th scope="row">{html.escape(r["label"])}</th>{tds}</tr>'

        parts.append(f'<h2 id="{t["id"]}">{html.escape(t["title"])}</h2>'
                     f'<table><thead><tr><th></th>{head}</tr></thead><tbody>{body}</tbody></table>')

    return '\n'.join(parts)


#: the check classes whose ``meta`` the figures read (iperf3's multiqueue, the curves of
#: OSU and of the cache sweep): a cycle loads the provenance of these records only
META_CHECKS = ('Iperf3Throughput', 'OsuLatency', 'OsuBandwidth', 'LikwidCacheSweep')


def figures(df, outdir):
    '''PNG figures; returns [(file name, caption)]. Series with no data are left out.'''
    if not _with_params(df).filter(pl.col('check_class').is_in(FIGURE_CHECKS)).height:
        return []           # nothing to draw: matplotlib not even loaded
    import matplotlib

    matplotlib.use('Agg')
    import matplotlib.pyplot as plt

    df = _with_params(df)
    made = []

    def save(fig, name, caption):
        fig.tight_layout()
        fig.savefig(outdir / name, dpi=90)
        plt.close(fig)
        made.append((name, caption))

    ip = df.filter(pl.col('check_class') == 'Iperf3Throughput')
    if ip.height:
        fig, ax = plt.subplots(figsize=(6, 4))
        for (sysp, placement, mq), g in _iperf_groups(ip):
            pts = sorted(g.items())
            ax.plot([p[0] for p in pts], [p[1] for p in pts], marker='o',
                    label=f'{sysp} {placement} multiqueue={"on" if mq else "off"}')
        _paper_points(ax, ('Iperf3Throughput', 'Iperf3OneQueue'), 'throughput', 'streams')
        ax.set_xscale('log', base=2)
        ax.set_xlabel('parallel streams (-P)')
        ax.set_ylabel('throughput (Gbit/s)')
        ax.legend(fontsize=6)
        save(fig, 'iperf3-streams.png', 'iperf3 throughput vs parallel streams; squares: the '
             "paper's figures (002 sec. 3.2.2, Fig. 3) on the same axes")

    ior = df.filter(pl.col('check_class') == 'Ior')
    if ior.height:
        fig, ax = plt.subplots(figsize=(6, 4))
        for (sysp, var), g in _series(ior, 'num_nodes'):
            ax.plot(*zip(*sorted(g.items())), marker='o', label=f'{sysp} {var}')
        _paper_points(ax, ('Ior',), None, 'num_nodes')
        ax.set_xlabel('nodes')
        ax.set_ylabel('aggregate GB/s')
        ax.legend(fontsize=7)
        save(fig, 'ior-nodes.png', 'IOR aggregate bandwidth vs nodes; squares: the '
             "paper's figures (002 sec. 3.2.3) on the same axes")

    for check, unit, name in (('OsuLatency', 'us', 'osu-latency.png'),
                              ('OsuBandwidth', 'MB/s', 'osu-bandwidth.png')):
        sel = df.filter(pl.col('check_class') == check).sort('time')
        if not sel.height:
            continue

        fig, ax = plt.subplots(figsize=(6, 4))
        _plot_curves(ax, sel)
        ax.set_yscale('log')
        ax.set_xlabel('message size (B)')
        ax.set_ylabel(unit)
        save(fig, name, f'{check} curve (latest run per system)')

    sweep = df.filter(pl.col('check_class') == 'LikwidCacheSweep').sort('time')
    if sweep.height:
        fig, ax = plt.subplots(figsize=(6, 4))
        _plot_curves(ax, sweep, marker='.')
        ax.set_xlabel('working set (bytes)')
        ax.set_ylabel('GB/s, one core')
        save(fig, 'cache-sweep.png', "One core's bandwidth vs working set, likwid-bench "
                                     "copy_avx (latest run per system); not the paper's "
                                     'tool: Guidi et al. ran CacheBench memcpy')

    fftd = df.filter((pl.col('check_class') == 'FftwMpi2d')
                     & pl.col('perf_var').is_in(['compute_time', 'comm_time']))
    if fftd.height:
        series = dict(_series(fftd, 'num_nodes'))
        systems = sorted({sysp for sysp, _ in series})
        fig, ax = plt.subplots(figsize=(6, 4))
        width = 0.8 / len(systems)
        for i, sysp in enumerate(systems):
            comp = series.get((sysp, 'compute_time'), {})
            comm = series.get((sysp, 'comm_time'), {})
            nodes = sorted(set(comp) | set(comm))
            xs = [j + i * width for j in range(len(nodes))]
            cp = [comp.get(n, 0) for n in nodes]
            ax.bar(xs, cp, width, label=f'{sysp} computation')
            ax.bar(xs, [comm.get(n, 0) for n in nodes], width, bottom=cp,
                   label=f'{sysp} communication')
            ax.set_xticks(range(len(nodes)), [str(n) for n in nodes])
        ax.set_xlabel('nodes')
        ax.set_ylabel('seconds (median)')
        ax.legend(fontsize=7)
        save(fig, 'fft-split.png', 'FFT kernel: computation and communication time vs nodes')

    pds = df.filter((pl.col('check_class') == 'PdsBenchmark')
                    & pl.col('perf_var').str.contains(r'^[a-z]+_q[0-9]+$'))
    if pds.height:
        save(_pds_figure(plt, pds), 'pds-queries.png',
             'PDS (TPC-H) runtime per query and library, median per system, as the paper\'s '
             'Figure 11 (which plots mdx II and EC2; here the measured systems)')

    return made


def _pds_figure(plt, pds):
    '''One panel per library (the paper's Figure 11 a-d), bars per query and system.'''
    med = (pds.with_columns(pl.col('perf_var').str.extract(r'^([a-z]+)_q', 1).alias('library'),
                            pl.col('perf_var').str.extract(r'_q([0-9]+)$', 1).cast(pl.Int32)
                            .alias('query'),
                            pl.format('{}:{}', 'system', 'partition').alias('target'))
           .group_by('library', 'query', 'target').agg(pl.col('value').median()))
    libraries = [lib for lib in ('pandas', 'polars', 'duckdb', 'dask')
                 if lib in set(med['library'])]
    targets = sorted(set(med['target']))
    fig, axes = plt.subplots(1, len(libraries), figsize=(3 * len(libraries), 3.2), squeeze=False)
    width = 0.8 / len(targets)
    for ax, lib in zip(axes[0], libraries):
        sel = med.filter(pl.col('library') == lib)
        for i, target in enumerate(targets):
            t = sel.filter(pl.col('target') == target).sort('query')
            ax.bar([q - 0.4 + (i + 0.5) * width for q in t['query']], t['value'], width,
                   label=target)
        ax.set_title(lib)
        ax.set_xlabel('query')
        ax.set_xticks(range(1, 8))
    axes[0][0].set_ylabel('runtime (s)')
    axes[0][0].legend(fontsize=7)
    return fig


def _plot_curves(ax, sel, **style):
    '''One line per system:partition from the ``curve`` of its latest record's meta.'''
    for (s, p), g in sel.group_by(['system', 'partition'], maintain_order=True):
        curve = json.loads(g['meta'][-1]).get('curve') or {}
        if isinstance(curve, str):                  # stored as a JSON string by some checks
            curve = json.loads(curve)
        if isinstance(curve, dict) and curve:
            xs = sorted(int(k) for k in curve)
            ax.plot(xs, [curve[str(x)] for x in xs], label=f'{s}:{p}', **style)
    ax.set_xscale('log', base=2)
    ax.legend(fontsize=7)


def _paper_points(ax, checks, var, x_param):
    '''The papers' figures of ``checks`` (``var``: that variable only) on the same axes
    as the measured curves, at their ``x_param`` value: hollow black squares, one legend
    entry per figure with its system, conditions and source.'''
    seen = set()
    for e in references.load():
        if e['check'] not in checks or (var and e['var'] != var) or \
                x_param not in (e.get('when') or {}):
            continue
        x = float(e['when'][x_param])
        if (e['var'], x, e['value']) in seen:     # one figure, two checks (Iperf3OneQueue)
            continue
        seen.add((e['var'], x, e['value']))
        cond = [f'{k}={v}' for k, v in e['when'].items() if k != x_param] + \
            [k if v else f'no {k}' for k, v in (e.get('conditions') or {}).items()]
        ax.scatter([x], [e['value']], marker='s', s=40, facecolors='none', edgecolors='black',
                   zorder=3, label=f"paper: {e['target']} {e['var']} {' '.join(cond)}")


def _iperf_groups(ip):
    groups = {}
    for r in ip.iter_rows(named=True):
        p = json.loads(r['params'])
        mq = json.loads(r['meta']).get('multiqueue', False)
        key = (f"{r['system']}:{r['partition']}", p.get('placement', '?'), mq)
        groups.setdefault(key, {}).setdefault(int(p.get('streams', 0)), []).append(r['value'])

    return [(k, {s: sorted(v)[len(v) // 2] for s, v in g.items()}) for k, g in sorted(groups.items())]


def _series(df, param):
    groups = {}
    for r in df.iter_rows(named=True):
        p = json.loads(r['params'])
        key = (f"{r['system']}:{r['partition']}", r['perf_var'])
        groups.setdefault(key, {}).setdefault(int(p.get(param, 0)), []).append(r['value'])

    return [(k, {x: sorted(v)[len(v) // 2] for x, v in g.items()}) for k, g in sorted(groups.items())]


PAGE = '''<!DOCTYPE html>
<html lang="en"><head><meta charset="utf-8"><title>mdxbench report</title>
<style>
body {{ font-family: sans-serif; margin: 2em; }}
table {{ border-collapse: collapse; margin-bottom: 1.5em; }}
th, td {{ border: 1px solid #999; padding: 0.3em 0.6em; text-align: right; }}
thead th, tbody th {{ background: #eee; text-align: left; }}
.paper {{ color: #666; font-size: 85%; }}
.via {{ color: #a60; font-size: 85%; }}
figure {{ display: inline-block; margin: 0.5em; }}
</style></head>
<body data-images="{nimages}">
<h1>mdxbench report</h1>
<p>{nrecords} records, {first} to {last}. Cells: median of the latest {latest} runs;
in parentheses the paper's figure where site-configs/references holds one; a check's name
in a cell says which stand-in measured it (e.g. HPCC's HPL where MKL's LINPACK is absent).
Columns marked "(measured)" are the other systems present in the data.</p>
{tables}
<h2>Trends</h2>
<p><a href="trends.html">trends.html</a>: {ncharts} series over time, {ncps} change points
(one chart per series, with events, change points, segment medians and references).</p>
<h2>Figures</h2>
{figures}
<script>
window.addEventListener('load', function () {{
  var imgs = document.images, ok = 0;
  for (var i = 0; i < imgs.length; i++) if (imgs[i].complete && imgs[i].naturalWidth > 0) ok++;
  document.body.setAttribute('data-images-loaded', String(ok));
}});
</script>
</body></html>
'''


#: the check classes the figures draw
FIGURE_CHECKS = ('Iperf3Throughput', 'Ior', 'OsuLatency', 'OsuBandwidth', 'LikwidCacheSweep',
                 'FftwMpi2d', 'PdsBenchmark')


def checks(tables=None):
    '''The check classes the report reads: its tables' measurements and stand-ins, and
    the figures'.'''
    out = set(FIGURE_CHECKS)
    for t in tables or yaml.safe_load(TABLES.read_text()):
        out.update(m['check'] for r in t['rows'] for m in measurements(r))
    return sorted(out)


def write(history, outdir, sensitivity=None, change_points=None):
    '''The report's pages in ``outdir``: the papers' tables, figures and the trend page
    (``change_points``: a cycle's, for the trend page; None: found there). ``history``:
    a :mod:`mdxbench.post.analysis.kept` history (the cycle's kept scan, read a chunk of
    series at a time, or a table's): the tables and figures read the records of their own
    checks only.'''
    outdir = pathlib.Path(outdir)
    outdir.mkdir(parents=True, exist_ok=True)
    from mdxbench.post.store import events as _events
    from mdxbench.post.site import kept as kept_site

    df = history.records_of(checks())
    tables = build_tables(df)
    figs = figures(df, outdir)
    ncharts, cps = kept_site.write(history, outdir / 'trends.html', _events.load(), sensitivity,
                                   change_points)
    fig_html = '\n'.join(f'<figure><img src="{n}" alt="{html.escape(c)}" width="540">'
                         f'<figcaption>{html.escape(c)}</figcaption></figure>' for n, c in figs) \
        or '<p>No series to plot yet.</p>'
    nrecords, first, last = history.span()
    page = PAGE.format(nimages=len(figs), nrecords=nrecords, latest=LATEST, ncharts=ncharts,
                       ncps=len(cps), first=first if first is not None else '-',
                       last=last if last is not None else '-',
                       tables=tables_html(tables), figures=fig_html)
    (outdir / 'index.html').write_text(page)
    (outdir / 'tables.json').write_text(json.dumps(tables, indent=1, default=str))
    return outdir / 'index.html', tables, figs
