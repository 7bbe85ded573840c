'''The ``mdxbench`` command.

    mdxbench ingest [PATH ...]     perflogs -> Elasticsearch (lossless, idempotent)
    mdxbench summary [PATH ...]    table of perflog records, and the Elasticsearch count
    mdxbench regress [PATH ...]    regressions against a baseline (exit 1 when any)
    mdxbench changes [PATH ...]    change points over each series' history, explained
    mdxbench event add|list        system events to cut the baseline at
    mdxbench acceptance [PATH ...] per-node verdicts of the acceptance checks
    mdxbench accept                one job per node with every acceptance check, verdicts
    mdxbench report --out DIR      the papers' tables, figures and trend pages (HTML)
    mdxbench references propose    reference entries from the latest stable measurements
    mdxbench export --out F        the records as Parquet (for --parquet)
    mdxbench fidelity              memory and compute checks beside direct runs (benchmark)
    mdxbench bench ingest|regress|changes
                                   speed and memory of ingest, of the regression scan and
                                   of the change-point scan (and its detection quality)
'''
import argparse
import os
import pathlib
import sys

from mdxbench.sitecfg import state_dir
from mdxbench.post import esclient
from mdxbench.post import textable
from mdxbench.post.ingest import (EXIT_LOCKED, EXIT_NOT_STORED, Ingestor, LockBusy,
                            TlsVerificationError, count_documents)

EXIT_USAGE = 2
#: mdxbench changes: a change point to the worse side was found
EXIT_CHANGE_REGRESSION = 1


def default_perflog_dir():
    return pathlib.Path(os.environ.get('MDXBENCH_PERFLOG_DIR') or state_dir() / 'perflogs')


def _paths(args):
    return args.paths or [default_perflog_dir()]


def cmd_ingest(args):
    client = esclient.make_client(url=args.es_url)
    ing = Ingestor(client, esclient.index_prefix(),
                   args.state or state_dir() / 'ingest' / 'state.json',
                   args.dead_letter or state_dir() / 'ingest' / 'dead-letter.jsonl',
                   batch_size=args.batch_size, retry_seconds=args.retry_seconds,
                   lock_wait=args.lock_wait)
    try:
        counts = ing.run(_paths(args))
    except LockBusy as err:
        print(f'mdxbench ingest: {err}', file=sys.stderr)
        return EXIT_LOCKED
    print(f'mdxbench ingest: {counts.line()}')
    if counts.rejected or counts.malformed:
        print(f'mdxbench ingest: not stored: see {ing.dead_letter_path}', file=sys.stderr)

    return counts.exit_code()


def read_records(paths):
    '''(records, errors) of every perflog line under paths; errors as "file:line: why".'''
    from mdxbench.post.records import iter_perflog_records

    errors = []
    return list(iter_perflog_records(paths, errors)), errors


def _fmt(v):
    if v is None:
        return '-'

    return f'{v:.4g}' if isinstance(v, float) else str(v)


def cmd_summary(args):
    records, errors = read_records(_paths(args))
    for e in errors:
        print(e, file=sys.stderr)

    shown = [r for r in records if not args.since or r['completion_time'] >= args.since]
    rows = []
    for r in sorted(shown, key=lambda r: (r['completion_time'], r['display_name'])):
        ref = 'no reference' if not r['perf_ref'] else _fmt(r['perf_ref'])
        rows.append((f"{r['system']}:{r['partition']}", r['display_name'], r['perf_var'],
                     _fmt(r['perf_value']), r['perf_unit'], ref,
                     r['perf_result'] or r['result']))

    print(textable.render(('system:partition', 'check', 'perf variable', 'value', 'unit',
                           'reference', 'result'), rows))

    print(f'\nperflog records: {len(records)} in all ({len(shown)} shown), '
          f'malformed lines: {len(errors)}')
    rc = EXIT_NOT_STORED if errors else 0
    if not args.no_es:
        try:
            n = count_documents(esclient.make_client(url=args.es_url), esclient.index_prefix())
        except Exception as err:
            print(f'Elasticsearch documents: unknown ({esclient.redact(str(err))})')
            return EXIT_NOT_STORED

        print(f'Elasticsearch documents: {n}')
        if args.expect_equal and n != len(records):
            print(f'mdxbench summary: Elasticsearch holds {n} documents but the perflogs '
                  f'{len(records)} records', file=sys.stderr)
            rc = EXIT_NOT_STORED

    if args.require_records and not shown:
        print('mdxbench summary: no perflog record to show', file=sys.stderr)
        rc = EXIT_NOT_STORED

    return rc


