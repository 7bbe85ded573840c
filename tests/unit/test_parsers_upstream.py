'''Parsers against the real outputs of tests/fixtures/upstream (tools no registry here has).'''
import pytest

from mdxbench.parsers import ParseError, PartialResult, babelstream, ior, linpack, netperf, osu


def test_babelstream_table(upstream_output):
    r = babelstream.parse(upstream_output('babelstream-5.0-omp.out'))
    assert r['version'] == '5.0' and r['implementation'] == 'OpenMP'
    assert r['triad'] == pytest.approx(47.652688)
    assert r['copy'] == pytest.approx(45.543851) and r['dot'] == pytest.approx(51.944916)


def test_babelstream_csv(upstream_output):
    r = babelstream.parse(upstream_output('babelstream-5.0-omp-csv.out'))
    assert r['triad'] == pytest.approx(49.5107) and r['mul'] == pytest.approx(46.4212)


@pytest.mark.parametrize('name', ['babelstream-5.0-omp.out', 'babelstream-5.0-omp-csv.out'])
def test_babelstream_truncated(upstream_output, name):
    text = upstream_output(name)
    with pytest.raises(ParseError, match='Dot|Triad'):
        babelstream.parse(text[:text.index('Triad')])


def test_babelstream_other_tool():
    with pytest.raises(ParseError, match='not BabelStream'):
        babelstream.parse('STREAM version $Revision: 5.10 $\nTriad: 1.0\n')


def test_osu_latency(upstream_output):
    r = osu.latency(upstream_output('osu-7.4-latency.out'))
    assert r['version'] == '7.4' and r['latency'] == pytest.approx(0.14)
    assert len(r['curve']) == 23 and r['curve'][4194304] == pytest.approx(468.68)


def test_osu_bw(upstream_output):
    r = osu.bandwidth(upstream_output('osu-7.4-bw.out'))
    assert r['max_size'] == 4194304 and r['bandwidth'] == pytest.approx(13551.56)
    assert r['peak_bandwidth'] == pytest.approx(14274.42)
    assert r['bandwidth_gbps'] == pytest.approx(13551.56 * 8 / 1000)
    # the curve's peak (what Guidi et al. quote) at 2 MiB, not at the largest size
    assert r['peak_size'] == 2097152 and r['peak_gbps'] == pytest.approx(14274.42 * 8 / 1000)


def test_osu_bibw(upstream_output):
    r = osu.bibandwidth(upstream_output('osu-7.4-bibw.out'))
    assert r['version'] == '7.4' and r['max_size'] == 4194304
    assert r['bandwidth'] == pytest.approx(18710.63) and len(r['curve']) == 23
    assert r['bandwidth_gbps'] == pytest.approx(18710.63 * 8 / 1000)
    # the peak at 512 KiB (in the L2/L3 on one node), not at the largest size
    assert r['peak_size'] == 524288 and r['peak_bandwidth'] == pytest.approx(42621.19)
    # one test's output is never taken for the other's
    with pytest.raises(ParseError, match='expected the OSU "Bi-Directional Bandwidth Test"'):
        osu.bibandwidth(upstream_output('osu-7.4-bw.out'))
    with pytest.raises(ParseError, match='expected the OSU "Bandwidth Test", got the '
                                         '"Bi-Directional Bandwidth Test"'):
        osu.bandwidth(upstream_output('osu-7.4-bibw.out'))


def test_osu_alltoall(upstream_output):
    r = osu.latency(upstream_output('osu-7.4-alltoall.out'))
    assert r['latency'] == pytest.approx(0.18) and r['max_size'] == 1048576


def test_osu_wrong_table_and_truncation(upstream_output):
    with pytest.raises(ParseError, match='expected the OSU "Bandwidth Test", got the '
                                         '"Latency Test"'):
        osu.bandwidth(upstream_output('osu-7.4-latency.out'))

    text = upstream_output('osu-7.4-latency.out')
    with pytest.raises(ParseError, match='no rows'):
        osu.latency(text[:text.index('1                       0.15')])

    with pytest.raises(ParseError, match='no size 8'):
        osu.latency(text[:text.index('8                       0.14')])


def test_ior_text(upstream_output):
    r = ior.parse(upstream_output('ior-4.0.0-posix-fpp.out'))
    assert r['version'] == '4.0.0' and r['access'] == 'file-per-process'
    assert r['write_gbs'] == pytest.approx(2897.24 * 2**20 / 1e9)
    assert r['read_gbs'] == pytest.approx(39788.85 * 2**20 / 1e9)
    assert r['tasks'] == 2 and r['repetitions'] == 3
    assert (r['tasks_per_node'], r['segments'], r['aggregate_bytes']) == (2, 64, 128 * 2**20)
    assert '-w -r -C -g -i 3' in r['command']


