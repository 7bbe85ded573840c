'''fleet/accept.py outside Slurm: a run's directory, its nodes judged from the perflogs
under it (the real perflogs of one main job, tests/fixtures/perflogs/main-job-1, whose
acceptance-tagged records are of the node ``vm`` of local:debug), the history the
suspects read, what a dry run says and what a run's outcome tells. (The jobs themselves:
tests/integration/test_fleet_acceptance.py.)'''
import json
import pathlib
import re
import shutil

import pytest

from mdxbench import REPO_ROOT
from mdxbench.post.fleet import accept, jobs

MAIN = REPO_ROOT / 'tests' / 'fixtures' / 'perflogs' / 'main-job-1'


def _run_dir(tmp_path):
    out = tmp_path / 'out'
    shutil.copytree(MAIN, out / 'perflogs')
    return out


def test_a_runs_directory_is_new_or_empty_never_an_earlier_runs(tmp_path, monkeypatch):
    fresh = tmp_path / 'fresh'
    assert accept.new_out_dir(fresh) == fresh
    fresh.mkdir()
    assert accept.new_out_dir(str(fresh)) == fresh
    (fresh / 'perflogs').mkdir()
    with pytest.raises(ValueError) as err:
        accept.new_out_dir(fresh)
    assert str(err.value) == (f"--out {fresh} is not empty (an earlier run's records would "
                              f"be judged with this one's): give a new directory")
    monkeypatch.setenv('MDXBENCH_STATE_DIR', str(tmp_path / 'state'))
    default = accept.new_out_dir()
    assert default.parent == tmp_path / 'state' / 'accept'
    assert re.fullmatch(r'\d{8}T\d{6}', default.name), default


def test_the_nodes_are_judged_from_the_runs_perflogs_of_their_own_partition(tmp_path, capsys):
    '''local:debug's node vm passes on its 33 acceptance records: 31 figures of its six
    checks, HpccHpl's two measured twice (the latest run of each judged); a node Slurm drained is not tested; the same perflogs judged for another
    partition give vm nothing; an unreadable line is said, naming its file and line.'''
    out = _run_dir(tmp_path)
    log = out / 'perflogs' / 'local' / 'debug' / 'HpccHpl.log'
    lines = log.read_text().splitlines(keepends=True)
    log.write_text(''.join(lines) + 'not a perflog line\n')
    plan = jobs.Plan('local', 'debug', 'debug', ['vm'], {'n9': 'drained'}, [], 1)
    found = {v['node']: v for v in accept.judge(plan, out, {}, {})}
    assert {n: v['verdict'] for n, v in found.items()} == {'vm': 'pass', 'n9': 'not tested'}
    assert len(found['vm']['measurements']) == 31
    assert {m['check'].split()[0] for m in found['vm']['measurements']} == {
        'BabelStreamOmp', 'FioTarget', 'HpccHpl', 'HpccStream', 'NodeConformance', 'StreamOmp'}
    err = capsys.readouterr().err
    assert f'{log}:{len(lines) + 1}:' in err
    other = jobs.Plan('nscluster', 'nodes', 'debug', ['vm'], {}, [], 1)
    [v] = accept.judge(other, out, {}, {})
    assert (v['node'], v['verdict'], v['reasons']) == (
        'vm', 'not tested', ['no acceptance measurement (state idle)'])
    assert accept.session_records(plan, out).height == 33
    assert accept.session_records(other, out).height == 0
    empty = tmp_path / 'empty'
    empty.mkdir()
    assert accept.session_records(plan, empty).height == 0
    assert [v['verdict'] for v in accept.judge(plan, empty, {}, {})] == ['not tested', 'not tested']


def test_the_suspects_history_is_the_acceptance_runs_of_the_partition(tmp_path, capsys):
    seq = accept.sequential(0.02, 0.1, 3, [MAIN], system='local', partition='debug')
    assert (seq.alpha, seq.beta, seq.max_extra_jobs) == (0.02, 0.1, 3)
    assert seq.history.height == 33 and set(seq.history['nodes']) == {'vm'}
    assert set(seq.history['partition']) == {'debug'}
    plan = jobs.Plan('local', 'debug', 'debug', ['vm'], {}, [], 1)
    assert accept._history(plan, seq).height == 33
    assert accept._history(jobs.Plan('local', 'other', 'o', [], {}, [], 1), seq).height == 0
    assert accept.sequential(0.01, 0.05, None, [MAIN], system='nscluster').history.height == 0
    assert accept.sequential(0.01, 0.05, None).history is None
    assert accept._history(plan, accept.Sequential()) is None


def test_the_suspects_budget_is_the_operators_or_half_the_nodes():
    plan = jobs.Plan('s', 'p', 'p', [f'n{i}' for i in range(9)], {}, [], 1)
    assert accept._budget(plan, accept.Sequential(max_extra_jobs=0)) == 0
    assert accept._budget(plan, accept.Sequential()) == 4
    assert accept.default_budget(3) == 2 and accept.default_budget(4) == 2
    assert accept.default_budget(10) == 5


def test_a_dry_run_says_what_a_run_would_submit():
    plan = jobs.Plan('mdx2', 'vc16m32g', 'p', ['n1', 'n2'], {'n3': 'drained', 'n4': 'down*'},
                     [], 4)
    assert accept.dry_run(plan, 7) == (
        'nodes to test: 2 (n1, n2); not tested: 2 (n3 drained, n4 down*)\n'
        'acceptance test cases per node: 7\n'
        'jobs: mdxbench accept submits 2, at most 4 queued at once; reframe '
        '--distribute=all would submit 14 (2 x 7)')
    none = jobs.Plan('mdx2', 'vc16m32g', 'p', ['n1'], {}, [], 1)
    assert accept.dry_run(none, 1).startswith('nodes to test: 1 (n1); not tested: 0 (-)\n')
    # pair checks (issue 61): a pair run for each node, with the next as partner
    three = jobs.Plan('mdx1', 'gpu', 'gpu', ['n1', 'n2', 'n3'], {}, [], 3)
    assert accept.dry_run(three, 7, 3).splitlines()[1:] == [
        'acceptance test cases per node: 7 (3 of them pair checks, run on the node and the '
        'next one)',
        'jobs: mdxbench accept submits 6 (3 nodes, 3 pair runs), at most 3 queued at once; '
        'reframe --distribute=all would submit 21 (3 x 7)']
    # one node has no partner: no pair run
    assert 'submits 1 (1 nodes, 0 pair runs)' in accept.dry_run(none, 2, 1)


def test_a_node_measured_again_gets_its_pair_run_with_a_node_that_passed():
    found = [{'node': 'n1', 'verdict': 'pass'}, {'node': 'n2', 'verdict': 'fail'},
             {'node': 'n3', 'verdict': 'pass'}, {'node': 'n4', 'verdict': 'fail'},
             {'node': 'n0', 'verdict': 'pass'}]
    # (n0 passed but is not in this run's partition plan: not a partner)
    assert accept.retest_pairs(['n2', 'n4'], found, ['n1', 'n2', 'n3', 'n4']) == \
        [('n2', 'n1'), ('n4', 'n1')]
    # none passed: with each other, as in a first run
    failed = [dict(v, verdict='fail') for v in found]
    assert accept.retest_pairs(['n2', 'n4'], failed, ['n1', 'n2', 'n3', 'n4']) == \
        [('n2', 'n4'), ('n4', 'n2')]


