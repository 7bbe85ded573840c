'''Node acceptance: the `acceptance`-tagged checks run on every node of a partition
(ReFrame's --distribute; `reframe --mode acceptance` sets it), judged per node.

A node passes when every acceptance measurement on it passed its reference and none is an
outlier among the nodes (beyond ``z`` robust standard deviations, 1.4826 x MAD, on the
worse side of the median of all nodes, and at least ``min_effect`` of that median; or
``gross`` of that median worse, whatever the spread), and none of its GPUs is more than
``PEER_GPU_EFFECT`` worse than the other GPUs of the same node in the same figure (no other
node needed). Nodes of the partition with no
measurement -- or that Slurm reports drained, down or failed -- are listed as not tested,
never as passed.
'''
import json

import polars as pl

from mdxbench.post.store.records import has_tag, worse_sign
from mdxbench.post.analysis.stats import SIGMA_PER_MAD, median_mad

#: an outlier is at least this much worse than the nodes' median (fraction)
MIN_EFFECT = 0.10

#: this much worse than the nodes' median (fraction) is an outlier whatever their spread
GROSS = 0.5

#: a GPU this much worse (fraction) than the median of the other GPUs of its node, in the
#: same figure of the same run, fails its node: the GPUs of one node are alike, so a node
#: alone -- the first of a kind, or a fleet of fewer than ``min_nodes`` -- is judged too
PEER_GPU_EFFECT = 0.25

#: the GPUs a node needs for that comparison (with two, which one is slow is not known)
PEER_GPU_MIN = 3

#: a per-GPU figure (mdxbench.gpu.per_gpu_var): gpu<i>_<name>
_PER_GPU = r'^gpu(\d+)_(.+)$'

#: the parameter ReFrame's --distribute adds to pin a case to one node
NID_PARAM = r' %\$nid=\S+'

BAD_STATES = ('drain', 'drained', 'draining', 'down', 'fail', 'failing', 'maint', 'reserved',
              'not_responding', 'future')


#: what a node's latest run is the latest of (the check without the per-node parameter)
LATEST = ['nodes', 'check', 'perf_var', 'unit', 'better']


def acceptance_records(df):
    '''The acceptance records of one node each, the check named without the per-node
    parameter ReFrame's --distribute adds (the same case on every node). A record of two
    nodes is one node's where ``mdxbench accept`` ran it *for* that node (``meta.
    pair_subject``: a pair check, nccl-tests across nodes, run with a partner) -- it is
    that node's reading, as a one-node record is; every other record of several nodes
    (the daily job's) is nobody's.'''
    # (a record without nodes is dropped too: Polars' filter keeps only where true)
    subject = pl.col('meta').str.json_path_match('$.pair_subject')
    nodes = pl.col('nodes').str.split(',')
    return df.filter(has_tag('acceptance') & (pl.col('nodes') != '')).with_columns(
        pl.when(~pl.col('nodes').str.contains(',')).then(pl.col('nodes'))
        .when((nodes.list.len() == 2) & nodes.list.contains(subject)).then(subject)
        .otherwise(None).alias('nodes')) \
        .filter(pl.col('nodes').is_not_null()) \
        .with_columns(pl.col('check').str.replace_all(NID_PARAM, ''))


