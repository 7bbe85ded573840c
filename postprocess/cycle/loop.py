'''One cycle of the operator's loop for one system.

Steps, each reported: (1) optionally ``reframe -c checks/ -r --system S`` with the given
options; (2) ``ingest`` of the perflog directory (an unreachable Elasticsearch leaves the
records pending in the perflogs: the cycle goes on from the perflogs and exits 75, and the
next cycle sends them); (3) change points of the system's whole history
(:func:`mdxbench.post.analysis.changes.find`, events included), from Parquet files
whatever the source (Elasticsearch's local copy; else the perflogs copied a file at a
time, ``<state>/perflogs``): the scan keeps its own copy between cycles, ``<state>/scan``,
and detects again only the series whose new runs could move their change points
(``--full`` does all); (4) incidents (:mod:`mdxbench.post.analysis.incidents`) updated in
the state file, and each series' sensitivity; (5) the published site
(:mod:`mdxbench.post.site.publish`: index, incident pages, the papers' tables, trends,
the Atom feed), written from the scan's copy a chunk of series at a time: no step holds
the history as one table; (6) ``notify_command`` run once per new or reopened incident, its JSON
on standard input, within ``notify_timeout``: an incident whose command failed stays to
notify and is tried again next cycle (nothing lost, nothing sent twice).

One cycle at a time per system (a lock in its state directory). A cycle with nothing new
changes no incident and notifies nobody: when the history's fingerprint (Elasticsearch: the
system's record count and latest ingest time, one aggregation; perflogs: each file's size
and time), the events and the window are those of the last cycle, steps 3-5 are skipped and
only notifications that failed before are tried again.
'''
import dataclasses
import hashlib
import io
import datetime as dt
import json
import os
import pathlib
import signal
import subprocess
import sys

from mdxbench.post import exits
from mdxbench import REPO_ROOT
from mdxbench.post.analysis import changes, incidents, scan, sensitivity
from mdxbench.post.site import publish
from mdxbench.post.store import esclient, events, records
from mdxbench.post.store import history as store_history
from mdxbench.post.store.incidents import IncidentFile, cycle_dir
from mdxbench.post.store.ingest import Ingestor
from mdxbench.post.store.locks import state_lock
from mdxbench.sitecfg import state_dir



@dataclasses.dataclass
class Options:
    system: str
    run: bool = False
    reframe_args: list = dataclasses.field(default_factory=list)
    perflogs: list = None
    es_url: str = None
    notify_command: str = None
    notify_timeout: float = 60.0
    site: str = None
    state: str = None
    window_days: float = incidents.WINDOW.days
    ingest: bool = True
    retry_seconds: float = 60.0
    mde_budget: float = 30.0
    #: split each new incident whose binary changed with it (``mdxbench incident split``)
    split: bool = False
    #: rounds (one run of each build) at most per check of a split (None: the split's own
    #: bound, ``verdict.MAX_ROUNDS``): what bounds a cycle's time splitting
    split_max_rounds: int = None
    #: route and detect the whole history again (the kept scan copy rebuilt)
    full: bool = False


@dataclasses.dataclass
class Result:
    exit_code: int
    reframe_exit: int = None
    ingest: str = ''
    source: str = ''
    records: int = 0
    change_points: int = 0
    incidents: dict = None
    new: list = None
    notified: list = None
    failed: list = None
    feed: str = ''
    site: str = ''
    unchanged: bool = False
    mde_computed: int = 0
    splits: dict = None


def now_iso():
    return dt.datetime.now(dt.timezone.utc).isoformat(timespec='seconds')


def run_reframe(system, args, log):
    '''The suite on ``system`` with ReFrame's own options; its exit code (reported, not
    fatal: what ran is ingested all the same).'''
    cmd = [str(pathlib.Path(sys.executable).parent / 'reframe'), '-c', str(REPO_ROOT / 'checks'),
           '-r', '--nocolor', '--system', system, *args]
    log(f'mdxbench cycle: running {" ".join(cmd[1:])}')
    return subprocess.run(cmd, env=dict(os.environ, RFM_CONFIG_FILES=os.environ.get(
        'RFM_CONFIG_FILES', str(REPO_ROOT / 'site-configs' / 'settings.py')))).returncode


