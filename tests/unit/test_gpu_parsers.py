'''The GPU parsers (issue 42) on real outputs of one NVIDIA H200 under PCIe passthrough
(tests/fixtures/gpu, provenance in tests/fixtures/README.md). Truncated, altered or foreign
text is made from those outputs -- a cut, or one token of them replaced -- never written
whole.'''
import pytest

from hang import HANG_S
from mdxbench.parsers import ParseError, babelstream, nvbandwidth, nvsmi, p2p

GPU = 'gpu/'


# --- p2pBandwidthLatencyTest ------------------------------------------------------------
def test_p2p_reads_every_matrix_of_one_gpu(fixture_text):
    r = p2p.parse(fixture_text(GPU + 'p2pBandwidthLatencyTest-h200-1gpu.out'))
    assert r['devices'] == [{'index': 0, 'name': 'NVIDIA H200', 'bus_id': '00000000:00:06'}]
    assert r['connectivity'] == [[1]]
    assert r['uni_p2p_disabled'] == [[3966.68]] and r['uni_p2p_enabled'] == [[3958.51]]
    assert r['bi_p2p_disabled'] == [[4098.19]] and r['bi_p2p_enabled'] == [[4095.17]]
    assert r['latency_p2p_disabled'] == {'gpu': [[1.67]], 'cpu': [[4.57]]}
    assert r['latency_p2p_enabled'] == {'gpu': [[1.65]], 'cpu': [[4.54]]}


def test_p2p_with_one_gpu_has_no_pair_measured_not_a_zero(fixture_text):
    s = p2p.summary(p2p.parse(fixture_text(GPU + 'p2pBandwidthLatencyTest-h200-1gpu.out')))
    assert s['gpu0_local_gbs'] == 3966.68
    assert s['pairs'] == 0 and s['p2p_pairs'] == 0
    for name in p2p.BANDWIDTH:
        assert s[f'{name}_worst_gbs'] is None
    for name in p2p.LATENCY:
        assert s[f'{name}_worst_us'] is None


def test_p2p_pairs_worst_and_connectivity_of_several_gpus():
    '''summary() on the parsed form of 3 GPUs (a data structure, not an output: the only
    real output here has one GPU): the worst pair of each matrix, and how many pairs can
    use P2P.'''
    n = 3
    bw = [[900.0, 20.1, 19.8], [20.4, 901.0, 275.0], [19.9, 274.0, 899.0]]
    r = {'devices': [{'index': i} for i in range(n)],
         'connectivity': [[1, 0, 0], [0, 1, 1], [0, 1, 1]],
         **{name: bw for name in p2p.BANDWIDTH},
         **{name: {'gpu': [[1.6, 12.0, 11.0], [12.5, 1.6, 2.0], [11.2, 2.1, 1.6]],
                   'cpu': [[4.5] * n] * n} for name in p2p.LATENCY}}
    s = p2p.summary(r)
    assert [s[f'gpu{i}_local_gbs'] for i in range(n)] == [900.0, 901.0, 899.0]
    assert s['pairs'] == 6 and s['p2p_pairs'] == 2
    assert s['uni_p2p_enabled_worst_gbs'] == 19.8
    assert s['latency_p2p_enabled_worst_us'] == 12.5
    assert s['pairs_of']['bi_p2p_enabled']['1-2'] == 275.0 and '0-0' not in s['pairs_of']['bi_p2p_enabled']


@pytest.mark.parametrize('cut, says', [
    ('Bidirectional P2P=Disabled', 'no "Bidirectional P2P=Disabled Bandwidth Matrix'),
    ('P2P Connectivity Matrix', 'no "P2P Connectivity Matrix"'),
    ('   CPU     0 \n     0   4.54', 'no CPU matrix after the GPU one'),
])
def test_p2p_truncated_output_names_what_is_missing(fixture_text, cut, says):
    text = fixture_text(GPU + 'p2pBandwidthLatencyTest-h200-1gpu.out')
    with pytest.raises(ParseError, match=said(says)):
        p2p.parse(text[:text.index(cut)])


_CONN = 'P2P Connectivity Matrix\n     D\\D     0\n'
_LAT = 'P2P=Disabled Latency Matrix (us)\n   GPU     0 \n     0   1.67 \n\n   CPU     0 \n'


@pytest.mark.parametrize('alter, message', [
    (lambda t: t[:t.index('Bidirectional P2P=Disabled')],
     'no "Bidirectional P2P=Disabled Bandwidth Matrix (GB/s)": truncated output, or another '
     'version of the sample'),
    (lambda t: t[:t.index('P2P Connectivity Matrix')],
     'no "P2P Connectivity Matrix": the program stopped before its matrices (truncated?)'),
    (lambda t: t.replace(_CONN, _CONN.replace('0\n', '0     1\n'), 1),
     'P2P Connectivity Matrix: expected a header "D\\D 0 .. 0" for 1 GPU(s), got '
     "'D\\\\D     0     1'"),
    (lambda t: t.replace(_LAT, _LAT.replace('GPU     0', 'GPU     1'), 1),
     'P2P=Disabled Latency Matrix (us): expected a header "GPU 0 .. 0" for 1 GPU(s), got '
     "'GPU     1'"),
    (lambda t: t.replace(_LAT, _LAT.replace('CPU     0', 'CPU     1'), 1),
     'P2P=Disabled Latency Matrix (us) (CPU): expected a header "CPU 0 .. 0" for 1 GPU(s), '
     "got 'CPU     1'"),
], ids=['no-bidirectional', 'no-connectivity', 'connectivity-header', 'gpu-latency-header',
        'cpu-latency-header'])
def test_p2p_names_the_matrix_cut_or_altered_word_for_word(fixture_text, alter, message):
    """The real H200 output cut or altered once each: what is missing or wrong, and in
    which matrix."""
    text = fixture_text(GPU + 'p2pBandwidthLatencyTest-h200-1gpu.out')
    assert alter(text) != text
    with pytest.raises(ParseError) as err:
        p2p.parse(alter(text))
    assert str(err.value) == message


P2P8 = GPU + 'p2pBandwidthLatencyTest-8gpu-no-p2p.out'


def test_p2p_reads_eight_gpus_their_hex_ids_and_every_row(fixture_text):
    """8 GPUs without peer access (derived from the H200's output, tests/fixtures/README.md):
    each GPU's bus id from its PCI ids as the sample prints them (``%x``: device 0xa to
    0xd), the connectivity none but each GPU to itself, and every row of every matrix its source
    GPU's -- the diagonal the H200's own copy, the pairs the staged copy."""
    r = p2p.parse(fixture_text(P2P8))
    assert [(d['index'], d['bus_id']) for d in r['devices']] == [
        (0, '00000000:00:06'), (1, '00000000:00:07'), (2, '00000000:00:08'),
        (3, '00000000:00:09'), (4, '00000000:00:0a'), (5, '00000000:00:0b'),
        (6, '00000000:00:0c'), (7, '00000000:00:0d')]
    assert r['connectivity'] == [[int(i == j) for j in range(8)] for i in range(8)]
    for name, own, pair in (('uni_p2p_disabled', 3966.68, 55.38),
                            ('bi_p2p_enabled', 4095.17, 101.42)):
        assert r[name] == [[own if i == j else pair for j in range(8)] for i in range(8)], name
    lat = r['latency_p2p_disabled']
    assert lat['gpu'] == [[1.67 if i == j else 2.36 for j in range(8)] for i in range(8)]
    assert lat['cpu'] == [[4.57 if i == j else 5.26 for j in range(8)] for i in range(8)]
    s = p2p.summary(r)
    assert s['pairs'] == 56 and s['p2p_pairs'] == 0
    assert s['uni_p2p_disabled_worst_gbs'] == 55.38 and s['latency_p2p_enabled_worst_us'] == 2.36
    assert [s[f'gpu{i}_local_gbs'] for i in range(8)] == [3966.68] * 8