def test_an_outcome_passes_only_where_every_node_passed_and_carries_its_figures():
    from mdxbench.post.fleet import sequential

    nz = {'A bw': sequential.Noise(0.02, 'repeated runs', 9)}
    ok = accept.Outcome([{'node': 'a', 'verdict': 'pass'}], 3, 2, 12.5, {'a': '1'}, nz)
    assert ok.passed and ok.figures() == {'jobs': 3, 'max_in_queue': 2, 'seconds': 12.5}
    assert ok.noise_json() == {'A bw': {'sigma': 0.02, 'source': 'repeated runs', 'n': 9}}
    assert not accept.Outcome([{'node': 'a', 'verdict': 'pass'},
                               {'node': 'b', 'verdict': 'undecided'}], 1, 1, 1.0, {}).passed
    assert accept.Outcome([], 0, 0, 0.0, {}).noise_json() == {}


# --- a whole run, the Slurm jobs replaced by what they leave behind -------------------------
class Jobs:
    '''Stands for fleet/jobs.py's run() and run_round(): each "job" leaves what a real one
    leaves -- a line of a real perflog per node (by default main-job-1's HpccHpl), its time,
    job id, node (list) and one figure (``var``) the only tokens changed (the figures of the
    scenario: test input), and an empty ReFrame report -- so that accept.run judges,
    retests, confirms and pairs as it does after real jobs. ``values``: {node: [the figure
    of its 1st, 2nd, ... run]}. A job given ``-S Check.length_factor=F`` leaves records
    saying so (``meta.length.factor``), as a check with a length knob does
    (MdxBenchTest.lengthen).'''
    def __init__(self, values, dead=(), template=MAIN / 'local' / 'debug' / 'HpccHpl.log',
                 var='gflops', clock=0, partner=False):
        lines = template.read_text().splitlines()
        self.head, self.line = lines[0], lines[1]
        self.value_at = self.head.split('|').index(f'{var}_value')
        f = self.line.split('|')
        self.system, self.partition, self.check = f[2], f[3], f[5].split()[0]
        self.values, self.calls, self.next_id, self.clock = values, [], 100, clock
        self.dead = set(dead)       # (node, call): a job that died, leaving nothing
        self.given = []             # what each job was given besides its nodes
        self.plans = []             # the plan each pair run was given
        self.partner = partner      # the records a pair check's: a node's run with a partner

    def _write(self, out, nodes, reframe_args):
        log = out / 'perflogs' / self.system / self.partition / f'{self.check}.log'
        log.parent.mkdir(parents=True, exist_ok=True)
        if not log.exists():
            log.write_text(self.head + '\n')
        factor = next((a.split('=', 1)[1] for a in reframe_args
                       if a.startswith(f'{self.check}.length_factor=')), None)
        ids = {}
        for node in nodes:
            if (node, len(self.calls)) in self.dead:
                ids[node] = str(self.next_id)
                self.next_id += 1
                continue
            self.clock += 10
            f = self.line.split('|')
            f[0] = self.at(self.clock).isoformat()
            f[8], f[9] = str(self.next_id), node
            f[self.value_at] = repr(self.values[node].pop(0))
            meta = json.loads(f[11])
            for k, node_is in (('job_host', node), ('job_nodes', [node])):
                if k in meta:       # (the newer records name the job's nodes in meta too)
                    meta[k] = node_is
            if factor is not None:
                meta['length']['factor'] = int(factor)
            if self.partner:
                meta['pair_partner'] = 'n1' if node == 'n0' else 'n0'
            f[11] = json.dumps(meta)
            with log.open('a') as fp:
                fp.write('|'.join(f) + '\n')
            rep = pathlib.Path(jobs.report_path(out, node))
            rep.parent.mkdir(parents=True, exist_ok=True)
            rep.write_text('{"runs": []}')
            ids[node] = str(self.next_id)
            self.next_id += 1
        self.calls.append((list(nodes), list(reframe_args)))
        return {'jobs': len(nodes), 'max_in_queue': len(nodes), 'seconds': 1.0,
                'job_ids': ids}

    @staticmethod
    def at(seconds):
        import datetime as dt

        return dt.datetime(2026, 11, 28, 10, tzinfo=dt.timezone.utc) + dt.timedelta(seconds=seconds)

    def now(self):
        '''A round starts a second after the last record (as suspects.now() would).'''
        return self.at(self.clock + 1)

    def run(self, p, out, reframe_args=(), time_limit='30:00', files=None, log=print,
            progress=None, what='nodes', pairs=None):
        assert pairs is None, 'no pair check here: no pair run'
        self.given += [(time_limit, files, log, progress, what)]
        return self._write(out, p.testable, reframe_args)

    def run_round(self, p, nodes, out, reframe_args=(), time_limit='30:00', files=None,
                  log=print, name='round', progress=None, pairs=()):
        assert not pairs, 'no pair check here: no pair run'
        self.given += [(time_limit, files, log, progress, name)]
        fig = self._write(out, nodes, reframe_args)
        return dict(fig, jobs=1, max_in_queue=1)


def test_a_node_that_fails_once_is_measured_again_and_fails_only_on_what_failed_twice(
        tmp_path, monkeypatch):
    '''Six nodes at about 101 GFLOP/s; n3 at 40 and n5 at 45 (gross: more than half
    below). Measured again (one retest): n3 at 101 passes, its first reason kept as
    earlier; n5 at 44 again fails. 6 jobs, then 2.'''
    values = {f'n{i}': [101.0 + i * 0.1] for i in range(6)}
    values['n3'], values['n5'] = [40.0, 101.0], [45.0, 44.0]
    fake = Jobs(values)
    monkeypatch.setattr(accept.jobs, 'run', fake.run)
    plan = jobs.Plan('local', 'debug', 'debug', list(values), {'n9': 'drained'}, [], 8)
    said, progress = [], object()
    out = accept.run(plan, tmp_path, ['-x'], '10:00', ['checks/a.py'], {}, retests=1,
                     log=said.append, progress=progress)
    # each job gets the run's time limit, check files, log and progress, and says what
    assert fake.given == [('10:00', ['checks/a.py'], said.append, progress, 'nodes'),
                          ('10:00', ['checks/a.py'], said.append, progress,
                           'nodes measured again')]
    v = {x['node']: x for x in out.verdicts}
    assert {n: x['verdict'] for n, x in v.items()} == {
        'n0': 'pass', 'n1': 'pass', 'n2': 'pass', 'n3': 'pass', 'n4': 'pass', 'n5': 'fail',
        'n9': 'not tested'}
    assert v['n3']['earlier'] == ["HpccHpl gflops=40 GFLOPS: outlier (nodes' median 101)"]
    assert v['n3']['reasons'] == [] and 'unconfirmed' not in v['n3']
    assert v['n5']['reasons'] == ["HpccHpl gflops=44 GFLOPS: outlier (nodes' median 101)"]
    assert said == ['mdxbench accept: measuring again: n3, n5']
    assert fake.calls == [(list(values), ['-x']), (['n3', 'n5'], ['-x'])]
    assert (out.jobs, out.max_in_queue, out.seconds) == (8, 6, 2.0)
    assert out.job_ids == {f'n{i}': str(100 + i) for i in range(6)} | {'n3': '106', 'n5': '107'}
    assert out.noise == {} and not out.passed


