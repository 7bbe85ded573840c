'''``mdxbench accept``: a fleet's acceptance from jobs to verdicts.

One job per testable node (:func:`mdxbench.post.fleet.jobs.run`), the nodes judged
together (:func:`mdxbench.post.fleet.verdicts.judge`, with what failed before measuring
from :func:`~mdxbench.post.fleet.jobs.outcomes`), then a failed node is measured again
(``retests`` times at most) and fails only on what failed both times
(:func:`~mdxbench.post.fleet.verdicts.confirm`): one disturbed run on a busy machine
drains no node. A node measured again moves the nodes' medians, so a node that fails only
then is measured again too.

Then the *suspects* (:mod:`mdxbench.post.fleet.suspects`): nodes at least the minimum
effect worse than the nodes' median -- outliers among the nodes too, unless gross (those
the retest decides, as failed checks) -- or than their own earlier level relative to the
fleet (``history``: the store's earlier records). Each round measures every undecided
suspect again with one healthy node near the median, all in **one** job
(:func:`~mdxbench.post.fleet.jobs.run_round`), and a sequential test on the paired ratios
confirms the deficit (fail), excludes it (pass) or, when the bound on extra jobs is spent,
leaves the node *undecided* (neither drained nor passed).

Pair checks (nccl-tests across nodes: :data:`~mdxbench.post.fleet.jobs.PAIR_TAG`) run after
the nodes' jobs, a two-node job for each node with the next one as partner
(:func:`~mdxbench.post.fleet.jobs.ring`); the figure is its subject's reading. A slow node
spoils its predecessor's reading too: both become suspects, and the rounds settle them --
each suspect's pair run with the healthy buddy as partner, paired with the buddy's own
run with a second healthy node, the same round. A node measured again gets a pair run
with a passed node as partner.
'''
import dataclasses
import datetime as dt
import pathlib
import sys

from mdxbench.sitecfg import state_dir
from mdxbench.post.fleet import jobs, sequential as _sequential, suspects as _suspects, verdicts as _verdicts
from mdxbench.post.store import records, source


@dataclasses.dataclass
class Outcome:
    '''What an acceptance run gives: the verdicts per node and the job figures.'''
    verdicts: list
    jobs: int
    max_in_queue: int
    seconds: float
    job_ids: dict
    noise: dict = dataclasses.field(default_factory=dict)   # {figure: sequential.Noise}

    @property
    def passed(self):
        return _verdicts.all_pass(self.verdicts)

    def noise_json(self):
        return {k: dataclasses.asdict(v) for k, v in self.noise.items()}

    def figures(self):
        return {'jobs': self.jobs, 'max_in_queue': self.max_in_queue, 'seconds': self.seconds}


def new_out_dir(out=None):
    '''The run's directory: ``out`` or ``<state>/accept/<time>``; it must be empty, since an
    earlier run's perflogs would be judged with this one's as one session.'''
    out = pathlib.Path(out or state_dir() / 'accept' / dt.datetime.now().strftime('%Y%m%dT%H%M%S'))
    if out.exists() and any(out.iterdir()):
        raise ValueError(f"--out {out} is not empty (an earlier run's records would be "
                         f"judged with this one's): give a new directory")
    return out


def judge(plan, out, job_ids, outliers, paired=False):
    '''Verdicts of the plan's nodes from the perflogs under ``out`` and the jobs' reports
    (``paired``: outliers short of gross are left to the suspects' paired test).'''
    errors = []
    perflogs = out / 'perflogs'
    df = records.from_perflogs([perflogs], errors) if perflogs.exists() else records.frame([])
    for e in errors:
        print(e, file=sys.stderr)
    df = df.filter((df['system'] == plan.system) & (df['partition'] == plan.partition))
    states = dict({n: 'idle' for n in plan.testable}, **plan.untested)
    return _verdicts.judge(df, states, failures=jobs.outcomes(out, job_ids),
                           same_checks=True, paired=paired, **outliers)


