'''``mdxbench incident split``: run the previous build beside the new one and say whether an
incident is the system's or the software's (:mod:`.verdict` for the statistics).

1. The incident's series whose binary changed with it (others are named and left);
2. per check and node, the old build installed again from its concrete spec and the new
   one found (:mod:`.builds`); a build that cannot be had is the verdict "cannot rebuild";
3. the node must not be drained, down or failing in Slurm ("cannot run" otherwise);
4. one Slurm job per node runs the rounds, old and new interleaved (:mod:`.jobs`), as
   many as the noisiest of the check's series needs, at most ``max_rounds``;
5. each series' verdict from its paired values; the incident's from its series'.

The result is a dict stored on the incident (``split``), also written as ``split.json`` in
the split's directory with the job scripts and ReFrame's stage.
'''
import datetime as dt
import json
import pathlib
import subprocess
import time

from mdxbench.post.split import builds, jobs, verdict as sv


def _now():
    return dt.datetime.now(dt.timezone.utc).isoformat(timespec='seconds')


def cases_of(series, min_effect, max_rounds):
    '''The cases to run ({key: Case}) and each series' case key, or the reason a series
    has none.'''
    cases, of = {}, []
    for s in series:
        nodes = [n for n in (s.get('nodes') or '').split(',') if n]
        if len(nodes) != 1:
            of.append((s, None, f'cannot run: its runs name {len(nodes)} nodes; a split '
                                'runs checks of one node' if nodes else
                                'cannot run: its runs name no node'))
            continue
        if not s['old_hash'] or not s['new_hash']:
            side = 'previous' if not s['old_hash'] else 'current'
            of.append((s, None, f"cannot rebuild: the {side} binary "
                                f"({s['old_binary' if not s['old_hash'] else 'new_binary']}) "
                                'is no Spack build with a recorded hash'))
            continue
        given = s.get('variables') or {}
        c = jobs.Case(s['partition'], s['environ'], s['check'], nodes[0], s['old_hash'],
                      s['new_hash'], old_vars=given.get('before') or {},
                      new_vars=given.get('after') or {}, run_seconds=s.get('run_seconds'))
        c = cases.setdefault(c.key, c)
        c.rounds = max(c.rounds, sv.rounds_for(s.get('noise'), s['after'] / s['before'] - 1,
                                               min_effect, hi=max_rounds))
        of.append((s, c.key, None))
    return cases, of


def differing(old_vars, new_vars):
    '''The variables the two sides were given differently, in words (``num_times 100 ->
    20``), or '' where they were given the same.'''
    names = sorted(n for n in set(old_vars) | set(new_vars)
                   if old_vars.get(n) != new_vars.get(n))
    return ', '.join(f'{n} {old_vars.get(n)} \u2192 {new_vars.get(n)}' for n in names)