class PairJobs(Jobs):
    '''Jobs whose selection has pair checks: a pair run is recorded (its pairs and what it
    was given), its jobs named as jobs.run names them, queued 9 at once, half a second,
    each leaving its (empty) ReFrame report and no record of the nodes' own figures.'''
    def run(self, p, out, reframe_args=(), time_limit='30:00', files=None, log=print,
            progress=None, what='nodes', pairs=None):
        if not pairs:
            return super().run(p, out, reframe_args, time_limit, files, log, progress, what)
        self.given += [(time_limit, files, log, progress, what)]
        self.plans.append(p)
        self.calls.append((list(pairs), list(reframe_args)))
        ids = {}
        for subject, _ in pairs:
            rep = pathlib.Path(jobs.report_path(out, jobs.pair_name(subject)))
            rep.parent.mkdir(parents=True, exist_ok=True)
            rep.write_text('{"runs": []}')
            ids[jobs.pair_name(subject)] = str(self.next_id)
            self.next_id += 1
        return {'jobs': len(pairs), 'max_in_queue': 9, 'seconds': 0.5, 'job_ids': ids}


def test_pair_runs_follow_the_nodes_jobs_and_a_retest_pairs_with_a_node_that_passed(
        tmp_path, monkeypatch):
    '''A selection with pair checks (issue 61): after the nodes' jobs, each node's pair
    run with the next as partner (a ring); n3 and n5 fail and are measured again, each
    then paired with n0, the first that passed. Every pair job gets the run's time limit,
    check files, log, progress and ReFrame arguments and says what it is; the run's
    figures count them (jobs, seconds, the most queued at once) and keep their job ids.'''
    values = {f'n{i}': [101.0 + i * 0.1] for i in range(6)}
    values['n3'], values['n5'] = [40.0, 101.0], [45.0, 44.0]
    fake = PairJobs(values)
    monkeypatch.setattr(accept.jobs, 'run', fake.run)
    plan = jobs.Plan('local', 'debug', 'debug', list(values), {}, [], 8)
    said, progress = [], object()
    out = accept.run(plan, tmp_path, ['-x'], '10:00', ['checks/a.py'], {}, retests=1,
                     log=said.append, progress=progress, pairs=True)
    given = ('10:00', ['checks/a.py'], said.append, progress)
    assert fake.plans == [plan, plan]
    assert fake.given == [given + ('nodes',), given + ('pair runs',),
                          given + ('nodes measured again',),
                          given + ('pair runs measured again',)]
    ring = [('n0', 'n1'), ('n1', 'n2'), ('n2', 'n3'), ('n3', 'n4'), ('n4', 'n5'), ('n5', 'n0')]
    assert fake.calls == [(list(values), ['-x']), (ring, ['-x']), (['n3', 'n5'], ['-x']),
                          ([('n3', 'n0'), ('n5', 'n0')], ['-x'])]
    assert {x['node']: x['verdict'] for x in out.verdicts}['n5'] == 'fail'
    # 6 + 6 pair runs + 2 + 2 pair runs; 1 + 0.5 + 1 + 0.5 s; the pair runs queued 9
    assert (out.jobs, out.max_in_queue, out.seconds) == (16, 9, 3.0)
    # (the nodes' jobs 100-105, the ring's 106-111, the retest's 112-113 and its pairs'
    # 114-115: a job measured again is known by its latest id)
    assert out.job_ids == {f'n{i}': str(100 + i) for i in range(6)} | {
        f'pair-n{i}': str(106 + i) for i in range(6)} | {
        'n3': '112', 'n5': '113', 'pair-n3': '114', 'pair-n5': '115'}
    # without pair checks in the selection, no pair run
    fake = PairJobs({f'n{i}': [101.0] for i in range(3)})
    monkeypatch.setattr(accept.jobs, 'run', fake.run)
    accept.run(jobs.Plan('local', 'debug', 'debug', ['n0', 'n1', 'n2'], {}, [], 8),
               tmp_path / 'none', [], '10:00', [], {}, retests=1, log=said.append)
    assert [what for *_, what in fake.given] == ['nodes']


def _n2_suspect(tmp_path, monkeypatch, kind, pairs=False):
    """Seven nodes, n2 16% below the others round after round, n3 at their median: the
    run with the sequential test (at most 4 rounds), its jobs ``kind`` (records of a pair
    check where ``pairs``). Returns (the jobs, the outcome, what the run said)."""
    values = {f'n{i}': [101.0 + i * 0.1] for i in range(7)}
    values['n2'] = [85.0, 85.1, 84.9, 85.2, 85.0]
    values['n3'] = [101.3, 101.25, 101.35, 101.3, 101.3]
    fake = kind(values, partner=pairs)
    monkeypatch.setattr(accept.jobs, 'run', fake.run)
    monkeypatch.setattr(accept.jobs, 'run_round', fake.run_round)
    monkeypatch.setattr(accept._suspects, 'now', fake.now)
    plan = jobs.Plan('local', 'debug', 'debug', list(values), {}, [], 8)
    said = []
    out = accept.run(plan, tmp_path, [], '10:00', ['c.py'], {}, retests=1, log=said.append,
                     sequential=accept.Sequential(max_extra_jobs=4), pairs=pairs)
    return fake, out, said


def test_a_suspect_is_measured_beside_the_node_nearest_the_median_until_decided(
        tmp_path, monkeypatch):
    '''Seven nodes, n2 16% below the others (not gross): with the sequential test it is a
    suspect, not a failure; each round measures it beside n3 (at the nodes' median) in
    one job, the -S length arguments none (HpccHpl declares no knob); its paired ratios,
    0.84 round after round, confirm the deficit once repeated runs give the noise.'''
    fake, out, said = _n2_suspect(tmp_path, monkeypatch, Jobs)
    v = {x['node']: x for x in out.verdicts}
    assert v['n2']['verdict'] == 'fail' and v['n2']['before_suspects'] == 'pass'
    assert v['n2']['reasons'][0].startswith(
        "HpccHpl gflops=85 GFLOPS: suspect (16% below the nodes' median); paired with n3: ")
    assert 'deficit of 10% or more confirmed' in v['n2']['reasons'][0]
    rounds = fake.calls[1:]
    assert 2 <= len(rounds) <= 4 and all(c == (['n2', 'n3'], []) for c in rounds)
    assert [g[4] for g in fake.given[1:]] == [f'round-{k}' for k in range(1, len(rounds) + 1)]
    assert all(g[:3] == ('10:00', ['c.py'], said.append) for g in fake.given)
    assert out.jobs == 7 + len(rounds) and out.max_in_queue == 7
    assert out.noise['HpccHpl gflops'].source == 'repeated runs'
    assert said[0] == 'mdxbench accept: suspects measured again with n3, in one job: n2'
    assert [x['verdict'] for n, x in v.items() if n != 'n2'] == ['pass'] * 6


class PairRounds(PairJobs):
    """PairJobs whose records are a pair check's (``meta.pair_partner``): a suspect's round
    is given its pair runs, recorded."""
    def run_round(self, p, nodes, out, reframe_args=(), time_limit='30:00', files=None,
                  log=print, name='round', progress=None, pairs=()):
        self.round_pairs = getattr(self, 'round_pairs', []) + [list(pairs)]
        self.given += [(time_limit, files, log, progress, name)]
        return dict(self._write(out, nodes, reframe_args), jobs=1, max_in_queue=1)


def test_a_suspect_on_a_pair_figure_has_its_pair_runs_in_each_round(tmp_path, monkeypatch):
    """The suspect above, its figure a pair check's (a node's run with a partner): each
    round's job also runs the suspect with the buddy n3 and n3 with a second healthy node
    (n4: nearest the median after n3), given to the round's job."""
    fake, out, said = _n2_suspect(tmp_path, monkeypatch, PairRounds, pairs=True)
    assert {x['node']: x['verdict'] for x in out.verdicts}['n2'] == 'fail'
    assert 2 <= len(fake.round_pairs) <= 4
    assert fake.round_pairs == [[('n2', 'n3'), ('n3', 'n4')]] * len(fake.round_pairs)
    assert said[0].endswith('; pair runs n2+n3, n3+n4'), said[0]


