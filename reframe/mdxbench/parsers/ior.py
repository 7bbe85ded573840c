'''IOR 3.3/4.x: the "Summary of all tests" table of the text output, or the JSON output
(``-O summaryFormat=JSON``). Aggregate bandwidths in GB/s (1e9 B/s), best of repetitions.'''
import json
import re

from . import ParseError, require

MIB = 1024 * 1024


def parse(text):
    '''``{'version', 'command', 'api', 'access', 'nodes', 'tasks', 'tasks_per_node',
    'segments', 'aggregate_bytes', 'repetitions', 'reorder', 'odirect', 'write_gbs',
    'read_gbs', 'write_mean_gbs', 'read_mean_gbs'}`` (operations not run are absent;
    ``api``: IOR's backend, POSIX, MPIIO, S3-libs3...).'''
    require(text and text.strip(), 'IOR output is empty')
    if text.lstrip().startswith('{'):
        return _parse_json(text)

    m = re.search(r'^IOR-(\S+): MPI Coordinated Test of Parallel I/O', text, re.M)
    require(m, 'no "IOR-X: MPI Coordinated Test of Parallel I/O" banner: not IOR output')
    out = {'version': m.group(1)}
    cmd = re.search(r'^Command line\s*:\s*(.+)$', text, re.M)
    out['command'] = cmd.group(1).strip() if cmd else ''
    api = re.search(r'^api\s*:\s*(\S+)\s*$', text, re.M)
    out['api'] = api.group(1) if api else 'unknown'
    acc = re.search(r'^access\s*:\s*(.+)$', text, re.M)
    out['access'] = acc.group(1).strip() if acc else 'unknown'
    nodes = re.search(r'^nodes\s*:\s*(\d+)\s*$', text, re.M)
    require(nodes, 'no "nodes : N" line in the IOR options')
    out['nodes'] = int(nodes.group(1))
    s = text.find('Summary of all tests:')
    require(s >= 0, 'no "Summary of all tests:" in the IOR output: the run did not finish')
    require(re.search(r'^Finished\s*:', text[s:], re.M),
            'IOR summary without the "Finished" line: truncated output')
    lines = text[s:].splitlines()[1:]
    require(lines and lines[0].startswith('Operation'), 'IOR summary has no header row')
    cols = lines[0].split()
    for line in lines[1:]:
        parts = line.split()
        if not parts or parts[0] not in ('write', 'read'):
            continue

        row = dict(zip(cols, parts))
        try:
            out[f'{parts[0]}_gbs'] = float(row['Max(MiB)']) * MIB / 1e9
            out[f'{parts[0]}_mean_gbs'] = float(row['Mean(MiB)']) * MIB / 1e9
            out['tasks'] = int(row['#Tasks'])
            out['tasks_per_node'] = int(row['tPN'])
            out['segments'] = int(row['segcnt'])
            out['aggregate_bytes'] = float(row['aggs(MiB)']) * MIB
            out['repetitions'] = int(row['reps'])
            out['reorder'] = bool(int(row['reord']))
        except (KeyError, ValueError) as err:
            raise ParseError(f'IOR summary row {line.strip()!r}: {err}') from None

    require('write_gbs' in out or 'read_gbs' in out, 'IOR summary has no write or read row')
    return _with_direct(out)


def _parse_json(text):
    try:
        data = json.loads(text)
    except json.JSONDecodeError as err:
        raise ParseError(f'IOR JSON output does not parse ({err.msg} at line {err.lineno}): '
                         'truncated?') from None

    require(isinstance(data, dict) and 'summary' in data,
            'IOR JSON output has no "summary": the run did not finish')
    require('Finished' in data, 'IOR JSON output has no "Finished": truncated?')
    out = {'version': data.get('Version', 'unknown'), 'command': data.get('Command line', '')}
    try:
        opts = data['tests'][0]['Options']
        params = data['tests'][0]['Parameters']
        out['access'] = opts['access']
        out['api'] = opts.get('api') or params.get('api') or 'unknown'
        out['nodes'] = int(params['nodes'])
        out['reorder'] = bool(params['reorderTasks'])
    except (KeyError, IndexError, TypeError, ValueError) as err:
        raise ParseError(f'IOR JSON output: tests[0] lacks {err} (Options, Parameters)') from None

    for row in data['summary']:
        op = row.get('operation')
        if op not in ('write', 'read'):
            continue

        try:
            out[f'{op}_gbs'] = float(row['bwMaxMIB']) * MIB / 1e9
            out[f'{op}_mean_gbs'] = float(row['bwMeanMIB']) * MIB / 1e9
            out['tasks'] = int(row['numTasks'])
            out['tasks_per_node'] = int(row['tasksPerNode'])
            out['segments'] = int(row['segmentCount'])
            out['aggregate_bytes'] = float(row['xsizeMiB']) * MIB
            out['repetitions'] = int(row['repetitions'])
        except (KeyError, TypeError, ValueError) as err:
            raise ParseError(f'IOR JSON summary entry for {op}: missing or bad {err}') from None

    require('write_gbs' in out or 'read_gbs' in out, 'IOR JSON summary has no write or read entry')
    return _with_direct(out)


def _with_direct(out):
    out['odirect'] = bool(re.search(r'(?:^|\s)--posix\.odirect(?:\s|$)', out['command']))
    return out


def page_cache_reason(odirect, reorder, nodes, bytes_per_node, node_memory_bytes=None):
    """Why IOR's read of a run with these settings would be served by the page cache of
    the writing node (a sentence), or None when it reaches storage.

    IOR reads back what it wrote. The read reaches storage with O_DIRECT
    (``--posix.odirect``); when ``-C`` (reorderTasks) makes every rank read what a rank of
    *another* node wrote, which needs at least two nodes (-C shifts ranks by one node's
    worth of tasks); or when each node wrote at least twice its memory
    (``node_memory_bytes``), so that the start of the file is long evicted when the
    sequential read begins (mdx I's runs without O_DIRECT: 8 GiB per rank). Used before a
    run (from the sizing: the case is skipped) and after it (from what IOR reports)."""
    if odirect or (reorder and nodes >= 2):
        return None
    if node_memory_bytes and bytes_per_node >= 2 * node_memory_bytes:
        return None
    return (f'IOR reads back on {nodes} node(s) '
            + ('with -C' if reorder else 'without -C')
            + ' and without O_DIRECT, {:.1f} GiB written per node'.format(bytes_per_node / 2 ** 30)
            + (' (less than twice its {:.0f} GiB of memory)'.format(node_memory_bytes / 2 ** 30)
               if node_memory_bytes else '')
            + ': every rank reads what its own node has just written, so the read figure '
            'is the page cache, not storage; run with --posix.odirect, on two or more nodes '
            'with -C, or with more segments')


def read_not_from_storage(parsed, node_memory_bytes=None):
    """Why the read bandwidth of this run cannot be a storage figure, or None when it is
    (:func:`page_cache_reason` of what IOR reports it ran, with the figure it read)."""
    if 'read_gbs' not in parsed:
        return None
    why = page_cache_reason(parsed['odirect'], parsed['reorder'], parsed['nodes'],
                            parsed.get('aggregate_bytes', 0) / max(1, parsed['nodes']),
                            node_memory_bytes)
    return why and f'{why} (read {parsed["read_gbs"]:.1f} GB/s)'