@dataclasses.dataclass
class Sequential:
    '''How suspects are decided: error rates (``alpha``: a healthy node failed; ``beta``: a
    node short by the minimum effect passed), at most ``max_extra_jobs`` jobs for them
    (None: as many as the nodes to test), and the store's earlier records (``history``).'''
    alpha: float = 0.01
    beta: float = 0.05
    max_extra_jobs: int = None
    history: object = None


def sequential(alpha, beta, max_extra_jobs, history_paths=(), history_es=False, system=None,
               partition=None):
    '''The :class:`Sequential` of ``accept``'s options, with the earlier records read from
    perflog paths or a Parquet export (``history_paths``) or Elasticsearch: the acceptance
    runs of ``system``'s ``partition`` only, read a row group at a time; unreadable lines
    are reported on standard error.'''
    import polars as pl

    from mdxbench.post.store import rowgroups

    history = None
    if history_paths or history_es:
        parquet = next((h for h in history_paths if str(h).endswith('.parquet')), None)
        files, errors = source.files(list(history_paths), history_es, parquet, system=system)
        for e in errors:
            print(e, file=sys.stderr)
        where = pl.lit(True)
        if system:
            where &= pl.col('system') == system
        if partition:
            where &= pl.col('partition') == partition
        history = rowgroups.select(files, where, _verdicts.acceptance_records)
    return Sequential(alpha, beta, max_extra_jobs, history)


def run(plan, out, reframe_args, time_limit, files, outliers, retests, log=print,
        sequential=None, progress=None, pairs=False):
    '''Jobs, verdicts and re-measurements of one acceptance run; an :class:`Outcome`.
    ``outliers``: z, min_effect and gross of the verdicts; ``sequential``: how suspects
    are decided (:class:`Sequential`; None: suspects are not looked for); ``pairs``: the
    selection has pair checks (:func:`pair_runs`). Figures the history shows too noisy to
    decide are warned of on standard error before any job.'''
    for line in noise_warnings(plan, outliers.get('min_effect') or _verdicts.MIN_EFFECT,
                               sequential):
        print(line, file=sys.stderr)
    fig = jobs.run(plan, out, reframe_args, time_limit, files=files, log=log,
                   progress=progress)
    ids = dict(fig['job_ids'])

    def pair_runs(which, what):
        # the pair checks' jobs (each a node's reading with its partner), after the nodes'
        if not which:
            return
        more = jobs.run(plan, out, reframe_args, time_limit, files=files, log=log,
                        progress=progress, what=what, pairs=which)
        ids.update(more['job_ids'])
        for k in ('jobs', 'seconds'):
            fig[k] += more[k]
        fig['max_in_queue'] = max(fig['max_in_queue'], more['max_in_queue'])

    if pairs:
        pair_runs(jobs.ring(plan.testable), 'pair runs')
    # with the suspects' test, a retest decides only gross outliers and failed checks: an
    # outlier short of gross is a suspect, decided on paired runs with their noise
    paired = sequential is not None
    found = judge(plan, out, ids, outliers, paired)
    retested, previous = {}, {}
    while True:
        again = [v['node'] for v in found if v['verdict'] == 'fail'
                 and len(retested.get(v['node'], [])) < retests and v['node'] in plan.testable]
        if not again:
            break
        log(f"mdxbench accept: measuring again: {', '.join(again)}")
        for v in found:
            if v['node'] in again:
                retested.setdefault(v['node'], []).append('; '.join(v['reasons']))
                previous[v['node']] = set(v['keys'])
        more = jobs.run(dataclasses.replace(plan, testable=again), out, reframe_args,
                        time_limit, files=files, log=log, progress=progress,
                        what='nodes measured again')
        ids.update(more['job_ids'])
        # (the most queued at once stays the first run's: it queues min(nodes, max_jobs),
        # a retest of fewer nodes no more, a round one job)
        for k in ('jobs', 'seconds'):
            fig[k] += more[k]
        if pairs:
            pair_runs(retest_pairs(again, found, plan.testable), 'pair runs measured again')
        # a failure counts when the same thing failed the time before too
        found = _verdicts.confirm(judge(plan, out, ids, outliers, paired), previous)
    for v in found:
        if v['node'] in retested:
            v['earlier'] = retested[v['node']]
    noise = {}
    if sequential is not None:
        effect = outliers.get('min_effect') or _verdicts.MIN_EFFECT

        def measure(nodes, lengths=None, pairs=()):
            # checks run longer where their noise asks for it: -S Check.length_factor=F;
            # the suspects and their buddy in one job (and the round's pair runs)
            fig['rounds'] = fig.get('rounds', 0) + 1
            more = jobs.run_round(plan, nodes, out, [*reframe_args, *length_args(lengths)],
                                  time_limit, files=files, log=log,
                                  name=f"round-{fig['rounds']}", progress=progress,
                                  pairs=pairs)
            ids.update(more['job_ids'])
            for k in ('jobs', 'seconds'):
                fig[k] += more[k]

        noise = decide_suspects(plan, out, found, effect, sequential, measure, log)
    return Outcome(found, fig['jobs'], fig['max_in_queue'], fig['seconds'], ids, noise)


