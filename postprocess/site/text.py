'''The text views of the ``mdxbench`` command: one table renderer (a ``rich`` table printed
to plain text, wide enough never to wrap) and the tables built on it -- perflog records,
regressions, change points, node verdicts. Each view takes what the analysis or the fleet
returned and gives a string; nothing here computes a verdict.'''
import io

import polars as pl


def render(header, rows):
    '''Plain text of a table with ``header`` and ``rows`` (any values, shown with str).'''
    from rich import box
    from rich.console import Console
    from rich.table import Table

    table = Table(box=box.SIMPLE_HEAD, show_edge=False, pad_edge=False)
    for h in header:
        table.add_column(str(h), overflow='fold')
    for row in rows:
        table.add_row(*(str(c) for c in row))
    con = Console(file=io.StringIO(), width=1000, color_system=None, force_terminal=False,
                  highlight=False)
    con.print(table)
    return '\n'.join(line.rstrip() for line in con.file.getvalue().splitlines() if line.strip())


def number(v):
    '''A figure as the tables show it: 4 significant digits, '-' for none.'''
    if v is None:
        return '-'

    return f'{v:.4g}' if isinstance(v, float) else str(v)


def perflog_records(records):
    '''``mdxbench summary``: one row per perflog record (dicts of ``records.iter_perflog_records``),
    in completion order.'''
    return render(
        ('system:partition', 'check', 'perf variable', 'value', 'unit', 'reference', 'result'),
        [(f"{r['system']}:{r['partition']}", r['display_name'], r['perf_var'],
          number(r['perf_value']), r['perf_unit'],
          number(r['perf_ref']) if r['perf_ref'] else 'no reference',
          r['perf_result'] or r['result'])
         for r in sorted(records, key=lambda r: (r['completion_time'], r['display_name']))])


def regressions(table, only_changes=True):
    '''``mdxbench regress``: the table of ``analysis.regress.compare``, by default only the
    series that regressed or improved.'''
    rows = table.filter(pl.col('verdict').is_in(['regression', 'improvement'])) \
        if only_changes else table
    return render(
        ('verdict', 'system:partition', 'check', 'perf var', 'baseline', 'latest', 'unit',
         'better', 'effect', 'z', 'n'),
        [(r['verdict'], f"{r['system']}:{r['partition']}", r['check'], r['perf_var'],
          number(r['base_median']), number(r['latest_median']), r['unit'], r['better'] or '?',
          f"{r['effect']:+.1%}" if r['effect'] is not None else '-',
          f"{r['z']:+.1f}" if r['z'] is not None else '-',
          f"{r['base_n'] or 0}/{r['latest_n'] or 0}") for r in rows.iter_rows(named=True)])


def verdict_counts(counts):
    '''"regression 1, improvement 0, ..." of a {verdict: count} mapping.'''
    return ', '.join(f'{k} {v}' for k, v in counts.items())


def change_points(cps):
    '''``mdxbench changes``: one row per change point of ``analysis.changes.find``, then one
    line each with its verdict and explanation.'''
    if not cps:
        return 'no change point'

    table = render(
        ('verdict', 'system:partition', 'check', 'perf var', 'change', 'before', 'after',
         'unit', 'since (run)', 'what changed'),
        [(c['verdict'], f"{c['system']}:{c['partition']}", c['check'], c['perf_var'],
          f"{c['effect']:+.1%}", f"{c['before']:.4g}", f"{c['after']:.4g}", c['unit'],
          f"{c['time'][:16]} ({c['run']})",
          '; '.join([f"{k}: {', '.join(b) or '?'} \u2192 {', '.join(a) or '?'}"
                     for k, (b, a) in c['changed'].items()]
                    + [f"event \"{e['name']}\"" for e in c['events']]) or 'nothing recorded')
         for c in cps])
    return table + ''.join(f"\n  {c['verdict']}: {c['explanation']}" for c in cps)


def node_verdicts(verdicts):
    '''``mdxbench accept`` and ``acceptance``: one row per node with its reasons, those of
    an earlier measurement and those not repeated when measured again.'''
    return render(('node', 'verdict', 'measurements', 'reasons'),
                  [(v['node'], v['verdict'], len(v['measurements']),
                    '; '.join(v['reasons'] + [f'(measured again; before: {e})'
                                              for e in v.get('earlier', [])]
                              + [f'(not repeated: {u})' for u in v.get('unconfirmed', [])]
                              + v.get('notes', []))
                    or '-')
                   for v in verdicts])