def test_p2p_names_each_gpu_by_the_bus_id_nvbandwidth_prints_for_it(fixture_text):
    """The same GPU has the same id in the sample's and nvbandwidth's records: the real
    H200's two outputs, and the 8 GPUs' (each tool's own format)."""
    for p2p_out, nvb_out, order in (
            ('p2pBandwidthLatencyTest-h200-1gpu.out', 'nvbandwidth-0.8-h200-vm.out',
             nvbandwidth.V08_ORDER),
            ('p2pBandwidthLatencyTest-8gpu-no-p2p.out', 'nvbandwidth-0.8-8gpu-no-p2p.out',
             nvbandwidth.CHECK_CASES)):
        ours = [(d['index'], d['bus_id']) for d in p2p.parse(fixture_text(GPU + p2p_out))['devices']]
        theirs = [(d['index'], d['bus_id'])
                  for d in nvbandwidth.parse(fixture_text(GPU + nvb_out), order)['devices']]
        assert ours == theirs and len(ours) in (1, 8)


@pytest.mark.parametrize('alter, message', [
    (lambda t: t.replace('     3 101.42 101.42 101.42 4098.19', '     4 101.42 101.42 101.42 '
                         '4098.19', 1),
     'Bidirectional P2P=Disabled Bandwidth Matrix (GB/s): row 3: expected "3" and 8 values, '
     "got '4 101.42 101.42 101.42 4098.19 101.42 101.42 101.42 101.42'"),
    (lambda t: t.replace('     7   2.36   2.36   2.36   2.36   2.36   2.36   2.36   1.65 \n\n',
                         '     7   2.36   2.36   2.36   2.36   2.36   2.36   1.65 \n\n', 1),
     'P2P=Enabled Latency (P2P Writes) Matrix (us): row 7: expected "7" and 8 values, got '
     "'7   2.36   2.36   2.36   2.36   2.36   2.36   1.65'"),
    (lambda t: t[:t.index('     6 101.42 101.42 101.42 101.42 101.42 101.42 4095.17')],
     'Bidirectional P2P=Enabled Bandwidth Matrix (GB/s): 6 of 8 rows, then the output ends '
     '(truncated?)'),
    (lambda t: t.replace('     5  55.38  55.38  55.38  55.38  55.38 3966.68',
                         '     5  55.38  55.38  55.38  55.38  55.38 3966,68', 1),
     'Unidirectional P2P=Disabled Bandwidth Matrix (GB/s): row 5: a value is not a number: '
     "'5  55.38  55.38  55.38  55.38  55.38 3966,68  55.38  55.38'"),
], ids=['row-index', 'short-row', 'cut-rows', 'not-a-number'])
def test_p2p_names_the_row_of_eight_word_for_word(fixture_text, alter, message):
    """A row of the 8-GPU output altered once: which matrix, which row."""
    text = fixture_text(P2P8)
    assert alter(text) != text
    with pytest.raises(ParseError) as err:
        p2p.parse(alter(text))
    assert str(err.value) == message


def test_p2p_refuses_another_programs_output(fixture_text):
    with pytest.raises(ParseError, match='not the output of'):
        p2p.parse(fixture_text(GPU + 'nvbandwidth-0.8-h200-vm.out'))


# --- nvbandwidth --------------------------------------------------------------------------
def test_nvbandwidth_reads_every_case_that_ran_and_counts_the_waived(fixture_text):
    r = nvbandwidth.parse(fixture_text(GPU + 'nvbandwidth-0.8-h200-vm.out'))
    assert r['version'] == 'v0.8' and r['driver'] == '580.159.04'
    assert r['devices'] == [{'index': 0, 'name': 'NVIDIA H200', 'bus_id': '00000000:00:06'}]
    assert len(r['tests']) == 18 and len(r['waived']) == 17
    h2d = r['tests']['host_to_device_memcpy_ce']
    assert h2d['matrix'] == [[55.53]] and h2d['unit'] == 'GB/s' and h2d['sum'] == 55.53
    lat = r['tests']['host_device_latency_sm']
    assert lat['unit'] == 'ns' and lat['matrix'] == [[1181.11]]
    # the device-to-device cases need two GPUs: waived, so not measured (no key, no 0)
    assert not any(name.startswith('device_to_device') for name in r['tests'])


def test_nvbandwidth_per_gpu_figures(fixture_text):
    f = nvbandwidth.per_gpu(nvbandwidth.parse(fixture_text(GPU + 'nvbandwidth-0.8-h200-vm.out')))
    assert f['gpu0_h2d_ce_gbs'] == 55.53 and f['gpu0_d2h_ce_gbs'] == 55.38
    assert f['gpu0_h2d_sm_gbs'] == 51.41 and f['gpu0_d2h_sm_gbs'] == 52.65
    assert f['gpu0_local_copy_gbs'] == 2081.90 and f['gpu0_host_latency_ns'] == 1181.11
    assert 'd2d_read_ce_gbs_worst' not in f and f['pairs_of'] == {}


def test_nvbandwidth_json_agrees_with_the_text(fixture_text):
    j = nvbandwidth.parse(fixture_text(GPU + 'nvbandwidth-0.8-h200-vm-subset.json'))
    t = nvbandwidth.parse(fixture_text(GPU + 'nvbandwidth-0.8-h200-vm.out'))
    assert sorted(j['tests']) == ['device_local_copy', 'device_to_host_memcpy_ce',
                                  'host_to_device_memcpy_ce']
    assert j['devices'] == t['devices']
    for name, case in j['tests'].items():
        # separate runs of the same machine: within 1%
        assert case['matrix'][0][0] == pytest.approx(t['tests'][name]['matrix'][0][0], rel=0.01)


def test_nvbandwidth_truncated_or_foreign_output(fixture_text):
    text = fixture_text(GPU + 'nvbandwidth-0.8-h200-vm.out')
    cut = text[:text.index('SUM host_to_device_memcpy_ce')]
    with pytest.raises(ParseError, match='no "SUM host_to_device_memcpy_ce" line'):
        nvbandwidth.parse(cut)
    with pytest.raises(ParseError, match='not nvbandwidth output'):
        nvbandwidth.parse(fixture_text(GPU + 'babelstream-5.0-cuda-h200.out'))
    with pytest.raises(ParseError, match='nvbandwidth JSON'):
        nvbandwidth.parse(fixture_text(GPU + 'nvbandwidth-0.8-h200-vm-subset.json')[:200])


# --- BabelStream CUDA ---------------------------------------------------------------------
@pytest.mark.parametrize('name, triad', [
    ('babelstream-5.0-cuda-h200.out', 3778.652252),
    ('babelstream-5.0-cuda-h200-s2e29.out', None),
    ('babelstream-5.0-cuda-h200-csv.out', 3793.21),
])
def test_babelstream_cuda_tables(fixture_text, name, triad):
    r = babelstream.parse(fixture_text(GPU + name))
    assert set(r) >= {'copy', 'mul', 'add', 'triad', 'dot'}
    if triad:
        assert r['triad'] == pytest.approx(triad)
    assert 3000 < r['triad'] < 5000        # an H200's HBM3e: TB/s, in GB/s
    if not name.endswith('csv.out'):
        assert r['implementation'] == 'CUDA'