def retest_pairs(again, found, testable):
    '''The pair runs of nodes measured again: each with a partner that passed (the first
    by name; none passed: the next node measured again, as in the first run).'''
    passed = sorted(v['node'] for v in found if v['verdict'] == 'pass' and v['node'] in testable)
    if passed:
        return [(n, passed[0]) for n in again]
    return jobs.ring(again)


def pair_keys(session):
    '''The figures (``check perf_var``) of this run's pair checks: those whose records are
    a node's run with a partner (``meta.pair_partner``).'''
    import polars as pl

    if session.is_empty():
        return set()
    rows = session.filter(pl.col('meta').str.json_path_match('$.pair_partner').is_not_null())
    # (keyed as the suspects' cases are: check and perf var)
    return {f'{c} {v}' for c, v in rows.select('check', 'perf_var').iter_rows()}


def round_pairs(undecided, cases, buddy, second, keys):
    '''The pair runs of a round: each undecided suspect of a pair figure (``keys``) with the
    buddy as partner, and the buddy with ``second`` (another healthy node) -- the buddy's
    own reading of the round, against which each suspect's is paired. None where no
    suspect has a pair figure, or no second healthy node exists.'''
    mine = [n for n in undecided if any(c['key'] in keys and _suspects.state([c]) == 'undecided'
                                        for c in cases[n])]
    if not mine or second is None:
        return []
    return [(n, buddy) for n in mine] + [(buddy, second)]


def session_records(plan, out):
    '''This run's acceptance records of the plan's partition, one node each.'''
    perflogs = out / 'perflogs'
    df = records.from_perflogs([perflogs]) if perflogs.exists() else records.frame([])
    df = df.filter((df['system'] == plan.system) & (df['partition'] == plan.partition))
    return _verdicts.acceptance_records(df)


