'''The history read a row group at a time (issue 45): ``regress``, ``acceptance`` and
``export`` give from a history's Parquet files (several files, small row groups, split runs
among them) what they gave from the whole table read at once (records made here: test
input for the statistics, not benchmark output).'''
import datetime as dt
import json

import numpy as np
import polars as pl
import pytest

from mdxbench.post.analysis import regress
from mdxbench.post.fleet import verdicts
from mdxbench.post.store import records, rowgroups

T0 = dt.datetime(2026, 6, 1, tzinfo=dt.timezone.utc)


def _history(rng, n=6000):
    '''Records of 40 series over 4 systems (a few with a step), with acceptance runs of 8
    nodes, split runs and runs without a value.'''
    systems = ['mdx2', 'laurel', 'aws', 'local']
    rows = []
    for i in range(n):
        s = int(rng.integers(0, 40))
        node = f'n{int(rng.integers(0, 8))}'
        day = int(rng.integers(0, 120))
        step = 0.8 if s % 7 == 0 and day > 90 else 1.0
        value = None if rng.random() < 0.03 else \
            100 * (1 + s / 40) * (1 + 0.02 * rng.standard_normal()) * step
        tags = 'acceptance,memory' if s % 3 == 0 else 'memory'
        if rng.random() < 0.02:
            tags += ',split'
        rows.append({'time': (T0 + dt.timedelta(days=day, seconds=i)).isoformat(),
                     'system': systems[s % 4], 'partition': 'p', 'environ': 'spack',
                     'check': f'Check{s % 10} %nid={node}' if s % 3 == 0 else f'Check{s % 10}',
                     'perf_var': f'v{s // 10}', 'value': value, 'unit': 'GB/s',
                     'better': 'lower' if s % 5 == 0 else 'higher', 'ref': None,
                     'result': 'pass', 'jobid': str(i), 'nodes': node, 'tags': tags,
                     'params': '{}', 'meta': json.dumps({'i': i})})
    return records.frame(rows)


@pytest.fixture
def history(tmp_path):
    '''(the whole table as a command read it, its Parquet files: three, row groups of 500
    records).'''
    raw = _history(np.random.default_rng(5))
    paths = []
    for i, part in enumerate(np.array_split(np.arange(raw.height), 3)):
        p = tmp_path / f'h{i}.parquet'
        raw[int(part[0]):int(part[-1]) + 1].write_parquet(p, row_group_size=500)
        paths.append(str(p))
    return records.nightly(records.with_current_names(raw)), paths


def _rows(t):
    return sorted(json.dumps(r, sort_keys=True, default=str) for r in t.iter_rows(named=True))


@pytest.mark.parametrize('cut', [None, T0 + dt.timedelta(days=95),
                                 {'mdx2': T0 + dt.timedelta(days=80),
                                  'laurel': T0 + dt.timedelta(days=100)}])
def test_regress_from_row_groups_is_regress_of_the_whole_table(history, cut):
    whole, paths = history
    few = regress.latest_runs(paths, cut, baseline_runs=10, latest_runs=3)
    assert few.height <= 13 * whole.select(regress.KEYS).unique().height < whole.height
    got = regress.compare(few, cut, baseline_runs=10, latest_runs=3)
    want = regress.compare(whole, cut, baseline_runs=10, latest_runs=3)
    assert got.height >= 20 and _rows(got) == _rows(want)
    if cut is not None:
        assert (got['verdict'] == 'regression').sum() >= 1


def test_acceptance_from_row_groups_is_acceptance_of_the_whole_table(history):
    whole, paths = history
    where = pl.col('system') == 'mdx2'
    few = rowgroups.latest(paths, verdicts.LATEST, 1, where, verdicts.acceptance_records)
    assert 0 < few.height < whole.height / 20
    # what the row groups kept is each (node, check, figure)'s latest acceptance run,
    # worked out here row by row from the whole table
    latest = {}
    for r in whole.filter(where).iter_rows(named=True):
        if 'acceptance' not in (r['tags'] or '').split(','):
            continue
        key = (r['nodes'], r['check'].split(' %nid=')[0], r['perf_var'], r['unit'], r['better'])
        if key not in latest or r['time'] > latest[key]['time']:
            latest[key] = r
    kept = [((r['nodes'], r['check'].split(' %nid=')[0], r['perf_var'], r['unit'], r['better']),
             (r['time'], r['value'])) for r in few.iter_rows(named=True)]
    assert dict(kept) == {k: (r['time'], r['value']) for k, r in latest.items()}
    assert len(kept) == len(latest)
    got = verdicts.judge(few)
    want = verdicts.judge(whole.filter(where))
    assert got == want and len(got) == 8


def test_an_export_is_every_record_copied_a_row_group_at_a_time(history, tmp_path):
    whole, paths = history
    out = tmp_path / 'export.parquet'
    assert rowgroups.copy(paths, out) == whole.height
    back = records.from_parquet(out)
    assert back.columns == list(records.COLUMNS)
    assert _rows(back) == _rows(whole)
    assert not back.filter(records.has_tag('split')).height


def test_a_selection_is_the_whole_tables_rows_it_names(history):
    '''What ``references propose`` (one system since a time) and ``accept``'s history (one
    partition's acceptance runs) read.'''
    whole, paths = history
    where = (pl.col('system') == 'laurel') & (pl.col('time') >= T0 + dt.timedelta(days=60))
    got = rowgroups.select(paths, where)
    assert 0 < got.height < whole.height / 4 and _rows(got) == _rows(whole.filter(where))
    accepted = rowgroups.select(paths, pl.col('system') == 'mdx2', verdicts.acceptance_records)
    want = verdicts.acceptance_records(whole).filter(pl.col('system') == 'mdx2')
    assert accepted.height and _rows(accepted) == _rows(want)
    assert not rowgroups.select(paths, pl.col('system') == 'nowhere').height
