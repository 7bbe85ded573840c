'''The data-science workload on a tiny TPC-H data set generated here by tpchgen-cli: the
four libraries' answers to Q1-Q7 against DuckDB running the specification's SQL text.'''
import json
import pathlib
import shutil
import subprocess
import sys

import pytest

from mdxbench.parsers import ParseError, pds

ROOT = pathlib.Path(__file__).resolve().parents[2]
SRC = ROOT / 'checks' / 'apps' / 'src'
PROGRAM = SRC / 'pds_tpch.py'


class workload:                     # what the check runs (checks/apps/pds.py)
    LIBRARIES = ('polars', 'duckdb', 'pandas', 'dask')
    QUERIES = tuple(range(1, 8))


def run_program(src, data, libraries, queries=workload.QUERIES):
    res = subprocess.run([sys.executable, str(src / 'pds_tpch.py'), '--data', str(data),
                          f'--queries={",".join(map(str, queries))}'] +
                         [f'--library={lib}' for lib in libraries],
                         capture_output=True, text=True)
    assert res.returncode == 0, res.stderr[-3000:]
    return res.stdout


@pytest.fixture(scope='module')
def data(tmp_path_factory):
    gen = shutil.which('tpchgen-cli', path=str(pathlib.Path(sys.executable).parent))
    if gen is None:
        pytest.skip('tpchgen-cli is not installed (pip install .[datascience])')

    data = tmp_path_factory.mktemp('tpch')
    subprocess.run([gen, 'parquet', '-s', '0.01', f'--output-dir={data}'], check=True)
    return data


@pytest.fixture(scope='module')
def output(data):
    return run_program(SRC, data, workload.LIBRARIES)


def test_every_library_answers_as_the_specification(output):
    r = pds.parse(output)
    for lib in workload.LIBRARIES:
        assert r[f'{lib}_total'] == pytest.approx(sum(r[f'{lib}_q{q}'] for q in workload.QUERIES))
        assert all(r[f'{lib}_q{q}'] > 0 for q in workload.QUERIES)

    assert set(r['versions']) == set(workload.LIBRARIES)
    # what TPC-H's data guarantees at any scale: 4 flag/status groups, top 10, 5 order
    # priorities, 5 nations in ASIA, one sum, 2 nation pairs x 2 years
    rows = r['answer_rows']
    assert [rows[str(q)] for q in (1, 3, 4, 5, 6, 7)] == [4, 10, 5, 5, 1, 4]
    assert 0 < rows['2'] <= 100


def _broken_copy(tmp_path, module, old, new):
    '''The program with one library's implementation changed, as a wrong one would be.'''
    src = tmp_path / 'src'
    shutil.copytree(SRC, src, ignore=shutil.ignore_patterns('__pycache__'))
    path = src / module
    text = path.read_text()
    assert old in text
    path.write_text(text.replace(old, new, 1))
    return src


def test_a_wrong_implementation_is_caught(output, data, tmp_path):
    # the classic: the SQL's ".06 + 0.01" taken literally in float64 leaves out discounts of 0.07
    src = _broken_copy(tmp_path, 'pds_pandas.py', 'P.q6_discount_hi)', '0.06 + 0.01)')
    bad = run_program(src, data, ['pandas'], [6])
    with pytest.raises(ParseError, match=r'Q6: pandas differs from the TPC-H SQL of Q6 run by '
                                         r'DuckDB at row 1 \(column 1: got \['):
        pds.parse(bad)


def test_a_wrong_order_or_a_missing_row_is_caught(data, tmp_path):
    src = _broken_copy(tmp_path, 'pds_polars.py', "descending=[True, False]).head(10)",
                       "descending=[False, False]).head(10)")
    with pytest.raises(ParseError, match=r'Q3: polars differs .* at row 1 \(column 1'):
        pds.parse(run_program(src, data, ['polars'], [3]))

    src = _broken_copy(tmp_path / 'b', 'pds_dask.py', "(o['o_orderdate'] < _ts(P.q4_end))",
                       "(o['o_orderdate'] < _ts(P.q4_date))")
    with pytest.raises(ParseError, match=r'Q4: dask differs .* at row 1 \(0 rows, expected 5: '
                                         r"missing row \['1-URGENT'"):
        pds.parse(run_program(src, data, ['dask'], [4]))


def test_first_difference_names_row_and_column(output):
    ref = [json.loads(x) for x in output.splitlines() if '"reference": 1,' in x][0]['answer']
    assert pds.first_difference(ref, ref) is None
    changed = [list(r) for r in ref]
    changed[2][9] += 1                          # count_order of the third group, off by one
    row, why = pds.first_difference(changed, ref)
    assert (row, why.split(':')[0]) == (3, 'column 10')
    assert pds.first_difference(ref[:3], ref)[1].startswith('3 rows, expected 4: missing row')


def test_missing_library_reference_or_truncation(output):
    lines = output.splitlines()
    with pytest.raises(ParseError, match='lacks dask Q7'):
        pds.parse('\n'.join(lines[:-1]), libraries=list(workload.LIBRARIES),
                  queries=list(workload.QUERIES))

    no_ref = [x for x in lines if '"reference": 5,' not in x]
    with pytest.raises(ParseError, match='lacks the reference answer of Q5'):
        pds.parse('\n'.join(no_ref))

    with pytest.raises(ParseError, match='invalid JSON'):
        pds.parse(output[:-10])
