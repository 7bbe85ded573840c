'''NVIDIA nvbandwidth (v0.8): every test case's matrix, from its plain output or its ``-j``
JSON. A case nvbandwidth waives is "not measured", never a 0: v0.8 waives every
device-to-device case where no pair of GPUs has peer access (testcase.cpp,
``filterHasAccessiblePeerPairs``: a node of one GPU, and every node whose GPUs are passed
through to a VM), and its plain output prints a bare ``Waived:`` without the case's name;
the name is the next case in the order nvbandwidth runs them (the ``-t`` list as given, or
all of them in v0.8's order). A GPU's bus id is as nvbandwidth prints it (output.cpp,
``getDeviceDisplayInfo``: hex in lower case, ``00000000:00:0a``). A cell nvbandwidth
prints as ``N/A`` is ``None``: a GPU to itself, or in a device-to-device case a pair
without peer access (skipped, not measured).

Matrices are indexed as nvbandwidth prints them: in host cases the row is the CPU (one
row, 0) and the column the GPU; in device cases the row is the source GPU.'''
import json
import re

from . import ParseError, require

_RUNNING = re.compile(r'^Running (\S+)\.\s*$')
_UNIT = re.compile(r'\((GB/s|ns)\)\s*$')


def _cell(text, where):
    if text == 'N/A':
        return None
    try:
        return float(text)
    except ValueError:
        raise ParseError(f'{where}: {text!r} is neither a number nor N/A') from None


#: v0.8's test cases in the order it runs them without ``-t`` (nvbandwidth.cpp,
#: ``createTestcases``, the single-node build)
V08_ORDER = tuple(
    f'{what}_{engine}' for engine in ('ce', 'sm') for what in (
        'host_to_device_memcpy', 'device_to_host_memcpy',
        'host_to_device_bidirectional_memcpy', 'device_to_host_bidirectional_memcpy',
        'device_to_device_memcpy_read', 'device_to_device_memcpy_write',
        'device_to_device_bidirectional_memcpy_read',
        'device_to_device_bidirectional_memcpy_write',
        'all_to_host_memcpy', 'all_to_host_bidirectional_memcpy', 'host_to_all_memcpy',
        'host_to_all_bidirectional_memcpy', 'all_to_one_write', 'all_to_one_read',
        'one_to_all_write', 'one_to_all_read')
) + ('host_device_latency_sm', 'device_to_device_latency_sm', 'device_local_copy')


def parse(text, order=V08_ORDER):
    '''``{'version', 'driver', 'devices': [{'index', 'name', 'bus_id'}], 'tests': {name:
    {'description', 'unit', 'matrix', 'sum'}}, 'waived': [names]}``. ``order``: the cases
    in the order the run asked for them (``-t``), which names a plain ``Waived:`` line.'''
    require(text and text.strip(), 'nvbandwidth output is empty')
    if text.lstrip().startswith('{'):
        return parse_json(text)
    m = re.search(r'^nvbandwidth Version: (\S+)', text, re.M)
    require(m, 'no "nvbandwidth Version:" line: not nvbandwidth output')
    out = {'version': m.group(1), 'tests': {}, 'waived': []}
    d = re.search(r'^Driver Version: (\S+)', text, re.M)
    out['driver'] = d.group(1) if d else None
    out['devices'] = [{'index': int(g.group(1)), 'name': g.group(2).strip(),
                       'bus_id': g.group(3)}
                      for g in re.finditer(r'^Device (\d+): (.+?) \(([0-9a-f:.]+)\)\s*$',
                                           text, re.M)]
    require(out['devices'], 'no "Device N: NAME (BUS ID)" line: no GPU listed')
    lines = text.splitlines()
    order = list(order)
    i, at = 0, 0        # at: the position in ``order`` of the next case nvbandwidth runs
    while i < len(lines):
        ln = lines[i].strip()
        if ln.startswith('Waived:'):
            # v0.8 writes no name after it (nvbandwidth.cpp: addTestcase(key, NVB_WAIVED)
            # with an empty message): the case is the next one asked for
            require(at < len(order), f'nvbandwidth: line {i + 1}: "Waived:" after '
                    f'the last of the {len(order)} case(s) asked for: which case is it?')
            out['waived'].append(order[at])
            at += 1
            i += 1
            continue
        run = _RUNNING.match(ln)
        if not run:
            i += 1
            continue
        name, where = run.group(1), f'nvbandwidth {run.group(1)}'
        require(name in order[at:], f'nvbandwidth: line {i + 1}: "Running {name}." is not '
                'among the cases asked for after the previous one (another version, or '
                'another order than asked)')
        at += order[at:].index(name) + 1
        require(i + 2 < len(lines), f'{where}: the output ends after "Running" (truncated?)')
        desc = lines[i + 1].strip()
        unit = _UNIT.search(desc)
        require(unit, f'{where}: expected a description ending in "(GB/s)" or "(ns)", got '
                f'{desc!r}')
        cols = lines[i + 2].split()
        require(cols and all(c.isdigit() for c in cols),
                f'{where}: expected the column indices, got {lines[i + 2].strip()!r}')
        matrix, k = [], i + 3
        while k < len(lines) and lines[k].strip() and not lines[k].startswith('SUM '):
            cells = lines[k].split()
            require(len(cells) == len(cols) + 1 and cells[0].isdigit(),
                    f'{where}: row {lines[k].strip()!r}: expected its index and '
                    f'{len(cols)} value(s)')
            matrix.append([_cell(c, where) for c in cells[1:]])
            k += 1
        require(matrix, f'{where}: no row under the column indices')
        while k < len(lines) and not lines[k].strip():
            k += 1
        s = re.match(rf'^SUM {re.escape(name)} ([0-9.]+)\s*$', lines[k] if k < len(lines) else '')
        require(s, f'{where}: no "SUM {name}" line after its matrix (truncated?)')
        out['tests'][name] = {'description': desc, 'unit': unit.group(1), 'matrix': matrix,
                              'sum': float(s.group(1))}
        i = k + 1
    require(out['tests'] or out['waived'], 'nvbandwidth ran no test case ("Running ..." or '
            '"Waived:")')
    return out


