'''NVIDIA's ``p2pBandwidthLatencyTest`` (CUDA samples): the connectivity matrix, the four
bandwidth matrices (unidirectional and bidirectional, P2P disabled and enabled, GB/s) and
the latency matrices (GPU and CPU, P2P disabled and enabled, microseconds), N x N for N
GPUs, rows the source device.

Off the diagonal a matrix holds what a pair of GPUs measured; on it, a GPU's copy within
its own memory. With one GPU there is no pair: the pair figures are ``None`` (not
measured), never 0.'''
import re

from . import ParseError, require

#: the matrices the program prints, by title, and our name for each
MATRICES = {
    'Unidirectional P2P=Disabled Bandwidth Matrix (GB/s)': 'uni_p2p_disabled',
    'Unidirectional P2P=Enabled Bandwidth (P2P Writes) Matrix (GB/s)': 'uni_p2p_enabled',
    'Bidirectional P2P=Disabled Bandwidth Matrix (GB/s)': 'bi_p2p_disabled',
    'Bidirectional P2P=Enabled Bandwidth Matrix (GB/s)': 'bi_p2p_enabled',
    'P2P=Disabled Latency Matrix (us)': 'latency_p2p_disabled',
    'P2P=Enabled Latency (P2P Writes) Matrix (us)': 'latency_p2p_enabled',
}
BANDWIDTH = ('uni_p2p_disabled', 'uni_p2p_enabled', 'bi_p2p_disabled', 'bi_p2p_enabled')
LATENCY = ('latency_p2p_disabled', 'latency_p2p_enabled')

#: a GPU's line: the PCI ids in hex as ``printf("%x")`` writes them (lower case)
_DEVICE = re.compile(r'^Device: (\d+), (.+?), pciBusID: ([0-9a-f]+), '
                     r'pciDeviceID: ([0-9a-f]+), pciDomainID:\s*([0-9a-f]+)\s*$', re.M)


def _bus_id(domain, bus, device):
    '''The GPU's bus id as nvbandwidth prints it (output.cpp, ``getDeviceDisplayInfo``:
    domain, bus and device in hex, zero-filled to 8, 2 and 2 digits), from the sample's
    ``%x`` ids: the same GPU has the same id in both tools' records.'''
    return f'{domain:0>8}:{bus:0>2}:{device:0>2}'


def _matrix(lines, start, n, corner, where):
    '''The N x N matrix whose header line (``corner`` and the column indices) is at
    ``start``; its rows follow. Returns (matrix, index of the line after it).'''
    head = lines[start].split()
    require(head and head[0] == corner and head[1:] == [str(i) for i in range(n)],
            f'{where}: expected a header "{corner} 0 .. {n - 1}" for {n} GPU(s), got '
            f'{lines[start].strip()!r}')
    rows = []
    for i in range(n):
        k = start + 1 + i
        require(k < len(lines), f'{where}: {i} of {n} rows, then the output ends (truncated?)')
        cells = lines[k].split()
        require(len(cells) == n + 1 and cells[0] == str(i),
                f'{where}: row {i}: expected "{i}" and {n} values, got {lines[k].strip()!r}')
        try:
            rows.append([float(c) for c in cells[1:]])
        except ValueError:
            raise ParseError(f'{where}: row {i}: a value is not a number: '
                             f'{lines[k].strip()!r}') from None
    return rows, start + 1 + n


