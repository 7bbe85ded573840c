'''The perflog format: one definition shared by the ReFrame config that writes perflogs
and by ``mdxbench ingest`` that reads them.

A perflog line is ``|``-separated: the fixed fields of :data:`FIXED_FIELDS`, then one group
of :data:`PERFVAR_FIELDS` per performance variable of the test. One *record* is one
performance variable of one line; ingest turns each record into one Elasticsearch document.

Free text (command line, benchmark version, curves...) never goes into a column of its own:
it travels in the ``mdx_meta`` column, a JSON object in which ``|`` is escaped as ``\\u007c``,
so a value can never shift the columns.
'''
import json

try:
    import orjson as _orjson
except ImportError:     # the ReFrame side may run without it
    _orjson = None

#: Marks the format version in every line (second column), so that ingest rejects lines of
#: another layout loudly instead of reading a wrong column.
FORMAT_TAG = 'mdxbench-perflog-v1'

#: (column name, ReFrame log record attribute)
FIXED_FIELDS = (
    ('completion_time', 'check_job_completion_time'),
    ('format', None),
    ('system', 'check_system'),
    ('partition', 'check_partition'),
    ('environ', 'check_environ'),
    ('check', 'check_name'),
    ('display_name', 'check_display_name'),
    ('hashcode', 'check_hashcode'),
    ('jobid', 'check_jobid'),
    ('nodelist', 'check_job_nodelist'),
    ('result', 'check_result'),
    ('meta', 'check_mdx_meta'),
)

PERFVAR_FIELDS = (
    ('perf_var', 'check_perf_var'),
    ('perf_value', 'check_perf_value'),
    ('perf_unit', 'check_perf_unit'),
    ('perf_ref', 'check_perf_ref'),
    ('perf_lower_thres', 'check_perf_lower_thres'),
    ('perf_upper_thres', 'check_perf_upper_thres'),
    ('perf_result', 'check_perf_result'),
)

DELIM = '|'

#: Which way is better for a performance variable, as each check declares it in its
#: ``perf_table`` and the ``meta.better`` object of every line carries it
BETTER = ('higher', 'lower')

#: The tag (``meta.tags``) of a run of ``mdxbench incident split``: an old and a new build
#: measured side by side, whose records (detail in ``meta.split``) never enter the nightly
#: series
SPLIT_TAG = 'split'

#: What ReFrame writes in the perf_result column ('None': the test failed before its
#: performance was evaluated; its value is then None too)
PERF_RESULTS = ('pass', 'fail', 'xfail', 'xpass', 'None')


def reframe_format():
    '''The ``format`` string of the ReFrame ``filelog`` handler.'''
    cols = []
    for _, attr in FIXED_FIELDS:
        cols.append(FORMAT_TAG if attr is None else f'%({attr})s')

    return DELIM.join(cols) + DELIM + '%(check_perfvalues)s'


def reframe_format_perfvars():
    '''The ``format_perfvars`` string. Its last character is the separator ReFrame puts
    between the groups of several performance variables (not after the last one).'''
    return DELIM.join(f'%({attr})s' for _, attr in PERFVAR_FIELDS) + DELIM


def encode_meta(meta):
    '''Encode the meta dictionary for the ``meta`` column: compact JSON on one line, with
    no raw ``|`` (JSON allows the ``\\u007c`` escape, so decoding gives the original).'''
    text = json.dumps(meta, sort_keys=True, separators=(',', ':'), default=str,
                      ensure_ascii=False)
    return text.replace('|', '\\u007c').replace('\n', '\\n')


class PerflogError(ValueError):
    '''A perflog line that cannot be read; the message says why.'''


class DryRunLine(Exception):
    '''A line ReFrame writes for a ``--dry-run`` case: no job ran, so it has no job id and
    no value, yet its result is ``pass``. It holds no measurement: readers count it apart,
    never as a record and never as malformed.'''


_PERFVAR_NAMES = tuple(n for n, _ in PERFVAR_FIELDS)


def _number(text, field, allow_null=True):
    if text in ('null', 'None', ''):
        if allow_null:
            return None

        raise PerflogError(f'field {field!r} is empty')

    try:
        return float(text)
    except ValueError:
        raise PerflogError(f'field {field!r}: expected a number, got {text!r}') from None


def _loads(text):
    '''JSON text -> object; orjson where installed (several times faster), the standard
    module for what orjson refuses and ``json`` reads (NaN, very large integers), and for
    the error message.'''
    if _orjson is not None:
        try:
            return _orjson.loads(text)
        except _orjson.JSONDecodeError:
            pass
    return json.loads(text)


