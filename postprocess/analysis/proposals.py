'''References proposed from measurements (``mdxbench references propose``).

For every series of a system (partition, check with its parameters, perf variable), the
latest stable segment — the runs after the series' last change point
(:mod:`mdxbench.post.analysis.changes`) — gives the reference: its median as ``value``, and a
tolerance on the worse side (the direction the check declares) of ``k`` robust standard
deviations (1.4826 x MAD) relative to the median, at least ``floor``. The source says what
it was measured from: ``measured: 24 runs 2026-10-04..2026-11-20, suite a1b2c3d, binary
...``.

Entries go to one file of the references directory (default
``measured-<system>.yaml``), in the format ``mdxbench.references`` loads. A figure taken
from a paper (any entry whose source does not start with ``measured``, in any file) is
never replaced: the proposal is reported beside it instead. The diff against the current
file is printed.'''
import difflib
import json
import pathlib

import numpy as np
import polars as pl
import yaml

from mdxbench import references
from mdxbench.post.analysis import changes, explain
from mdxbench.post.analysis.stats import SIGMA_PER_MAD

MIN_RUNS = 5
K = 3.0
FLOOR = 0.05


def _class(display_name):
    return display_name.split(' ')[0]


def propose(df, system, since=None, k=K, floor=FLOOR, min_runs=MIN_RUNS):
    '''(entries, notes): entries as dicts of the references format plus ``check`` and
    ``target``; notes: series that got no entry, and why.'''
    df = df.filter(pl.col('system') == system)
    if since is not None:
        df = df.filter(pl.col('time') >= since)
    d, g = changes.series_index(df)
    values = d['value'].to_numpy()
    cps = {}
    for c in changes.scan(df)[1]:
        key = tuple(c[f] for f in changes.SERIES)
        cps[key] = max(cps.get(key, 0), c['index'])

    entries, notes, seen = [], [], {}
    for key, start, n in zip(g.select(changes.SERIES).iter_rows(named=True), g['start'], g['n']):
        k_ = tuple(key[f] for f in changes.SERIES)
        first = cps.get(k_, 0)
        seg = values[start + first:start + n]
        rows = d.slice(start + first, n - first)
        name = f"{key['system']}:{key['partition']} {key['check']} {key['perf_var']}"
        if key['better'] not in ('higher', 'lower'):
            notes.append(f'{name}: no declared direction (records older than the declaration)')
            continue
        if len(seg) < min_runs:
            notes.append(f'{name}: {len(seg)} run(s) since its last change point, '
                         f'{min_runs} needed')
            continue
        med = float(np.median(seg))
        mad = float(np.median(np.abs(seg - med)))
        tol = min(max(floor, k * SIGMA_PER_MAD * mad / abs(med)), 1.0)
        metas = [json.loads(m) if m else {} for m in rows['meta'].to_list()]
        suites = sorted({(m.get('suite_commit') or '?')[:7] for m in metas})
        bins = sorted({str(explain.PROVENANCE['binary'](m)) for m in metas})
        times = rows['time']
        params = json.loads(rows['params'][-1] or '{}')
        entry = {'var': key['perf_var'], 'value': float(f'{med:.4g}'), 'unit': key['unit'],
                 'lower': -round(tol, 3) if key['better'] == 'higher' else None,
                 'upper': round(tol, 3) if key['better'] == 'lower' else None}
        if params:
            entry['when'] = params
        entry['source'] = (f"measured: {len(seg)} runs {times.min():%Y-%m-%d}.."
                           f"{times.max():%Y-%m-%d}, suite {', '.join(suites)}, "
                           f"binary {', '.join(bins)}")
        ident = (_class(key['check']), f"{key['system']}:{key['partition']}",
                 key['perf_var'], json.dumps(params, sort_keys=True))
        if ident in seen:
            notes.append(f"{name}: measured in environments {seen[ident]} and "
                         f"{key['environ']}; references do not tell environments apart: "
                         f'no entry')
            entries = [e for e in entries if e['_ident'] != ident]
            continue
        seen[ident] = key['environ']
        entries.append(dict(entry, check=ident[0], target=ident[1], _ident=ident))
    return entries, notes


def _ident(e):
    return (e['check'], e['target'], e['var'],
            json.dumps({k: str(v) for k, v in (e.get('when') or {}).items()}, sort_keys=True))


def merge(entries, out_path, ref_dir=None):
    '''(new file text, old file text, kept): the output file with the proposals in place
    of its measured entries for the same series; ``kept`` lists proposals not written
    because a paper's figure (or another file's entry) covers that series.'''
    ref_dir = pathlib.Path(ref_dir or references.reference_dir())
    out_path = pathlib.Path(out_path)
    old_text = out_path.read_text() if out_path.exists() else ''
    existing = references.load(ref_dir) if ref_dir.is_dir() else []
    protected = {}
    for e in existing:
        if pathlib.Path(e['file']).resolve() != out_path.resolve() \
                or not str(e['source']).startswith('measured'):
            protected[_ident(e)] = e
    data = yaml.safe_load(old_text) or {} if old_text else {}
    kept = []
    for e in entries:
        ident = _ident(e)
        if ident in protected:
            p = protected[ident]
            kept.append(f"{e['check']} {e['target']} {e['var']}"
                        f"{' ' + str(e['when']) if e.get('when') else ''}: kept {p['value']} "
                        f"{p['unit']} ({p['source']}, {pathlib.Path(p['file']).name}); "
                        f"measured {e['value']} {e['unit']}")
            continue
        items = data.setdefault(e['check'], {}).setdefault(e['target'], [])
        items[:] = [i for i in items if _ident(dict(i, check=e['check'], target=e['target']))
                    != ident]
        items.append({k: e[k] for k in ('var', 'value', 'unit', 'lower', 'upper', 'when',
                                        'source') if k in e})
        items.sort(key=lambda i: (i['var'], json.dumps(i.get('when') or {}, sort_keys=True)))
    data = {c: dict(sorted(t.items())) for c, t in sorted(data.items())}
    header = ('# References measured on this system, proposed by `mdxbench references '
              'propose`\n# (median of the latest stable segment; tolerance from its noise). '
              'Review the diff before committing.\n')
    new_text = header + yaml.safe_dump(data, sort_keys=False, allow_unicode=True, width=100)
    return new_text, old_text, kept


def diff(old_text, new_text, path):
    return ''.join(difflib.unified_diff(old_text.splitlines(True), new_text.splitlines(True),
                                        f'{path} (current)', f'{path} (proposed)'))


def write(path, text):
    '''Replace the references file at ``path`` with ``text`` (atomically).'''
    path = pathlib.Path(path)
    path.parent.mkdir(parents=True, exist_ok=True)
    tmp = path.with_name(path.name + '.tmp')
    tmp.write_text(text)
    tmp.replace(path)