def judge(df, node_states=None, z=3.0, min_nodes=3, failures=None, same_checks=False,
          min_effect=MIN_EFFECT, gross=GROSS, paired=False):
    '''Per-node verdicts from acceptance records (one node per record's nodelist).

    ``failures``: {node: [(key, reason)]} known from elsewhere (a check that failed before it
    measured, a job that left no report), each failing its node. ``min_effect``: an
    outlier is also at least this fraction of the median worse (nodes that agree within a
    percent make a tiny MAD: 4% below them is within what an operator accepts). ``gross``:
    this fraction of the median worse is an outlier whatever the spread -- with a few
    nodes, two bad ones and a noisy metric inflate the MAD until a node at 1% of the
    median is within 3 of it (seen: fio 0.021 against a median of 5.7 GB/s, z 2.4).
    ``same_checks``: every node ran the same checks (one ``mdxbench accept`` session), so a check recorded on
    other nodes but not on this one fails it -- no record goes missing unnoticed.
    ``paired``: an outlier that is not ``gross`` worse fails nobody here -- it is left to
    the noise-aware paired test of the suspects (``mdxbench accept``; its deficit is at
    least ``min_effect``), since the spread between the nodes of one round says nothing of
    how much one node's own runs vary; the measurement keeps ``outlier`` and ``gross``.'''
    node_states = node_states or {}
    failures = failures or {}
    min_effect = MIN_EFFECT if min_effect is None else min_effect
    gross = GROSS if gross is None else gross
    acc = acceptance_records(df)
    # the latest run of each (node, check, perf var); a run that failed before it measured
    # (no value: sanity, e.g. a conformance mismatch, or the job) fails the node with the
    # reason the check gave (meta.failure)
    acc = acc.sort('time').group_by(LATEST).agg(
        pl.col('value').last(), pl.col('result').last(), pl.col('meta').last())
    # (a record without a value is a run that failed before its performance was judged)
    failed = acc.filter(pl.col('value').is_null()) \
        .unique(['nodes', 'check']).sort(['nodes', 'check'])
    acc = acc.filter(pl.col('value').is_not_null())
    # outlier test against the other nodes' values of the same measurement
    # (the same case on every node: --distribute's per-node parameter is already gone,
    # the check's own parameters -- fio's workload, say -- stay apart)
    stats = acc.group_by(['check', 'perf_var']).agg(*median_mad('value'), pl.len().alias('n'))
    acc = acc.join(stats, on=['check', 'perf_var'])
    sigma = SIGMA_PER_MAD * pl.col('mad')
    # worse side as the check declared it; no declared direction: never an outlier
    worse = worse_sign() * (pl.col('value') - pl.col('median'))
    is_gross = (worse > gross * pl.col('median').abs())
    acc = acc.with_columns(
        ((pl.col('n') >= min_nodes) & (
            ((sigma > 0) & (worse / sigma > z) & (worse > min_effect * pl.col('median').abs()))
            | is_gross)).fill_null(False).alias('outlier'),
        ((pl.col('n') >= min_nodes) & is_gross).fill_null(False).alias('gross'))

    verdicts = {}

    def verdict(node):
        return verdicts.setdefault(node, {'node': node, 'verdict': 'pass', 'measurements': [],
                                          'reasons': [], 'keys': []})

    def fail(v, key, text):
        # key: what failed (check and perf var, or check, or 'job'), to tell whether a
        # node measured again failed on the same thing
        v['reasons'].append(text)
        v['keys'].append(key)

    # each node's reasons worst first (the drain reason Slurm keeps is short): by how far
    # the value is from the nodes' median on the worse side, then by name
    acc = acc.with_columns((worse / pl.col('median').abs()).fill_null(0.0).fill_nan(0.0)
                           .alias('severity')).sort(['severity', 'check', 'perf_var'],
                                                    descending=[True, False, False])
    for r in acc.iter_rows(named=True):
        v = verdict(r['nodes'])
        v['measurements'].append({'check': r['check'], 'perf_var': r['perf_var'],
                                  'value': r['value'], 'unit': r['unit'], 'result': r['result'],
                                  'better': r['better'],
                                  'nodes_median': r['median'], 'outlier': r['outlier'],
                                  'gross': r['gross'], 'deficit': r['severity']})
        key = f"{r['check']} {r['perf_var']}"
        pair = worst_pair(r['meta'], r['perf_var']) + with_partner(r['meta'])
        if r['result'] not in ('pass', 'xfail'):
            fail(v, key, f"{r['check']} {r['perf_var']}={r['value']:.4g} {r['unit']}{pair}: "
                 f"{r['result']} against the reference")
        if r['outlier'] and (r['gross'] or not paired):
            fail(v, key, f"{r['check']} {r['perf_var']}={r['value']:.4g} {r['unit']}{pair}: "
                 f"outlier (nodes' median {r['median']:.4g})")

    for r in peer_gpu_outliers(acc).iter_rows(named=True):
        v, key = verdict(r['nodes']), f"{r['check']} {r['perf_var']}"
        if key in v['keys']:
            continue            # failed already, against the reference or the other nodes
        fail(v, key,
             f"{r['check']} {r['perf_var']}={r['value']:.4g} {r['unit']}: GPU {r['gpu']} "
             f"{r['peer_deficit']:.0%} worse than the node's other {r['peers']} GPUs "
             f"(their median {r['peer_median']:.4g})")

    for r in failed.iter_rows(named=True):
        why = json.loads(r['meta'] or '{}').get('failure') or 'no reason recorded'
        fail(verdict(r['nodes']), r['check'], f"{r['check']}: failed: {why}")

    for node, found in failures.items():
        for key, text in found:
            fail(verdict(node), key, text)

    if same_checks:
        recorded = acc.select('nodes', 'check').vstack(failed.select('nodes', 'check'))
        all_checks = set(recorded['check'])
        # (a node with no record at all is not here: its job's failure, or untested, says why)
        for node in sorted(set(recorded['nodes'])):
            v, have = verdicts[node], set(recorded.filter(pl.col('nodes') == node)['check'])
            for check in sorted(all_checks - have):
                if check not in v['keys']:         # its failure already says why
                    n = recorded.filter(pl.col('check') == check)['nodes'].n_unique()
                    fail(v, check, f'{check}: no record from this node (recorded on '
                         f'{n} other node{"s" if n > 1 else ""})')

    for v in verdicts.values():
        if v['reasons']:
            v['verdict'] = 'fail'

    for node, state in node_states.items():
        # (sinfo's flags -- '*' not responding, '~' powered off, ... -- follow the state)
        st = state.lower()
        if node not in verdicts or st.startswith(BAD_STATES):
            verdicts[node] = {'node': node, 'verdict': 'not tested', 'measurements': [],
                              'reasons': [f'Slurm state {state}' if st.startswith(BAD_STATES)
                                          else f'no acceptance measurement (state {state})'],
                              'keys': []}

    return [verdicts[n] for n in sorted(verdicts)]


