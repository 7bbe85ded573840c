'''Regression incidents: one per cause, not one per series.

A kernel update on mdx2 shifts dozens of series at once; an operator needs one alert that
names the update, not dozens (Meta's FBDetect groups correlated regressions the same way).
The regression change points of :func:`mdxbench.post.analysis.changes.find` form one
incident when they are on the same system (and the same partition, where the cause names
one) and share their explanation:

* the same recorded system event between the last run before and the first run after
  (the event's partition, if it has one, scopes the incident);
* else the same provenance change (kernel a -> b, binary hash, toolchain, benchmark
  version, suite commit), with first runs after it within ``window`` of each other;
* else nothing recorded explains it: the perf variables of one check that changed from the
  same job on are one incident (HPL's ``gflops`` and ``percent_nominal_peak``), other change points
  one each.

Each series of an incident says whether it **went away**: the series' latest level (the
median after its last change point) is back within ``min_effect`` of its level before the
regression, or better than it (the series' direction). An incident all of whose series went away is *resolved*: a transient dip of a
few runs does not stay an open regression.

States across cycles (:func:`update`): ``new`` (found, nobody told yet) -> ``open`` (a
notification succeeded: :func:`notified`) -> ``resolved`` (went away), and ``reopened``
when a resolved incident's series regress again (-> ``open`` once told); ``acknowledged``
by a person stays so. Only new and reopened incidents are to be notified, until a
notification succeeds. Functions here return data and print nothing.
'''
import datetime as dt
import hashlib
import json

from mdxbench.post.analysis import changes

#: first runs after the same provenance change this close together are one incident
WINDOW = dt.timedelta(days=7)

#: states whose incidents are to be notified
NOTIFY = ('new', 'reopened')


def series_key(cp):
    return tuple(cp[k] for k in changes.SERIES)


def cause(cp):
    '''(scope partition or None, kind, text) of a change point: what explains it.'''
    if cp['events']:
        ev = sorted(cp['events'], key=lambda e: (e['time'], e['name']))[0]
        return ev.get('partition'), 'event', f"event \"{ev['name']}\" at {ev['time']}"
    provenance = {k: v for k, v in cp['changed'].items() if k != 'new nodes'}
    if provenance:
        return None, 'provenance', '; '.join(
            f"{k} {', '.join(b) or '?'} \u2192 {', '.join(a) or '?'}"
            for k, (b, a) in sorted(provenance.items()))
    if cp['changed']:
        b, a = cp['changed']['new nodes']
        return cp['partition'], 'nodes', f"new nodes {', '.join(a)}"
    # the perf variables of one measurement (one job) that changed together: one cause
    return cp['partition'], 'unexplained', (
        f"nothing recorded: {cp['check']} in {cp['environ']} from job {cp['jobid']} on")


def latest_levels(cps):
    '''{series: median after its last change point} over all change points found.'''
    last = {}
    for cp in sorted(cps, key=lambda c: c['time']):
        last[series_key(cp)] = cp['after']
    return last


def went_away(cp, level, min_effect=changes.MIN_EFFECT):
    '''Whether a regression's series is back: its latest level within ``min_effect`` of its
    earlier level, or better than that (the direction of the series, ``better``: a node
    that comes back 4% above its old level after a quota is lifted has recovered).'''
    if level is None:
        return False
    rel = level / cp['before'] - 1
    if cp.get('better') == 'higher':
        return rel > -min_effect
    if cp.get('better') == 'lower':
        return rel < min_effect
    return abs(rel) < min_effect


def incident_id(system, scope, text, start):
    '''Stable across cycles: the system, scope, cause and the day of the first run after.'''
    raw = f'{system}|{scope or ""}|{text}|{start[:10]}'
    return hashlib.sha1(raw.encode()).hexdigest()[:10]