def noise_table(noise):
    '''``mdxbench accept``: the noise of each figure as the tool estimated it, and from what.'''
    return render(('figure', 'noise (sd of one run)', 'estimated from'),
                  [(k, f'{n.sigma:.1%}', f'{n.n} repeated-run differences'
                    if n.source == 'repeated runs' else f'spread of {n.n} nodes in one run')
                   for k, n in sorted(noise.items())])


def event_list(events):
    '''``mdxbench event list``: one line per recorded event.'''
    return '\n'.join(f"{ev['time']}  {ev['system']:<14} {ev['name']}"
                     + (f"  ({ev['note']})" if ev.get('note') else '') for ev in events)


def lines(items, prefix=''):
    '''Lines of text, one per item (errors, drain lines, notes), each after ``prefix``.'''
    return '\n'.join(f'{prefix}{i}' for i in items)


class JobProgress:
    '''``mdxbench accept``'s jobs as they go (``progress`` of
    :func:`mdxbench.post.fleet.jobs.run`): on a terminal one ``rich`` progress bar per phase
    (the nodes, those measured again, each paired round) with the jobs running, queued and
    to submit; elsewhere (a cron job's log) one line each time a count changes; nothing
    when ``quiet``.'''

    def __init__(self, quiet=False, stream=None):
        import sys

        self.quiet, self.stream = quiet, stream or sys.stderr
        self.bar, self.task, self.phase, self.last = None, None, None, None

    def __call__(self, what, done, running, queued, to_submit, total):
        if self.quiet:
            return
        counts = (what, done, running, queued, to_submit, total)
        if counts == self.last:
            return
        self.last = counts
        status = f'{running} running, {queued} queued, {to_submit} to submit'
        if not self.stream.isatty():
            print(f'mdxbench accept: {what}: {done} of {total} jobs done, {status}',
                  file=self.stream, flush=True)
            return
        from rich.console import Console
        from rich.progress import BarColumn, MofNCompleteColumn, Progress, TextColumn, \
            TimeElapsedColumn

        if self.bar is None:
            self.bar = Progress(TextColumn('{task.description}'), BarColumn(),
                                MofNCompleteColumn(), TextColumn('{task.fields[status]}'),
                                TimeElapsedColumn(), console=Console(file=self.stream))
            self.bar.start()
        if what != self.phase:
            self.phase = what
            self.task = self.bar.add_task(what, total=total, status=status)
        self.bar.update(self.task, completed=done, status=status)

    def close(self):
        if self.bar is not None:
            self.bar.stop()


def unfinished_lines(places):
    '''The perflog lines still being written ("file:line"), as ``summary`` tells them.'''
    return '\n'.join(f'{p}: unfinished (no newline yet): not counted; ingest sends it once '
                     'ReFrame has written it whole' for p in places)


def incident_table(incidents):
    '''``mdxbench cycle`` and ``incident list``: one row per incident, those still
    regressing first, the worst series of each and how many more.'''
    if not incidents:
        return 'no incident'
    order = {'new': 0, 'reopened': 0, 'open': 1, 'acknowledged': 2, 'resolved': 3}
    rows = sorted(incidents.values(), key=lambda i: (order.get(i['state'], 4), i['start']))
    return render(('id', 'state', 'system', 'since', 'worst series', 'series', 'cause'),
                  [(i['id'], i['state'], i['system'] + (f":{i['partition']}"
                                                        if i['partition'] else ''),
                    i['start'][:16],
                    f"{i['series'][0]['check']} {i['series'][0]['perf_var']} "
                    f"{i['series'][0]['effect']:+.1%}", len(i['series']), i['cause'])
                   for i in rows])


def state_counts(incidents):
    '''"new 1, open 2" of the incidents' states.'''
    counts = {}
    for i in incidents.values():
        counts[i['state']] = counts.get(i['state'], 0) + 1
    return ', '.join(f'{k} {v}' for k, v in sorted(counts.items())) or 'none'