def test_babelstream_triad_only(fixture_text):
    r = babelstream.parse(fixture_text(GPU + 'babelstream-5.0-cuda-h200-triad.out'))
    assert r['triad'] == 3743.877 and 'copy' not in r
    text = fixture_text(GPU + 'babelstream-5.0-cuda-h200-triad.out')
    with pytest.raises(ParseError, match='--triad-only output without'):
        babelstream.parse(text[:text.index('Bandwidth (GB/s)')])


# --- nvidia-smi and conformance -------------------------------------------------------------
H200 = {'model': 'NVIDIA H200', 'count': 1, 'memory_mib': 143000, 'driver': '580.159.04',
        'persistence': True, 'ecc': True, 'pcie_gen': 5, 'pcie_width': 16, 'mig': False}


def test_query_csv_one_gpu(fixture_text):
    [g] = nvsmi.parse_query(fixture_text(GPU + 'nvidia-smi-query-h200.csv'))
    assert g['index'] == 0 and g['name'] == 'NVIDIA H200'
    assert g['memory.total'] == 143771 and g['pci.bus_id'] == '00000000:00:06.0'
    assert (g['pcie.link.gen.max'], g['pcie.link.width.max']) == (5, 16)
    assert (g['pcie.link.gen.current'], g['pcie.link.width.current']) == (5, 16)
    assert g['ecc.mode.current'] == 'Enabled' and g['persistence_mode'] == 'Enabled'
    assert g['mig.mode.current'] == 'Disabled' and g['power.limit'] == 700.0


def test_the_h200_conforms_to_what_it_is(fixture_text):
    gpus = nvsmi.parse_query(fixture_text(GPU + 'nvidia-smi-query-h200.csv'))
    assert nvsmi.conformance(gpus, H200) == []


@pytest.mark.parametrize('declared, says', [
    ({'count': 8}, '1 GPU(s) visible, 8 declared: 0 (00000000:00:06.0)'),
    ({'model': 'NVIDIA A100-SXM4-40GB'}, "GPU 0 (00000000:00:06.0): model 'NVIDIA H200'"),
    ({'memory_mib': 160000}, 'memory 143771 MiB, at least 160000 MiB declared'),
    ({'driver': '570.86.15'}, 'driver 580.159.04, 570.86.15 declared'),
    ({'persistence': False}, 'persistence mode Enabled, Disabled declared'),
    ({'ecc': False}, 'ECC Enabled, Disabled declared'),
    ({'mig': True}, 'MIG mode Disabled, Enabled declared'),
    ({'pcie_gen': 6}, 'PCIe link generation at most 5, 6 declared'),
])
def test_each_fact_that_differs_is_named_with_the_gpu(fixture_text, declared, says):
    gpus = nvsmi.parse_query(fixture_text(GPU + 'nvidia-smi-query-h200.csv'))
    failures = nvsmi.conformance(gpus, dict(H200, **declared))
    assert len(failures) == 1 and says in failures[0], failures


def test_query_errors_name_the_line(fixture_text):
    text = fixture_text(GPU + 'nvidia-smi-query-h200.csv')
    with pytest.raises(ParseError, match='nvidia-smi line 2: 10 fields, the header has 17'):
        nvsmi.parse_query(_cut_fields(text, 10))
    with pytest.raises(ParseError, match='is not a --format=csv header'):
        nvsmi.parse_query(fixture_text(GPU + 'nvidia-smi-h200.out'))


def _cut_fields(text, n):
    '''The real CSV with its GPU line cut after ``n`` fields (a truncated line).'''
    head, line = text.strip().splitlines()[:2]
    return head + '\n' + ', '.join(line.split(', ')[:n]) + '\n'


def said(text):
    import re
    return re.escape(text)


# --- one run per GPU (scripts/per-gpu.sh) ---------------------------------------------------
def _per_gpu(tmp_path, n, outputs, rc=0):
    '''scripts/per-gpu.sh itself, running a stand-in that prints the real BabelStream
    output for its --device (``outputs[i]``) and exits ``rc`` on the last GPU.'''
    import pathlib
    import subprocess

    from mdxbench.base import SCRIPTS

    for i, text in enumerate(outputs):
        (tmp_path / f'out{i}').write_text(text)
    stand_in = tmp_path / 'bench.sh'
    stand_in.write_text(f'#!/bin/sh\ncat "{tmp_path}/out$2"\n'
                        f'[ "$2" = "{n - 1}" ] && exit {rc}\nexit 0\n')
    stand_in.chmod(0o755)
    res = subprocess.run(['sh', str(pathlib.Path(SCRIPTS) / 'per-gpu.sh'), str(n), '--device',
                          str(stand_in)], capture_output=True, text=True, timeout=HANG_S)
    return res


def test_per_gpu_runs_each_gpu_and_names_their_figures(tmp_path, fixture_text):
    from mdxbench.parsers import pergpu

    outs = [fixture_text(GPU + 'babelstream-5.0-cuda-h200.out'),
            fixture_text(GPU + 'babelstream-5.0-cuda-h200-s2e29.out')]
    res = _per_gpu(tmp_path, 2, outs)
    assert res.returncode == 0, res.stderr
    r = pergpu.parse(res.stdout, babelstream.parse, ('copy', 'triad'))
    assert r['gpus'] == 2 and r['version'] == '5.0'
    assert r['gpu0_triad'] == pytest.approx(3778.652252)
    assert r['gpu1_triad'] == babelstream.parse(outs[1])['triad']
    assert r['devices'] == ['NVIDIA H200', 'NVIDIA H200']
    assert set(r) == {'gpus', 'version', 'devices', 'gpu0_copy', 'gpu0_triad', 'gpu1_copy',
                      'gpu1_triad'}


def test_per_gpu_a_failed_or_cut_run_names_its_gpu(tmp_path, fixture_text):
    from mdxbench.parsers import pergpu

    text = fixture_text(GPU + 'babelstream-5.0-cuda-h200.out')
    res = _per_gpu(tmp_path, 2, [text, text[:text.index('Triad')]], rc=3)
    assert res.returncode == 1
    with pytest.raises(ParseError, match=r'GPU 1 \(exit 3\): no complete Triad row'):
        pergpu.parse(res.stdout, babelstream.parse)
    # the job killed during GPU 1's run: its part never ends
    cut = res.stdout[:res.stdout.index('== mdxbench: GPU 1 exit')]
    with pytest.raises(ParseError, match='GPU 1: its run started and never ended'):
        pergpu.parse(cut, babelstream.parse)


def test_the_xml_report_gives_what_the_query_gives(fixture_text):
    '''nvidia-smi -q -x and --query-gpu, the same GPU: every field conformance reads agrees
    (the XML carries no power limit or clocks in the query's form: those are not compared).'''
    [x] = nvsmi.parse_xml(fixture_text(GPU + 'nvidia-smi-q-h200.xml'))
    [q] = nvsmi.parse_query(fixture_text(GPU + 'nvidia-smi-query-h200.csv'))
    for field in ('name', 'uuid', 'memory.total', 'driver_version', 'vbios_version',
                  'pci.bus_id', 'pcie.link.gen.max', 'pcie.link.gen.current',
                  'pcie.link.width.max', 'pcie.link.width.current', 'ecc.mode.current',
                  'mig.mode.current', 'persistence_mode', 'compute_mode'):
        assert x[field] == q[field], (field, x[field], q[field])
    assert nvsmi.conformance([x], H200) == []
    text = fixture_text(GPU + 'nvidia-smi-q-h200.xml')
    with pytest.raises(ParseError, match='not XML'):
        nvsmi.parse_xml(text[:text.index('<ecc_mode>')])


def test_a_link_trained_narrow_is_named(fixture_text):
    '''The parsed H200 with its current link width set to 8 (data, not an output): the
    conformance says which GPU and what it found.'''
    [g] = nvsmi.parse_query(fixture_text(GPU + 'nvidia-smi-query-h200.csv'))
    g['pcie.link.width.current'] = 8
    assert nvsmi.conformance([g], H200) == [
        'GPU 0 (00000000:00:06.0): PCIe link width 8, below its max 16']