def ingest(opts, log):
    '''(counts, Elasticsearch reachable and complete) of ingesting the perflogs.'''
    ing = Ingestor(esclient.make_client(url=opts.es_url), esclient.index_prefix(),
                   state_dir() / 'ingest' / 'state.json',
                   state_dir() / 'ingest' / 'dead-letter.jsonl',
                   retry_seconds=opts.retry_seconds)
    counts = ing.run(opts.perflogs or [records.default_perflog_dir()])
    log(f'mdxbench cycle: ingest: {counts.line()}')
    return counts, not counts.pending


def history(opts, es_ok, root, log):
    '''(the Parquet files of the system's records, where from): the local copy of
    Elasticsearch when it took everything, else the perflogs copied into Parquet a file at
    a time (said); every reader scans the files in bounded memory.'''
    if es_ok:
        files, rep = store_history.files(opts.system, url=opts.es_url, out=io.StringIO())
        source = ('the local copy (Elasticsearch unreachable)' if rep.offline
                  else 'Elasticsearch')
        log(f'mdxbench cycle: {rep.text}')
    else:
        errors = []
        files = store_history.perflog_copy(opts.perflogs or [records.default_perflog_dir()],
                                           opts.system, root / 'perflogs', errors)
        if errors:
            log(f'mdxbench cycle: {len(errors)} unreadable perflog line(s) left out, the '
                f'first: {errors[0]}')
        source = 'perflogs' + (' (Elasticsearch did not take every record)'
                               if es_ok is False else '')
    return files, source


def analyse(files, evs, root, full=False):
    '''(change points, the history the site reads) of the Parquet files ``files``: the
    scan kept in ``root/scan`` brought up to date (``full``: routed and detected again
    whole), and the same kept copy read a chunk at a time by the site.'''
    return scan.find_kept(files, root / 'scan', evs, full=full)


def fingerprint(opts, es_ok, evs):
    '''What a cycle's analysis depends on; equal to the last cycle's: nothing new.'''
    if es_ok:
        hist = records.es_fingerprint(esclient.make_client(url=opts.es_url),
                                      esclient.index_prefix(), opts.system)
    else:
        hist = records.perflog_fingerprint(opts.perflogs or [records.default_perflog_dir()])
    return hist + [hashlib.sha256(json.dumps(evs, sort_keys=True).encode()).hexdigest(),
                   opts.window_days]


def notify(command, incident, timeout):
    '''Run the site's notify command with the incident as JSON on standard input; (ok,
    why). A command that fails, or runs past ``timeout``, is no notification.'''
    # in a session of its own: past the timeout the whole process group is killed, so a
    # compound command (`a; b`, a pipeline, a script) leaves no child behind
    proc = subprocess.Popen(command, shell=True, stdin=subprocess.PIPE, stdout=subprocess.PIPE,
                            stderr=subprocess.PIPE, text=True, start_new_session=True)
    try:
        out, err = proc.communicate(incidents.to_json(incident), timeout=timeout)
    except subprocess.TimeoutExpired:
        try:
            os.killpg(proc.pid, signal.SIGKILL)
        except ProcessLookupError:
            pass
        proc.communicate()
        return False, f'timed out after {timeout:g}s'
    if proc.returncode != 0:
        return False, f'exit {proc.returncode}: {(err or out).strip()[-300:]}'
    return True, ''


def tell(state, opts, now, log):
    '''Notify each new or reopened incident; (told, failed) ids.'''
    told, failed = [], []
    for inc in incidents.to_notify(state):
        ok, why = (True, '') if not opts.notify_command else \
            notify(opts.notify_command, inc, opts.notify_timeout)
        if ok:
            incidents.notified(inc, now)
            told.append(inc['id'])
        else:
            failed.append(inc['id'])
            log(f"mdxbench cycle: notify-command failed for incident {inc['id']} ({why}): "
                'it is tried again next cycle')
    return told, failed


def run(opts, log=print):
    '''One cycle; a :class:`Result`. With ``opts.split``, each new incident whose benchmark
    binary changed with it is split (:func:`mdxbench.post.split.run.split_incident`: the
    previous build beside the new one) once it was notified, and a second pass ingests the
    split's runs and writes the pages with the verdicts; the result is the first pass's,
    with ``splits`` ({incident: verdict}) and the second pass's incidents and site.'''
    res = _cycle(opts, log)
    if not opts.split:
        return res
    from mdxbench.post.split import run as split_run, verdict as split_verdict

    root = pathlib.Path(opts.state) if opts.state else cycle_dir(opts.system)
    todo = [i for i in res.new if split_verdict.software_series(res.incidents[i])[0]]
    res.splits = {}
    for ident in todo:
        r = split_run.split_incident(opts.system, root, ident,
                                     opts.perflogs or [records.default_perflog_dir()], log=log,
                                     min_effect=changes.MIN_EFFECT,
                                     **({'max_rounds': opts.split_max_rounds}
                                        if opts.split_max_rounds else {}))
        res.splits[ident] = r['verdict']
        log(f'mdxbench cycle: incident {ident}: ' + split_run.summary_text(r))
    if todo:
        again = _cycle(dataclasses.replace(opts, run=False, split=False), log)
        res.incidents, res.ingest = again.incidents, f'{res.ingest}; then {again.ingest}'
        if again.exit_code == exits.PENDING:
            res.exit_code = exits.PENDING
    return res