def parse_json(text):
    '''The same from ``nvbandwidth -j``.'''
    try:
        doc = json.loads(text)['nvbandwidth']
    except (ValueError, KeyError, TypeError) as e:
        raise ParseError(f'nvbandwidth JSON: not an object with "nvbandwidth" ({e})') from None
    out = {'version': doc.get('version'), 'driver': doc.get('Driver Version'), 'tests': {},
           'waived': [], 'devices': []}
    for entry in doc.get('GPU Device list') or []:
        g = re.match(r'^(\d+): (.+?) \(([0-9a-f:.]+)\)', entry)
        require(g, f'nvbandwidth JSON: GPU Device list entry {entry!r} not understood')
        out['devices'].append({'index': int(g.group(1)), 'name': g.group(2).strip(),
                               'bus_id': g.group(3)})
    require(out['devices'], 'nvbandwidth JSON: empty "GPU Device list"')
    for tc in doc.get('testcases') or []:
        name, status = tc.get('name'), tc.get('status')
        require(name, f'nvbandwidth JSON: a test case without a name: {tc}')
        if status == 'Waived':
            out['waived'].append(name)
            continue
        require(status == 'Passed', f'nvbandwidth JSON: {name}: status {status!r} (Passed or '
                'Waived expected)')
        desc = tc.get('bandwidth_description') or tc.get('latency_description') or ''
        unit = _UNIT.search(desc)
        require(unit, f'nvbandwidth JSON: {name}: description {desc!r} has no unit')
        matrix = tc.get('bandwidth_matrix') or tc.get('latency_matrix')
        require(isinstance(matrix, list) and matrix, f'nvbandwidth JSON: {name}: no matrix')
        out['tests'][name] = {'description': desc, 'unit': unit.group(1), 'sum': tc.get('sum'),
                              'matrix': [[_cell(str(c), f'nvbandwidth JSON {name}') for c in row]
                                         for row in matrix]}
    return out


#: the test cases whose per-GPU figures a check records: host to device and back, by copy
#: engine (CE) and by the GPU's SMs, device-local copy, and host-device latency
PER_GPU = {
    'host_to_device_memcpy_ce': 'h2d_ce_gbs', 'device_to_host_memcpy_ce': 'd2h_ce_gbs',
    'host_to_device_memcpy_sm': 'h2d_sm_gbs', 'device_to_host_memcpy_sm': 'd2h_sm_gbs',
    'device_local_copy': 'local_copy_gbs', 'host_device_latency_sm': 'host_latency_ns',
}
#: device-to-device cases: their pairs (i != j), where there are several GPUs
PAIRS = {'device_to_device_memcpy_read_ce': 'd2d_read_ce_gbs',
         'device_to_device_memcpy_write_ce': 'd2d_write_ce_gbs'}


#: the cases the Nvbandwidth check asks for (``-t``), in this order
CHECK_CASES = tuple(PER_GPU) + tuple(PAIRS)


def per_gpu(result):
    '''Flat figures: ``gpu<i>_<name>`` for the PER_GPU cases (the matrix's column i; the row
    is the CPU), and ``<name>_worst``, ``<name>_worst_pair`` (``"i-j"``) and ``pairs_of``
    for the PAIRS cases that ran (the lowest over the pairs i != j measured), and
    ``pairs_not_measured`` (``{case: ["i-j", ...]}``: the pairs the case printed as N/A). A
    case that did not run (waived, or not asked for) has no key.'''
    out, pairs, unmeasured = {}, {}, {}
    for case, name in PER_GPU.items():
        t = result['tests'].get(case)
        if t is None:
            continue
        for j, v in enumerate(t['matrix'][0]):
            if v is not None:
                out[f'gpu{j}_{name}'] = v
    for case, name in PAIRS.items():
        t = result['tests'].get(case)
        if t is None:
            continue
        cells = {f'{i}-{j}': v for i, row in enumerate(t['matrix'])
                 for j, v in enumerate(row) if i != j}
        missing = [k for k, v in cells.items() if v is None]
        if missing:
            unmeasured[case] = missing
        cells = {k: v for k, v in cells.items() if v is not None}
        if cells:
            pairs[name] = cells
            worst = min(cells, key=cells.get)
            out[f'{name}_worst'], out[f'{name}_worst_pair'] = cells[worst], worst
    out['pairs_of'] = pairs
    out['pairs_not_measured'] = unmeasured
    return out