def test_ior_over_s3(upstream_output):
    '''IOR's S3-libs3 backend against MinIO (the mdx I paper's Fig. 7 runs): the same
    summary, the backend named; the keys were in a 0600 script (-f), not the command line.'''
    r = ior.parse(upstream_output('ior-4.0.0-s3-libs3-minio-fpp.out'))
    assert (r['api'], r['access'], r['tasks'], r['repetitions']) == \
        ('S3-libs3', 'file-per-process', 2, 3)
    assert r['write_gbs'] == pytest.approx(133.57 * 2**20 / 1e9)
    assert r['read_gbs'] == pytest.approx(460.57 * 2**20 / 1e9)
    assert (r['segments'], r['aggregate_bytes']) == (1, 128 * 2**20)
    assert r['command'].endswith('-o ior -f /tmp/tmp.c77Di0sO19/s3.ior')
    assert ior.parse(upstream_output('ior-4.0.0-posix-fpp.out'))['api'] == 'POSIX'


def test_ior_json(upstream_output):
    r = ior.parse(upstream_output('ior-4.0.0-posix-shared-json.out'))
    assert r['access'] == 'single-shared-file' and r['repetitions'] == 2
    assert r['write_gbs'] == pytest.approx(2199.9931 * 2**20 / 1e9)
    assert (r['nodes'], r['reorder'], r['odirect']) == (1, True, False)
    assert (r['tasks_per_node'], r['segments'], r['aggregate_bytes']) == (2, 64, 128 * 2**20)


@pytest.mark.parametrize('name', ['ior-4.0.0-posix-fpp.out', 'ior-4.0.0-posix-shared-json.out'])
def test_ior_one_node_read_is_the_page_cache(upstream_output, name):
    '''Both real runs read back on the node that wrote (1 node, -C, no O_DIRECT): their
    read figures (37-40 GB/s from a disk that writes 2.9) are no storage figures.'''
    r = ior.parse(upstream_output(name))
    assert (r['nodes'], r['reorder'], r['odirect']) == (1, True, False)
    why = ior.read_not_from_storage(r)
    assert why and 'page cache' in why and '1 node(s) with -C' in why and '--posix.odirect' in why
    # the rule itself: O_DIRECT, or -C across two nodes, makes the read a storage figure
    assert ior.read_not_from_storage(dict(r, odirect=True)) is None
    assert ior.read_not_from_storage(dict(r, nodes=2)) is None
    assert ior.read_not_from_storage(dict(r, nodes=2, reorder=False)) is not None
    # without O_DIRECT on one node: a storage figure only when the node wrote at least
    # twice its memory (128 MiB written here: a node of 64 MiB, not one of 65)
    assert ior.read_not_from_storage(r, node_memory_bytes=64 * 2**20) is None
    why = ior.read_not_from_storage(r, node_memory_bytes=65 * 2**20)
    assert why and 'less than twice its' in why


@pytest.mark.parametrize('name,marker,message', [
    ('ior-4.0.0-posix-fpp.out', 'Finished', 'without the "Finished" line: truncated'),
    ('ior-4.0.0-posix-fpp.out', 'Summary of all tests', 'no "Summary of all tests:"'),
    ('ior-4.0.0-posix-shared-json.out', '"summary"', 'JSON output does not parse .*truncated')])
def test_ior_truncated(upstream_output, name, marker, message):
    text = upstream_output(name)
    with pytest.raises(ParseError, match=message):
        ior.parse(text[:text.index(marker)])


def test_mkl_linpack_stopped_run_is_partial_not_a_pass(upstream_output):
    with pytest.raises(PartialResult) as err:
        linpack.mp_linpack(upstream_output('intel-mkl-mp_linpack.out'))

    assert err.value.partial['mflops'] == pytest.approx(916595.00)
    assert err.value.partial['fraction'] == pytest.approx(0.995)
    assert 'stopped at fraction 0.995' in str(err.value)


def test_linpack_rejects_other_output():
    with pytest.raises(ParseError, match='not LINPACK'):
        linpack.mp_linpack('hello\n')

    with pytest.raises(ParseError, match='Performance Summary'):
        linpack.shm_linpack('Intel(R) Optimized LINPACK Benchmark data\n')


def test_netperf_rr_with_selectors(upstream_output):
    r = netperf.parse_rr(upstream_output('netperf-2.7-udp_rr-histogram.out'))
    assert r['test'] == 'UDP_RR'
    assert r['p50_us'] == 442 and r['p90_us'] == 487 and r['p99_us'] == 589
    assert r['stddev_us'] == pytest.approx(81.26) and r['throughput'] == pytest.approx(2217.06)
    # no MEAN_LATENCY selector in that run: the mean comes from the transaction rate
    assert r['mean_us'] == pytest.approx(1e6 / 2217.06) and r['mean_from_rate']


def test_netperf_2_7_0_tcp_rr_omni(upstream_output):
    r = netperf.parse_rr(upstream_output('netperf-2.7.0-tcp_rr-omni.out'))
    assert r['test'] == 'TCP_RR'
    assert (r['min_us'], r['mean_us'], r['p50_us'], r['p90_us'], r['p99_us'], r['stddev_us']) \
        == (12, 16.25, 13, 14, 75, 102.48)
    assert 'mean_from_rate' not in r


def test_netperf_truncated(upstream_output):
    text = upstream_output('netperf-2.7-udp_rr-histogram.out')
    with pytest.raises(ParseError, match='no line of values'):
        netperf.parse_rr(text[:text.index('2217.06')])
