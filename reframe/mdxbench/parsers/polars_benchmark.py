'''The output of PdsBenchmark's job (checks/apps/src/polars-benchmark.sh): pola-rs/polars-
benchmark's own lines, a status line after each query run, and its timings file.

The status lines (``polars-benchmark: <library> q<n> exit <status>``) say whether each
query's process ended well: at scale factor 1 the benchmark checks each answer after its
timing is logged, so a wrong answer is a logged timing *and* a non-zero exit -- the exit
decides. A process a signal ended may have been run once more (its status line twice);
its last run counts, and the runs before are reported. The timings file is the
benchmark's (``log_query_timing``, queries/common_utils.py at 6e3fefc): a header
``solution,version,query_number,duration[s],io_type,scale_factor`` and a row per query run.
'''
import csv
import io
import re

from . import ParseError, require

HEADER = ['solution', 'version', 'query_number', 'duration[s]', 'io_type', 'scale_factor']
_STATUS = re.compile(r'^polars-benchmark: (\S+) q(\d+) exit (\d+)$')
_CHECKED = 'polars-benchmark: answers checked against '
_UNCHECKED = 'polars-benchmark: answers not checked'
_TIMINGS = 'polars-benchmark: timings.csv'


def parse(text):
    '''``{'runs': {'<library> q<n>': [exit status, ...]}, 'rows': [{library, version,
    query, seconds, io_type, scale_factor}], 'checked': bool}`` of the job's output (keys
    that are text: ReFrame writes a check's results into its JSON report).'''
    lines = text.splitlines()
    require(_TIMINGS in lines, 'polars-benchmark output: no "polars-benchmark: timings.csv" '
            'line (the job ended before its queries did)')
    at = lines.index(_TIMINGS)
    checked = [ln for ln in lines[:at] if ln.startswith((_CHECKED, _UNCHECKED))]
    require(len(checked) == 1, 'polars-benchmark output: no line saying whether the answers '
            'were checked')
    runs = {}
    for n, line in enumerate(lines[:at], 1):
        m = _STATUS.match(line)
        if m:
            runs.setdefault(f'{m[1]} q{int(m[2])}', []).append(int(m[3]))
    require(runs, 'polars-benchmark output: no query ran (no status line)')
    table = list(csv.reader(io.StringIO('\n'.join(lines[at + 1:]))))
    require(table and table[0] == HEADER, 'polars-benchmark timings: header '
            f'{",".join(table[0]) if table else "missing"}, expected {",".join(HEADER)}')
    rows = []
    for n, row in enumerate(table[1:], 2):
        require(len(row) == len(HEADER), f'polars-benchmark timings line {n}: {len(row)} '
                f'fields, expected {len(HEADER)}: {",".join(row)}')
        try:
            rows.append({'library': row[0], 'version': row[1], 'query': int(row[2]),
                         'seconds': float(row[3]), 'io_type': row[4],
                         'scale_factor': float(row[5])})
        except ValueError:
            raise ParseError(f'polars-benchmark timings line {n}: not a query number, '
                             f'duration or scale factor: {",".join(row)}') from None
    return {'runs': runs, 'rows': rows, 'checked': checked[0].startswith(_CHECKED)}


def figures(results, libraries, queries):
    '''Per library and query the seconds of its last run (``<lib>_q<n>``) and each
    library's total (``<lib>_total``), its version, and the queries that ran twice;
    ``ValueError`` naming every query that failed (its last run's exit status not 0), that
    did not run, or whose timing is missing.'''
    runs, problems, out = results['runs'], [], {}
    versions, again = {}, []
    for lib in libraries:
        for q in queries:
            status = runs.get(f'{lib} q{q}')
            mine = [r for r in results['rows'] if r['library'] == lib and r['query'] == q]
            if status is None:
                problems.append(f'{lib} q{q} did not run')
            elif status[-1] != 0:
                problems.append(f'{lib} q{q} failed (exit {status[-1]}'
                                + (': its answer differs from the benchmark\'s, or it crashed'
                                   if results['checked'] else '') + ')')
            elif not mine:
                problems.append(f'{lib} q{q} logged no timing')
            else:
                if len(status) > 1:
                    again.append(f'{lib} q{q} (exit {", ".join(map(str, status[:-1]))}, '
                                 f'then 0)')
                out[f'{lib}_q{q}'] = mine[-1]['seconds']
                versions[lib] = mine[-1]['version']
        if all(f'{lib}_q{q}' in out for q in queries):
            out[f'{lib}_total'] = sum(out[f'{lib}_q{q}'] for q in queries)
    if problems:
        raise ValueError('polars-benchmark: ' + '; '.join(problems))
    scales = {r['scale_factor'] for r in results['rows']}
    if len(scales) != 1:
        raise ValueError(f'polars-benchmark: timings of several scale factors: {sorted(scales)}')
    return dict(out, versions=versions, ran_twice=again, scale_factor=scales.pop())
