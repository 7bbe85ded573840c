'''GPU nodes right on the first real node (issue 56): what the GPU checks decide, on the
real outputs of one NVIDIA H200 and on the 8-GPU outputs derived from them in each tool's
own print format (tests/fixtures/gpu/derive.py, its README). Where a test changes a
figure, it changes the parsed data, never an output's text.'''
import copy
import datetime as dt
import json
import pathlib
import subprocess

import polars as pl
import pytest
import yaml

from hang import HANG_S
from mdxbench import REPO_ROOT
from mdxbench.base import SCRIPTS
from mdxbench.gpu import (connectivity_failures, peer_failures, per_gpu_var,
                          seen_failures)
from mdxbench.parsers import ParseError, babelstream, nvbandwidth, nvsmi, p2p, pergpu
from mdxbench.post.fleet import jobs, verdicts
from mdxbench.post.store import records

GPU = 'gpu/'
FIX = pathlib.Path(__file__).parents[1] / 'fixtures' / 'gpu'


def site_extras(system, key):
    '''A GPU partition's extras as its site configuration file declares them.'''
    doc = yaml.safe_load((REPO_ROOT / 'site-configs' / 'systems' / f'{system}.yaml').read_text())
    return doc['partitions'][0]['extras'][key]


# --- derived fixtures are what derive.py writes --------------------------------------------
def test_the_derived_fixtures_are_what_derive_writes(tmp_path):
    import importlib.util
    import shutil

    for f in FIX.iterdir():
        shutil.copy(f, tmp_path / f.name)
    spec = importlib.util.spec_from_file_location('derive', tmp_path / 'derive.py')
    mod = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(mod)
    written = mod.main()
    assert len(written) >= 5
    for name in written:
        assert (tmp_path / name).read_bytes() == (FIX / name).read_bytes(), name


# --- nvbandwidth: which case is waived, peer-to-peer as declared --------------------------
def test_a_bare_waived_line_is_named_by_the_order_nvbandwidth_runs(fixture_text):
    '''The real H200 run of every case: v0.8 prints "Waived: " without a name; each is the
    case that comes next in createTestcases' order -- all the device-to-device ones.'''
    r = nvbandwidth.parse(fixture_text(GPU + 'nvbandwidth-0.8-h200-vm.out'))
    assert len(r['waived']) == 17 and '' not in r['waived']
    assert set(r['waived']) == {c for c in nvbandwidth.V08_ORDER if c.startswith((
        'device_to_device', 'all_to_one', 'one_to_all'))}
    assert set(r['waived']) | set(r['tests']) == set(nvbandwidth.V08_ORDER)


def test_an_output_in_another_order_than_asked_is_refused(fixture_text):
    text = fixture_text(GPU + 'nvbandwidth-0.8-h200-vm.out')
    with pytest.raises(ParseError, match='is not among the cases asked for'):
        nvbandwidth.parse(text, nvbandwidth.CHECK_CASES)


def eight_no_p2p(fixture_text):
    return nvbandwidth.parse(fixture_text(GPU + 'nvbandwidth-0.8-8gpu-no-p2p.out'),
                             nvbandwidth.CHECK_CASES)


def judge_peers(result, declared):
    f = nvbandwidth.per_gpu(result)
    return peer_failures(declared, len(result['devices']),
                         [c for c in nvbandwidth.PAIRS if c in result['tests']],
                         [c for c in nvbandwidth.PAIRS if c in result['waived']],
                         f['pairs_not_measured'])


def test_eight_gpus_without_p2p_pass_where_none_is_declared(fixture_text):
    r = eight_no_p2p(fixture_text)
    assert len(r['devices']) == 8 and sorted(r['waived']) == sorted(nvbandwidth.PAIRS)
    f = nvbandwidth.per_gpu(r)
    assert [f[f'gpu{i}_h2d_ce_gbs'] for i in range(8)] == [55.53] * 8
    assert judge_peers(r, declared=False) == []


def test_a_bare_metal_node_declared_p2p_whose_run_waives_the_pairs_fails(fixture_text):
    wrong = judge_peers(eight_no_p2p(fixture_text), declared=True)
    assert len(wrong) == 2
    assert all('waived by nvbandwidth' in w and 'gpu_p2p: true' in w for w in wrong)