def group(cps, window=WINDOW, min_effect=changes.MIN_EFFECT):
    '''Incidents of the regression change points among ``cps`` (all change points of a
    scan: later ones tell whether a series went away). A list of dicts: ``id``,
    ``system``, ``partition`` (None: system-wide), ``kind``, ``cause``, ``start`` (first
    run after), ``series`` (worst effect first, each with ``went_away``), ``went_away``.'''
    levels = latest_levels(cps)
    buckets = {}
    for cp in sorted((c for c in cps if c['verdict'] == 'regression'), key=lambda c: c['time']):
        scope, kind, text = cause(cp)
        t = dt.datetime.fromisoformat(cp['time'])
        groups = buckets.setdefault((cp['system'], scope, kind, text), [])
        if not groups or (kind == 'provenance' and t - groups[-1]['_t0'] > window):
            groups.append({'_t0': t, 'members': []})
        groups[-1]['members'].append(cp)
    out = []
    for (system, scope, kind, text), groups in buckets.items():
        for g in groups:
            series = [series_entry(cp, went_away(cp, levels.get(series_key(cp)), min_effect))
                      for cp in g['members']]
            series.sort(key=lambda s: -abs(s['effect']))
            start = g['members'][0]['time']
            out.append({'id': incident_id(system, scope, text, start), 'system': system,
                        'partition': scope, 'kind': kind, 'cause': text, 'start': start,
                        'series': series, 'went_away': all(s['went_away'] for s in series)})
    out.sort(key=lambda i: (i['went_away'], -abs(i['series'][0]['effect'])))
    return out


def series_entry(cp, gone):
    return {'partition': cp['partition'], 'environ': cp['environ'], 'check': cp['check'],
            'perf_var': cp['perf_var'], 'unit': cp['unit'], 'effect': cp['effect'],
            'before': cp['before'], 'after': cp['after'], 'time': cp['time'],
            'run': cp['run'], 'jobid': cp['jobid'], 'nodes': cp.get('nodes', ''),
            'noise': cp.get('noise'), 'better': cp.get('better'), 'changed': cp['changed'],
            'explanation': cp['explanation'], 'went_away': gone,
            # what the runs either side were given, and their longest job: a split runs
            # each side so, within a time limit sized from it
            'variables': cp.get('variables') or {}, 'run_seconds': cp.get('run_seconds')}


def update(known, found, now):
    '''The incidents after a cycle: ``known`` ({id: incident} from the state) updated with
    ``found`` (:func:`group` of this cycle's scan) at ``now`` (ISO time). Each incident
    keeps ``first_seen``, ``state``, ``history`` (state changes with their times) and a
    person's ``ack``. Incidents no longer found keep their state. A cycle that finds what
    the previous one found changes no state.'''
    out = {k: dict(v) for k, v in known.items()}
    for inc in found:
        old = out.get(inc['id'])
        if old is None:
            new = dict(inc, first_seen=now, history=[], ack=None, state=None)
            state = 'resolved' if inc['went_away'] else 'new'
        else:
            new = dict(old, **{k: inc[k] for k in ('series', 'went_away', 'cause')})
            state = next_state(old['state'], inc['went_away'])
        set_state(new, state, now)
        out[inc['id']] = new
    return out


def next_state(previous, gone):
    '''The state an incident found again moves to from ``previous``: a resolved one whose
    series regress again is reopened; one not yet told anyone (new, reopened) stays so.'''
    if previous == 'acknowledged':
        return 'acknowledged'
    if gone:
        return 'resolved'
    return 'reopened' if previous == 'resolved' else previous


def set_state(inc, state, now):
    if state != inc.get('state'):
        inc['history'] = list(inc['history']) + [{'time': now, 'state': state}]
    inc['state'] = state
    return inc


def notified(inc, now):
    '''Someone was told (the notify command succeeded): the incident is open.'''
    return set_state(inc, 'open', now)


def to_notify(incidents):
    '''Incidents to be told to someone: new or reopened (until a notification succeeds).'''
    return [i for i in incidents.values() if i['state'] in NOTIFY]


def find(incidents, ident):
    '''The incident of an id, or of a unique prefix of one.'''
    matches = [k for k in incidents if k.startswith(ident)]
    if len(matches) != 1:
        raise ValueError(f'incident {ident!r}: ' + ('no such incident' if not matches else
                                                     f'ambiguous ({", ".join(matches)})'))
    return incidents[matches[0]]


def acknowledge(incidents, ident, note, now, who=None):
    '''A person has seen the incident (an id or a unique prefix of one): it no longer
    counts as a new regression. Returns the incident.'''
    inc = find(incidents, ident)
    inc['ack'] = {'time': now, 'note': note, 'by': who}
    return set_state(inc, 'acknowledged', now)


def open_regressions(incidents):
    '''Incidents still regressing: new, open or reopened.'''
    return [i for i in incidents.values() if i['state'] in ('new', 'open', 'reopened')]


def to_json(incident):
    return json.dumps(incident, indent=1, default=str, sort_keys=True)