def default_budget(nodes):
    '''Extra jobs for the suspects by default: half as many as the nodes tested, two at
    least (a round -- every undecided suspect and their buddy -- is one job, and nothing
    is decided on fewer than two paired runs).'''
    return max(_sequential.MIN_PAIRED, nodes // 2)


def _budget(plan, seq):
    '''The extra jobs the suspects may take: the operator's, or :func:`default_budget`.'''
    return seq.max_extra_jobs if seq.max_extra_jobs is not None \
        else default_budget(len(plan.testable))


def _history(plan, seq):
    '''The history's acceptance records of the plan's partition, or None.'''
    if seq.history is None:
        return None
    history = _verdicts.acceptance_records(seq.history)
    return history.filter((history['system'] == plan.system)
                          & (history['partition'] == plan.partition))


def _given(meta):
    '''The variables a record's run was given (``meta.variables``) as sorted JSON text, or
    None where the record says nothing (written before runs recorded them).'''
    import json

    try:
        v = (json.loads(meta) if meta else {}).get('variables')
    except (ValueError, AttributeError):
        return None
    return None if v is None else json.dumps(v, sort_keys=True)


def like_with_like(history, session, log=print):
    '''The history without the runs of a check that were given other variables than this
    session's runs of it (both at the check's own length: a lengthened run is its own
    series, as before): not the same measurement, neither a level nor a noise to judge
    this session's runs by. Runs that recorded no variables are kept. Each check's runs
    left out are said.'''
    import polars as pl

    if history is None or history.is_empty() or session.is_empty():
        return history
    want = {}
    for check, meta in session.select('check', 'meta').iter_rows():
        if _suspects.length_factor(meta) == 1 and (g := _given(meta)) is not None:
            want.setdefault(check.split()[0], set()).add(g)
    keep, out = [], {}
    for check, meta in history.select('check', 'meta').iter_rows():
        cls = check.split()[0]
        other = (cls in want and _suspects.length_factor(meta) == 1
                 and (g := _given(meta)) is not None and g not in want[cls])
        keep.append(not other)
        if other:
            out[cls] = out.get(cls, 0) + 1
    for cls, n in sorted(out.items()):
        log(f'mdxbench accept: history: {n} record(s) of {cls} from runs given other '
            f'variables than this session\'s left out (not the same measurement)')
    return history.filter(pl.Series(keep, dtype=pl.Boolean)) if out else history


def decide_suspects(plan, out, found, effect, seq, measure, log=print):
    '''Find the suspects among the passed nodes, measure them again in rounds with a
    healthy node near the median (``measure(nodes)``), and decide each by the sequential
    test; updates ``found`` in place. Returns the noise of each figure ({key: Noise}).'''
    session = session_records(plan, out)
    history = like_with_like(_history(plan, seq), session, log)
    by_node = {v['node']: v for v in found}
    first = _suspects.first_run(found)
    noise = _suspects.noises(session, history, first)
    cases = _suspects.find(found, effect, history, plan.testable, noise, seq.alpha, seq.beta)
    if not cases:
        _suspects.explain(found, noise, effect)
        return noise
    keys = sorted({c['key'] for cs in cases.values() for c in cs})
    healthy = [n for n, v in by_node.items() if v['verdict'] == 'pass' and n not in cases
               and n in plan.testable]
    buddy = _suspects.pick_buddy(healthy, keys, first)
    if buddy is None:
        for node, cs in cases.items():
            _suspects.settle(by_node[node], cs, None, effect, seq, 'no healthy node to pair with')
        _suspects.explain(found, noise, effect)
        return noise
    budget = _budget(plan, seq)
    spent, rounds = 0, []
    undecided = sorted(cases)
    df = session_records(plan, out)
    # a pair figure's suspects run with the buddy as partner; the buddy with a second
    # healthy node, its own reading of the round
    pkeys = pair_keys(df)
    second = _suspects.pick_buddy([n for n in healthy if n != buddy], keys, first) \
        if pkeys else None

    def sizing(undecided):
        # how long the next round's runs: as long as the noise needs in the rounds left
        # (known before the first round where repeated runs gave it)
        return _sequential.next_lengths([c for n in undecided for c in cases[n]], effect, seq,
                                      budget - spent, _suspects.lengthenable(df), noise)

    lengths = sizing(undecided)
    while undecided and spent < budget:
        pairs = round_pairs(undecided, cases, buddy, second, pkeys)
        log(round_line(buddy, undecided, lengths, pairs))
        start = _suspects.now()
        measure(round_nodes(undecided, buddy), lengths, pairs=pairs)
        spent += 1
        rounds.append(start)
        df = session_records(plan, out)
        noise = _suspects.noises(df, history, first, chosen=set(cases))
        for node in undecided:
            _suspects.update(cases[node], df, rounds, node, buddy, noise, effect, seq,
                             lengths)
        undecided = [n for n in undecided if _suspects.state(cases[n]) == 'undecided']
        if undecided:
            lengths = sizing(undecided)
    least = _sequential.MIN_PAIRED        # a round is one job; two paired runs decide
    bound = f'the bound of {budget} extra jobs was reached' + (
        f' (fewer than the {least} paired rounds, one job each, anything is decided on: '
        f'--max-extra-jobs {least} or more)' if budget < least else '')
    for node, cs in cases.items():
        _suspects.settle(by_node[node], cs, buddy, effect, seq, bound)
    _suspects.explain(found, noise, effect)
    return noise


def round_line(buddy, undecided, lengths, pairs=()):
    '''The log line of a round: the suspects, their buddy, the checks made longer, the
    pair runs.'''
    longer = ', '.join(f'{cls} {f}x as long' for cls, f in sorted(lengths.items()) if f > 1)
    return (f"mdxbench accept: suspects measured again with {buddy}, in one job: "
            f"{', '.join(undecided)}" + (f' ({longer}: their noise)' if longer else '')
            + (f"; pair runs {', '.join(f'{s}+{p}' for s, p in pairs)}" if pairs else ''))


def round_nodes(undecided, buddy):
    '''The nodes of a round's job in their order: the buddy between the suspects (where
    they run one after another, its reading is as near each suspect's in time as the order
    allows; the middle one's, of an odd count, before it).'''
    half = (len(undecided) + 1) // 2
    return undecided[:half] + [buddy] + undecided[half:]


def length_args(lengths):
    '''ReFrame's arguments for runs made longer: ``-S Check.length_factor=F`` for each
    check whose length is above its own (1).'''
    return [a for cls, f in sorted((lengths or {}).items()) if f > 1
            for a in ('-S', f'{cls}.length_factor={f}')]


def noise_warnings(plan, effect, seq):
    '''Lines warning, before the first run, of figures the history shows too noisy for
    ``effect`` to be decided within the budget (:func:`suspects.undecidable`): a suspect of
    them would end undecided.'''
    if seq is None or seq.history is None:
        return []
    history, budget = _history(plan, seq), _budget(plan, seq)
    return [f"mdxbench accept: warning: {u['key']} varies {u['noise'].sigma:.1%} a run "
            f"({u['noise'].n} repeated-run differences in the history): telling "
            f"{effect:.0%} from nothing takes about {u['need']} paired runs, and {budget} "
            f"extra jobs give a suspect at most {u['capacity']} (its runs "
            f"{_sequential.MAX_LENGTH}x as long): a suspect of it would end undecided. Run "
            f"{u['check']} longer (-S {u['check']}.length_factor=F, or its own size), "
            f"give more jobs (--max-extra-jobs), or use --min-effect {u['min_effect']:.0%} "
            f"or more" for u in _suspects.undecidable(history, effect, seq.alpha, seq.beta,
                                                       budget)]


def dry_run(plan, cases, pairs=0):
    '''What a run would do: nodes to test and not, jobs against ``--distribute``'s
    (``pairs``: how many of the ``cases`` are pair checks, a job for each node's pair run).'''
    untested = ', '.join(f'{n} {s}' for n, s in plan.untested.items()) or '-'
    runs = len(jobs.ring(plan.testable)) if pairs else 0
    return (f'nodes to test: {len(plan.testable)} ({", ".join(plan.testable)}); not tested: '
            f'{len(plan.untested)} ({untested})\n'
            f'acceptance test cases per node: {cases}'
            + (f' ({pairs} of them pair checks, run on the node and the next one)'
               if pairs else '') + '\n'
            f'jobs: mdxbench accept submits {len(plan.testable) + runs}'
            + (f' ({len(plan.testable)} nodes, {runs} pair runs)' if pairs else '')
            + f', at most {plan.max_jobs} queued at once; reframe --distribute=all would '
            f'submit {len(plan.testable) * cases} ({len(plan.testable)} x {cases})')