def schedule_table(entries, starts):
    '''The scheduled cycles (``cycle.schedule.Entry``) with their next start in squeue
    (``starts``: system -> (job id, state, start) or None).'''
    if not entries:
        return 'no mdxbench cycle in this crontab'
    return render(('system', 'at', 'state', 'next job', 'job options', 'mdxbench cycle'), [
        (e.system, e.at, 'DISABLED by scrontab' if e.disabled else 'enabled',
         ' '.join(starts.get(e.system) or ('-',)), ' '.join(e.job_options()), e.cycle_args())
        for e in entries])


def mde(entry):
    '''``4.4% (1 repetition for 5%)`` of a sensitivity entry.'''
    if entry.get('mde') is None:
        return f"- ({entry.get('why', 'not computed')})"
    reps = entry.get('repetitions')
    return (f"{entry['mde']:.1%} (" + (f"{reps} repetition{'s' if reps > 1 else ''}"
                                        if reps else 'more than 16 repetitions')
            + f" for {entry['target']:.0%})")


def sensitivity(entries):
    '''The minimum detectable effect of each series (analysis.sensitivity), least
    sensitive first.'''
    if not entries:
        return 'no series'
    rows = sorted(entries, key=lambda e: -(e['mde'] if e['mde'] is not None else 9))
    return render(('system:partition', 'check', 'perf var', 'runs', 'noise (robust CV)',
                   'minimum detectable effect'), [
        (f"{e['system']}:{e['partition']}", e['check'], e['perf_var'], e['runs'],
         f"{e['noise_cv']:.1%}" if e.get('noise_cv') is not None else '-', mde(e))
        for e in rows])


def _digest(d):
    '''``77,562 records, 2025-01-01..2025-01-31`` of a store partition's digest.'''
    import datetime as dt

    if d is None:
        return '-'

    def day(ms):
        return '-' if ms is None else dt.datetime.fromtimestamp(ms / 1000, dt.timezone.utc).date()
    return f'{d.count:,} records, {day(d.first_ms)}..{day(d.last_ms)}, sum {d.value_sum:.6g}'


def history_status(copy, system=None):
    '''The local copy's partitions as its manifest lists them.'''
    from mdxbench.post.store.esread import Digest

    idx = copy.indices(system)
    head = (f'local copy {copy.root} of {copy.url} ({copy.prefix}-*), synced '
            f'{copy.manifest.get("synced_at") or "never"}')
    if not idx:
        return head + ': no partition'
    parts = copy.manifest['parts']
    return head + '\n' + render(('partition', 'systems', 'content', 'bytes'), [
        (i, ','.join(parts[i]['systems']), _digest(Digest.of_json(parts[i]['digest'])),
         f"{parts[i]['bytes']:,}") for i in idx])


def history_verify(rows):
    '''``Copy.verify``'s rows: each partition in Elasticsearch and in the copy.'''
    if not rows:
        return 'no partition in Elasticsearch or in the copy'
    return render(('partition', 'Elasticsearch', 'local copy (its file)', 'state'),
                  [(i, _digest(es), _digest(mine), state) for i, es, mine, state in rows])


def history_bad(rows):
    '''How many partitions of ``Copy.verify``'s rows were not ok.'''
    return sum(1 for *_, state in rows if state != 'ok')


def session(s):
    '''A ReFrame session (:func:`mdxbench.post.analysis.session.summarize`): cases by
    result, skips by reason, minutes per area.'''
    res = s['results']
    head = ', '.join(f'{n} {r}' for r, n in sorted(res.items(), key=lambda x: -x[1]))
    out = [f'cases: {sum(res.values())} ({head})']
    if s['skips']:
        out += ['', 'skipped, by reason:',
                render(['cases', 'reason', 'e.g.'], [(n, g, ex) for g, n, ex in s['skips']])]
    if s['areas']:
        total = sum(m for _, _, m in s['areas'])
        out += ['', f'minutes per area (cases run; {total:.1f} min in all):',
                render(['area', 'cases', 'minutes'], [(a, n, f'{m:.1f}') for a, n, m in s['areas']])]
    return '\n'.join(out)


def splits(verdicts):
    """``id: verdict, ...`` of the incidents a cycle split."""
    return ', '.join(f'{i}: {v}' for i, v in verdicts.items())