def with_partner(meta):
    '''`` (with <node>)`` where the record is a pair check's run for its node with a
    partner (``meta.pair_partner``), else empty: which other node the figure rests on.'''
    try:
        partner = json.loads(meta).get('pair_partner') if meta else None
    except (ValueError, AttributeError):
        partner = None
    return f' (with {partner})' if partner else ''


def worst_pair(meta, perf_var):
    '''`` (GPUs i-j)`` where the record says which pair of GPUs a pair figure is the worst
    of (``meta.worst_pair``, the GPU checks), else empty.'''
    if not meta:
        return ''
    try:
        pair = (json.loads(meta).get('worst_pair') or {}).get(perf_var)
    except (ValueError, AttributeError):
        return ''
    return f' (GPUs {pair})' if pair else ''


def peer_gpu_outliers(acc, effect=None, min_gpus=None):
    '''The per-GPU figures (``gpu<i>_<name>``) of ``acc`` (one row per node, check and perf
    var) more than ``effect`` worse, on the side the check declares worse, than the median
    of the same figure on the other GPUs of the same node and check, where the node has at
    least ``min_gpus`` GPUs with it: columns ``gpu``, ``peers``, ``peer_median``,
    ``peer_deficit`` added. Needs no other node.'''
    effect = PEER_GPU_EFFECT if effect is None else effect
    min_gpus = PEER_GPU_MIN if min_gpus is None else min_gpus
    g = acc.with_columns(pl.col('perf_var').str.extract(_PER_GPU).alias('gpu'),
                         pl.col('perf_var').str.extract(_PER_GPU, 2).alias('figure')) \
        .filter(pl.col('gpu').is_not_null())
    if g.is_empty():
        return g
    peers = g.select('nodes', 'check', 'figure', pl.col('gpu').alias('other'),
                     pl.col('value').alias('other_value'))
    g = g.join(peers, on=['nodes', 'check', 'figure']).filter(pl.col('gpu') != pl.col('other')) \
        .group_by(['nodes', 'check', 'perf_var', 'unit', 'better', 'value', 'gpu']).agg(
            pl.col('other_value').median().alias('peer_median'),
            pl.len().alias('peers'))
    worse = worse_sign() * (pl.col('value') - pl.col('peer_median'))
    return g.with_columns((worse / pl.col('peer_median').abs()).alias('peer_deficit')) \
        .filter((pl.col('peers') + 1 >= min_gpus) & (pl.col('peer_deficit') > effect)) \
        .sort(['nodes', 'check', 'perf_var'])


def confirm(verdicts, previous):
    '''Verdicts of nodes measured again: a failure counts only when the same thing (check
    and perf var, check, or job) failed in the previous measurement too; a node left with
    no confirmed failure passes, its unrepeated reasons kept as ``unconfirmed``.
    ``previous``: {node: keys of its previous measurement}.'''
    for v in verdicts:
        if v['node'] not in previous or v['verdict'] != 'fail':
            continue
        pairs = list(zip(v['keys'], v['reasons']))
        repeated = [(k, r) for k, r in pairs if k in previous[v['node']]]
        v['unconfirmed'] = [r for k, r in pairs if k not in previous[v['node']]]
        v['keys'], v['reasons'] = [k for k, _ in repeated], [r for _, r in repeated]
        if not repeated:
            v['verdict'] = 'pass'
    return verdicts


def to_json(verdicts, extra=None):
    return json.dumps(dict({'nodes': verdicts,
                            'summary': {k: sum(v['verdict'] == k for v in verdicts)
                                        for k in ('pass', 'fail', 'undecided', 'not tested')}},
                           **(extra or {})), indent=1)


def outcome(verdicts):
    '''The run's outcome in one word: 'fail' where a node failed, else 'undecided' where a
    node was left undecided, else 'pass' (every node passed) or 'untested' (none did).'''
    words = {v['verdict'] for v in verdicts}
    if 'fail' in words:
        return 'fail'
    if 'undecided' in words:
        return 'undecided'
    return 'pass' if all_pass(verdicts) else 'untested'


def undecided(verdicts):
    '''The nodes the suspects' test could not decide within its budget.'''
    return [v['node'] for v in verdicts if v['verdict'] == 'undecided']


def all_pass(verdicts):
    '''True when there are verdicts and every node passed.'''
    return bool(verdicts) and all(v['verdict'] == 'pass' for v in verdicts)