def test_topology_of_one_gpu(fixture_text):
    t = nvsmi.parse_topo(fixture_text(GPU + 'nvidia-smi-topo-h200.out'))
    assert t['gpus'] == ['GPU0'] and t['links'] == {(0, 0): 'X'}
    assert t['cpu_affinity'] == {0: '0-15'} and t['numa_affinity'] == {0: '0'}
    with pytest.raises(ParseError, match='no header row'):
        nvsmi.parse_topo(fixture_text(GPU + 'nvidia-smi-h200.out'))


def _nvb(fixture_text):
    return fixture_text(GPU + 'nvbandwidth-0.8-h200-vm.out')


_H2D = 'memcpy CE CPU(row) -> GPU(column) bandwidth (GB/s)'
_WHERE = 'nvbandwidth host_to_device_memcpy_ce: '


@pytest.mark.parametrize('alter, order, message', [
    (lambda t: '', None, 'nvbandwidth output is empty'),
    (lambda t: '  \n', None, 'nvbandwidth output is empty'),
    (lambda t: t[t.index('\n') + 1:], None,
     'no "nvbandwidth Version:" line: not nvbandwidth output'),
    (lambda t: t[:t.index(_H2D) + len(_H2D) + 1], None,
     _WHERE + 'the output ends after "Running" (truncated?)'),
    (lambda t: t[:t.index(_H2D + '\n           0\n') + len(_H2D) + 13], None,
     _WHERE + 'no row under the column indices'),
    (lambda t: t[:t.index(' 0     55.53\n') + 13], None,
     _WHERE + 'no "SUM host_to_device_memcpy_ce" line after its matrix (truncated?)'),
    (lambda t: t[:t.index('Running')].replace('Device 0: NVIDIA H200 (00000000:00:06)\n', '')
     + t[t.index('Running'):], None, 'no "Device N: NAME (BUS ID)" line: no GPU listed'),
    (lambda t: t[:t.index('Running host_to_device_memcpy_ce.') + 34], None,
     _WHERE + 'the output ends after "Running" (truncated?)'),
    (lambda t: t.replace(_H2D, _H2D[:-7], 1), None,
     _WHERE + 'expected a description ending in "(GB/s)" or "(ns)", got '
     "'memcpy CE CPU(row) -> GPU(column) bandwidth'"),
    (lambda t: t.replace(_H2D + '\n           0\n', _H2D + '\n  columns\n', 1), None,
     _WHERE + "expected the column indices, got 'columns'"),
    (lambda t: t.replace(' 0     55.53\n', ' 0     55.53     1.00\n', 1), None,
     _WHERE + "row '0     55.53     1.00': expected its index and 1 value(s)"),
    (lambda t: t.replace(' 0     55.53\n', ' 0     55,53\n', 1), None,
     _WHERE + "'55,53' is neither a number nor N/A"),
    (lambda t: t[:t.index('Running')], None,
     'nvbandwidth ran no test case ("Running ..." or "Waived:")'),
    # asked for three cases, the output has a fourth (line 32)
    (lambda t: t, nvbandwidth.V08_ORDER[:3],
     'nvbandwidth: line 32: "Running device_to_host_bidirectional_memcpy_ce." is not among '
     'the cases asked for after the previous one (another version, or another order than '
     'asked)'),
    # asked for the four cases that ran, the output goes on with the waived ones (line 39)
    (lambda t: t, nvbandwidth.V08_ORDER[:4],
     'nvbandwidth: line 39: "Waived:" after the last of the 4 case(s) asked for: which case '
     'is it?'),
], ids=['empty', 'blank', 'no-version', 'cut-after-description', 'cut-after-columns',
        'cut-after-row', 'no-gpu', 'cut-after-running', 'no-unit', 'no-columns', 'long-row',
        'not-a-number', 'no-case', 'case-not-asked', 'waived-not-asked'])
def test_nvbandwidth_refuses_an_altered_output_naming_what_and_where(fixture_text, alter,
                                                                    order, message):
    '''The real H200 output, altered by one cut or one replacement each: the refusal word
    for word, with the case, the line or the text it found.'''
    kw = {'order': order} if order else {}
    with pytest.raises(ParseError) as err:
        nvbandwidth.parse(alter(_nvb(fixture_text)), **kw)
    assert str(err.value) == message


def test_nvbandwidth_without_a_driver_line_a_waived_case_or_with_a_blank_before_its_json(
        fixture_text):
    '''The real output as other runs print it: a CUDA build that prints no "Driver
    Version:" line (driver unknown, not a refusal); a run asked only for the cases that ran
    (no "Waived:" line); the JSON report after a blank line of the job's output.'''
    text = _nvb(fixture_text)
    r = nvbandwidth.parse(text.replace('Driver Version: 580.159.04\n', ''))
    assert r['driver'] is None and r['version'] == 'v0.8'
    ran = nvbandwidth.parse('\n'.join(ln for ln in text.splitlines()
                                      if not ln.startswith('Waived:')))
    assert ran['waived'] == [] and ran['tests'] == nvbandwidth.parse(text)['tests']
    js = fixture_text(GPU + 'nvbandwidth-0.8-h200-vm-subset.json')
    assert nvbandwidth.parse('\n' + js) == nvbandwidth.parse(js)


def test_nvbandwidth_reads_its_cases_in_order_and_names_the_waived(fixture_text):
    '''The 1-GPU run in v0.8's order: the cases before the first ``Waived:`` are read with
    their description, unit and SUM; each bare ``Waived:`` is the next case of that order,
    the run going on after them (all_to_host_memcpy_ce, line 43).'''
    r = nvbandwidth.parse(_nvb(fixture_text))
    h2d = r['tests']['host_to_device_memcpy_ce']
    assert h2d == {'description': _H2D, 'unit': 'GB/s', 'matrix': [[55.53]], 'sum': 55.53}
    assert r['waived'][:4] == ['device_to_device_memcpy_read_ce',
                               'device_to_device_memcpy_write_ce',
                               'device_to_device_bidirectional_memcpy_read_ce',
                               'device_to_device_bidirectional_memcpy_write_ce']
    assert 'all_to_host_memcpy_ce' in r['tests'] and r['driver'] == '580.159.04'
    assert r['devices'] == [{'index': 0, 'name': 'NVIDIA H200', 'bus_id': '00000000:00:06'}]


def test_nvbandwidths_n_a_is_not_measured():
    '''nvbandwidth prints a missing value as N/A (``PeerValueMatrix``): None, not 0; only
    N/A in its own spelling.'''
    assert nvbandwidth._cell('N/A', 'w') is None
    assert nvbandwidth._cell('55.53', 'w') == 55.53
    with pytest.raises(ParseError, match="^w: 'n/a' is neither a number nor N/A$"):
        nvbandwidth._cell('n/a', 'w')


def _nvb_json(fixture_text, alter=None):
    import json

    doc = json.loads(fixture_text(GPU + 'nvbandwidth-0.8-h200-vm-subset.json'))
    if alter:
        alter(doc['nvbandwidth'])
    return json.dumps(doc)


def test_nvbandwidth_json_reads_every_field(fixture_text):
    r = nvbandwidth.parse(_nvb_json(fixture_text))
    assert (r['version'], r['driver'], r['waived']) == ('v0.8', '580.159.04', [])
    assert r['devices'] == [{'index': 0, 'name': 'NVIDIA H200', 'bus_id': '00000000:00:06'}]
    assert r['tests']['host_to_device_memcpy_ce'] == {
        'description': _H2D, 'unit': 'GB/s', 'sum': 55.551539752000004,
        'matrix': [[55.5515]]}