def is_header(line):
    '''ReFrame writes a header line at the top of each perflog file.'''
    return line.startswith('job_completion_time' + DELIM)


def parse_line(line):
    '''Parse one perflog line into a list of records (one per performance variable).

    Raises :class:`PerflogError` for anything that is not a complete line of our format:
    a wrong format tag, a wrong number of columns (a truncated line, or a ``|`` in a
    value), a non-numeric value, or malformed meta JSON.
    '''
    line = line.rstrip('\n')
    if not line.strip():
        raise PerflogError('empty line')

    cols = line.split(DELIM)
    nfixed = len(FIXED_FIELDS)
    if len(cols) < 2 or cols[1] != FORMAT_TAG:
        found = cols[1] if len(cols) > 1 else cols[0][:40]
        raise PerflogError(f'not an {FORMAT_TAG} line (second column is {found!r})')
    if len(cols) < nfixed + 1:
        raise PerflogError(f'truncated line: {len(cols)} columns, an {FORMAT_TAG} line has '
                           f'at least {nfixed + len(PERFVAR_FIELDS)}')

    perfcols = cols[nfixed:]
    ngroup = len(PERFVAR_FIELDS)
    if not perfcols or len(perfcols) % ngroup:
        raise PerflogError(
            f'expected {nfixed} fixed columns and groups of {ngroup} per performance '
            f'variable, got {len(cols) - 1} columns: truncated line or a stray {DELIM!r}'
        )

    base = {name: cols[i] for i, (name, _) in enumerate(FIXED_FIELDS)}
    del base['format']
    if not base['completion_time'] or base['completion_time'] in ('None', 'null'):
        raise PerflogError("field 'completion_time' is empty")

    try:
        base['meta'] = _loads(base['meta']) if base['meta'] not in ('', 'null', 'None') else {}
    except json.JSONDecodeError as err:
        raise PerflogError(f"field 'meta': invalid JSON ({err.msg} at column {err.pos})") from None

    if not isinstance(base['meta'], dict):
        raise PerflogError("field 'meta': expected a JSON object")

    base['nodelist'] = [n for n in base['nodelist'].split(',') if n and n != 'None']
    # the job's own word on its allocation (SLURM_JOB_NODELIST, meta.job_nodes) wins over
    # what ReFrame read from Slurm's accounting, which has named fewer nodes than ran
    job_nodes = base['meta'].get('job_nodes')
    if job_nodes:
        if not (isinstance(job_nodes, list) and all(isinstance(n, str) for n in job_nodes)):
            raise PerflogError("field 'meta': job_nodes is not a list of node names")
        base['nodelist'] = list(job_nodes)
    records = []
    for k in range(0, len(perfcols), ngroup):
        group = dict(zip(_PERFVAR_NAMES, perfcols[k:k + ngroup]))
        rec = dict(base)
        rec['perf_var'] = group['perf_var']
        if not rec['perf_var']:
            raise PerflogError('a performance variable has no name')

        # None when the test failed before its performance stage: the record is kept (a
        # failed run is a result too), with the line's result 'fail'
        rec['perf_value'] = _number(group['perf_value'], 'perf_value')
        rec['perf_unit'] = group['perf_unit']
        rec['perf_ref'] = _number(group['perf_ref'], 'perf_ref')
        rec['perf_lower_thres'] = _number(group['perf_lower_thres'], 'perf_lower_thres')
        rec['perf_upper_thres'] = _number(group['perf_upper_thres'], 'perf_upper_thres')
        rec['perf_result'] = group['perf_result']
        if rec['perf_result'] not in PERF_RESULTS:
            raise PerflogError(
                f"field 'perf_result' of {rec['perf_var']!r}: expected one of "
                f"{', '.join(PERF_RESULTS)}, got {rec['perf_result']!r}: truncated line?"
            )

        if rec['perf_result'] == 'None':
            rec['perf_result'] = None

        # which way is better, as the check declared it (None: a line written before
        # checks declared it; such records are never judged better or worse)
        rec['perf_better'] = (base['meta'].get('better') or {}).get(rec['perf_var'])
        if rec['perf_better'] not in BETTER + (None,):
            raise PerflogError(f"meta.better of {rec['perf_var']!r}: expected one of "
                               f"{', '.join(BETTER)}, got {rec['perf_better']!r}")

        if rec['perf_value'] is None and base['result'] != 'fail':
            if base['jobid'] in ('', 'null', 'None') and not base['nodelist']:
                raise DryRunLine(f'{base["display_name"]}: a --dry-run line (no job, no value)')
            raise PerflogError(f"performance variable {rec['perf_var']!r} has no value "
                               f"but the test result is {base['result']!r}")

        records.append(rec)

    return records
