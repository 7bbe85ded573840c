'''``mdxbench accept``: a fleet's acceptance from jobs to verdicts.

One job per testable node (:func:`mdxbench.post.fleet.jobs.run`), the nodes judged
together (:func:`mdxbench.post.fleet.verdicts.judge`, with what failed before measuring
from :func:`~mdxbench.post.fleet.jobs.outcomes`), then a failed node is measured again
(``retests`` times at most) and fails only on what failed both times
(:func:`~mdxbench.post.fleet.verdicts.confirm`): one disturbed run on a busy machine
drains no node. A node measured again moves the nodes' medians, so a node that fails only
then is measured again too.
'''
import dataclasses
import datetime as dt
import pathlib
import sys

from mdxbench.sitecfg import state_dir
from mdxbench.post.fleet import jobs, verdicts as _verdicts
from mdxbench.post.store import records


@dataclasses.dataclass
class Outcome:
    '''What an acceptance run gives: the verdicts per node and the job figures.'''
    verdicts: list
    jobs: int
    max_in_queue: int
    seconds: float
    job_ids: dict

    @property
    def passed(self):
        return _verdicts.all_pass(self.verdicts)

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


def judge(plan, out, job_ids, outliers):
    '''Verdicts of the plan's nodes from the perflogs under ``out`` and the jobs' reports.'''
    errors = []
    perflogs = out / 'perflogs'
    df = records.from_perflogs([perflogs], errors) if perflogs.exists() else records.frame([])
    for e in errors:
        print(e, file=sys.stderr)
    df = df.filter((df['system'] == plan.system) & (df['partition'] == plan.partition))
    states = dict({n: 'idle' for n in plan.testable}, **plan.untested)
    return _verdicts.judge(df, states, failures=jobs.outcomes(out, job_ids),
                           same_checks=True, **outliers)


def run(plan, out, reframe_args, time_limit, files, outliers, retests, log=print):
    '''Jobs, verdicts and re-measurements of one acceptance run; an :class:`Outcome`.
    ``outliers``: z, min_effect and gross of the verdicts.'''
    fig = jobs.run(plan, out, reframe_args, time_limit, files=files, log=log)
    ids = dict(fig['job_ids'])
    found = judge(plan, out, ids, outliers)
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
                        time_limit, files=files, log=log)
        ids.update(more['job_ids'])
        for k in ('jobs', 'seconds'):
            fig[k] += more[k]
        fig['max_in_queue'] = max(fig['max_in_queue'], more['max_in_queue'])
        # a failure counts when the same thing failed the time before too
        found = _verdicts.confirm(judge(plan, out, ids, outliers), previous)
    for v in found:
        if v['node'] in retested:
            v['earlier'] = retested[v['node']]
    return Outcome(found, fig['jobs'], fig['max_in_queue'], fig['seconds'], ids)


def dry_run(plan, cases):
    '''What a run would do: nodes to test and not, jobs against ``--distribute``'s.'''
    untested = ', '.join(f'{n} {s}' for n, s in plan.untested.items()) or '-'
    return (f'nodes to test: {len(plan.testable)} ({", ".join(plan.testable)}); not tested: '
            f'{len(plan.untested)} ({untested})\n'
            f'acceptance test cases per node: {cases}\n'
            f'jobs: mdxbench accept submits {len(plan.testable)}, at most {plan.max_jobs} '
            f'queued at once; reframe --distribute=all would submit '
            f'{len(plan.testable) * cases} ({len(plan.testable)} x {cases})')