def parse(text):
    '''``{'devices': [{'index', 'name', 'bus_id'}],
    'connectivity': N x N of 0/1, and each of MATRICES' names: N x N floats}``; latency
    matrices as ``{'gpu': N x N, 'cpu': N x N}``.'''
    require(text and text.strip(), 'p2pBandwidthLatencyTest output is empty')
    require('[P2P (Peer-to-Peer) GPU Bandwidth Latency Test]' in text,
            'no "[P2P (Peer-to-Peer) GPU Bandwidth Latency Test]" banner: not the output of '
            "CUDA samples' p2pBandwidthLatencyTest")
    devices = [{'index': int(m.group(1)), 'name': m.group(2).strip(),
                'bus_id': _bus_id(m.group(5), m.group(3), m.group(4))}
               for m in _DEVICE.finditer(text)]
    require(devices, 'no "Device: N, NAME, pciBusID: ..." line: no GPU listed')
    n = len(devices)
    require([d['index'] for d in devices] == list(range(n)),
            f'devices listed as {[d["index"] for d in devices]}, expected 0 .. {n - 1}')
    lines = text.splitlines()
    titles = {ln.strip(): i for i, ln in enumerate(lines)}
    out = {'devices': devices}
    require('P2P Connectivity Matrix' in titles,
            'no "P2P Connectivity Matrix": the program stopped before its matrices (truncated?)')
    conn, _ = _matrix(lines, titles['P2P Connectivity Matrix'] + 1, n, 'D\\D',
                      'P2P Connectivity Matrix')
    out['connectivity'] = [[int(v) for v in row] for row in conn]
    for title, name in MATRICES.items():
        require(title in titles, f'no "{title}": truncated output, or another version of the '
                'sample')
        at = titles[title] + 1
        if name in LATENCY:
            gpu, after = _matrix(lines, at, n, 'GPU', title)
            while after < len(lines) and not lines[after].strip():
                after += 1
            require(after < len(lines), f'{title}: no CPU matrix after the GPU one (truncated?)')
            cpu, _ = _matrix(lines, after, n, 'CPU', title + ' (CPU)')
            out[name] = {'gpu': gpu, 'cpu': cpu}
        else:
            out[name], _ = _matrix(lines, at, n, 'D\\D', title)
    return out


def summary(result):
    '''Per GPU and per pair figures of a parsed output, as flat perf values:

    * ``gpu<i>_local_gbs``: GPU i's copy within its own memory (the diagonal of the
      unidirectional P2P-disabled matrix);
    * ``<matrix>_worst_gbs``: the lowest bandwidth over the pairs (i != j) of each bandwidth
      matrix, ``<latency>_worst_us`` the highest GPU latency over the pairs; ``None`` with
      one GPU (no pair: not measured); ``<matrix>_best_gbs`` the highest (what "at most N
      GB/s between GPUs" is a statement of); ``worst_pair``: ``{figure: "i-j"}`` of each
      worst, the pair a failure names;
    * ``p2p_pairs``: pairs whose connectivity is 1, ``pairs``: all pairs (i != j);
    * ``pairs_of``: ``{matrix: {"i-j": value}}`` of every pair, for the record.'''
    n = len(result['devices'])
    out = {f'gpu{i}_local_gbs': result['uni_p2p_disabled'][i][i] for i in range(n)}
    pairs = [(i, j) for i in range(n) for j in range(n) if i != j]
    out['pairs'] = len(pairs)
    out['p2p_pairs'] = sum(result['connectivity'][i][j] for i, j in pairs)
    out['pairs_of'], out['worst_pair'] = {}, {}
    for name in BANDWIDTH:
        m = result[name]
        worst = min(pairs, key=lambda p: m[p[0]][p[1]], default=None)
        out[f'{name}_worst_gbs'] = m[worst[0]][worst[1]] if worst else None
        out[f'{name}_best_gbs'] = max((m[i][j] for i, j in pairs), default=None)
        out['pairs_of'][name] = {f'{i}-{j}': m[i][j] for i, j in pairs}
        if worst:
            out['worst_pair'][f'{name}_worst_gbs'] = f'{worst[0]}-{worst[1]}'
    for name in LATENCY:
        m = result[name]['gpu']
        worst = max(pairs, key=lambda p: m[p[0]][p[1]], default=None)
        out[f'{name}_worst_us'] = m[worst[0]][worst[1]] if worst else None
        out['pairs_of'][name] = {f'{i}-{j}': m[i][j] for i, j in pairs}
        if worst:
            out['worst_pair'][f'{name}_worst_us'] = f'{worst[0]}-{worst[1]}'
    return out
