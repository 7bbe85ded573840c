'''The JSON lines of ``checks/apps/src/pds_tpch.py``: per-library, per-query seconds, with
each library's answer checked against the reference answer printed by the same run (DuckDB
running the TPC-H specification's SQL text of the query), so that a fast wrong answer fails
and the message names the library, the query and the first row that differs.'''
import json
import math

from . import ParseError, require

#: numbers that are not both integers compare within this relative tolerance: the libraries
#: sum float64 values, the reference exact decimals
REL_TOL = 1e-8


def _same(got, want):
    if isinstance(got, bool) or isinstance(want, bool):
        return got == want
    if isinstance(got, int) and isinstance(want, int):
        return got == want
    if isinstance(got, (int, float)) and isinstance(want, (int, float)):
        return math.isclose(got, want, rel_tol=REL_TOL, abs_tol=1e-9)
    return got == want


def first_difference(got, want):
    '''(row number counted from 1, why) of the first row where two answers differ, or None.'''
    for i, (g, w) in enumerate(zip(got, want), 1):
        if len(g) != len(w):
            return i, f'{len(g)} columns, expected {len(w)}: got {g}, expected {w}'
        bad = [j for j, (a, b) in enumerate(zip(g, w)) if not _same(a, b)]
        if bad:
            return i, f'column {bad[0] + 1}: got {g}, expected {w}'
    if len(got) != len(want):
        n = min(len(got), len(want))
        extra = f'extra row {got[n]}' if len(got) > n else f'missing row {want[n]}'
        return n + 1, f'{len(got)} rows, expected {len(want)}: {extra}'
    return None


def _lines(text):
    for n, line in enumerate(text.splitlines(), 1):
        line = line.strip()
        if not line.startswith('{'):
            continue
        try:
            yield n, json.loads(line)
        except json.JSONDecodeError as err:
            raise ParseError(f'PDS output line {n}: invalid JSON ({err.msg}): truncated?') from None


def parse(text, libraries=None, queries=None):
    require(text and text.strip(), 'PDS output is empty')
    recs, refs, versions = {}, {}, None
    for n, obj in _lines(text):
        if 'pds_versions' in obj:
            versions = obj['pds_versions']
        elif 'reference' in obj:
            require({'seconds', 'columns', 'answer'} <= obj.keys(),
                    f'PDS output line {n}: a reference needs seconds, columns, answer')
            refs[obj['reference']] = obj
        else:
            require({'library', 'query', 'seconds', 'answer'} <= obj.keys(),
                    f'PDS output line {n}: expected library, query, seconds, answer')
            recs[(obj['library'], obj['query'])] = obj

    require(versions is not None, 'PDS output has no {"pds_versions": ...} line')
    libraries = libraries or list(dict.fromkeys(lib for lib, _ in recs))
    queries = queries or sorted({q for _, q in recs} | set(refs))
    missing = [f'{lib} Q{q}' for lib in libraries for q in queries if (lib, q) not in recs]
    missing += [f'the reference answer of Q{q}' for q in queries if q not in refs]
    require(not missing, f'PDS output lacks {", ".join(missing)}: a library failed or the run stopped')
    out = {'version': ' '.join(f'{k}-{v}' for k, v in sorted(versions.items())),
           'versions': versions,
           'answer_rows': {str(q): len(refs[q]['answer']) for q in queries},
           'reference_seconds': {str(q): refs[q]['seconds'] for q in queries}}
    for q in queries:
        for lib in libraries:
            diff = first_difference(recs[(lib, q)]['answer'], refs[q]['answer'])
            require(diff is None,
                    f'Q{q}: {lib} differs from the TPC-H SQL of Q{q} run by DuckDB at row '
                    f'{diff and diff[0]} ({diff and diff[1]}; columns '
                    f'{refs[q]["columns"]}): wrong answer')

    for lib in libraries:
        for q in queries:
            out[f'{lib}_q{q}'] = recs[(lib, q)]['seconds']
        out[f'{lib}_total'] = math.fsum(recs[(lib, q)]['seconds'] for q in queries)

    return out