def _case(doc, **kw):
    doc['testcases'][0].update(kw)


def _latency(tc):
    '''A test case as nvbandwidth writes a latency one: latency_* fields, in ns.'''
    tc['latency_description'] = tc.pop('bandwidth_description').replace('(GB/s)', '(ns)')
    tc['latency_matrix'] = tc.pop('bandwidth_matrix')


def test_nvbandwidth_json_waived_cases_and_latencies(fixture_text):
    '''A case nvbandwidth waived (status "Waived", v0.8's JSON for a bare "Waived:") is
    named, not read, and the cases after it are; a latency case carries its own fields.'''
    def alter(doc):
        _case(doc, status='Waived')
        _latency(doc['testcases'][1])
    r = nvbandwidth.parse(_nvb_json(fixture_text, alter))
    assert r['waived'] == ['host_to_device_memcpy_ce']
    assert sorted(r['tests']) == ['device_local_copy', 'device_to_host_memcpy_ce']
    assert r['tests']['device_to_host_memcpy_ce']['unit'] == 'ns'


@pytest.mark.parametrize('alter, message', [
    (lambda d: d.update({'GPU Device list': []}), 'nvbandwidth JSON: empty "GPU Device list"'),
    (lambda d: d.update({'GPU Device list': ['GPU 0']}),
     "nvbandwidth JSON: GPU Device list entry 'GPU 0' not understood"),
    (lambda d: _case(d, status='Error'),
     "nvbandwidth JSON: host_to_device_memcpy_ce: status 'Error' (Passed or Waived expected)"),
    (lambda d: _case(d, bandwidth_description='memcpy CE'),
     "nvbandwidth JSON: host_to_device_memcpy_ce: description 'memcpy CE' has no unit"),
    (lambda d: _case(d, bandwidth_matrix=[]), 'nvbandwidth JSON: host_to_device_memcpy_ce: no matrix'),
    (lambda d: _case(d, bandwidth_matrix='55.5'),
     'nvbandwidth JSON: host_to_device_memcpy_ce: no matrix'),
    (lambda d: _case(d, bandwidth_matrix=[['x']]),
     "nvbandwidth JSON host_to_device_memcpy_ce: 'x' is neither a number nor N/A"),
    (lambda d: _case(d, bandwidth_description=None),
     "nvbandwidth JSON: host_to_device_memcpy_ce: description '' has no unit"),
    (lambda d: d.update({'GPU Device list': ['0: NVIDIA H200 (00000000:00:0A): (vm)']}),
     "nvbandwidth JSON: GPU Device list entry '0: NVIDIA H200 (00000000:00:0A): (vm)' not "
     "understood"),
], ids=['no-gpu', 'gpu-entry', 'status', 'no-unit', 'empty-matrix', 'not-a-matrix', 'cell',
        'no-description', 'upper-case-bus-id'])
def test_nvbandwidth_json_refusals_name_the_case_and_field(fixture_text, alter, message):
    with pytest.raises(ParseError) as err:
        nvbandwidth.parse(_nvb_json(fixture_text, alter))
    assert str(err.value) == message


def test_nvbandwidth_json_a_bus_id_with_hex_letters(fixture_text):
    """A GPU on device 0xa (the real document's bus id 00:06 replaced): its id as
    nvbandwidth prints it, in lower case, kept whole."""
    def alter(doc):
        doc['GPU Device list'] = [doc['GPU Device list'][0].replace(':06)', ':0a)')]
    r = nvbandwidth.parse(_nvb_json(fixture_text, alter))
    assert r['devices'] == [{'index': 0, 'name': 'NVIDIA H200', 'bus_id': '00000000:00:0a'}]


def test_nvbandwidth_json_a_case_without_a_name(fixture_text):
    def alter(doc):
        doc['testcases'][0].pop('name')
    with pytest.raises(ParseError, match=r"^nvbandwidth JSON: a test case without a name: "
                                         r"\{'bandwidth_description'"):
        nvbandwidth.parse(_nvb_json(fixture_text, alter))


def test_per_gpu_refusals_word_for_word(tmp_path, fixture_text):
    '''scripts/per-gpu.sh's real output over three GPUs (the stand-in printing the H200's
    BabelStream output), cut or altered: each refusal names the GPUs.'''
    from mdxbench.parsers import pergpu

    text = fixture_text(GPU + 'babelstream-5.0-cuda-h200.out')
    whole = _per_gpu(tmp_path, 3, [text] * 3).stdout

    def refused(out):
        with pytest.raises(ParseError) as err:
            pergpu.parse(out, babelstream.parse)
        return str(err.value)

    assert refused(' \n') == 'per-GPU output is empty'
    assert refused(text) == ('no "== mdxbench: GPU i ==" ... "exit RC ==" part: not the output '
                             'of scripts/per-gpu.sh, or it stopped in its first run')
    # GPUs 1 and 2 both cut: named together
    two_cut = whole.replace('== mdxbench: GPU 1 exit 0 ==\n', '').replace(
        '== mdxbench: GPU 2 exit 0 ==\n', '')
    assert refused(two_cut) == ('GPU 1, 2: its run started and never ended (the job killed, '
                                'or its output cut)')
    # GPU 1's part missing whole
    a, b = whole.index('== mdxbench: GPU 1 =='), whole.index('== mdxbench: GPU 2 ==')
    assert refused(whole[:a] + whole[b:]) == ('GPUs [0, 2] reported: a run is missing or '
                                              'unterminated (expected 0 .. 1)')
    # a run that printed its figures and then failed
    last = _per_gpu(tmp_path, 3, [text] * 3, rc=4).stdout
    assert refused(last) == 'GPU 2: the run exited 4 after printing its figures'
    # a run refused by its parser, with exit 0: the GPU alone is named
    ok_cut = whole.replace(text, text[:text.index('Triad')], 1)
    assert refused(ok_cut).startswith('GPU 0: no complete Triad row')


def test_p2p_summary_names_each_worst_pair_and_every_pair():
    '''summary() on the parsed form of 3 GPUs (a data structure, as above): the lowest
    bandwidth is GPU 1 to GPU 0 (19.0), the highest 275.0; the worst latency GPU 1 to 0
    (12.5); every pair kept under its "i-j", none of the diagonal.'''
    n = 3
    bw = [[900.0, 20.1, 19.8], [19.0, 901.0, 275.0], [19.9, 274.0, 899.0]]
    lat = [[1.6, 12.0, 11.0], [12.5, 1.6, 2.0], [11.2, 2.1, 1.6]]
    r = {'devices': [{'index': i} for i in range(n)],
         'connectivity': [[1, 0, 0], [0, 1, 1], [0, 1, 1]],
         **{name: bw for name in p2p.BANDWIDTH},
         **{name: {'gpu': lat, 'cpu': [[4.5] * n] * n} for name in p2p.LATENCY}}
    s = p2p.summary(r)
    pairs = {'0-1', '0-2', '1-0', '1-2', '2-0', '2-1'}
    for name in p2p.BANDWIDTH:
        assert s[f'{name}_worst_gbs'] == 19.0 and s[f'{name}_best_gbs'] == 275.0
        assert s['worst_pair'][f'{name}_worst_gbs'] == '1-0'
        assert s['pairs_of'][name] == {'0-1': 20.1, '0-2': 19.8, '1-0': 19.0, '1-2': 275.0,
                                       '2-0': 19.9, '2-1': 274.0}
    for name in p2p.LATENCY:
        assert s[f'{name}_worst_us'] == 12.5 and s['worst_pair'][f'{name}_worst_us'] == '1-0'
        assert set(s['pairs_of'][name]) == pairs and s['pairs_of'][name]['2-1'] == 2.1


