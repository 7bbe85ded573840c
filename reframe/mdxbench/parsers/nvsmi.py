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
        'clocks.max.memory', 'temperature.gpu', 'clocks.sm'}
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
    # (nvidia-smi's own failure -- "NVIDIA-SMI has failed ...", "No devices were found" --
    # is refused as no header, its first line quoted)
    lines = [ln for ln in text.splitlines() if ln.strip()]
    # (nvidia-smi joins fields with ", " and quotes none: each is stripped below)
    rows = list(csv.reader(io.StringIO('\n'.join(lines))))
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
    link trained narrower than it can be (current width below max). The current
    generation is not judged: an idle GPU drops its link to Gen 1 to save power, and the
    conformance reads it idle; a link that cannot reach its generation under load shows
    as low host-device bandwidth (nvbandwidth).'''
    out = []
    count = declared.get('count')
    if count is not None and len(gpus) != count:
        out.append(f'{len(gpus)} GPU(s) visible, {count} declared'
                   + (': ' + ', '.join(f"{g['index']} ({g.get('pci.bus_id')})" for g in gpus)
                      if gpus else ''))
    for g in gpus:
        who = f"GPU {g['index']} ({g.get('pci.bus_id')})"
        want = declared.get('model')
        if want and g.get('name') != want:
            out.append(f"{who}: model {g.get('name')!r}, {want!r} declared")
        want = declared.get('memory_mib')
        if want and (g.get('memory.total') or 0) < want:
            out.append(f"{who}: memory {g.get('memory.total')} MiB, at least {want} MiB "
                       'declared')
        want = declared.get('driver')
        if want and g.get('driver_version') != str(want):
            out.append(f"{who}: driver {g.get('driver_version')}, {want} declared")
        for key, field, what in (('mig', 'mig.mode.current', 'MIG mode'),
                                 ('persistence', 'persistence_mode', 'persistence mode'),
                                 ('ecc', 'ecc.mode.current', 'ECC')):
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
            # the width is what the link trained to; the generation a GPU lowers itself
            # at idle (Gen 1 until it is busy), so only a loaded link shows it: that is
            # nvbandwidth's host-device bandwidth, not this reading
            if key == 'width' and cur is not None and top is not None and cur < top:
                out.append(f"{who}: PCIe link {what} {cur}, below its max {top}")
    return out


def _text(node, path):
    found = node.find(path)
    if found is None or found.text is None:
        return None
    text = found.text.strip()
    return None if text in _MISSING else text


def parse_xml(text):
    '''``nvidia-smi -q -x``: the same dictionaries as parse_query (its field names), one per
    GPU in the order listed, so that conformance() reads either; each also has ``health``,
    its counters (:data:`HEALTH`).'''
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
            'temperature.gpu': _text(g, 'temperature/gpu_temp'),
            'clocks.sm': _text(g, 'clocks/sm_clock'),
        }
        require(raw['name'] and raw['pci.bus_id'], f'{where}: no product_name or pci_bus_id')
        # (a link width "16x" reads as 16: _value takes a number and its unit)
        gpu = {f: (None if v is None else _value(f, v, where))
               for f, v in raw.items()}
        gpu['health'] = _health(g, where)
        gpu['event_us'] = _event_counters(g, where)
        gpus.append(gpu)
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
        cells = [c.strip() for c in ln.split('\t')]       # (never empty: [''] at least)
        if not re.fullmatch(r'GPU\d+', cells[0]):
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


#: the health counters of ``nvidia-smi -q -x`` an operator reads first, by our name: how
#: each is read from a ``<gpu>`` element. Counts are summed over the elements named (those
#: a GPU does not report, ``N/A``, count as nothing); a flag is 1 where it reads Yes or
#: Active. What each means: NVIDIA's "GPU Memory Error Management" and "Clock Event
#: Reasons" (nvidia-smi documentation).
HEALTH = {
    # uncorrectable ECC errors since the driver loaded (volatile) and over the GPU's life
    'ecc_volatile_uncorrectable': ('count', (
        'ecc_errors/volatile/dram_uncorrectable',
        'ecc_errors/volatile/sram_uncorrectable_parity',
        'ecc_errors/volatile/sram_uncorrectable_secded')),
    'ecc_aggregate_uncorrectable': ('count', (
        'ecc_errors/aggregate/dram_uncorrectable',
        'ecc_errors/aggregate/sram_uncorrectable_parity',
        'ecc_errors/aggregate/sram_uncorrectable_secded')),
    # page retirement (before Ampere) and row remapping (Ampere on): a retirement or a
    # remap waiting for the GPU's reset, a remap that failed (no spare row: RMA)
    'retired_pages': ('count', (
        'retired_pages/multiple_single_bit_retirement/retired_count',
        'retired_pages/double_bit_retirement/retired_count')),
    'retired_pages_pending': ('flag', ('retired_pages/pending_retirement',)),
    'remapped_rows_uncorrectable': ('count', ('remapped_rows/remapped_row_unc',)),
    'remapped_rows_pending': ('flag', ('remapped_rows/remapped_row_pending',)),
    'remapped_rows_failure': ('flag', ('remapped_rows/remapped_row_failure',)),
    'sram_threshold_exceeded': ('flag', ('ecc_errors/aggregate/sram_threshold_exceeded',)),
    # clock event reasons active now that slow the GPU down from outside the workload
    'hw_slowdown': ('flag', ('clocks_event_reasons/clocks_event_reason_hw_slowdown',)),
    'hw_thermal_slowdown': ('flag', (
        'clocks_event_reasons/clocks_event_reason_hw_thermal_slowdown',)),
    'hw_power_brake_slowdown': ('flag', (
        'clocks_event_reasons/clocks_event_reason_hw_power_brake_slowdown',)),
    'sw_thermal_slowdown': ('flag', (
        'clocks_event_reasons/clocks_event_reason_sw_thermal_slowdown',)),
    # PCIe replays (link errors the link layer retried)
    'pcie_replays': ('count', ('pci/replay_counter',)),
}
_FLAG_ON = {'yes', 'active'}
#: older drivers name the clock event reasons "clocks_throttle_reasons"
_OLD_NAMES = (('clocks_event_reasons/clocks_event_reason_', 'clocks_throttle_reasons/clocks_throttle_reason_'),)


def _number(text, where, path):
    m = re.match(r'^(\d+)', text)
    require(m, f'{where}: <{path}> = {text!r}: expected a count')
    return int(m.group(1))


def _health(g, where):
    '''The HEALTH counters of one ``<gpu>`` element, and ``power_limit_below_default``
    (1 where the enforced power limit is below the default: a GPU capped by hand or by a
    site's tool runs slower than its peers). A counter none of whose elements the GPU
    reports is None (not reported), never 0.'''
    out = {}
    for name, (kind, paths) in HEALTH.items():
        values = []
        for path in paths:
            text = _text(g, path)
            for new, old in _OLD_NAMES:
                if text is None and path.startswith(new):
                    text = _text(g, old + path[len(new):])
            if text is None:
                continue
            values.append(int(text.strip().lower() in _FLAG_ON) if kind == 'flag'
                          else _number(text, where, path))
        out[name] = (max(values) if kind == 'flag' else sum(values)) if values else None
    limit = _text(g, 'gpu_power_readings/current_power_limit') or _text(
        g, 'power_readings/power_limit')
    default = _text(g, 'gpu_power_readings/default_power_limit') or _text(
        g, 'power_readings/default_power_limit')
    if limit and default:
        cur, dflt = (float(re.match(r'^([0-9.]+)', t).group(1)) for t in (limit, default))
        out['power_limit_below_default'] = int(cur < dflt)
        out['power_limit_w'], out['default_power_limit_w'] = cur, dflt
    else:
        out['power_limit_below_default'] = None
    return out


#: ``<clocks_event_reasons_counters>``: the time, since the driver loaded, each reason
#: held the GPU's clocks down (``N us``), by our name (that of the reason's flag above,
#: where it has one); not reported by drivers before r535
EVENT_COUNTERS = {'sw_power_cap': 'clocks_event_reasons_counters_sw_power_cap',
                  'sync_boost': 'clocks_event_reasons_counters_sync_boost',
                  'sw_thermal_slowdown': 'clocks_event_reasons_counters_sw_therm_slowdown',
                  'hw_thermal_slowdown': 'clocks_event_reasons_counters_hw_therm_slowdown',
                  'hw_power_brake_slowdown': 'clocks_event_reasons_counters_hw_power_brake'}


def _event_counters(g, where):
    out = {}
    for name, tag in EVENT_COUNTERS.items():
        text = _text(g, f'clocks_event_reasons_counters/{tag}')
        out[name] = None if text is None or text.strip() in _MISSING \
            else _number(text, where, tag)
    return out


def throttled(before, after, limits):
    """How long each clock event reason held each GPU down between two ``nvidia-smi -q
    -x`` readings (parse_xml: ``before`` and ``after`` a load), and the GPUs past
    ``limits`` (``{reason: most seconds}``; a reason left out is recorded, not judged):
    ``({bus id: {reason: seconds}}, [sentence naming the GPU, the reason and its
    seconds])``. The GPUs are matched by bus id: a GPU missing from either reading is a
    sentence too. A counter either reading lacks is not compared."""
    unknown = sorted(set(limits or {}) - set(EVENT_COUNTERS))
    require(not unknown, f'throttle limits: unknown reason(s) {", ".join(unknown)}; '
            f'known: {", ".join(EVENT_COUNTERS)}')
    first = {bus_key(g['pci.bus_id']): g for g in before}
    seconds, wrong = {}, []
    for g in after:
        who = f"GPU {g['index']} ({g['pci.bus_id']})"
        b = first.pop(bus_key(g['pci.bus_id']), None)
        if b is None:
            wrong.append(f'{who}: not in the reading before the load')
            continue
        grew = {r: (g['event_us'][r] - b['event_us'][r]) / 1e6 for r in EVENT_COUNTERS
                if g['event_us'].get(r) is not None and b['event_us'].get(r) is not None}
        seconds[g['pci.bus_id']] = grew
        for reason, most in (limits or {}).items():
            if grew.get(reason, 0) > most:
                wrong.append(f'{who}: {reason} for {grew[reason]:.1f} s under the load, at '
                             f'most {most} s allowed')
    wrong += [f"GPU {g['index']} ({g['pci.bus_id']}): not in the reading after the load"
              for g in first.values()]
    return seconds, wrong


def health_failures(gpus, limits):
    '''Every GPU counter above what ``limits`` allows (the partition's
    ``extras.gpu_health``: ``{counter: most allowed}``, a flag's most allowed 0; a counter
    left out is recorded, not judged), as sentences naming the GPU's index and bus id and
    the counter. A counter the GPU does not report is not judged. Xid events
    (``xid`` in ``limits``) are counted per GPU by :func:`xid_per_gpu` into ``health``.'''
    unknown = sorted(set(limits or {}) - set(HEALTH) - {'power_limit_below_default', 'xid'})
    require(not unknown, f'extras.gpu_health: unknown counter(s) {", ".join(unknown)}; '
            f'known: {", ".join(sorted(set(HEALTH) | {"power_limit_below_default", "xid"}))}')
    out = []
    for g in gpus:
        who = f"GPU {g['index']} ({g.get('pci.bus_id')})"
        for name, most in (limits or {}).items():
            have = (g.get('health') or {}).get(name)
            if have is not None and have > most:
                out.append(f'{who}: {name} {have}, at most {most} allowed')
    return out


#: a kernel log line of the NVIDIA driver reporting an Xid event:
#: ``NVRM: Xid (PCI:0000:3b:00): 79, pid=..., GPU has fallen off the bus.``
_XID = re.compile(r'NVRM: Xid \(PCI:([0-9a-fA-F]+):([0-9a-fA-F]+):([0-9a-fA-F]+)(?:\.\d+)?\): '
                  r'(\d+),\s*(.*)$')


def parse_xid(text):
    '''The output of ``scripts/gpu-xid.sh``: ``{'read': how the kernel log was read, or
    None, 'unreadable': why not, or None, 'events': [{'bus': (domain, bus, device), 'xid':
    N, 'text': the rest of the line}]}``.'''
    require(text is not None and text.strip(), 'gpu-xid.sh output is empty')
    out = {'read': None, 'unreadable': None, 'events': []}
    for line in text.splitlines():
        if line.startswith('# read: '):
            out['read'] = line[len('# read: '):].strip()
        elif line.startswith('# unreadable: '):
            out['unreadable'] = line[len('# unreadable: '):].strip()
        else:
            m = _XID.search(line)
            if m:
                out['events'].append({'bus': tuple(int(x, 16) for x in m.group(1, 2, 3)),
                                      'xid': int(m.group(4)), 'text': m.group(5).strip()})
    require(out['read'] or out['unreadable'], 'gpu-xid.sh output has neither "# read:" nor '
            '"# unreadable:": cut before its end')
    return out


def bus_key(bus_id):
    '''(domain, bus, device) of a bus id as nvidia-smi prints it (``00000000:3B:00.0``).'''
    m = bus_id and re.match(r'^([0-9a-fA-F]+):([0-9a-fA-F]+):([0-9a-fA-F]+)', bus_id)
    require(m, f'bus id {bus_id!r} not understood')
    return tuple(int(x, 16) for x in m.group(1, 2, 3))


def xid_per_gpu(gpus, xid):
    '''Count each GPU's Xid events (``parse_xid``) into its ``health['xid']`` (None where
    the kernel log could not be read), and return the events of no listed GPU.'''
    by_bus = {bus_key(g.get('pci.bus_id')): g for g in gpus}
    for g in gpus:
        g.setdefault('health', {})['xid'] = None if xid['read'] is None else 0
        g['health']['xid_codes'] = []
    stray = []
    for e in xid['events'] if xid['read'] else []:
        g = by_bus.get(e['bus'])
        if g is None:
            stray.append(e)
            continue
        g['health']['xid'] += 1
        g['health']['xid_codes'].append(e['xid'])
    return stray