def test_a_node_whose_job_died_then_measured_low_fails_on_nothing_that_failed_twice(
        tmp_path, monkeypatch):
    '''n1's first job leaves nothing (no record, no report): n1 fails on its job. Measured
    again it is a gross outlier on HPL: another failure than the first, so nothing failed
    twice -- n1 passes, the HPL reason kept as not repeated.'''
    values = {f'n{i}': [101.0 + i * 0.1] for i in range(6)}
    values['n1'] = [40.0]
    fake = Jobs(values, dead={('n1', 0)})
    monkeypatch.setattr(accept.jobs, 'run', fake.run)
    plan = jobs.Plan('local', 'debug', 'debug', list(values), {}, [], 8)
    out = accept.run(plan, tmp_path, [], '10:00', [], {}, retests=1, log=lambda *a: None)
    v = {x['node']: x for x in out.verdicts}
    assert v['n1']['verdict'] == 'pass', v['n1']
    assert v['n1']['unconfirmed'] == ["HpccHpl gflops=40 GFLOPS: outlier (nodes' median 101.2)"]
    assert v['n1']['earlier'][0].startswith('job 101 (')
    assert fake.calls[1][0] == ['n1']


def test_with_no_suspect_each_node_says_why_it_passed_and_no_round_runs(tmp_path, monkeypatch):
    values = {f'n{i}': [101.0 + i * 0.1] for i in range(6)}
    fake = Jobs(values)
    monkeypatch.setattr(accept.jobs, 'run', fake.run)
    monkeypatch.setattr(accept.jobs, 'run_round', lambda *a, **k: pytest.fail('a round ran'))
    plan = jobs.Plan('local', 'debug', 'debug', list(values), {}, [], 8)
    out = accept.run(plan, tmp_path, [], '10:00', [], {'min_effect': 0.05}, retests=1,
                     log=lambda *a: None, sequential=accept.Sequential(max_extra_jobs=2))
    assert [v['why'] for v in out.verdicts] == [
        "pass: every figure within 5% of the nodes' median and its reference"] * 6
    # one run each: the noise is the nodes' spread (MAD 0.15 of 101.0..101.5, in logs)
    nz = out.noise['HpccHpl gflops']
    assert (nz.source, nz.n) == ('fleet spread', 6) and 0.001 < nz.sigma < 0.003
    assert out.jobs == 6 and out.passed


STREAM = REPO_ROOT / 'tests' / 'fixtures' / 'perflogs' / 'nscluster-nodes-StreamOmp-lengthen.log'


def _stream_history(tmp_path, nodes, swing, runs=3):
    '''``runs`` earlier acceptance runs of StreamOmp on ``nodes`` (the real records of
    nscluster's nights, their Triad replaced): each node alternates 12.5 GB/s x (1 -
    ``swing``) and x (1 + ``swing``) from run to run, no node below the others.'''
    hist = Jobs({n: [12.5 * (1 - swing if k % 2 == 0 else 1 + swing) for k in range(runs)]
                 for n in nodes}, template=STREAM, var='triad', clock=-100000)
    for _ in range(runs):
        hist._write(tmp_path / 'history', nodes, [])
    return tmp_path / 'history' / 'perflogs'


@pytest.mark.parametrize('swing, first', [(0.025, 2), (0.04, 4)])
def test_a_noisy_figures_suspect_is_measured_in_longer_runs_through_its_checks_knob(
        tmp_path, monkeypatch, swing, first):
    '''StreamOmp declares a length knob (repetitions). Its Triad swings 2.5 or 4% from run to run in
    the history (three runs of seven nodes): with four extra jobs, runs of its own length
    could not decide a 10% deficit, so the suspect n2 (16% below) is measured beside n3 in
    runs made F times as long -- ``-S StreamOmp.length_factor=F`` in the round's job,
    F > 1, said in the log line -- and its deficit confirmed; the other nodes pass.'''
    monkeypatch.setenv('MDXBENCH_STATE_DIR', str(tmp_path / 'state'))
    nodes = [f'n{i}' for i in range(7)]
    history = _stream_history(tmp_path, nodes, swing)
    values = {n: [12.5 + i * 0.01] for i, n in enumerate(nodes)}
    values['n2'] = [10.5] * 5
    values['n3'] += [12.53] * 4
    fake = Jobs(values, template=STREAM, var='triad')
    monkeypatch.setattr(accept.jobs, 'run', fake.run)
    monkeypatch.setattr(accept.jobs, 'run_round', fake.run_round)
    monkeypatch.setattr(accept._suspects, 'now', fake.now)
    plan = jobs.Plan('nscluster', 'nodes', 'nodes', nodes, {}, [], 8)
    said = []
    seq = accept.sequential(0.01, 0.05, 4, [history], system='nscluster', partition='nodes')
    assert seq.history.height == 21 * 4         # 21 runs, four figures each
    out = accept.run(plan, tmp_path / 'run', [], '10:00', [], {}, retests=1, log=said.append,
                     sequential=seq)
    rounds = fake.calls[1:]
    assert rounds, (said, out.verdicts)
    factors = []
    for k, (ran, args) in enumerate(rounds):
        assert ran == ['n2', 'n3'], rounds
        assert len(args) == 2 and args[0] == '-S', args
        m = re.fullmatch(r'StreamOmp\.length_factor=(\d+)', args[1])
        assert m, args
        factors.append(int(m.group(1)))
        assert said[k] == ('mdxbench accept: suspects measured again with n3, in one job: n2 '
                           f'(StreamOmp {factors[-1]}x as long: their noise)')
    # the first round's F, by hand, at a swing of 4%: each node's Triad in ln, history then
    # this run, differs by +0.080, -0.080, +0.041 (n2: -0.134) -- 21 differences, median
    # +0.041, their median absolute deviation 0.039: sigma 1.4826 x 0.039 / sqrt(2) = 4.1%
    # a run; planned at its 95% upper bound (0.37 x 21 = 7.8 degrees of freedom: x 1.73)
    # and paired (x sqrt(2)): 10.0% a pair; a 10% deficit at alpha 0.01, beta 0.05 takes
    # (0.100 / (ln(0.9) / 3.97))^2 = 14.3, so 15 paired runs of its own length: in 4
    # rounds, 4x as long each. At 2.5%: differences +-0.050 and +0.025, their MAD 0.025,
    # sigma 2.6%, 6.4% a pair as planned, 5.8 so 6 paired runs: 2x as long
    assert factors[0] == first and factors == sorted(factors), factors
    v = {x['node']: x for x in out.verdicts}
    assert v['n2']['verdict'] == 'fail', v['n2']
    assert 'deficit of 10% or more confirmed' in v['n2']['reasons'][0]
    assert [v[n]['verdict'] for n in nodes if n != 'n2'] == ['pass'] * 6