_UNI = 'Unidirectional P2P=Disabled Bandwidth Matrix (GB/s): '


@pytest.mark.parametrize('alter, message', [
    (lambda t: ' ', 'p2pBandwidthLatencyTest output is empty'),
    (lambda t: t.replace('[P2P (Peer-to-Peer) GPU Bandwidth Latency Test]\n', ''),
     'no "[P2P (Peer-to-Peer) GPU Bandwidth Latency Test]" banner: not the output of CUDA '
     "samples' p2pBandwidthLatencyTest"),
    (lambda t: t.replace('Device: 0, NVIDIA H200, pciBusID: 0, pciDeviceID: 6, '
                         'pciDomainID:0\n', ''),
     'no "Device: N, NAME, pciBusID: ..." line: no GPU listed'),
    (lambda t: t.replace('Device: 0,', 'Device: 1,'), 'devices listed as [1], expected 0 .. 0'),
    (lambda t: t.replace('   D\\D     0 \n     0 3966.68', '   D\\D     1 \n     0 3966.68', 1),
     _UNI + 'expected a header "D\\D 0 .. 0" for 1 GPU(s), got \'D\\\\D     1\''),
    (lambda t: t.replace('     0 3966.68', '     1 3966.68', 1),
     _UNI + "row 0: expected \"0\" and 1 values, got '1 3966.68'"),
    (lambda t: t.replace('3966.68', '39x6.68', 1),
     _UNI + "row 0: a value is not a number: '0 39x6.68'"),
    (lambda t: t[:t.index('     0 3966.68')],
     _UNI + '0 of 1 rows, then the output ends (truncated?)'),
], ids=['empty', 'banner', 'no-gpu', 'gpu-index', 'header', 'row-label', 'not-a-number',
        'no-rows'])
def test_p2p_refusals_word_for_word(fixture_text, alter, message):
    '''The real one-H200 output, cut or altered once each.'''
    with pytest.raises(ParseError) as err:
        p2p.parse(alter(fixture_text(GPU + 'p2pBandwidthLatencyTest-h200-1gpu.out')))
    assert str(err.value) == message


_QUERY = 'nvidia-smi-query-h200.csv'


@pytest.mark.parametrize('alter, message', [
    (lambda q: ' ', 'nvidia-smi output is empty'),
    (lambda q: q.splitlines()[0] + '\n', 'nvidia-smi: a header and no GPU line'),
    (lambda q: q.split('\n', 1)[1],
     "nvidia-smi: the first line 'NVIDIA H200, GPU-f09a071b-ce1c-1c7c-7a2a-e8a87d591650, "
     "143771 MiB, 580.159.04, 96.00.A5.00.1A, 00000000:00:06.0, 5, 16, 5, 16, Enabled, 1980 "
     "MHz, 3201 MHz, 700.00 W, Disabled, Enabled, Default' is not a --format=csv header "
     "naming name and pci.bus_id"),
    (lambda q: q.replace(', Default', '', 1),
     "nvidia-smi line 2: 16 fields, the header has 17: 'NVIDIA H200, "
     "GPU-f09a071b-ce1c-1c7c-7a2a-e8a87d591650, 143771 MiB, 580.159.04, 96.00.A5.00.1A, "
     "00000000:00:06.0, 5, 16, 5, 16, Enabled, 1980 MHz, 3201 MHz, 700.00 W, Disabled, "
     "Enabled'"),
], ids=['empty', 'header-only', 'no-header', 'short-line'])
def test_query_refusals_word_for_word(fixture_text, alter, message):
    with pytest.raises(ParseError) as err:
        nvsmi.parse_query(alter(fixture_text(GPU + _QUERY)))
    assert str(err.value) == message


@pytest.mark.parametrize('alter, message', [
    (lambda t: '\n', 'nvidia-smi topo -m output is empty'),
    (lambda t: t.replace('\t X \t', '\t Y \t', 1),
     "nvidia-smi topo -m: GPU0 to GPU0: link 'Y' not understood"),
], ids=['empty', 'link'])
def test_topology_refusals_word_for_word(fixture_text, alter, message):
    with pytest.raises(ParseError) as err:
        nvsmi.parse_topo(alter(fixture_text(GPU + 'nvidia-smi-topo-h200.out')))
    assert str(err.value) == message


def test_topology_of_one_gpu_read_whole(fixture_text):
    r = nvsmi.parse_topo(fixture_text(GPU + 'nvidia-smi-topo-h200.out'))
    assert r == {'gpus': ['GPU0'], 'links': {(0, 0): 'X'}, 'cpu_affinity': {0: '0-15'},
                 'numa_affinity': {0: '0'}}


def test_conformance_of_eight_gpus_word_for_word(fixture_text):
    '''The 8-GPU listing (derived, tests/fixtures/README.md): a count that differs names
    every GPU seen; a fact the listing does not report (memory, the link, MIG) fails a
    declaration that needs it, except MIG off -- a GPU without MIG has MIG off.'''
    gpus = nvsmi.parse_query(fixture_text(GPU + 'nvidia-smi-list-8gpu.csv'))
    seen = ', '.join(f'{i} (00000000:00:{6 + i:02X}.0)' for i in range(8))
    assert nvsmi.conformance(gpus, {'count': 7}) == [f'8 GPU(s) visible, 7 declared: {seen}']
    assert nvsmi.conformance(gpus, {'count': 8, 'mig': False}) == []
    mig = nvsmi.conformance(gpus, {'mig': True})
    assert mig[0] == 'GPU 0 (00000000:00:06.0): MIG mode not reported, Enabled declared'
    assert len(mig) == 8
    memory = nvsmi.conformance(gpus, {'memory_mib': 1})
    assert memory[7] == 'GPU 7 (00000000:00:0D.0): memory None MiB, at least 1 MiB declared'
    link = nvsmi.conformance(gpus, {'pcie_width': 1})
    assert link[0] == 'GPU 0 (00000000:00:06.0): PCIe link width at most None, 1 declared'


def test_conformance_at_the_declared_memory_and_with_one_fact_declared(fixture_text):
    gpus = nvsmi.parse_query(fixture_text(GPU + 'nvidia-smi-query-h200.csv'))
    assert nvsmi.conformance(gpus, {'memory_mib': 143771}) == []
    assert nvsmi.conformance(gpus, {'memory_mib': 143772}) == [
        'GPU 0 (00000000:00:06.0): memory 143771 MiB, at least 143772 MiB declared']
    # MIG alone declared (nothing before it in the list of modes): still judged
    assert nvsmi.conformance(gpus, {'mig': True}) == [
        'GPU 0 (00000000:00:06.0): MIG mode Disabled, Enabled declared']


# --- nvidia-smi: every refusal word for word, on the real outputs cut or altered ----------
def test_the_query_csvs_refusals_name_what_and_where(fixture_text):
    text = fixture_text(GPU + 'nvidia-smi-query-h200.csv')
    head, line = text.strip().splitlines()[:2]
    no_bus = head.replace(', pci.bus_id', '')
    cut = ', '.join(line.split(', ')[:10])
    lots = line.replace('143771 MiB', 'lots MiB')
    for bad, says in (
            (None, 'nvidia-smi output is empty'), ('', 'nvidia-smi output is empty'),
            (' \n\t\n', 'nvidia-smi output is empty'),
            (head + '\n', 'nvidia-smi: a header and no GPU line'),
            (no_bus + '\n', f'nvidia-smi: the first line {no_bus!r} is not a --format=csv '
                            'header naming name and pci.bus_id'),
            (f'{head}\n{line}\n{cut}\n', f'nvidia-smi line 3: 10 fields, the header has 17: '
                                         f'{cut!r}'),
            (f'{head}\n{line}\n{lots}\n', "nvidia-smi line 3: memory.total = 'lots MiB': "
                                          'expected a number')):
        with pytest.raises(ParseError) as err:
            nvsmi.parse_query(bad)
        assert str(err.value) == says, bad


