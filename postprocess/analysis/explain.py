'''What changed with a change point, and what it means.

Each change point is explained from the stored provenance of the runs either side: the
benchmark binary (Spack hash or Debian package), the toolchain, the benchmark's version,
the suite commit, the compute node's kernel, the node set, the variables the check's runs
were given (``meta.variables``: ``variable num_times 100 -> 20``), and the system events recorded
(``mdxbench event add``) between the last run before and the first run after. Whether a
change is a regression is what the check declared for the perf variable (``better``); a
series without a declaration gives ``no-direction``, never a guess.'''
import datetime as dt
import json

#: provenance fields compared either side of a change point: name -> how to read a meta
PROVENANCE = {
    'binary': lambda m: _binary(m.get('binary')),
    'toolchain': lambda m: _binary(m.get('toolchain')),
    'bench_version': lambda m: m.get('bench_version'),
    'suite': lambda m: (m.get('suite_commit') or '')[:12] or None,
    'kernel': lambda m: m.get('node_kernel'),
}


def _binary(b):
    if isinstance(b, str):              # Elasticsearch's flattened field keeps JSON text
        try:
            b = json.loads(b)
        except ValueError:
            return b
    if not b:
        return None
    return (b.get('spack_spec', '') + ' ' + b.get('spack_hash', '')).strip() \
        or b.get('debian_package') or b.get('path') or b.get('source')


def _variables(row):
    '''The variables a run recorded (``meta.variables``), or None for a record written
    before runs recorded them.'''
    v = _meta(row).get('variables')
    if isinstance(v, str):              # Elasticsearch's flattened field keeps JSON text
        try:
            v = json.loads(v)
        except ValueError:
            return None
    return v if isinstance(v, dict) else None


def _text(value):
    '''A variable's value as the explanation writes it: ``20``, ``copy_avx``, ``[1, 2]``.'''
    return value if isinstance(value, str) else json.dumps(value, sort_keys=True)


def verdict(better, effect):
    if better not in ('higher', 'lower'):
        return 'no-direction'
    worse = effect < 0 if better == 'higher' else effect > 0
    return 'regression' if worse else 'improvement'


def _meta(row):
    m = row['meta']
    try:
        return json.loads(m) if isinstance(m, str) else (m or {})
    except ValueError:
        return {}


def explain(d, cp, events=(), context=3):
    '''Add to ``cp`` what changed with it: provenance of up to ``context`` runs either
    side (``changed``: field -> [before values, after values]; ``unchanged``), the
    events in between, the verdict, and a sentence for people.'''
    i, s0 = cp['row'], cp['series_start']
    before = d.slice(max(s0, i - context), i - max(s0, i - context)).to_dicts()
    after = d.slice(i, min(context, s0 + cp['series_n'] - i)).to_dicts()
    first = after[0]
    changed, unchanged = {}, []
    for name, get in PROVENANCE.items():
        b = sorted({str(get(_meta(r))) for r in before if get(_meta(r)) is not None})
        a = sorted({str(get(_meta(r))) for r in after if get(_meta(r)) is not None})
        if not b and not a:
            continue
        if b != a:
            changed[name] = [b, a]
        else:
            unchanged.append(name)
    # the variables the runs were given (defaults, -S, hooks): each one that differs either
    # side is a change, like a binary's; compared only where both sides recorded them
    vb = [_variables(r) for r in before if _variables(r) is not None]
    va = [_variables(r) for r in after if _variables(r) is not None]
    if vb and va:
        same = True
        for name in sorted({k for v in vb + va for k in v}):
            b = sorted({_text(v.get(name)) for v in vb})
            a = sorted({_text(v.get(name)) for v in va})
            if b != a:
                changed[f'variable {name}'] = [b, a]
                same = False
        if same:
            unchanged.append('variables')
    # nodes: those of the first runs after that no earlier run of the series used (a
    # rotation over the same nodes is no change)
    seen = {n for r in d.slice(s0, i - s0)['nodes'].to_list() for n in (r or '').split(',') if n}
    new = sorted({n for r in after for n in (r['nodes'] or '').split(',') if n} - seen)
    if new:
        changed['new nodes'] = [sorted({n for r in before for n in (r['nodes'] or '').split(',')
                                        if n}), new]
    elif seen:
        unchanged.append('nodes')

    t_prev, t_first = before[-1]['time'], first['time']
    evs = [e for e in events
           if e['system'] == cp['system'] and e.get('partition') in (None, cp['partition'])
           and t_prev < e['_time'] <= t_first]
    v = verdict(cp['better'], cp['effect'])
    took = [t for r in before + after
            if isinstance(t := _meta(r).get('run_seconds'), (int, float))]
    cp.update(variables={'before': _variables(before[-1]) or {}, 'after': _variables(first) or {}},
              run_seconds=max(took) if took else None)
    cp.update(run=cp['index'] + 1, jobid=first['jobid'], nodes=first['nodes'] or '',
              time=t_first.isoformat(),
              previous_time=t_prev.isoformat(), changed=changed, unchanged=unchanged,
              events=[{'time': e['time'], 'name': e['name'], 'note': e.get('note'),
                       'partition': e.get('partition')} for e in evs],
              verdict=v)
    cp['explanation'] = sentence(cp)
    return cp


def sentence(cp):
    '''``mdx2:vc16m32g BabelStreamOmp triad -22% (383 -> 298 GB/s) since 2026-10-03 run
    41; binary and suite unchanged; event 2026-10-02 "hypervisor kernel update"``.'''
    parts = [f"{cp['system']}:{cp['partition']} {cp['check']} {cp['perf_var']} "
             f"{cp['effect']:+.0%} ({cp['before']:.4g} \u2192 {cp['after']:.4g} {cp['unit']}) "
             f"since {cp['time'][:10]} run {cp['run']} (job {cp['jobid']})"]
    for name, (b, a) in cp['changed'].items():
        parts.append(f"{name} {', '.join(b) or '?'} \u2192 {', '.join(a) or '?'}")
    if cp['unchanged']:
        parts.append(' and '.join([', '.join(cp['unchanged'][:-1]), cp['unchanged'][-1]]
                                  if len(cp['unchanged']) > 1 else cp['unchanged'])
                     + ' unchanged')
    for e in cp['events']:
        parts.append(f"event {e['time'][:10]} \"{e['name']}\""
                     + (f" ({e['note']})" if e.get('note') else ''))
    if not cp['events']:
        parts.append('no recorded event')
    return '; '.join(parts)


SEVERITY = {'regression': 0, 'no-direction': 1, 'improvement': 2}


def ordered(cps, since=None):
    '''The explained change points ``cps``, regressions first, then by size of the change;
    only those whose first run is at or after ``since`` (a datetime) when given; without
    the scan's bookkeeping (rows, series numbers).'''
    out = list(cps)
    if since is not None:
        out = [cp for cp in out if dt.datetime.fromisoformat(cp['time']) >= since]
    out.sort(key=lambda c: (SEVERITY[c['verdict']], -abs(c['effect'])))
    for c in out:
        for k in ('row', 'series_start', '_sid'):
            c.pop(k, None)
    return out