def test_a_later_round_is_sized_for_the_rounds_the_budget_has_left(tmp_path, monkeypatch):
    '''The noise of a suspect's pairs, once two of them disagree, sizes its next runs for the
    rounds left of the budget (4 extra jobs, 2 spent), not more. History as above (Triad
    swinging 2.5%: the first rounds 2x as long); n2 measures 10.5 then 12.0 GB/s beside n3's
    12.53: paired differences ln(10.5 / 12.53) = -0.1768 and ln(12.0 / 12.53) = -0.0432,
    both of runs 2x as long: their mean -0.1100, the spread of a pair of runs of its own
    length sqrt(2 x 0.0668^2 x 2 / 1) = 13.35%. A 10% deficit at alpha 0.01, beta 0.05
    then takes 0.1335^2 / (ln(0.9) / 3.97)^2 = 25.3, so 26 paired runs; the two rounds
    carry 4; the 22 missing in the 2 rounds left: 11x as long, capped at 8 (had it counted
    the 6 rounds of budget plus spent: 4x).'''
    monkeypatch.setenv('MDXBENCH_STATE_DIR', str(tmp_path / 'state'))
    nodes = [f'n{i}' for i in range(7)]
    history = _stream_history(tmp_path, nodes, 0.025)
    values = {n: [12.5 + i * 0.01] for i, n in enumerate(nodes)}
    values['n2'] = [10.5, 10.5, 12.0, 10.5, 10.5]
    values['n3'] += [12.53] * 4
    fake = Jobs(values, template=STREAM, var='triad')
    monkeypatch.setattr(accept.jobs, 'run', fake.run)
    monkeypatch.setattr(accept.jobs, 'run_round', fake.run_round)
    monkeypatch.setattr(accept._suspects, 'now', fake.now)
    plan = jobs.Plan('nscluster', 'nodes', 'nodes', nodes, {}, [], 8)
    seq = accept.sequential(0.01, 0.05, 4, [history], system='nscluster', partition='nodes')
    accept.run(plan, tmp_path / 'run', [], '10:00', [], {}, retests=1, log=lambda *a: None,
               sequential=seq)
    factors = [args[1] for _, args in fake.calls[1:]]
    assert factors[:3] == [f'StreamOmp.length_factor={f}' for f in (2, 2, 8)], factors


def test_a_figure_the_history_shows_too_noisy_is_warned_of_before_any_job(
        tmp_path, monkeypatch, capsys):
    '''StreamOmp's Triad alternating 0.8 and 1.2 x 12.5 GB/s from run to run in the history
    (three runs of seven nodes: 14 differences of ln 1.5 = 0.405 either way, median 0, their
    median absolute deviation 0.405: sigma 1.4826 x 0.405 / sqrt(2) = 42.5% a run, 60.1% a
    pair): a 10% deficit would take (0.601 / (ln(0.9) / 3.97))^2 = 513.4, so 514 paired
    runs, a 30% one 44.8, so 45; two extra jobs give a suspect 2 x 8 = 16 runs' worth, and
    16 decide 1 - exp(-3.97 x 0.601 / 4) = 45%. Said on standard error before the first
    job, with the run's minimum effect (the verdicts' 10% when none is given).'''
    monkeypatch.setenv('MDXBENCH_STATE_DIR', str(tmp_path / 'state'))
    nodes = [f'n{i}' for i in range(7)]
    history = _stream_history(tmp_path, nodes, 0.2)
    seq = accept.sequential(0.01, 0.05, 2, [history], system='nscluster', partition='nodes')
    plan = jobs.Plan('nscluster', 'nodes', 'nodes', nodes, {}, [], 8)
    for effect, need in ((None, 514), (0.3, 45)):
        fake, before = Jobs({n: [12.5] for n in nodes}, template=STREAM, var='triad'), []

        def first_job(*a, **k):
            before.append(capsys.readouterr().err)
            return fake.run(*a, **k)

        monkeypatch.setattr(accept.jobs, 'run', first_job)
        out = accept.run(plan, tmp_path / f'run-{effect}', [], '10:00', [],
                         {'min_effect': effect}, retests=1, log=lambda *a: None,
                         sequential=seq)
        assert before[0] == (
            'mdxbench accept: warning: StreamOmp %threads=one-thread triad varies 42.5% a run '
            '(14 repeated-run differences in the history): telling '
            f'{effect or 0.1:.0%} from nothing takes about {need} paired runs, and 2 extra '
            'jobs give a suspect at most 16 (its runs 8x as long): a suspect of it would end '
            'undecided. Run StreamOmp longer (-S StreamOmp.length_factor=F, or its own size), '
            'give more jobs (--max-extra-jobs), or use --min-effect 45% or more\n')
        assert out.passed and len(before) == 1


def _export(tmp_path):
    '''A Parquet export (records.to_parquet) of main-job-1's records three times over: as
    recorded (local:debug), as another partition of local, as another system's.'''
    import polars as pl

    from mdxbench.post.store import records

    df = records.from_perflogs([MAIN])
    df = pl.concat([df, df.with_columns(pl.lit('other').alias('partition')),
                    df.with_columns(pl.lit('mdx2').alias('system'))])
    path = tmp_path / 'history.parquet'
    records.to_parquet(df, path)
    return path


def test_the_suspects_history_from_a_parquet_export_is_the_partitions_acceptance_runs(
        tmp_path):
    '''main-job-1's 33 acceptance records of local:debug, kept of an export that holds them
    three times: for local:debug 33, for all of local 66 (its two partitions), for every
    system 99, for the partition named 'other' whatever the system 33.'''
    path = _export(tmp_path)
    seq = accept.sequential(0.01, 0.05, 2, [MAIN, path], system='local', partition='debug')
    assert seq.history.height == 33
    assert set(seq.history.select('system', 'partition').unique().iter_rows()) == {
        ('local', 'debug')}
    assert accept.sequential(0.01, 0.05, 2, [path], system='local').history.height == 66
    assert accept.sequential(0.01, 0.05, 2, [path]).history.height == 99
    assert accept.sequential(0.01, 0.05, 2, [path], partition='other').history.height == 33


def test_the_suspects_history_from_elasticsearch_is_the_stores_local_copy_of_the_system(
        tmp_path, monkeypatch, capsys):
    '''--history-es: the store's local copy of Elasticsearch's records of the system
    (source.files, as every reader of the whole history takes it; here an export stands for
    that copy), what it could not read said on standard error.'''
    path, asked = _export(tmp_path), []

    def files(paths, from_es, parquet, system=None):
        asked.append((paths, from_es, parquet, system))
        return [str(path)], ['history: index mdxbench-local-2026.11: unreachable']

    monkeypatch.setattr(accept.source, 'files', files)
    seq = accept.sequential(0.01, 0.05, 2, (), True, system='local', partition='debug')
    assert asked == [([], True, None, 'local')]
    assert seq.history.height == 33
    assert capsys.readouterr().err == 'history: index mdxbench-local-2026.11: unreachable\n'


def test_a_node_whose_run_left_no_record_of_a_check_the_others_ran_fails_on_it(tmp_path):
    '''One acceptance session: every node ran the same checks. Six nodes left HpccHpl's
    record and five StreamOmp's (main-job-1's real lines, node and figure changed): n5,
    whose StreamOmp record is missing, fails on it -- a record never goes missing unnoticed
    -- and the five others pass.'''
    nodes = [f'n{i}' for i in range(6)]
    hpl = Jobs({n: [101.0 + i * 0.1] for i, n in enumerate(nodes)})
    hpl._write(tmp_path, nodes, [])
    stream = Jobs({n: [30.0 + i * 0.1] for i, n in enumerate(nodes[:5])},
                  template=MAIN / 'local' / 'debug' / 'StreamOmp.log', var='triad')
    stream._write(tmp_path, nodes[:5], [])
    plan = jobs.Plan('local', 'debug', 'debug', nodes, {}, [], 8)
    v = {x['node']: x for x in accept.judge(plan, tmp_path, {}, {})}
    assert v['n5']['verdict'] == 'fail'
    assert v['n5']['reasons'] == [
        'StreamOmp %threads=all-cores: no record from this node (recorded on 5 other nodes)']
    assert [v[n]['verdict'] for n in nodes[:5]] == ['pass'] * 5


