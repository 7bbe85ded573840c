'''The papers' tables of `mdxbench report` (postprocess/site/report.py) on the real perflogs
of a main job on `local` (tests/fixtures/perflogs/main-job-1): a cell measured by the
paper's method stands beside the paper's figure; a cell measured by a stand-in says so and
has no paper figure beside it; a ratio compares only cells measured the same way.

The paper's figures exist for mdx2 and AWS only: the local records are relabelled as
theirs (system and partition only, values untouched) so that both kinds of cell meet one.'''
import pathlib

import polars as pl
import pytest

from mdxbench.post.site import report
from mdxbench.post.store import records

RUN = pathlib.Path(__file__).resolve().parents[1] / 'fixtures' / 'perflogs' / 'main-job-1'


@pytest.fixture(scope='module')
def local():
    errors = []
    df = records.from_perflogs([RUN / 'local'], errors)
    assert errors == [] and df.height > 100
    return df


def as_target(df, system, partition):
    return df.with_columns(pl.lit(system).alias('system'), pl.lit(partition).alias('partition'))


def rows(tables, table_id):
    [t] = [t for t in tables if t['id'] == table_id]
    return {r['label']: r for r in t['rows']}, t['columns']


def measured(df, check, var, **params):
    sel = df.filter((pl.col('check').str.split(' ').list.first() == check)
                    & (pl.col('perf_var') == var))
    for k, v in params.items():
        sel = sel.filter(pl.col('params').str.contains(f'"{k}": "{v}"', literal=True))
    assert sel.height > 0, (check, var, params)
    return sel.sort('time').tail(report.LATEST)['value'].median()


def test_the_papers_method_stands_beside_the_paper_and_a_stand_in_does_not(local):
    # mdx2 with every record; AWS without BabelStream (its memory from STREAM instead)
    mdx2 = as_target(local, 'mdx2', 'vc16m32g')
    aws = as_target(local.filter(~pl.col('check').str.starts_with('BabelStreamOmp')),
                    'aws-pcluster', 'c7i-4xlarge')
    tables = report.build_tables(pl.concat([mdx2, aws]))
    t1, columns = rows(tables, 'table1')
    assert columns[:2] == ['mdx2 vc16m32g', 'aws c7i.4xlarge']

    mem = t1['Memory, BabelStream Triad (GB/s)']
    own, other = mem['cells'][:2]
    # BabelStream itself: the paper's figure beside it
    assert own['via'] is None and own['paper'] == 164 and own['method'] is None
    assert own['measured'] == pytest.approx(measured(local, 'BabelStreamOmp', 'triad'))
    # STREAM standing in on AWS: named, no paper figure, and no ratio against BabelStream
    assert other['via'] == 'StreamOmp' and other['paper'] is None
    assert other['method'] == "StreamOmp: not the paper's method"
    assert other['measured'] == pytest.approx(measured(local, 'StreamOmp', 'triad',
                                                       threads='all-cores'))
    assert mem['ratio'] is None

    # no Intel LINPACK anywhere: HPCC's HPL on both sides, compared with each other only
    lin = t1['LINPACK (GFLOPS)']
    for c in lin['cells'][:2]:
        assert c['via'] == 'HpccHpl' and c['paper'] is None and c['measured'] > 0
    assert lin['ratio'] == pytest.approx(1.0) and lin['ratio_via'] == 'HpccHpl'

    page = report.tables_html([t for t in tables if t['id'] == 'table1'])
    assert '(paper 164)' in page and '(paper 1344)' not in page and '(paper 656)' not in page
    assert page.count("HpccHpl: not the paper&#x27;s method") == 2
    assert '(both HpccHpl)' in page


def test_the_stream_table_reads_stream_itself(local):
    '''Guidi et al.'s Table II is STREAM 5.10 at 120 M elements: StreamOmp, not HPCC.'''
    stream, _ = rows(report.build_tables(local), 'stream')
    for label, threads in (('Triad, all cores (GB/s)', 'all-cores'),
                           ('Triad, one core (GB/s)', 'one-thread')):
        cell = stream[label]['cells'][0]
        assert cell['via'] is None, cell
        assert cell['measured'] == pytest.approx(measured(local, 'StreamOmp', 'triad',
                                                          threads=threads))
    # without StreamOmp's records, HPCC's STREAM stands in and says so
    hpcc, _ = rows(report.build_tables(local.filter(~pl.col('check').str.starts_with('StreamOmp'))),
                   'stream')
    cell = hpcc['Triad, all cores (GB/s)']['cells'][0]
    assert cell['via'] == 'HpccStream' and cell['method'] == "HpccStream: not the paper's method"


def test_an_ambiguous_figure_says_the_other_reading(local):
    tables = report.build_tables(as_target(local, 'mdx2', 'vc16m32g'))
    fio, _ = rows(tables, 'table2_3')
    lustre = fio['seq read (GB/s)']['cells'][1]
    assert lustre['paper'] == 9.82 and 'swaps them' in lustre['ambiguous']
    assert 'the paper is ambiguous here' in report.tables_html(
        [t for t in tables if t['id'] == 'table2_3'])


def test_the_old_name_of_linpacks_percentage_reads_as_the_new(local):
    '''The run was recorded as `percent_peak` (before 2026-11-25): read as
    `percent_nominal_peak`, one series with the runs recorded since.'''
    raw = (RUN / 'local' / 'debug' / 'HpccHpl.log').read_text()
    assert '|percent_peak_var|' in raw.splitlines()[0]
    hpl = local.filter(pl.col('check') == 'HpccHpl')
    assert set(hpl['perf_var']) == {'gflops', 'percent_nominal_peak'}
