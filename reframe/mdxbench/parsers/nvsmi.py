'''``nvidia-smi --query-gpu=FIELDS --format=csv``: one dictionary per GPU, and the GPU
conformance of a node against what its partition declares.

QUERY is the field list the conformance check asks for. nvidia-smi writes a header of
the field names (with their units in brackets) and a line per GPU; ``[N/A]`` and
``[Not Supported]`` become ``None``.'''
import csv
import io
import re

from . import ParseError, require

QUERY = ('index', 'name', 'uuid', 'memory.total', 'driver_version', 'vbios_version',
         'pci.bus_id', 'pcie.link.gen.max', 'pcie.link.width.max', 'pcie.link.gen.current',
         'pcie.link.width.current', 'ecc.mode.current', 'clocks.max.sm', 'clocks.max.memory',
         'power.limit', 'mig.mode.current', 'persistence_mode', 'compute_mode')

_INT = {'index', 'memory.total', 'pcie.link.gen.max', 'pcie.link.width.max',
        'pcie.link.gen.current', 'pcie.link.width.current', 'clocks.max.sm',
        'clocks.max.memory'}
_FLOAT = {'power.limit'}
_MISSING = {'[N/A]', '[Not Supported]', 'N/A', '[Unknown Error]'}


def _value(field, text, where):
    text = text.strip()
    if text in _MISSING:
        return None
    if field in _INT | _FLOAT:
        m = re.match(r'^([0-9.]+)(?:\s*\S+)?$', text)
        require(m, f'{where}: {field} = {text!r}: expected a number')
        return int(float(m.group(1))) if field in _INT else float(m.group(1))
    return text


def parse_query(text):
    '''``[{field: value}]`` of ``nvidia-smi --query-gpu=... --format=csv`` (the header's
    field names, units dropped), one per GPU in the order printed.'''
    require(text and text.strip(), 'nvidia-smi output is empty')
    lines = [ln for ln in text.splitlines() if ln.strip()]
    if lines[0].startswith(('NVIDIA-SMI has failed', 'No devices were found')):
        raise ParseError(f'nvidia-smi: {lines[0].strip()}')
    rows = list(csv.reader(io.StringIO('\n'.join(lines)), skipinitialspace=True))
    header = [re.sub(r'\s*\[[^]]*\]$', '', h.strip()) for h in rows[0]]
    require('name' in header and 'pci.bus_id' in header,
            f'nvidia-smi: the first line {lines[0]!r} is not a --format=csv header naming '
            'name and pci.bus_id')
    gpus = []
    for k, row in enumerate(rows[1:], start=2):
        require(len(row) == len(header), f'nvidia-smi line {k}: {len(row)} fields, the header '
                f'has {len(header)}: {lines[k - 1]!r}')
        gpus.append({f: _value(f, v, f'nvidia-smi line {k}') for f, v in zip(header, row)})
    require(gpus, 'nvidia-smi: a header and no GPU line')
    for i, g in enumerate(gpus):
        g.setdefault('index', i)
    return gpus


def _enabled(v):
    return None if v is None else v.strip().lower() == 'enabled'


def conformance(gpus, declared):
    '''Every way ``gpus`` (parse_query) differs from ``declared`` (the partition's
    ``extras.gpu``: ``model``, ``count``, ``memory_mib`` (at least; nvidia-smi reports a
    little less than the marketed size), ``driver``, ``persistence``, ``ecc``,
    ``pcie_gen``, ``pcie_width``, ``mig``; a key left out is not checked), as sentences
    naming the GPU's index and bus id. Empty: the node conforms. Also fails where the
    link trained below what it can do (current width or generation below max): at idle a
    GPU may lower its link generation to save power, so the check reads it while nothing
    else runs on the node and says both figures.'''
    out = []
    count = declared.get('count')
    if count is not None and len(gpus) != count:
        out.append(f'{len(gpus)} GPU(s) visible, {count} declared'
                   + (': ' + ', '.join(f"{g['index']} ({g.get('pci.bus_id')})" for g in gpus)
                      if gpus else ''))
    for g in gpus:
        who = f"GPU {g['index']} ({g.get('pci.bus_id')})"
        want = declared.get('model')
        if want and (g.get('name') or '') != want:
            out.append(f"{who}: model {g.get('name')!r}, {want!r} declared")
        want = declared.get('memory_mib')
        if want and (g.get('memory.total') or 0) < want:
            out.append(f"{who}: memory {g.get('memory.total')} MiB, at least {want} MiB "
                       'declared')
        want = declared.get('driver')
        if want and g.get('driver_version') != str(want):
            out.append(f"{who}: driver {g.get('driver_version')}, {want} declared")
        for key, field, what in (('persistence', 'persistence_mode', 'persistence mode'),
                                 ('ecc', 'ecc.mode.current', 'ECC'),
                                 ('mig', 'mig.mode.current', 'MIG mode')):
            want = declared.get(key)
            if want is None:
                continue
            have = _enabled(g.get(field))
            if have is None and key == 'mig' and not want:
                continue                 # a GPU without MIG has MIG off
            if have != bool(want):
                out.append(f"{who}: {what} {g.get(field) or 'not reported'}, "
                           f"{'Enabled' if want else 'Disabled'} declared")
        for key, what in (('gen', 'generation'), ('width', 'width')):
            cur, top = g.get(f'pcie.link.{key}.current'), g.get(f'pcie.link.{key}.max')
            want = declared.get(f'pcie_{key}')
            if want and (top or 0) < want:
                out.append(f"{who}: PCIe link {what} at most {top}, {want} declared")
            if cur is not None and top is not None and cur < top:
                out.append(f"{who}: PCIe link {what} {cur}, below its max {top}")
    return out