def test_a_bus_id_is_domain_bus_and_device_in_hexadecimal():
    assert nvsmi.bus_key('00000000:3B:00.0') == (0, 0x3b, 0)
    assert nvsmi.bus_key('00000001:3b:0A.1') == (1, 59, 10)
    for bad in ('GPU-f09a071b', None):
        with pytest.raises(ParseError) as err:
            nvsmi.bus_key(bad)
        assert str(err.value) == f'bus id {bad!r} not understood'


def test_mig_not_reported_is_mig_off_but_no_other_mode_is_taken_for_granted(fixture_text):
    '''A GPU without MIG reports its mode [N/A]: that conforms to MIG declared off, not to
    MIG declared on; an ECC or persistence mode not reported conforms to nothing.'''
    [g] = nvsmi.parse_query(fixture_text(GPU + 'nvidia-smi-query-h200.csv'))
    g['mig.mode.current'] = g['ecc.mode.current'] = None
    who = 'GPU 0 (00000000:00:06.0)'
    assert nvsmi.conformance([g], {'mig': False}) == []
    assert nvsmi.conformance([g], {'mig': True}) == [
        f'{who}: MIG mode not reported, Enabled declared']
    assert nvsmi.conformance([g], {'ecc': False, 'mig': False, 'persistence': True}) == [
        f'{who}: ECC not reported, Disabled declared']


def test_gpus_visible_against_declared_name_each_gpu_and_memory_is_at_least(fixture_text):
    [g] = nvsmi.parse_query(fixture_text(GPU + 'nvidia-smi-query-h200.csv'))
    other = dict(g, index=1, **{'pci.bus_id': '00000000:00:07.0'})
    assert nvsmi.conformance([g, other], {'count': 1}) == [
        '2 GPU(s) visible, 1 declared: 0 (00000000:00:06.0), 1 (00000000:00:07.0)']
    assert nvsmi.conformance([], {'count': 8}) == ['0 GPU(s) visible, 8 declared']
    # nvidia-smi's 143771 MiB is at least 143771 declared
    assert nvsmi.conformance([g], {'memory_mib': 143771}) == []
    assert nvsmi.conformance([g], {'memory_mib': 143772}) == [
        'GPU 0 (00000000:00:06.0): memory 143771 MiB, at least 143772 MiB declared']


def test_the_topologys_refusals_name_what_and_where(fixture_text):
    text = fixture_text(GPU + 'nvidia-smi-topo-h200.out')
    row = next(ln for ln in text.splitlines() if ln.startswith('GPU0'))
    for bad, says in (
            (None, 'nvidia-smi topo -m output is empty'), ('', 'nvidia-smi topo -m output is empty'),
            ('\n \n', 'nvidia-smi topo -m output is empty'),
            (text.replace('GPU0', 'GPUX'), 'nvidia-smi topo -m: no header row starting with GPU0'),
            (text.replace(row, row.replace('\t X \t', '\tZZ\t')),
             "nvidia-smi topo -m: GPU0 to GPU0: link 'ZZ' not understood"),
            (text.replace(row, 'GPU0'), 'nvidia-smi topo -m: row GPU0 has 0 cells, 1 GPUs in '
                                        'the header'),
            (text.replace(row + '\n', ''), 'nvidia-smi topo -m: 0 rows for 1 GPUs')):
        with pytest.raises(ParseError) as err:
            nvsmi.parse_topo(bad)
        assert str(err.value) == says, bad
    # rows after the matrix that are not a GPU's (the legend) are read past
    assert nvsmi.parse_topo(text + '\nNIC Legend:\n\n  NIC0: mlx5_0\n')['links'] == {(0, 0): 'X'}


def test_the_xid_scripts_refusals_and_the_counts_of_each_gpu(fixture_text):
    for bad in (None, '', ' \n'):
        with pytest.raises(ParseError) as err:
            nvsmi.parse_xid(bad)
        assert str(err.value) == 'gpu-xid.sh output is empty'
    line = fixture_text(GPU + 'xid-79-kernel-log-line.txt')
    with pytest.raises(ParseError) as err:
        nvsmi.parse_xid(line)
    assert str(err.value) == ('gpu-xid.sh output has neither "# read:" nor "# unreadable:": '
                              'cut before its end')
    # two events on one GPU, a stray one before them: each counted where it belongs
    root = fixture_text(GPU + 'gpu-xid-root-debian12-vm.out')
    on_ours = line.replace('0000:44:00', '0000:00:06')
    xid = nvsmi.parse_xid(line + on_ours + on_ours + root)
    [g] = nvsmi.parse_query(fixture_text(GPU + 'nvidia-smi-query-h200.csv'))
    assert 'health' not in g
    assert nvsmi.xid_per_gpu([g], xid) == xid['events'][:1]
    assert g['health'] == {'xid': 2, 'xid_codes': [79, 79]}
    # a log that could not be read counts nothing, whatever lines came with it
    nobody = nvsmi.parse_xid(on_ours + fixture_text(GPU + 'gpu-xid-nobody-debian12-vm.out'))
    assert nvsmi.xid_per_gpu([g], nobody) == [] and g['health'] == {'xid': None, 'xid_codes': []}


def test_the_topology_of_eight_gpus_each_link_where_it_is(fixture_text):
    '''The 8-GPU matrix (derived: gpu/derive.py, its PHB links an assumption) read cell by
    cell; one link made NV18 between GPU3 and GPU5 is read at (3, 5) and (5, 3) alone; a
    link in lower case is no link nvidia-smi prints; a row with its links and no affinity
    columns is read, its affinity unknown.'''
    text = fixture_text(GPU + 'nvidia-smi-topo-8gpu.out')
    t = nvsmi.parse_topo(text)
    assert t['gpus'] == [f'GPU{i}' for i in range(8)]
    assert t['links'] == {(i, j): 'X' if i == j else 'PHB' for i in range(8) for j in range(8)}
    assert t['cpu_affinity'] == {i: '0-15' for i in range(8)}
    assert t['numa_affinity'] == {i: '0' for i in range(8)}
    lines = text.splitlines(keepends=True)
    for i, j in ((3, 5), (5, 3)):
        cells = lines[1 + i].split('\t')
        cells[1 + j] = 'NV18'
        lines[1 + i] = '\t'.join(cells)
    nv = nvsmi.parse_topo(''.join(lines))['links']
    assert {k for k, v in nv.items() if v == 'NV18'} == {(3, 5), (5, 3)}
    assert nv[(3, 4)] == nv[(5, 6)] == 'PHB'
    lower = text.replace('GPU2\tPHB', 'GPU2\tphb', 1)
    with pytest.raises(ParseError) as err:
        nvsmi.parse_topo(lower)
    assert str(err.value) == "nvidia-smi topo -m: GPU2 to GPU0: link 'phb' not understood"
    one = fixture_text(GPU + 'nvidia-smi-topo-h200.out')
    row = next(ln for ln in one.splitlines() if ln.startswith('GPU0'))
    bare = nvsmi.parse_topo(one.replace(row, 'GPU0\t X '))
    assert bare['links'] == {(0, 0): 'X'} and bare['cpu_affinity'] == {0: None}


# --- nvidia-smi -q -x: refusals and the health counters, on the real report altered -------
def _xml(fixture_text):
    return fixture_text(GPU + 'nvidia-smi-q-h200.xml')