def _load(args):
    '''The records table from --from-es, --parquet or perflog paths; unreadable lines
    are reported on stderr.'''
    from mdxbench.post import records

    client = esclient.make_client(url=args.es_url) if args.from_es else None
    errors = []
    df = records.load(_source(args), client, esclient.index_prefix(), errors)
    for e in errors:
        print(e, file=sys.stderr)

    return df


def _source(args):
    if args.from_es:
        return 'es'

    if args.parquet:
        return args.parquet

    return [str(p) for p in _paths(args)]


def cmd_regress(args):
    import datetime as dt
    import json as _json

    from mdxbench.post import events, regress

    df = _load(args)

    cut = None
    if args.since_event:
        cut = events.cut_for(args.since_event)
    elif args.since:
        cut = dt.datetime.fromisoformat(args.since)
        if cut.tzinfo is None:
            raise ValueError(f'--since {args.since!r} needs a time zone (e.g. +00:00)')

    table = regress.compare(df, cut, baseline_runs=args.baseline_runs,
                            latest_runs=args.latest_runs, min_effect=args.min_effect, z=args.z)
    print(regress.render(table, only_changes=not args.all))
    counts = {v: table.filter(table['verdict'] == v).height
              for v in ('regression', 'improvement', 'unchanged', 'no-baseline', 'no-latest')}
    print('\n' + ', '.join(f'{k} {v}' for k, v in counts.items()))
    if args.json:
        pathlib.Path(args.json).write_text(_json.dumps(table.to_dicts(), default=str, indent=1))

    return 1 if counts['regression'] else 0


def _since(text):
    import datetime as dt

    if not text:
        return None
    t = dt.datetime.fromisoformat(text)
    if t.tzinfo is None:
        raise ValueError(f'--since {text!r} needs a time zone (e.g. 2026-11-01T00:00:00+00:00)')
    return t


def cmd_changes(args):
    import json as _json

    from mdxbench.post import changes, events

    df = _load(args)
    if args.system:
        df = df.filter(df['system'] == args.system)
    tuning = {k: v for k, v in (('penalty', args.penalty), ('min_effect', args.min_effect),
                                ('max_pvalue', args.max_pvalue)) if v is not None}
    cps = changes.find(df, events.load(), since=_since(args.since), **tuning)
    regressions = sum(c['verdict'] == 'regression' for c in cps)
    if args.format == 'json':
        print(_json.dumps({'change_points': cps, 'regressions': regressions,
                           'series': df.select(changes.SERIES).unique().height},
                          indent=1, default=str))
    else:
        print(changes.render(cps) if cps else 'no change point')
        for c in cps:
            print(f"  {c['verdict']}: {c['explanation']}")
        print(f"\nchange points {len(cps)}, regressions {regressions}")
    return EXIT_CHANGE_REGRESSION if regressions else 0


def cmd_export(args):
    df = _load(args)
    out = pathlib.Path(args.out)
    tmp = out.with_name(out.name + '.tmp')
    df.write_parquet(tmp)
    tmp.replace(out)
    print(f'mdxbench export: {df.height} records to {out}')
    return 0


def cmd_references(args):
    from mdxbench import references
    from mdxbench.post import proposals

    df = _load(args)
    out = pathlib.Path(args.out or references.reference_dir() / f'measured-{args.system}.yaml')
    entries, notes = proposals.propose(df, args.system, since=_since(args.since))
    new, old, kept = proposals.merge(entries, out, args.reference_dir)
    for n in notes:
        print(f'no proposal: {n}')
    for k in kept:
        print(f'paper figure kept: {k}')
    text = proposals.diff(old, new, out)
    print(text or f'{out}: no change')
    if not args.dry_run and text:
        out.parent.mkdir(parents=True, exist_ok=True)
        tmp = out.with_name(out.name + '.tmp')
        tmp.write_text(new)
        tmp.replace(out)
    print(f'{len(entries)} series proposed, {len(kept)} kept paper figures, {len(notes)} '
          f'without a proposal; {"not written (--dry-run)" if args.dry_run else out}')
    return 0