def test_pairs_printed_na_are_named_not_left_out(fixture_text):
    '''A device-to-device matrix (the 8-GPU run's parsed form, the case given as run)
    where GPU 3 has no peer access to the others: N/A off the diagonal.'''
    r = eight_no_p2p(fixture_text)
    m = [[None if i == j or 3 in (i, j) else 250.0 for j in range(8)] for i in range(8)]
    r['tests']['device_to_device_memcpy_read_ce'] = {'matrix': m, 'unit': 'GB/s'}
    r['waived'].remove('device_to_device_memcpy_read_ce')
    f = nvbandwidth.per_gpu(r)
    assert len(f['pairs_not_measured']['device_to_device_memcpy_read_ce']) == 14
    wrong = judge_peers(r, declared=True)
    assert any('3-0' in w and '0-3' in w and 'not measured' in w for w in wrong), wrong
    # and the pairs measured while none is declared fail the declaration
    assert any('measured between GPUs with peer access' in w
               for w in judge_peers(r, declared=False))


def test_a_node_whose_pairs_have_partial_peer_access_as_nvbandwidth_prints_it(fixture_text):
    """4 GPUs, peer access between 0-1 and 2-3 only (derived, figures modelled:
    tests/fixtures/README.md): each device-to-device matrix read row by row, N/A where a
    GPU meets itself or a GPU it cannot reach; the pairs measured and those not named; a
    node declared P2P fails on the pairs without access."""
    r = nvbandwidth.parse(fixture_text(GPU + 'nvbandwidth-0.8-4gpu-two-peer-pairs.out'),
                          nvbandwidth.CHECK_CASES)
    assert r['waived'] == [] and len(r['devices']) == 4
    x = None
    for case in nvbandwidth.PAIRS:
        assert r['tests'][case]['matrix'] == [[x, 55.38, x, x], [55.38, x, x, x],
                                              [x, x, x, 55.38], [x, x, 55.38, x]], case
        assert r['tests'][case]['sum'] == 221.52
    f = nvbandwidth.per_gpu(r)
    assert f['pairs_of']['d2d_read_ce_gbs'] == {'0-1': 55.38, '1-0': 55.38, '2-3': 55.38,
                                                '3-2': 55.38}
    assert f['pairs_not_measured']['device_to_device_memcpy_write_ce'] == [
        '0-2', '0-3', '1-2', '1-3', '2-0', '2-1', '3-0', '3-1']
    assert (f['d2d_write_ce_gbs_worst'], f['d2d_write_ce_gbs_worst_pair']) == (55.38, '0-1')
    wrong = judge_peers(r, declared=True)
    assert len(wrong) == 2 and all('not measured' in w and '1-3' in w for w in wrong), wrong


def test_the_worst_pair_is_named():
    r = {'devices': [{}] * 3, 'tests': {'device_to_device_memcpy_write_ce': {'matrix': [
        [None, 250.0, 251.0], [249.0, None, 120.0], [250.0, 252.0, None]]}}}
    f = nvbandwidth.per_gpu(r)
    assert f['d2d_write_ce_gbs_worst'] == 120.0 and f['d2d_write_ce_gbs_worst_pair'] == '1-2'
    assert f['pairs_of'] == {'d2d_write_ce_gbs': {'0-1': 250.0, '0-2': 251.0, '1-0': 249.0,
                                                  '1-2': 120.0, '2-0': 250.0, '2-1': 252.0}}


def test_a_case_not_run_leaves_the_others_figures(fixture_text):
    '''A run asked for fewer cases (host to device not among them): every other case's
    figures per GPU, none of the one missing.'''
    r = eight_no_p2p(fixture_text)
    del r['tests']['host_to_device_memcpy_ce']
    f = nvbandwidth.per_gpu(r)
    assert 'gpu0_h2d_ce_gbs' not in f
    assert [f[f'gpu{i}_d2h_ce_gbs'] for i in range(8)] == [55.38] * 8


# --- the GPUs a program saw -----------------------------------------------------------------
def listed8(fixture_text):
    return nvsmi.parse_query(fixture_text(GPU + 'nvidia-smi-list-8gpu.csv'))


def test_the_gpus_seen_are_nvidia_smis_not_the_checks_own_count(fixture_text):
    listed = listed8(fixture_text)
    buses = [d['bus_id'] for d in eight_no_p2p(fixture_text)['devices']]
    assert seen_failures(8, listed, 'nvbandwidth', 8, buses) == []
    # BabelStream ran on 7 of them; the node lost a GPU; the numbering differs
    assert seen_failures(8, listed, 'BabelStream', 7) == [
        'BabelStream saw 7 GPU(s), nvidia-smi lists 8']
    assert seen_failures(8, listed[:7], 'BabelStream', 7) == [
        'nvidia-smi lists 7 GPU(s), the partition declares 8']
    swapped = buses[:4] + [buses[5], buses[4]] + buses[6:]
    wrong = seen_failures(8, listed, 'nvbandwidth', 8, swapped)
    assert len(wrong) == 2 and 'nvbandwidth GPU 4 is 00000000:00:0b' in wrong[0]


