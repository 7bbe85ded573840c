'''The data-science workload on a tiny TPC-H data set generated here by tpchgen-cli.'''
import json
import pathlib
import shutil
import subprocess
import sys

import pytest

from mdxbench.parsers import ParseError, pds

ROOT = pathlib.Path(__file__).resolve().parents[2]
PROGRAM = ROOT / 'checks' / 'apps' / 'src' / 'pds_tpch.py'


class workload:                     # what the check runs (checks/apps/pds.py)
    LIBRARIES = ('polars', 'duckdb', 'pandas', 'dask')
    QUERIES = (1, 3, 6)


@pytest.fixture(scope='module')
def output(tmp_path_factory):
    gen = shutil.which('tpchgen-cli', path=str(pathlib.Path(sys.executable).parent))
    if gen is None:
        pytest.skip('tpchgen-cli is not installed (pip install .[datascience])')

    data = tmp_path_factory.mktemp('tpch')
    subprocess.run([gen, 'parquet', '-s', '0.01', f'--output-dir={data}'], check=True)
    res = subprocess.run([sys.executable, str(PROGRAM), '--data', str(data)] +
                         [f'--library={lib}' for lib in workload.LIBRARIES],
                         capture_output=True, text=True, check=True)
    return res.stdout


def test_every_library_gives_the_same_answers(output):
    r = pds.parse(output)
    for lib in workload.LIBRARIES:
        assert r[f'{lib}_total'] == pytest.approx(sum(r[f'{lib}_q{q}'] for q in workload.QUERIES))
        assert all(r[f'{lib}_q{q}'] > 0 for q in workload.QUERIES)

    assert set(r['versions']) == set(workload.LIBRARIES)
    lines = [json.loads(x) for x in output.splitlines()[1:]]
    assert {x['rows'] for x in lines if x['query'] == 3} == {10}
    assert {x['rows'] for x in lines if x['query'] == 1} == {4}


def _mutate(output, lib, query, **change):
    out = []
    for line in output.splitlines():
        obj = json.loads(line)
        if obj.get('library') == lib and obj.get('query') == query:
            obj.update(change)

        out.append(json.dumps(obj))

    return '\n'.join(out)


def test_a_fast_wrong_answer_fails(output):
    dask6 = [json.loads(x) for x in output.splitlines()
             if '"dask"' in x and '"query": 6' in x][0]
    bad = _mutate(output, 'dask', 6, checksum=dask6['checksum'] * 1.001)
    with pytest.raises(ParseError, match='Q6: dask checksum'):
        pds.parse(bad)

    with pytest.raises(ParseError, match='Q3: pandas returned 9 rows'):
        pds.parse(_mutate(output, 'pandas', 3, rows=9))


def test_missing_library_or_truncation(output):
    lines = output.splitlines()
    with pytest.raises(ParseError, match='lacks dask Q6'):
        pds.parse('\n'.join(lines[:-1]), libraries=list(workload.LIBRARIES),
                  queries=list(workload.QUERIES))

    with pytest.raises(ParseError, match='invalid JSON'):
        pds.parse(output[:-10])