def cmd_accept(args):
    import dataclasses
    import datetime as dt
    import subprocess

    from mdxbench.post import acceptance, fleet

    p = fleet.plan(args.system, args.partition, args.slurm_partition, args.max_jobs,
                   nodes=args.nodes.split(',') if args.nodes else None)
    reframe_args = [a for a in args.reframe_args if a != '--']
    m, files = fleet.acceptance_cases(args.system, args.partition, reframe_args)
    if not m:
        print(f'mdxbench accept: no acceptance check selected for {args.system}:'
              f'{args.partition} with {" ".join(reframe_args) or "no options"}', file=sys.stderr)
        return 2
    if args.dry_run:
        print(f'nodes to test: {len(p.testable)} ({", ".join(p.testable)}); not tested: '
              f'{len(p.untested)} ({", ".join(f"{n} {s}" for n, s in p.untested.items()) or "-"})')
        print(f'acceptance test cases per node: {m}')
        print(f'jobs: mdxbench accept submits {len(p.testable)}, at most {p.max_jobs} queued '
              f'at once; reframe --distribute=all would submit {len(p.testable) * m} '
              f'({len(p.testable)} x {m})')
        return 0
    out = pathlib.Path(args.out or state_dir() / 'accept' /
                       dt.datetime.now().strftime('%Y%m%dT%H%M%S'))
    if out.exists() and any(out.iterdir()):
        # its perflogs would be judged with this run's as one session
        print(f'mdxbench accept: --out {out} is not empty (an earlier run\'s records would '
              f'be judged with this one\'s): give a new directory', file=sys.stderr)
        return 2
    fig = fleet.run(p, out, reframe_args, args.time_limit, files=files)
    jobs = dict(fig['job_ids'])
    verdicts = _accept_verdicts(args, p, out, jobs)
    # a failed node is measured again (--retests) and fails only on what failed both
    # times: one disturbed run on a busy machine drains no node. A node measured again
    # moves the nodes' medians: a node that fails only then is measured again too, each
    # node at most --retests times.
    retested, previous = {}, {}
    while True:
        again = [v['node'] for v in verdicts if v['verdict'] == 'fail'
                 and len(retested.get(v['node'], [])) < args.retests
                 and v['node'] in p.testable]
        if not again:
            break
        print(f"mdxbench accept: measuring again: {', '.join(again)}")
        for v in verdicts:
            if v['node'] in again:
                retested.setdefault(v['node'], []).append('; '.join(v['reasons']))
                previous[v['node']] = set(v['keys'])
        more = fleet.run(dataclasses.replace(p, testable=again), out, reframe_args,
                         args.time_limit, files=files)
        jobs.update(more['job_ids'])
        for k in ('jobs', 'seconds'):
            fig[k] += more[k]
        fig['max_in_queue'] = max(fig['max_in_queue'], more['max_in_queue'])
        verdicts = _accept_verdicts(args, p, out, jobs)
        # a failure counts when the same thing failed the time before too
        verdicts = acceptance.confirm(verdicts, previous)
    for v in verdicts:
        if v['node'] in retested:
            v['earlier'] = retested[v['node']]
    print(f"mdxbench accept: {fig['jobs']} jobs for {len(p.testable)} nodes, at most "
          f"{fig['max_in_queue']} in the queue, {fig['seconds']:.1f} s wall")
    print(acceptance.render(verdicts))
    lines = fleet.drain_lines(verdicts)
    for ln in lines:
        print(ln)
    if args.drain:
        for cmd in fleet.drain_commands(verdicts):
            subprocess.run(cmd, check=True, timeout=60)
    if args.json:
        pathlib.Path(args.json).write_text(acceptance.to_json(verdicts, extra={
            'jobs': fig['jobs'], 'max_in_queue': fig['max_in_queue'],
            'seconds': fig['seconds'], 'drain': lines}))
    return 0 if verdicts and all(v['verdict'] == 'pass' for v in verdicts) else 1


def _accept_verdicts(args, p, out, jobs):
    from mdxbench.post import acceptance, fleet, records

    errors = []
    df = records.from_perflogs([out / 'perflogs'], errors) if (out / 'perflogs').exists() \
        else records.frame([])
    for e in errors:
        print(e, file=sys.stderr)
    df = df.filter((df['system'] == p.system) & (df['partition'] == p.partition))
    states = dict({n: 'idle' for n in p.testable}, **p.untested)
    return acceptance.judge(df, states, z=args.z, min_effect=args.min_effect,
                            gross=args.gross, failures=fleet.outcomes(out, jobs),
                            same_checks=True)