def split(system, incident, *, perflog_dirs, out, perflogs, min_effect,
          max_rounds=sv.MAX_ROUNDS, time_limit=None, slurm_states=None, log=print):
    '''Split ``incident`` (a dict of the incident file) of ``system``; returns the result
    (see the module). ``out``: the split's own directory (job scripts and outputs,
    ReFrame's stage); ``perflogs``: where its runs' perflogs go (under the site's perflog
    directory: ingested like any other); ``perflog_dirs``: whose ``specs/`` hold the
    builds' concrete specs.'''
    from mdxbench.post.fleet import jobs as fleet_jobs, slurm
    from mdxbench.post.store import records

    t0 = time.monotonic()
    out, perflogs = pathlib.Path(out).resolve(), pathlib.Path(perflogs).resolve()
    out.mkdir(parents=True, exist_ok=True)
    series, skipped = sv.software_series(incident)
    cases, of = cases_of(series, min_effect, max_rounds)
    failed = {}                       # case key -> why it was not measured
    dirs = builds.archive_dirs(perflog_dirs)
    prefixes = {}
    t_build = time.monotonic()
    for key, c in cases.items():
        try:
            for side in ('old', 'new'):
                h = getattr(c, f'{side}_hash')
                if h not in prefixes:
                    prefixes[h] = builds.obtain(h, dirs, log)
                setattr(c, f'{side}_prefix', str(prefixes[h][0]))
        except builds.CannotRebuild as err:
            failed[key] = f'cannot rebuild: {err}'
    building = time.monotonic() - t_build
    runnable = {k: c for k, c in cases.items() if k not in failed}
    by_node, access = {}, {}
    for key, c in runnable.items():
        try:
            p = fleet_jobs.plan(system, c.partition, states=slurm_states, nodes=[c.node])
        except ValueError as err:
            failed[key] = f'cannot run: {err}'
            continue
        if c.node in p.untested:
            failed[key] = (f'cannot run: {c.node} is {p.untested[c.node]} in Slurm: a split '
                           'never runs on a drained or failing node')
            continue
        by_node.setdefault(c.node, []).append(c)
        access[c.node] = p.access
    job_ids, waited = {}, 0.0
    if by_node:
        acc = next(iter(access.values()))
        try:
            job_ids, waited = jobs.submit(system, by_node, incident['id'], out, perflogs, acc,
                                          time_limit, log=log)
        except (RuntimeError, OSError, subprocess.SubprocessError) as err:
            for c in (c for cs in by_node.values() for c in cs):
                failed[c.key] = f'cannot run: {err}'
    states = slurm.job_states(list(job_ids.values()))
    errors = []
    recs = list(records.iter_perflog_records([perflogs], errors)) if perflogs.exists() else []
    results = []
    for s, key, why in of:
        entry = {k: s[k] for k in ('partition', 'environ', 'check', 'perf_var', 'unit',
                                   'before', 'after', 'old_binary', 'new_binary',
                                   'old_hash', 'new_hash')}
        entry['node'] = (s.get('nodes') or '') or None
        why = why or failed.get(key)
        if why is None:
            c = cases[key]
            entry.update(old_prefix=c.old_prefix, new_prefix=c.new_prefix,
                         job=job_ids.get(c.node), job_state=states.get(job_ids.get(c.node)))
            old, new, problems = jobs.values(recs, c, s['perf_var'])
            diff = differing(c.old_vars, c.new_vars)
            if diff:
                problems = [f'the two sides were recorded with different variables ({diff}): '
                            'each ran as recorded, so the split weighs the builds and the '
                            'variables together'] + problems
            entry['problems'] = problems
            entry['variables'] = {'old': c.old_vars, 'new': c.new_vars}
            if len(old) < 2:
                why = (f"cannot run: {len(old)} complete round(s) of {c.rounds} (job "
                       f"{job_ids.get(c.node)}: {states.get(job_ids.get(c.node), '?')}; "
                       f"output {out}/jobs/{c.node}.out)")
            else:
                entry.update(sv.decide(old, new, s['before'], s['after'], s['better'],
                                       min_effect))
        if why is not None:
            entry.update(verdict=why.split(':')[0], reason=why)
        results.append(entry)
    measured = [r['verdict'] for r in results if r['verdict'] in sv.VERDICTS]
    result = {'time': _now(), 'verdict': sv.overall(measured) if measured else
              (results[0]['verdict'] if results else 'nothing to split'),
              'tally': sv.tally(r['verdict'] for r in results),
              'series': results, 'not_split': skipped, 'jobs': job_ids,
              'seconds': round(time.monotonic() - t0, 1), 'seconds_in_jobs': round(waited, 1),
              'seconds_building': round(building, 1),
              'builds': {h: {'prefix': str(p), 'how': how} for h, (p, how) in prefixes.items()},
              'min_effect': min_effect, 'dir': str(out), 'perflogs': str(perflogs),
              'perflog_errors': errors[:20]}
    (out / 'split.json').write_text(json.dumps(result, indent=1, default=str))
    return result


def attach(inc, result, now):
    '''The split's result on the incident: kept there (``split``), and a line in its history
    (the feed entry is updated).'''
    inc['split'] = result
    inc['history'] = list(inc.get('history') or []) + [
        {'time': now, 'state': inc.get('state'), 'split': result['verdict']}]
    return inc


def summary_text(result):
    """The split for people: the incident's verdict, then one line per series."""
    tally = f"; series: {result['tally']}" if result.get('tally') else ''
    lines = [f"split: {result['verdict']} ({result['seconds']:.0f} s, "
             f"{len(result['jobs'])} job(s){tally})"]
    lines += [f"  {r['partition']} {r['environ']} {r['check']} {r['perf_var']} on "
              f"{r['node'] or '?'}: {r['verdict']} -- {r['reason']}" for r in result['series']]
    lines += [f'  not split: {why}' for why in result['not_split']]
    return '\n'.join(lines)


def split_incident(system, root, ident, perflog_dirs, log=print, **kw):
    """Split the incident ``ident`` (an id or a unique prefix) of the cycle state ``root``
    and store the verdict on it. The state is not held while the split builds and runs (a
    cycle may run meanwhile); the next cycle writes the pages and ingests the split's
    runs. Its jobs and ReFrame's stage go to ``<state>/split/<system>/<id>-<time>``, its
    perflogs under the first perflog directory's ``split/``."""
    from mdxbench.post.analysis import incidents
    from mdxbench.post.store.incidents import IncidentFile
    from mdxbench.post.store.locks import state_lock
    from mdxbench.sitecfg import state_dir

    dirs = [pathlib.Path(d) for d in perflog_dirs]
    with state_lock(root / 'incidents.json', wait=60):
        inc = incidents.find(IncidentFile(root / 'incidents.json').incidents, ident)
    name = f"{inc['id']}-{_now().replace(':', '').replace('-', '')[:15]}"
    out, perflogs = state_dir() / 'split' / system / name, dirs[0] / 'split' / name
    log(f"mdxbench incident split {inc['id']}: {inc['cause']}; jobs in {out}, records in "
        f"{perflogs}")
    result = split(system, inc, perflog_dirs=dirs, out=out, perflogs=perflogs, log=log, **kw)
    with state_lock(root / 'incidents.json', wait=600):
        store = IncidentFile(root / 'incidents.json')
        attach(store.incidents[inc['id']], result, _now())
        if store.last_cycle:
            store.last_cycle['site_written'] = False    # the next cycle writes the pages
        store.save()
    return result