# --- BabelStream: a GPU that computes garbage ------------------------------------------------
def test_validation_failed_is_no_figure(fixture_text):
    text = fixture_text(GPU + 'babelstream-5.0-cuda-h200-validation-failed.out')
    with pytest.raises(ParseError, match=r'results are wrong, "Validation failed on c\[\]'):
        babelstream.parse(text)
    assert babelstream.parse(fixture_text(GPU + 'babelstream-5.0-cuda-h200.out'))['device'] \
        == 'NVIDIA H200'


def test_per_gpu_reads_what_a_gpu_writes_on_stderr(tmp_path, fixture_text):
    '''scripts/per-gpu.sh running a stand-in that writes the real output on stdout and, for
    GPU 1, BabelStream's "Validation failed" line on stderr, exit 0 (as BabelStream).'''
    bad = fixture_text(GPU + 'babelstream-5.0-cuda-h200-validation-failed.out')
    (tmp_path / 'good').write_text(fixture_text(GPU + 'babelstream-5.0-cuda-h200.out'))
    (tmp_path / 'out').write_text(''.join(ln for ln in bad.splitlines(True)
                                          if not ln.startswith('Validation')))
    (tmp_path / 'err').write_text(''.join(ln for ln in bad.splitlines(True)
                                          if ln.startswith('Validation')))
    stand_in = tmp_path / 'bench.sh'
    stand_in.write_text(f'#!/bin/sh\nif [ "$2" = 1 ]; then cat "{tmp_path}/out"; '
                        f'cat "{tmp_path}/err" >&2; else cat "{tmp_path}/good"; fi\n')
    stand_in.chmod(0o755)
    res = subprocess.run(['sh', f'{SCRIPTS}/per-gpu.sh', '2', '--device', str(stand_in)],
                         capture_output=True, text=True, timeout=HANG_S)
    assert res.returncode == 0
    with pytest.raises(ParseError, match='GPU 1: BabelStream: the results are wrong'):
        pergpu.parse(res.stdout, babelstream.parse)


# --- PCIe link, health counters, Xid ----------------------------------------------------------
H200 = {'model': 'NVIDIA H200', 'count': 1, 'pcie_gen': 5, 'pcie_width': 16}


def h200(fixture_text):
    [g] = nvsmi.parse_query(fixture_text(GPU + 'nvidia-smi-query-h200.csv'))
    return g


def test_an_idle_gpu_at_gen1_passes_a_link_trained_at_x8_fails(fixture_text):
    g = h200(fixture_text)
    g['pcie.link.gen.max'], g['pcie.link.gen.current'] = 4, 1
    assert nvsmi.conformance([g], dict(H200, pcie_gen=4)) == []
    g['pcie.link.width.current'] = 8
    assert nvsmi.conformance([g], dict(H200, pcie_gen=4)) == [
        'GPU 0 (00000000:00:06.0): PCIe link width 8, below its max 16']


def test_the_h200_is_healthy_by_every_site_threshold(fixture_text):
    [g] = nvsmi.parse_xml(fixture_text(GPU + 'nvidia-smi-q-h200.xml'))
    h = g['health']
    assert h['ecc_volatile_uncorrectable'] == 0 and h['ecc_aggregate_uncorrectable'] == 0
    assert h['remapped_rows_pending'] == 0 and h['remapped_rows_failure'] == 0
    assert h['hw_slowdown'] == 0 and h['power_limit_below_default'] == 0
    assert (h['power_limit_w'], h['default_power_limit_w']) == (700.0, 700.0)
    # an H200 retires no pages (row remapping instead): not reported, not a 0
    assert h['retired_pages'] is None and h['retired_pages_pending'] is None
    for system in ('gpunode', 'mdx1'):
        assert nvsmi.health_failures([g], site_extras(system, 'gpu_health')) == []


@pytest.mark.parametrize('counter, value', [
    ('ecc_volatile_uncorrectable', 1), ('ecc_aggregate_uncorrectable', 2),
    ('remapped_rows_pending', 1), ('remapped_rows_failure', 1), ('retired_pages_pending', 1),
    ('hw_slowdown', 1), ('hw_thermal_slowdown', 1), ('hw_power_brake_slowdown', 1),
    ('sw_thermal_slowdown', 1), ('power_limit_below_default', 1), ('xid', 1),
])
def test_each_health_counter_over_its_limit_names_gpu_and_counter(fixture_text, counter, value):
    gpus = nvsmi.parse_xml(fixture_text(GPU + 'nvidia-smi-q-8gpu.xml'))
    limits = site_extras('gpunode', 'gpu_health')
    gpus[5]['health'][counter] = value
    assert nvsmi.health_failures(gpus, limits) == [
        f'GPU 5 (00000000:00:0B.0): {counter} {value}, at most {limits[counter]} allowed']
    # at the limit: passes
    gpus[5]['health'][counter] = limits[counter]
    assert nvsmi.health_failures(gpus, limits) == []