def _one(text, old, new):
    assert text.count(old) >= 1, old
    return text.replace(old, new, 1)


def test_the_xml_reports_refusals_name_what_and_where(fixture_text):
    text = _xml(fixture_text)
    gpu = text[text.index('\t<gpu id='):text.index('</gpu>') + len('</gpu>\n')]
    name = '<product_name>NVIDIA H200</product_name>'
    for bad, says in (
            (None, 'nvidia-smi -q -x output is empty'), ('', 'nvidia-smi -q -x output is empty'),
            ('\n  \n', 'nvidia-smi -q -x output is empty'),
            (text.replace('nvidia_smi_log>', 'other_log>'),
             'nvidia-smi -q -x: root element <other_log>, expected <nvidia_smi_log>'),
            (_one(text, name, ''), 'nvidia-smi -q -x, GPU 0 (00000000:00:06.0): no '
                                   'product_name or pci_bus_id'),
            (text.replace(gpu, ''), 'nvidia-smi -q -x lists no <gpu>'),
            (_one(text, '<replay_counter>0</replay_counter>', '<replay_counter>lots</replay_counter>'),
             "nvidia-smi -q -x, GPU 0 (00000000:00:06.0): <pci/replay_counter> = 'lots': "
             'expected a count')):
        with pytest.raises(ParseError) as err:
            nvsmi.parse_xml(bad)
        assert str(err.value) == says, bad
    eight = fixture_text(GPU + 'nvidia-smi-q-8gpu.xml')
    last = eight[eight.rindex('\t<gpu id='):eight.rindex('</gpu>') + len('</gpu>\n')]
    with pytest.raises(ParseError) as err:
        nvsmi.parse_xml(eight.replace(last, ''))
    assert str(err.value) == 'nvidia-smi -q -x: attached_gpus 8, 7 <gpu> listed (cut?)'
    # a report that names no count of GPUs is taken as it lists them
    assert len(nvsmi.parse_xml(_one(text, '<attached_gpus>1</attached_gpus>', ''))) == 1


def test_a_gpu_without_its_pci_bus_id_element_is_named_by_its_id(fixture_text):
    text = _one(_xml(fixture_text), '<pci_bus_id>00000000:00:06.0</pci_bus_id>', '<pci_bus_id/>')
    [g] = nvsmi.parse_xml(text)
    assert g['pci.bus_id'] == '00000000:00:06.0'
    [g] = nvsmi.parse_xml(_one(text, '<gpu id="00000000:00:06.0">', '<gpu id="00000000:00:07.0">'))
    assert g['pci.bus_id'] == '00000000:00:07.0'


def test_each_health_counter_is_read_where_nvidia_smi_writes_it(fixture_text):
    '''Counts are summed over their elements (volatile SRAM parity 1 and DRAM 2: 3),
    flags read Yes or Active as 1, a power limit below its default is said; older drivers'
    names (clocks_throttle_reasons, power_readings) read the same; an element N/A or
    absent counts as not reported.'''
    text = _xml(fixture_text)
    vol = text[text.index('<volatile>'):text.index('</volatile>')]
    hot = vol.replace('<sram_uncorrectable_parity>0', '<sram_uncorrectable_parity>1') \
             .replace('<dram_uncorrectable>0', '<dram_uncorrectable>2')
    text = text.replace(vol, hot)
    for old, new in (('<remapped_row_unc>0', '<remapped_row_unc>3'),
                     ('<remapped_row_pending>No', '<remapped_row_pending>Yes'),
                     ('<clocks_event_reason_hw_slowdown>Not Active',
                      '<clocks_event_reason_hw_slowdown>Active'),
                     ('<replay_counter>0', '<replay_counter>7'),
                     ('<current_power_limit>700.00 W', '<current_power_limit>600.00 W')):
        text = _one(text, old, new)
    [g] = nvsmi.parse_xml(text)
    h = g['health']
    assert (h['ecc_volatile_uncorrectable'], h['ecc_aggregate_uncorrectable']) == (3, 0)
    assert (h['remapped_rows_uncorrectable'], h['remapped_rows_pending'],
            h['remapped_rows_failure']) == (3, 1, 0)
    assert (h['hw_slowdown'], h['hw_thermal_slowdown'], h['pcie_replays']) == (1, 0, 7)
    assert (h['power_limit_below_default'], h['power_limit_w'], h['default_power_limit_w']) == \
        (1, 600.0, 700.0)
    old = text.replace('clocks_event_reason', 'clocks_throttle_reason') \
              .replace('gpu_power_readings>', 'power_readings>') \
              .replace('current_power_limit>', 'power_limit>')
    [o] = nvsmi.parse_xml(old)
    assert o['health'] == h
    gone = _one(_xml(fixture_text), '<current_power_limit>700.00 W</current_power_limit>', '')
    [n] = nvsmi.parse_xml(gone.replace('<remapped_row_pending>No</remapped_row_pending>',
                                       '<remapped_row_pending>N/A</remapped_row_pending>'))
    assert n['health']['power_limit_below_default'] is None and 'power_limit_w' not in n['health']
    assert n['health']['remapped_rows_pending'] is None


def test_a_counter_missing_in_part_is_the_sum_of_what_is_there_and_fields_keep_their_type(
        fixture_text):
    text = _xml(fixture_text)
    vol = text[text.index('<volatile>'):text.index('</volatile>')]
    part = vol.replace('<dram_uncorrectable>0</dram_uncorrectable>', '') \
              .replace('<sram_uncorrectable_secded>0', '<sram_uncorrectable_secded>4')
    [g] = nvsmi.parse_xml(text.replace(vol, part))
    assert g['health']['ecc_volatile_uncorrectable'] == 4
    [g] = nvsmi.parse_xml(_one(text, '<vbios_version>96.00.A5.00.1A</vbios_version>', ''))
    assert g['vbios_version'] is None and g['pcie.link.width.max'] == 16
    with pytest.raises(ParseError) as err:
        nvsmi.parse_xml(_one(text, '<total>143771 MiB</total>', '<total>lots MiB</total>'))
    assert str(err.value) == ("nvidia-smi -q -x, GPU 0 (00000000:00:06.0): memory.total = "
                              "'lots MiB': expected a number")
    csv = fixture_text(GPU + 'nvidia-smi-query-h200.csv').replace('700.00 W', '350.50 W')
    [q] = nvsmi.parse_query(csv)
    assert q['power.limit'] == 350.5 and isinstance(q['memory.total'], int)


def test_a_site_threshold_on_a_counter_nvidia_smi_has_not_is_refused_naming_the_known():
    with pytest.raises(ParseError) as err:
        nvsmi.health_failures([], {'ecc_volatile_uncorrectable': 0, 'hot': 1, 'cold': 0})
    assert str(err.value) == (
        'extras.gpu_health: unknown counter(s) cold, hot; known: ecc_aggregate_uncorrectable, '
        'ecc_volatile_uncorrectable, hw_power_brake_slowdown, hw_slowdown, '
        'hw_thermal_slowdown, pcie_replays, power_limit_below_default, '
        'remapped_rows_failure, remapped_rows_pending, remapped_rows_uncorrectable, '
        'retired_pages, retired_pages_pending, sram_threshold_exceeded, '
        'sw_thermal_slowdown, xid')


def test_a_mode_not_declared_is_not_checked_and_the_next_one_still_is(fixture_text):
    [g] = nvsmi.parse_query(fixture_text(GPU + 'nvidia-smi-query-h200.csv'))
    assert nvsmi.conformance([g], {'ecc': False}) == [
        'GPU 0 (00000000:00:06.0): ECC Enabled, Disabled declared']