def _text(node, path):
    found = node.find(path)
    if found is None or found.text is None:
        return None
    text = found.text.strip()
    return None if text in _MISSING or text == 'N/A' else text


def parse_xml(text):
    '''``nvidia-smi -q -x``: the same dictionaries as parse_query (its field names), one per
    GPU in the order listed, so that conformance() reads either.'''
    import xml.etree.ElementTree as ET

    require(text and text.strip(), 'nvidia-smi -q -x output is empty')
    try:
        root = ET.fromstring(text)
    except ET.ParseError as err:
        raise ParseError(f'nvidia-smi -q -x: not XML ({err})') from None
    require(root.tag == 'nvidia_smi_log', f'nvidia-smi -q -x: root element <{root.tag}>, '
            'expected <nvidia_smi_log>')
    driver = _text(root, 'driver_version')
    gpus = []
    for i, g in enumerate(root.findall('gpu')):
        where = f"nvidia-smi -q -x, GPU {i} ({g.get('id')})"
        raw = {
            'index': str(i), 'name': _text(g, 'product_name'), 'uuid': _text(g, 'uuid'),
            'memory.total': _text(g, 'fb_memory_usage/total'), 'driver_version': driver,
            'vbios_version': _text(g, 'vbios_version'),
            'pci.bus_id': _text(g, 'pci/pci_bus_id') or g.get('id'),
            'pcie.link.gen.max': _text(g, 'pci/pci_gpu_link_info/pcie_gen/max_link_gen'),
            'pcie.link.gen.current': _text(g, 'pci/pci_gpu_link_info/pcie_gen/current_link_gen'),
            'pcie.link.width.max': _text(g, 'pci/pci_gpu_link_info/link_widths/max_link_width'),
            'pcie.link.width.current':
                _text(g, 'pci/pci_gpu_link_info/link_widths/current_link_width'),
            'ecc.mode.current': _text(g, 'ecc_mode/current_ecc'),
            'mig.mode.current': _text(g, 'mig_mode/current_mig'),
            'persistence_mode': _text(g, 'persistence_mode'),
            'compute_mode': _text(g, 'compute_mode'),
        }
        require(raw['name'] and raw['pci.bus_id'], f'{where}: no product_name or pci_bus_id')
        gpus.append({f: (None if v is None else _value(f, v.rstrip('x'), where))
                     for f, v in raw.items()})
    require(gpus, 'nvidia-smi -q -x lists no <gpu>')
    attached = _text(root, 'attached_gpus')
    require(attached is None or int(attached) == len(gpus),
            f'nvidia-smi -q -x: attached_gpus {attached}, {len(gpus)} <gpu> listed (cut?)')
    return gpus


#: ``nvidia-smi topo -m`` connection types, best first
LINKS = ('X', 'NV', 'PIX', 'PXB', 'PHB', 'NODE', 'SYS')


def parse_topo(text):
    '''``nvidia-smi topo -m``: ``{'gpus': ['GPU0', ...], 'links': {(i, j): 'NV12' | 'PIX' |
    ...}, 'cpu_affinity': {i: '0-15'}, 'numa_affinity': {i: '0'}}`` (the terminal's
    underline escapes dropped).'''
    require(text and text.strip(), 'nvidia-smi topo -m output is empty')
    lines = [re.sub(r'\x1b\[[0-9;]*m', '', ln) for ln in text.splitlines()]
    head = next((ln for ln in lines if ln.strip().startswith('GPU0')), None)
    require(head is not None, 'nvidia-smi topo -m: no header row starting with GPU0')
    cols = [c.strip() for c in head.strip().split('\t')]
    gpus = [c for c in cols if re.fullmatch(r'GPU\d+', c)]
    out = {'gpus': gpus, 'links': {}, 'cpu_affinity': {}, 'numa_affinity': {}}
    for ln in lines[lines.index(head) + 1:]:
        cells = [c.strip() for c in ln.split('\t')]
        if not re.fullmatch(r'GPU\d+', cells[0] if cells else ''):
            continue
        i = gpus.index(cells[0])
        require(len(cells) >= len(gpus) + 1, f'nvidia-smi topo -m: row {cells[0]} has '
                f'{len(cells) - 1} cells, {len(gpus)} GPUs in the header')
        for j in range(len(gpus)):
            link = cells[1 + j]
            require(link == 'X' or re.fullmatch(r'(NV\d+|PIX|PXB|PHB|NODE|SYS)', link),
                    f'nvidia-smi topo -m: {cells[0]} to {gpus[j]}: link {link!r} not understood')
            out['links'][(i, j)] = link
        extra = dict(zip(cols[len(gpus):], cells[1 + len(gpus):]))
        out['cpu_affinity'][i] = extra.get('CPU Affinity')
        out['numa_affinity'][i] = extra.get('NUMA Affinity')
    require(len(out['cpu_affinity']) == len(gpus),
            f'nvidia-smi topo -m: {len(out["cpu_affinity"])} rows for {len(gpus)} GPUs')
    return out