def test_a_health_limit_that_names_no_counter_is_refused(fixture_text):
    gpus = nvsmi.parse_xml(fixture_text(GPU + 'nvidia-smi-q-h200.xml'))
    with pytest.raises(ParseError, match="unknown counter\\(s\\) ecc_volatile"):
        nvsmi.health_failures(gpus, {'ecc_volatile': 0})


def test_the_kernel_log_read_or_why_not(fixture_text):
    root = nvsmi.parse_xid(fixture_text(GPU + 'gpu-xid-root-debian12-vm.out'))
    assert root['read'].startswith('dmesg') and root['events'] == []
    nobody = nvsmi.parse_xid(fixture_text(GPU + 'gpu-xid-nobody-debian12-vm.out'))
    assert nobody['read'] is None and 'Operation not permitted' in nobody['unreadable']
    gpus = nvsmi.parse_xml(fixture_text(GPU + 'nvidia-smi-q-h200.xml'))
    assert nvsmi.xid_per_gpu(gpus, nobody) == [] and gpus[0]['health']['xid'] is None
    # unread is not judged
    assert nvsmi.health_failures(gpus, {'xid': 0}) == []
    with pytest.raises(ParseError, match='cut before its end'):
        nvsmi.parse_xid(fixture_text(GPU + 'xid-79-kernel-log-line.txt'))


def test_xid_events_are_counted_on_their_gpu_or_reported_as_strays(fixture_text):
    line = fixture_text(GPU + 'xid-79-kernel-log-line.txt')
    xid = nvsmi.parse_xid(line + fixture_text(GPU + 'gpu-xid-root-debian12-vm.out'))
    assert xid['events'] == [{'bus': (0, 0x44, 0), 'xid': 79,
                              'text': 'GPU has fallen off the bus'}]
    gpus = nvsmi.parse_xml(fixture_text(GPU + 'nvidia-smi-q-8gpu.xml'))
    # no GPU of this node is at 0000:44:00: a GPU that fell off the bus is listed no more
    assert nvsmi.xid_per_gpu(gpus, xid) == xid['events']
    # the same event on GPU 5's bus (the parsed event, moved)
    moved = copy.deepcopy(xid)
    moved['events'][0]['bus'] = nvsmi.bus_key(gpus[5]['pci.bus_id'])
    assert nvsmi.xid_per_gpu(gpus, moved) == []
    assert gpus[5]['health']['xid'] == 1 and gpus[5]['health']['xid_codes'] == [79]
    assert nvsmi.health_failures(gpus, {'xid': 0}) == [
        'GPU 5 (00000000:00:0B.0): xid 1, at most 0 allowed']


# --- p2pBandwidthLatencyTest: the paper's statistic, the declared connectivity --------------
def test_the_papers_at_most_bounds_the_best_pair_not_the_worst():
    n = 3
    bw = [[900.0, 20.1, 12.0], [19.4, 901.0, 19.9], [19.6, 19.8, 899.0]]
    r = {'devices': [{'index': i} for i in range(n)], 'connectivity': [[1, 0, 0]] * 3,
         **{name: bw for name in p2p.BANDWIDTH},
         **{name: {'gpu': [[1.6] * n] * n, 'cpu': [[4.5] * n] * n} for name in p2p.LATENCY}}
    s = p2p.summary(r)
    assert s['uni_p2p_enabled_best_gbs'] == 20.1 and s['uni_p2p_enabled_worst_gbs'] == 12.0
    assert s['worst_pair']['uni_p2p_enabled_worst_gbs'] == '0-2'
    from mdxbench import references
    ref = references.for_check('GpuP2pBandwidthLatency', {})
    entries = {var for target, refs in ref.items() for var in refs}
    assert 'uni_p2p_enabled_best' in entries and 'uni_p2p_enabled' not in entries