def _cycle(opts, log):
    root = pathlib.Path(opts.state) if opts.state else cycle_dir(opts.system)
    site = pathlib.Path(opts.site) if opts.site else root / 'site'
    with state_lock(root / 'incidents.json', wait=600):
        res = Result(exits.OK, site=str(site), feed=str(site / 'feed.xml'))
        if opts.run:
            res.reframe_exit = run_reframe(opts.system, opts.reframe_args, log)
        if opts.ingest:
            counts, es_ok = ingest(opts, log)
            res.ingest = counts.line()
        else:
            es_ok, res.ingest = None, 'not asked (--no-ingest)'
        store = IncidentFile(root / 'incidents.json')
        evs = events.load()
        fp = fingerprint(opts, es_ok, evs)
        last = store.last_cycle or {}
        now = now_iso()
        res.unchanged = (last.get('fingerprint') == fp and last.get('site_written')
                         and (site / 'index.html').exists())
        if res.unchanged:
            log('mdxbench cycle: nothing new since the last cycle (same records, events and '
                'window): no analysis')
            state = store.incidents
            res.records, res.source, res.change_points = (last.get('records', 0),
                                                          last.get('source', ''),
                                                          last.get('change_points', 0))
            res.new = []
        else:
            files, res.source = history(opts, es_ok, root, log)
            # the scan keeps its copy between cycles: it routes what is new and detects
            # again only what the new runs could move; every page is written from it
            cps, hist = analyse(files, evs, root, opts.full)
            res.records = hist.span()[0]
            log(f'mdxbench cycle: {res.records} records of {opts.system} from {res.source}')
            res.change_points = len(cps)
            before = {k: v['state'] for k, v in store.incidents.items()}
            state = incidents.update(store.incidents, incidents.group(
                cps, window=dt.timedelta(days=opts.window_days)), now)
            res.new = [i['id'] for i in incidents.to_notify(state)
                       if before.get(i['id']) != i['state']]
            sens, res.mde_computed = sensitivity.refresh(store.sensitivity, hist,
                                                         opts.mde_budget)
            store.sensitivity = {sensitivity.key_of(e): e for e in sens}
        res.notified, res.failed = tell(state, opts, now, log)
        res.incidents = state
        res.exit_code = exits.PENDING if es_ok is False else \
            exits.FOUND if res.new else exits.OK
        store.incidents = state
        store.last_cycle = {'time': now, 'records': res.records, 'source': res.source,
                            'change_points': res.change_points, 'new': res.new,
                            'notified': res.notified, 'failed': res.failed,
                            'exit': res.exit_code, 'reframe_exit': res.reframe_exit,
                            'unchanged': res.unchanged, 'fingerprint': fp,
                            'site_written': res.unchanged and not res.notified}
        # the state first: who was told is never lost, even if the site cannot be written
        store.save()
        if not store.last_cycle['site_written']:
            if res.unchanged:       # an incident told now: its state changed on the pages
                files, _ = history(opts, es_ok, root, log)
                # through the kept scan: nothing is new, so nothing is detected again
                cps, hist = analyse(files, evs, root)
            # the change points found above drawn on the trend page, not found again
            publish.write(site, opts.system, state, store.last_cycle, hist, evs,
                          list(store.sensitivity.values()), change_points=cps)
            store.last_cycle['site_written'] = True
            store.save()
            if not opts.site and not opts.state:      # the default layout: all systems
                publish.write_systems_index(root.parent)
            log(f'mdxbench cycle: site written to {site}/index.html')
    return res


def summary(res):
    '''The machine-readable record of a cycle.'''
    return json.dumps({k: v for k, v in dataclasses.asdict(res).items() if k != 'incidents'},
                      indent=1, default=str)