def test_a_rounds_job_puts_the_buddy_between_the_suspects_and_its_line_names_them():
    assert accept.round_nodes(['a'], 'm') == ['a', 'm']
    assert accept.round_nodes(['a', 'b'], 'm') == ['a', 'm', 'b']
    assert accept.round_nodes(['a', 'b', 'c'], 'm') == ['a', 'b', 'm', 'c']
    assert accept.round_nodes(['a', 'b', 'c', 'd'], 'm') == ['a', 'b', 'm', 'c', 'd']
    assert accept.round_line('m', ['a', 'b'], {'StreamOmp': 1, 'FioTarget': 1}) == (
        'mdxbench accept: suspects measured again with m, in one job: a, b')
    assert accept.round_line('m', ['a', 'b'], {'StreamOmp': 4, 'FioTarget': 2,
                                               'HpccHpl': 1}) == (
        'mdxbench accept: suspects measured again with m, in one job: a, b '
        '(FioTarget 2x as long, StreamOmp 4x as long: their noise)')
    # a pair figure's suspects: each pair run, subject + partner
    assert accept.round_line('m', ['a', 'b'], {}, [('a', 'm'), ('b', 'm'), ('m', 'k')]) == (
        'mdxbench accept: suspects measured again with m, in one job: a, b; pair runs a+m, '
        'b+m, m+k')


def test_only_checks_made_longer_than_their_own_length_are_given_a_length_factor():
    assert accept.length_args(None) == [] and accept.length_args({'StreamOmp': 1}) == []
    assert accept.length_args({'StreamOmp': 3, 'HpccHpl': 1, 'FioTarget': 2}) == [
        '-S', 'FioTarget.length_factor=2', '-S', 'StreamOmp.length_factor=3']


def _hpl_and_stream(hpl_values, stream_values):
    '''jobs.run and run_round standing for a suite of two checks: HpccHpl on every node
    (``hpl_values``), StreamOmp (all cores, its Triad ``stream_values``) on the nodes
    given -- a node without it left no record of a check the others ran.'''
    hpl = Jobs(hpl_values)
    stream = Jobs(stream_values, template=MAIN / 'local' / 'debug' / 'StreamOmp.log',
                  var='triad')
    rounds = []

    def run(p, out, reframe_args=(), time_limit='30:00', files=None, log=print,
            progress=None, what='nodes', pairs=None):
        assert pairs is None, 'no pair check here: no pair run'
        stream._write(out, [n for n in p.testable if n in stream_values], reframe_args)
        return hpl._write(out, p.testable, reframe_args)

    def run_round(p, nodes, out, reframe_args=(), time_limit='30:00', files=None, log=print,
                  name='round', progress=None, pairs=()):
        assert isinstance(p, jobs.Plan), p
        assert not pairs, 'no pair check here: no pair run'
        rounds.append(list(nodes))
        stream._write(out, [n for n in nodes if n in stream_values], reframe_args)
        return dict(hpl._write(out, nodes, reframe_args), jobs=1, max_in_queue=1)

    return run, run_round, rounds, hpl.now


def test_a_suspect_with_no_healthy_node_to_pair_with_is_undecided_and_says_so(
        tmp_path, monkeypatch):
    '''n0 16% below the nodes' median on HPL (85 against 101.0 and 101.1 GFLOP/s), its
    StreamOmp recorded; n1 and n2 left no StreamOmp record and fail on it. The one node
    that passed is the suspect: no healthy node to pair it with, no round runs, and it
    ends undecided, saying why; every verdict explains itself.'''
    run, run_round, rounds, now = _hpl_and_stream(
        {'n0': [85.0], 'n1': [101.0], 'n2': [101.1]}, {'n0': [30.0]})
    monkeypatch.setattr(accept.jobs, 'run', run)
    monkeypatch.setattr(accept.jobs, 'run_round', run_round)
    monkeypatch.setattr(accept._suspects, 'now', now)
    plan = jobs.Plan('local', 'debug', 'debug', ['n0', 'n1', 'n2'], {}, [], 8)
    out = accept.run(plan, tmp_path, [], '10:00', [], {}, retests=0, log=lambda *a: None,
                     sequential=accept.Sequential(max_extra_jobs=4))
    v = {x['node']: x for x in out.verdicts}
    assert rounds == []
    assert v['n0']['verdict'] == 'undecided', v['n0']
    assert v['n0']['why'] == (
        "undecided: HpccHpl gflops=85 GFLOPS: suspect (16% below the nodes' median); "
        "not measured again: no healthy node to pair with")
    for n in ('n1', 'n2'):
        assert v[n]['why'] == ('fail: StreamOmp %threads=all-cores: no record from this '
                               'node (recorded on 1 other node)'), v[n]
    # the deficit's interval from the figure's noise: the nodes' spread, one run each
    [m] = [m for m in v['n0']['measurements'] if m['perf_var'] == 'gflops']
    assert m['noise']['source'] == 'fleet spread' and m['noise']['n'] == 3
    assert m['interval'][0] < 1 - 85 / 101.0 < m['interval'][1], m['interval']


def test_the_suspects_buddy_is_a_node_that_passed_even_where_a_failed_one_is_nearer(
        tmp_path, monkeypatch):
    '''HPL: n0 85 (a suspect), n2 100.7, n1 101.0 (the nodes' median), n3 101.2, n4 101.4;
    n1 left no StreamOmp record and fails on it. The buddy is the passed node nearest the
    median, n3 (ln(101.2 / 101.0) = 0.0020 from it; n2 0.0030), never n1 nor the suspect.'''
    hpl = {'n0': [85.0] * 4, 'n1': [101.0], 'n2': [100.7], 'n3': [101.2] * 4, 'n4': [101.4]}
    stream = {n: [30.0 + i * 0.1] * 4 for i, n in enumerate(hpl) if n != 'n1'}
    run, run_round, rounds, now = _hpl_and_stream(hpl, stream)
    monkeypatch.setattr(accept.jobs, 'run', run)
    monkeypatch.setattr(accept.jobs, 'run_round', run_round)
    monkeypatch.setattr(accept._suspects, 'now', now)
    plan = jobs.Plan('local', 'debug', 'debug', list(hpl), {}, [], 8)
    out = accept.run(plan, tmp_path, [], '10:00', [], {}, retests=0, log=lambda *a: None,
                     sequential=accept.Sequential(max_extra_jobs=3))
    v = {x['node']: x for x in out.verdicts}
    assert rounds and all(r == ['n0', 'n3'] for r in rounds), rounds
    assert v['n1']['verdict'] == 'fail'
    assert ("HpccHpl gflops=85 GFLOPS: suspect (16% below the nodes' median); paired with "
            "n3: ") in v['n0']['why'], v['n0']['why']