def test_connectivity_is_compared_with_the_declaration():
    full = [[1] * 8 for _ in range(8)]
    assert connectivity_failures(True, full) == []
    lost = copy.deepcopy(full)
    for j in range(8):
        if j != 2:
            lost[2][j] = lost[j][2] = 0      # 56 pairs, 42 with P2P
    [wrong] = connectivity_failures(True, lost)
    assert wrong.startswith('14 of 56 GPU pairs without P2P (0-2, 1-2, 2-0')
    none = [[int(i == j) for j in range(8)] for i in range(8)]
    assert connectivity_failures(False, none) == []
    assert connectivity_failures(False, full)[0].startswith('56 of 56 GPU pairs with P2P')


# --- acceptance: a GPU against the other GPUs of its node --------------------------------------
T = dt.datetime(2026, 11, 28, tzinfo=dt.timezone.utc)


def node_records(fixture_text, factor, gpus=8, slow=5, meta=None):
    '''One node's BabelStream triads: the four real H200 runs, GPU i the run i mod 4, GPU
    ``slow`` at ``factor`` of the median of the others.'''
    triads = [babelstream.parse(fixture_text(GPU + n))['triad'] for n in (
        'babelstream-5.0-cuda-h200.out', 'babelstream-5.0-cuda-h200-s2e29.out',
        'babelstream-5.0-cuda-h200-csv.out', 'babelstream-5.0-cuda-h200-triad.out')]
    import statistics

    peers = statistics.median(triads[g % 4] for g in range(gpus) if g != slow)
    rows = []
    for g in range(gpus):
        v = factor * peers if g == slow else triads[g % 4]
        rows.append({'time': (T + dt.timedelta(seconds=g)).isoformat(), 'system': 'gpunode',
                     'partition': 'gpu', 'environ': 'native', 'check': 'BabelStreamCuda',
                     'perf_var': per_gpu_var(g, 'triad'), 'value': v, 'unit': 'GB/s',
                     'better': 'higher', 'ref': None, 'result': 'pass', 'jobid': '1',
                     'nodes': 'h200-01', 'tags': 'acceptance,gpu',
                     'meta': json.dumps(dict({'tags': ['acceptance', 'gpu']}, **(meta or {})))})
    return records.frame(rows)


def test_a_gpu_40_percent_below_its_nodes_other_gpus_fails_with_one_node(fixture_text):
    [v] = verdicts.judge(node_records(fixture_text, 0.6))
    assert v['verdict'] == 'fail'
    [reason] = v['reasons']
    assert reason.startswith('BabelStreamCuda gpu5_triad=') and \
        "GPU 5 40% worse than the node's other 7 GPUs" in reason
    [line] = jobs.drain_lines([v])
    assert 'nodename=h200-01' in line and 'gpu5_triad' in line


@pytest.mark.parametrize('factor, fails', [
    (1 - verdicts.PEER_GPU_EFFECT - 0.02, True), (1 - verdicts.PEER_GPU_EFFECT + 0.02, False)])
def test_the_peer_gpu_threshold_is_where_it_says(fixture_text, factor, fails):
    [v] = verdicts.judge(node_records(fixture_text, factor))
    assert (v['verdict'] == 'fail') is fails, v


def test_two_gpus_do_not_say_which_one_is_slow(fixture_text):
    [v] = verdicts.judge(node_records(fixture_text, 0.5, gpus=2, slow=1))
    assert v['verdict'] == 'pass'


def test_a_failed_pair_figure_names_its_gpus(fixture_text):
    rows = node_records(fixture_text, 1.0, meta={'worst_pair': {'uni_p2p_enabled': '3-6'}})
    rows = rows.with_columns(pl.lit('GpuP2pBandwidthLatency').alias('check'),
                             pl.lit('uni_p2p_enabled').alias('perf_var'),
                             pl.lit('fail').alias('result')).head(1)
    [v] = verdicts.judge(rows)
    assert v['reasons'][0].startswith('GpuP2pBandwidthLatency uni_p2p_enabled=') and \
        '(GPUs 3-6): fail against the reference' in v['reasons'][0]


def test_a_health_failure_drains_naming_node_gpu_and_counter(fixture_text):
    gpus = nvsmi.parse_xml(fixture_text(GPU + 'nvidia-smi-q-8gpu.xml'))
    gpus[2]['health']['remapped_rows_pending'] = 1
    why = '; '.join(nvsmi.health_failures(gpus, site_extras('gpunode', 'gpu_health')))
    rows = node_records(fixture_text, 1.0, meta={'failure': why}).head(1).with_columns(
        pl.lit('GpuConformance').alias('check'), pl.lit(None, dtype=pl.Float64).alias('value'),
        pl.lit('fail').alias('result'))
    [v] = verdicts.judge(rows)
    [line] = jobs.drain_lines([v])
    assert 'nodename=h200-01' in line and 'GPU 2 (00000000:00:08.0): remapped_rows_pending 1' \
        in line, line