def cmd_acceptance(args):
    from mdxbench.post import acceptance

    df = _load(args)

    if args.system:
        df = df.filter(df['system'] == args.system)

    if args.partition:
        df = df.filter(df['partition'] == args.partition)

    states = {} if args.no_slurm else acceptance.slurm_nodes(args.slurm_partition or args.partition)
    verdicts = acceptance.judge(df, states, z=args.z, min_effect=args.min_effect,
                                gross=args.gross)
    print(acceptance.render(verdicts))
    from mdxbench.post.fleet import drain_lines
    for ln in drain_lines(verdicts):
        print(ln)
    if args.json:
        pathlib.Path(args.json).write_text(acceptance.to_json(verdicts))

    return 0 if verdicts and all(v['verdict'] == 'pass' for v in verdicts) else 1


def cmd_report(args):
    from mdxbench.post import report

    df = _load(args)

    page, tables, figs = report.write(df, args.out)
    print(f'mdxbench report: {page} ({len(tables)} tables, {len(figs)} figures, '
          f'{df.height} records)')
    return 0


def cmd_event(args):
    from mdxbench.post import events

    if args.action == 'add':
        ev = events.add(args.system, args.name, args.time, args.partition, args.note)
        print(f"event {ev['name']!r} on {ev['system']} at {ev['time']} recorded in "
              f"{events.events_file()}")
    else:
        for ev in events.load():
            print(f"{ev['time']}  {ev['system']:<14} {ev['name']}"
                  + (f"  ({ev['note']})" if ev.get('note') else ''))

    return 0


def cmd_bench(args):
    from mdxbench.post import bench

    if args.what == 'accept':
        from mdxbench.post import bench_accept

        return bench_accept.main(args.system or 'nscluster', args.partition or 'nodes',
                                 [a for a in args.reframe_args if a != '--'] or None,
                                 args.max_jobs)

    if args.what == 'changes':
        from mdxbench.post import bench_changes

        return bench_changes.main(series=args.series, runs=args.runs,
                                  naive_series=args.naive_series, trials=args.trials)

    if args.what == 'ingest':
        return bench.bench_ingest(args.records or 100000, args.sample,
                                  args.es_url or os.environ.get('MDXBENCH_ES_URL')
                                  or esclient.DEFAULT_URL)

    return bench.bench_regress(args.records or 1000000)


def cmd_fidelity(args):
    from mdxbench.post import fidelity

    return fidelity.main(args.repeats)


def _source_args(p):
    '''Where the records come from: perflogs (default), Elasticsearch or a Parquet file.'''
    p.add_argument('paths', nargs='*', help='perflog files or directories (default: the perflog dir)')
    p.add_argument('--from-es', action='store_true', help='read the records from Elasticsearch')
    p.add_argument('--parquet', help='read the records from a Parquet export')
    p.add_argument('--es-url')


def _outlier_options(p):
    '''The outlier rule of acceptance.judge, for `accept` and `acceptance` alike.'''
    p.add_argument('--z', type=float, default=3.0)
    p.add_argument('--min-effect', type=float, default=None, help='an outlier is also this '
                   'fraction of the nodes\' median worse (default 0.10)')
    p.add_argument('--gross', type=float, default=None, help='this fraction of the nodes\' '
                   'median worse is an outlier whatever their spread (default 0.5)')