@pytest.mark.parametrize('budget', [1, 2, 3])
def test_a_suspect_left_undecided_takes_the_whole_budget_one_job_a_round(
        tmp_path, monkeypatch, budget):
    '''n2 at 85 GFLOP/s first (16% below), then 7, 3 and 6% below n3 (which moves by 1 or
    2% a run): about half the minimum effect, neither confirmed nor excluded. Every extra job of the budget is
    one round; then n2 is undecided, saying the bound was reached (and, under the two
    paired rounds anything is decided on, what would do). The noise: repeated runs, n3's
    ``budget`` differences and n2's ``budget`` - 1 -- its first run, the one it was chosen
    for, left out.'''
    values = {f'n{i}': [101.0 + i * 0.1] for i in range(7)}
    values['n3'] = [101.3, 100.0, 102.0, 101.0]
    values['n2'] = [85.0, 93.0, 98.94, 94.94]     # n3's x 0.93, 0.97, 0.94
    fake = Jobs(values)
    monkeypatch.setattr(accept.jobs, 'run', fake.run)
    monkeypatch.setattr(accept.jobs, 'run_round', fake.run_round)
    monkeypatch.setattr(accept._suspects, 'now', fake.now)
    plan = jobs.Plan('local', 'debug', 'debug', list(values), {}, [], 8)
    out = accept.run(plan, tmp_path, [], '10:00', [], {}, retests=1, log=lambda *a: None,
                     sequential=accept.Sequential(max_extra_jobs=budget))
    assert [c[0] for c in fake.calls[1:]] == [['n2', 'n3']] * budget
    v = {x['node']: x for x in out.verdicts}
    assert v['n2']['verdict'] == 'undecided', v['n2']['why']
    bound = f'the bound of {budget} extra jobs was reached'
    if budget < 2:
        bound += (' (fewer than the 2 paired rounds, one job each, anything is decided on: '
                  '--max-extra-jobs 2 or more)')
    assert f'; {bound}; to decide: about ' in v['n2']['why'], v['n2']['why']
    assert out.jobs == 7 + budget
    if budget > 1:
        nz = out.noise['HpccHpl gflops']
        assert (nz.source, nz.n) == ('repeated runs', 2 * budget - 1), nz


def test_a_partition_of_another_system_with_the_same_name_is_not_judged_with_it(tmp_path):
    '''The run's directory holds, beside local:debug's records, those of a system 'other'
    whose partition is named debug too: HpccHpl's lines of node vm as a check OtherHpl at a
    third of the GFLOP/s. vm is judged on local:debug's 33 records alone (31 figures).'''
    out = _run_dir(tmp_path)
    lines = (out / 'perflogs' / 'local' / 'debug' / 'HpccHpl.log').read_text().splitlines()
    other = out / 'perflogs' / 'other' / 'debug' / 'HpccHpl.log'
    other.parent.mkdir(parents=True)
    rows = [lines[0]]
    for line in lines[1:]:
        f = line.split('|')
        f[2], f[5], f[6] = 'other', 'OtherHpl', 'OtherHpl'
        at = lines[0].split('|').index('gflops_value')
        f[at] = repr(float(f[at]) / 3)
        rows.append('|'.join(f))
    other.write_text('\n'.join(rows) + '\n')
    plan = jobs.Plan('local', 'debug', 'debug', ['vm'], {}, [], 1)
    [v] = accept.judge(plan, out, {}, {})
    assert v['verdict'] == 'pass' and len(v['measurements']) == 31
    assert accept.session_records(plan, out).height == 33
    assert accept.session_records(jobs.Plan('other', 'debug', 'debug', ['vm'], {}, [], 1),
                                  out).height == 4     # two runs of two figures


def test_the_runs_outlier_options_are_the_verdicts_and_an_outlier_fails_without_suspects(
        tmp_path):
    '''Six nodes at 101.0 to 101.5 GFLOP/s and n5 at 94.0, 7% below their median: an
    outlier by its z score; short of the 10% the verdicts take by default, a failure at a
    minimum effect of 5%; without the suspects' test (judge's default), a failure now.'''
    values = {f'n{i}': [101.0 + i * 0.1] for i in range(6)}
    values['n6'] = [94.0]
    Jobs(values)._write(tmp_path, list(values), [])
    plan = jobs.Plan('local', 'debug', 'debug', list(values), {}, [], 8)
    assert {v['node']: v['verdict'] for v in accept.judge(plan, tmp_path, {}, {})}['n6'] == 'pass'
    v = {v['node']: v for v in accept.judge(plan, tmp_path, {}, {'min_effect': 0.05})}
    assert v['n6']['verdict'] == 'fail', v['n6']
    assert [v[n]['verdict'] for n in values if n != 'n6'] == ['pass'] * 6
    paired = accept.judge(plan, tmp_path, {}, {'min_effect': 0.05}, paired=True)
    assert {v['node']: v['verdict'] for v in paired}['n6'] == 'pass'


def test_the_noise_warning_counts_the_default_budget_of_half_the_nodes(tmp_path, capsys):
    '''The history of the warning above, no --max-extra-jobs: seven nodes give 3 extra jobs
    (half of them, 2 at least), so at most 3 x 8 = 24 runs' worth, which decide
    1 - exp(-3.97 x 0.601 / sqrt(24)) = 38.5%, so 39%.'''
    nodes = [f'n{i}' for i in range(7)]
    history = _stream_history(tmp_path, nodes, 0.2)
    seq = accept.sequential(0.01, 0.05, None, [history], system='nscluster',
                            partition='nodes')
    plan = jobs.Plan('nscluster', 'nodes', 'nodes', nodes, {}, [], 8)
    [line] = accept.noise_warnings(plan, 0.1, seq)
    assert ('takes about 514 paired runs, and 3 extra jobs give a suspect at most 24 (its '
            'runs 8x as long)') in line, line
    assert line.endswith('or use --min-effect 39% or more'), line


def test_a_retest_leaves_an_outlier_short_of_gross_to_the_suspects_test(tmp_path, monkeypatch):
    '''Seven nodes; n1 at 40 GFLOP/s (gross) and without StreamOmp's record fails on both,
    is measured again and fails on both again (the two reasons of its first run kept,
    joined); n2, 16% below the median, is no failure at the retest's verdicts either (the
    suspects' test decides it, beside n3 at the median): confirmed in rounds. The progress
    callback goes to every job.'''
    hpl = {f'n{i}': [101.0 + i * 0.1] for i in range(7)}
    hpl['n1'] = [40.0, 40.5]
    hpl['n2'] = [85.0, 85.1, 84.9, 85.2, 85.0]
    hpl['n3'] = [101.3, 101.25, 101.35, 101.3, 101.3]
    stream = {n: [30.0 + i * 0.1] * 6 for i, n in enumerate(hpl) if n != 'n1'}
    given = []

    def recorded(fake):
        def call(*a, progress=None, **k):
            given.append(progress)
            return fake(*a, progress=progress, **k)
        return call

    run, run_round, rounds, now = _hpl_and_stream(hpl, stream)
    monkeypatch.setattr(accept.jobs, 'run', recorded(run))
    monkeypatch.setattr(accept.jobs, 'run_round', recorded(run_round))
    monkeypatch.setattr(accept._suspects, 'now', now)
    plan = jobs.Plan('local', 'debug', 'debug', list(hpl), {}, [], 8)

    def progress(*a):
        pass

    out = accept.run(plan, tmp_path, [], '10:00', [], {}, retests=1, log=lambda *a: None,
                     sequential=accept.Sequential(max_extra_jobs=4), progress=progress)
    v = {x['node']: x for x in out.verdicts}
    assert v['n1']['verdict'] == 'fail'
    assert v['n1']['earlier'] == [
        "HpccHpl gflops=40 GFLOPS: outlier (nodes' median 101.3); StreamOmp "
        "%threads=all-cores: no record from this node (recorded on 6 other nodes)"], v['n1']
    assert not v['n2'].get('unconfirmed'), v['n2']
    assert v['n2']['verdict'] == 'fail' and v['n2']['reasons'][0].startswith(
        "HpccHpl gflops=85 GFLOPS: suspect (16% below the nodes' median); paired with n3: ")
    assert rounds and all(r == ['n2', 'n3'] for r in rounds)
    assert len(given) == 2 + len(rounds) and all(g is progress for g in given), given


@pytest.mark.parametrize('beta, suspect', [(0.05, False), (0.2, True)])
def test_a_history_suspect_is_taken_where_its_level_is_known_well_enough_at_the_error_rates(
        tmp_path, monkeypatch, beta, suspect):
    '''Three earlier runs of seven nodes, their Triad swinging 1.8% from run to run, n2's
    13.6% above the others' (its level relative to the fleet: ln 1.136 = +0.1275); now all
    at 12.5 GB/s, so n2 is 12% below its own earlier level and at the nodes' median. The
    noise, by hand: 21 differences in ln, 7 of +0.0360, 7 of -0.0360, 6 of +0.0182 (the
    run now), n2's -0.1093; median +0.0182, median absolute deviation 0.0178: sigma 1.4826
    x 0.0178 / sqrt(2) = 1.87% a run. A level of 3 runs beside another of 3 is known to
    0.0187 x sqrt(2 / 3) = 1.53%; at alpha 0.01, beta 0.05 a 10% deficit needs it within
    ln(0.9) / (2 x 3.97) = 1.33% -- no suspect; at beta 0.2, within 1.66% (z 3.17) -- n2 is
    a suspect, measured beside n0 and confirmed.'''
    monkeypatch.setenv('MDXBENCH_STATE_DIR', str(tmp_path / 'state'))
    nodes = [f'n{i}' for i in range(7)]
    s = 0.018
    hist = Jobs({n: [12.5 * (1.136 if n == 'n2' else 1) * (1 - s if k % 2 == 0 else 1 + s)
                     for k in range(3)] for n in nodes}, template=STREAM, var='triad',
                clock=-100000)
    for _ in range(3):
        hist._write(tmp_path / 'history', nodes, [])
    fake = Jobs({n: [12.5] * 5 for n in nodes}, template=STREAM, var='triad')
    monkeypatch.setattr(accept.jobs, 'run', fake.run)
    monkeypatch.setattr(accept.jobs, 'run_round', fake.run_round)
    monkeypatch.setattr(accept._suspects, 'now', fake.now)
    plan = jobs.Plan('nscluster', 'nodes', 'nodes', nodes, {}, [], 8)
    seq = accept.sequential(0.01, beta, 4, [tmp_path / 'history' / 'perflogs'],
                            system='nscluster', partition='nodes')
    out = accept.run(plan, tmp_path / 'run', [], '10:00', [], {}, retests=1,
                     log=lambda *a: None, sequential=seq)
    v = {x['node']: x for x in out.verdicts}
    if not suspect:
        assert fake.calls[1:] == [] and v['n2']['verdict'] == 'pass', v['n2']
        return
    assert fake.calls[1][0] == ['n2', 'n0'], fake.calls
    assert v['n2']['verdict'] == 'fail', v['n2']
    assert v['n2']['reasons'][0].startswith(
        'StreamOmp %threads=one-thread triad=12.5 GB/s: suspect (12% below its own earlier '
        "level, the median of 3 run(s), the pair's known to \u00b11.5%); paired with n0: "), v['n2']


def _given_rec(check, node, meta):
    return {'time': '2026-11-20T00:00:00+00:00', 'system': 'nscluster', 'partition': 'nodes',
            'environ': 'spack', 'check': check, 'perf_var': 'triad', 'value': 10.0,
            'unit': 'GB/s', 'better': 'higher', 'ref': None, 'lower': None, 'upper': None,
            'result': 'pass', 'jobid': '1', 'nodes': node, 'tags': 'acceptance',
            'params': '{}', 'meta': json.dumps(meta, sort_keys=True)}


def test_the_history_judges_a_run_by_runs_given_the_same_variables():
    '''This session ran BabelStream with num_times 20 (-S): the history's runs of it with
    the default 100 are another measurement and are left out, said; its runs with 20, the
    runs that recorded no variables, a lengthened run (its own series) and another
    check's runs are kept.'''
    import polars as pl

    from mdxbench.post.store import records

    twenty = {'variables': {'llc_factor': 4, 'num_times': 20}}
    hundred = {'variables': {'llc_factor': 4, 'num_times': 100}}
    session = records.frame([_given_rec('BabelStreamOmp', 'n1', twenty),
                             _given_rec('BabelStreamOmp', 'n2', twenty)])
    history = records.frame([
        _given_rec('BabelStreamOmp', 'n1', hundred),                    # left out
        _given_rec('BabelStreamOmp', 'n2', hundred),                    # left out
        _given_rec('BabelStreamOmp', 'n1', twenty),
        _given_rec('BabelStreamOmp', 'n3', {}),                         # said nothing
        _given_rec('BabelStreamOmp', 'n1', dict(hundred, length={'factor': 4})),
        _given_rec('HpccStream', 'n1', {'variables': {'llc_factor': 2}})])
    said = []
    kept = accept.like_with_like(history, session, said.append)
    assert kept['meta'].to_list() == history['meta'].to_list()[2:]
    assert said == ['mdxbench accept: history: 2 record(s) of BabelStreamOmp from runs given '
                    "other variables than this session's left out (not the same measurement)"]
    # the same variables throughout: nothing left out, nothing said
    said.clear()
    same = history.filter(pl.col('meta').str.contains('"num_times": 20'))
    assert accept.like_with_like(same, session, said.append).height == same.height
    assert said == []
    # variables written in another key order are the same variables; a record with no meta
    # at all said nothing; a lengthened run of this session given 100 is its own series and
    # does not make the history's runs with 100 this session's measurement
    unsorted = dict(_given_rec('BabelStreamOmp', 'n1', twenty),
                    meta='{"variables": {"num_times": 20, "llc_factor": 4}}')
    bare = dict(_given_rec('BabelStreamOmp', 'n2', {}), meta=None)
    longer = records.frame([_given_rec('BabelStreamOmp', 'n1', twenty),
                            _given_rec('BabelStreamOmp', 'n2', dict(hundred, length={'factor': 4}))])
    more = pl.concat([history, records.frame([unsorted, bare])], how='vertical_relaxed')
    said.clear()
    kept = accept.like_with_like(more, longer, said.append)
    assert kept['meta'].to_list() == more['meta'].to_list()[2:]
    assert said[0].startswith('mdxbench accept: history: 2 record(s) of BabelStreamOmp')


def test_a_rounds_pair_runs_are_those_of_suspects_still_undecided_on_a_pair_figure():
    '''A suspect whose pair figure is decided gets no more pair run (its one-node figures
    may still need rounds); no second healthy node: no pair run, the buddy would have no
    reading of its own to pair with.'''
    import types

    pair, hpl = 'NcclTests %scope=nodes busbw', 'HpccHpl gflops'
    decided = types.SimpleNamespace(state='excluded')
    cases = {'n2': [{'key': pair, 'decision': None}, {'key': hpl, 'decision': None}],
             'n3': [{'key': pair, 'decision': decided}, {'key': hpl, 'decision': None}],
             'n4': [{'key': hpl, 'decision': None}]}
    assert accept.round_pairs(['n2', 'n3', 'n4'], cases, 'n1', 'n5', {pair}) == \
        [('n2', 'n1'), ('n1', 'n5')]
    assert accept.round_pairs(['n2', 'n3', 'n4'], cases, 'n1', None, {pair}) == []
    assert accept.round_pairs(['n3', 'n4'], cases, 'n1', 'n5', {pair}) == []