def build_parser():
    ap = argparse.ArgumentParser(prog='mdxbench', description=__doc__,
                                 formatter_class=argparse.RawDescriptionHelpFormatter)
    sub = ap.add_subparsers(dest='cmd', required=True)
    p = sub.add_parser('ingest', help='send perflogs to Elasticsearch')
    p.add_argument('paths', nargs='*', help='perflog files or directories '
                   '(default: $MDXBENCH_PERFLOG_DIR or <state>/perflogs)')
    p.add_argument('--es-url', help='Elasticsearch URL (default: $MDXBENCH_ES_URL or '
                   f'{esclient.DEFAULT_URL})')
    p.add_argument('--state', help='ingest state file (default: <state>/ingest/state.json)')
    p.add_argument('--dead-letter', help='dead-letter file (default: '
                   '<state>/ingest/dead-letter.jsonl)')
    p.add_argument('--batch-size', type=int, default=2000)
    p.add_argument('--retry-seconds', type=float, default=60.0,
                   help='how long to retry an unreachable or overloaded Elasticsearch')
    p.add_argument('--lock-wait', type=float, default=300.0,
                   help='how long to wait for another ingest of the same state file to '
                   f'finish (seconds; exit {EXIT_LOCKED} past it)')
    p.set_defaults(fn=cmd_ingest)
    p = sub.add_parser('summary', help='table of perflog records and the Elasticsearch count')
    p.add_argument('paths', nargs='*')
    p.add_argument('--since', help='only records completed at or after this ISO time')
    p.add_argument('--es-url')
    p.add_argument('--no-es', action='store_true', help='do not ask Elasticsearch')
    p.add_argument('--expect-equal', action='store_true',
                   help='fail unless Elasticsearch holds as many documents as the perflogs records')
    p.add_argument('--require-records', action='store_true',
                   help='fail when no record is shown')
    p.set_defaults(fn=cmd_summary)
    p = sub.add_parser('regress', help='regressions and improvements against a baseline')
    _source_args(p)
    g = p.add_mutually_exclusive_group()
    g.add_argument('--since-event', metavar='NAME', help='cut at the event of that name (per system)')
    g.add_argument('--since', metavar='TIME', help='cut at this ISO time')
    p.add_argument('--baseline-runs', type=int, default=10)
    p.add_argument('--latest-runs', type=int, default=3)
    p.add_argument('--min-effect', type=float, default=0.05, help='relative change (0.05 = 5%%)')
    p.add_argument('--z', type=float, default=3.0, help='robust z-score threshold')
    p.add_argument('--all', action='store_true', help='show unchanged series too')
    p.add_argument('--json', help='write the whole table as JSON here')
    p.set_defaults(fn=cmd_regress)
    p = sub.add_parser('changes', help="change points over each series' whole history, "
                       'explained by what changed with them (exit 1 when one is a regression)')
    _source_args(p)
    p.add_argument('--system', help='only this system')
    p.add_argument('--since', metavar='TIME', help='report only change points whose first run '
                   'is at or after this ISO time (the whole history is still analysed)')
    p.add_argument('--format', choices=['table', 'json'], default='table')
    p.add_argument('--penalty', type=float,
                   help='segmentation penalty per change point, x ln(runs), in noise units '
                   '(default 6)')
    p.add_argument('--min-effect', type=float,
                   help='smallest relative change of the median kept (default 0.03 = 3%%)')
    p.add_argument('--max-pvalue', type=float,
                   help='Mann-Whitney U p-value a change point must reach (default 0.01)')
    p.set_defaults(fn=cmd_changes)
    p = sub.add_parser('export', help='the records table (from perflogs or Elasticsearch) '
                       'as a Parquet file, for --parquet')
    _source_args(p)
    p.add_argument('--out', required=True, help='Parquet file to write')
    p.set_defaults(fn=cmd_export)
    p = sub.add_parser('references', help='reference entries proposed from measurements')
    rsub = p.add_subparsers(dest='action', required=True)
    pr = rsub.add_parser('propose', help='for every series of a system: the median of its '
                         'latest stable segment, with a tolerance from its noise')
    _source_args(pr)
    pr.add_argument('--system', required=True)
    pr.add_argument('--since', metavar='TIME', help='only runs at or after this ISO time')
    pr.add_argument('--out', help='references file to write (default: '
                    '<references dir>/measured-<system>.yaml)')
    pr.add_argument('--reference-dir', help='directory of the references whose paper '
                    'figures are kept (default: $MDXBENCH_REFERENCE_DIR or site-configs/references)')
    pr.add_argument('--dry-run', action='store_true', help='print the diff, write nothing')
    pr.set_defaults(fn=cmd_references)
    p = sub.add_parser('accept', help='node acceptance with one job per node (all '
                       'acceptance checks inside it), bounded jobs in the queue, verdicts')
    p.add_argument('--system', required=True)
    p.add_argument('--partition', required=True, help='site-config partition')
    p.add_argument('--slurm-partition', help='Slurm partition (default: --partition)')
    p.add_argument('--max-jobs', type=int, help='jobs in the queue at once (default: one '
                   'per node to test)')
    p.add_argument('--nodes', help='only these nodes of the partition (comma-separated)')
    p.add_argument('--time-limit', default='30:00', help='of each node\'s job')
    p.add_argument('--out', help='directory for job scripts, outputs and perflogs '
                   '(default: <state>/accept/<time>)')
    _outlier_options(p)
    p.add_argument('--retests', type=int, default=1, help='measure a failed node again this '
                   'many times; it fails only on what failed the time before too (default 1)')
    p.add_argument('--json', help='write the verdicts (and job figures) here')
    p.add_argument('--drain', action='store_true', help='run the printed scontrol lines')
    p.add_argument('--dry-run', action='store_true',
                   help='print the nodes and job counts (ours and --distribute\'s), submit nothing')
    p.add_argument('reframe_args', nargs=argparse.REMAINDER,
                   help='after --: options for ReFrame in each job (e.g. -n, -S)')
    p.set_defaults(fn=cmd_accept)
    p = sub.add_parser('acceptance', help='per-node verdicts of the acceptance checks')
    _source_args(p)
    p.add_argument('--system')
    p.add_argument('--partition', help='site-config partition to judge')
    p.add_argument('--slurm-partition', help='Slurm partition whose nodes must all be tested '
                   '(default: --partition)')
    p.add_argument('--no-slurm', action='store_true', help='do not ask sinfo for the nodes')
    _outlier_options(p)
    p.add_argument('--json', help='write the machine-readable verdicts here')
    p.set_defaults(fn=cmd_acceptance)
    p = sub.add_parser('report', help="the papers' tables and figures as HTML and PNG")
    _source_args(p)
    p.add_argument('--out', required=True, help='directory for index.html and the PNG files')
    p.set_defaults(fn=cmd_report)
    p = sub.add_parser('event', help='record or list system events (kernel, BIOS, flavor...)')
    esub = p.add_subparsers(dest='action', required=True)
    pa = esub.add_parser('add')
    pa.add_argument('system')
    pa.add_argument('name')
    pa.add_argument('--time', help='ISO time with zone (default: now)')
    pa.add_argument('--partition')
    pa.add_argument('--note')
    esub.add_parser('list')
    p.set_defaults(fn=cmd_event)
    p = sub.add_parser('bench', help='benchmarks of mdxbench itself (ingest, regress, '
                       'changes, accept)')
    p.add_argument('what', choices=['ingest', 'regress', 'changes', 'accept'])
    p.add_argument('--system', help='accept: the system of the cluster (default nscluster)')
    p.add_argument('--partition', help='accept: its partition (default nodes)')
    p.add_argument('--max-jobs', type=int, help='accept: jobs in the queue at once')
    p.add_argument('--series', type=int, default=10000, help='changes: series in the store')
    p.add_argument('--runs', type=int, default=365, help='changes: runs per series')
    p.add_argument('--naive-series', type=int, default=200,
                   help='changes: series the one-at-a-time baseline is timed on')
    p.add_argument('--trials', type=int, default=1000,
                   help='changes: generated histories per quality row')
    p.add_argument('--records', type=int)
    p.add_argument('--sample', type=int, default=5000,
                   help='records sent one per request for the baseline rate')
    p.add_argument('--es-url')
    p.add_argument('reframe_args', nargs=argparse.REMAINDER,
                   help='accept: after --, the ReFrame options of every run (default: '
                   'short runs of the acceptance checks)')
    p.set_defaults(fn=cmd_bench)
    p = sub.add_parser('fidelity', help='checks beside hand-tuned direct runs (benchmark)')
    p.add_argument('--repeats', type=int, default=1)
    p.set_defaults(fn=cmd_fidelity)
    return ap


def main(argv=None):
    args = build_parser().parse_args(argv)
    try:
        return args.fn(args)
    except esclient.ConfigError as err:
        print(f'mdxbench: configuration: {err}', file=sys.stderr)
        return EXIT_USAGE
    except TlsVerificationError as err:
        print(f'mdxbench: {esclient.redact(str(err))}; nothing was sent, the perflogs keep '
              f'every record', file=sys.stderr)
        return EXIT_USAGE
    except (FileNotFoundError, ValueError) as err:
        print(f'mdxbench: {err}', file=sys.stderr)
        return EXIT_USAGE
    except Exception as err:
        from elasticsearch import ApiError

        if isinstance(err, ApiError):
            status = err.meta.status
            hint = {401: 'authentication failed: check MDXBENCH_ES_API_KEY or '
                         'MDXBENCH_ES_USER/PASSWORD',
                    403: 'the credentials lack a privilege (index templates, _bulk)'}.get(status, '')
            print(f'mdxbench: Elasticsearch answered {status} {err.error}'
                  + (f': {hint}' if hint else ''), file=sys.stderr)
            return EXIT_NOT_STORED

        raise


if __name__ == '__main__':
    sys.exit(main())
