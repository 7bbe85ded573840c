'''Parsers against outputs captured here from Debian's tools (tests/fixtures).'''
import json

import pytest

from mdxbench.parsers import ParseError, fio, iperf3, netperf, sockperf


@pytest.mark.parametrize('name,direction,key', [
    ('seqread', 'read', 'bw_gbs'), ('seqwrite', 'write', 'bw_gbs'),
    ('randread', 'read', 'kiops'), ('randwrite', 'write', 'kiops')])
def test_fio_json(fixture_text, name, direction, key):
    text = fixture_text(f'fio/fio-{name}-3.33.json')
    r = fio.parse(text)
    raw = json.loads(text)['jobs'][0][direction]
    assert r['direction'] == direction and r['version'] == '3.33'
    assert r['bw_gbs'] == pytest.approx(raw['bw_bytes'] / 1e9)
    assert r['kiops'] == pytest.approx(raw['iops'] / 1e3)
    assert r[key] > 0
    assert r['options']['ioengine'] == 'libaio' and r['options']['iodepth'] == '256'


def test_fio_direct_read_reached_the_device(fixture_text):
    r = fio.parse(fixture_text('fio/fio-seqread-3.33.json'))
    # 16399 reads of 1 MiB; vda saw 6261 requests + 10114 merges
    assert (r['job_ios'], r['devices'], r['device_ios']) == (16399, ['vda'], 6261 + 10114)
    assert fio.read_not_from_storage(r) is None


@pytest.mark.parametrize('name, job_ios, device_ios', [
    ('pagecache', 4831, 1),    # --direct=0 --invalidate=0 on a file in the page cache
    ('buffered', 2750, 674),   # --direct=0: first pass from vda, the rest from the cache
])
def test_fio_reads_from_memory_are_no_storage_figure(fixture_text, name, job_ios, device_ios):
    r = fio.parse(fixture_text(f'fio/fio-seqread-{name}-3.33.json'))
    assert (r['job_ios'], r['device_ios']) == (job_ios, device_ios)
    why = fio.read_not_from_storage(r)
    assert why and f'received {device_ios} read requests' in why and '(vda)' in why


def test_fio_without_a_device_cannot_tell(fixture_text):
    '''direct=1 on tmpfs (accepted by this kernel): fio reports no device under the
    target, so its report cannot say where the reads came from.'''
    r = fio.parse(fixture_text('fio/fio-seqread-tmpfs-direct-3.33.json'))
    assert r['devices'] == [] and r['device_ios'] is None and r['options']['direct'] == '1'
    assert fio.read_not_from_storage(r) is None


def test_fio_truncated_and_errors(fixture_text):
    text = fixture_text('fio/fio-seqread-3.33.json')
    with pytest.raises(ParseError, match='truncated'):
        fio.parse(text[:len(text) // 2])

    data = json.loads(text)
    data['jobs'][0]['error'] = 5
    with pytest.raises(ParseError, match='job errors'):
        fio.parse(json.dumps(data))

    with pytest.raises(ParseError, match='empty'):
        fio.parse('')


@pytest.mark.parametrize('streams', [1, 4])
def test_iperf3_json(fixture_text, streams):
    text = fixture_text(f'iperf3/iperf3-3.12-loopback-Z-P{streams}.json')
    r = iperf3.parse(text)
    raw = json.loads(text)['end']['sum_received']['bits_per_second']
    assert r['streams'] == streams and r['version'].startswith('3.12')
    assert r['received_gbps'] == pytest.approx(raw / 1e9) and r['received_gbps'] > 0


def test_iperf3_error_and_truncation(fixture_text):
    text = fixture_text('iperf3/iperf3-3.12-loopback-Z-P1.json')
    with pytest.raises(ParseError, match='truncated'):
        iperf3.parse(text[:text.index('"end"')])

    with pytest.raises(ParseError, match='unable to connect'):
        iperf3.parse(json.dumps({'start': {}, 'intervals': [], 'end': {},
                                 'error': 'unable to connect to server: Connection refused'}))


def test_sockperf_ping_pong(fixture_text):
    r = sockperf.parse(fixture_text('sockperf/sockperf-3.7-ping-pong-tcp.out'))
    assert r['version'] == '3.7-no.git'
    assert r['avg_us'] == pytest.approx(6.907) and r['p99_us'] == pytest.approx(8.858)
    assert r['rtt_avg_us'] == pytest.approx(2 * 6.907)
    assert r['observations'] == 184255


def test_sockperf_refused_and_truncated(fixture_text):
    text = fixture_text('sockperf/sockperf-3.7-ping-pong-tcp.out')
    with pytest.raises(ParseError, match='percentile 50.000'):
        sockperf.parse(text[:text.index('percentile 75.000')])

    banner = text.splitlines()[0]
    with pytest.raises(ParseError, match='Connection refused'):
        sockperf.parse(banner + '\nsockperf: ERROR: Can`t connect socket (errno=111 Connection refused)\n')


def test_iperf3_pairs_aggregate(fixture_text):
    '''What iperf3-pairs.sh prints: each client's real JSON after its marker line.'''
    a = fixture_text('iperf3/iperf3-3.12-loopback-Z-P1.json')
    b = fixture_text('iperf3/iperf3-3.12-loopback-Z-P4.json')
    text = ('mdxbench-nic: dev=lo address=127.0.0.1 rx_queues=1 tx_queues=1 combined=n/a\n'
            f'### mdxbench iperf3 pair 0\n{a}\n### mdxbench iperf3 pair 1\n{b}\n')
    r = iperf3.parse_pairs(text)
    ra, rb = iperf3.parse(a), iperf3.parse(b)
    assert r['pairs'] == 2
    assert r['aggregate_gbps'] == pytest.approx(ra['received_gbps'] + rb['received_gbps'])
    assert r['min_pair_gbps'] == pytest.approx(min(ra['received_gbps'], rb['received_gbps']))
    with pytest.raises(ParseError, match='truncated'):
        iperf3.parse_pairs(text[:-200])

    with pytest.raises(ParseError, match='clients did not run'):
        iperf3.parse_pairs('mdxbench-nic: dev=lo\n')
    # two captures one after the other (3 s apart): their clients did not start together
    assert r['start_spread_s'] == abs(ra['start_s'] - rb['start_s']) == 3
    assert r['omit_s'] == 0


def test_iperf3_ramp_up_omitted(fixture_text):
    '''-O 1: iperf3 leaves the first second out of the result (the interval it marks
    omitted), and says so in test_start.'''
    text = fixture_text('iperf3/iperf3-3.12-loopback-Z-P2-O1.json')
    r = iperf3.parse(text)
    data = json.loads(text)
    assert r['omit'] == 1 and r['streams'] == 2 and r['duration'] == 2
    assert [i['sum']['omitted'] for i in data['intervals']] == [True, False, False]
    assert r['start_s'] == data['start']['timestamp']['timesecs']
    p = iperf3.parse_pairs(f'### mdxbench iperf3 pair 0\n{text}\n')
    assert (p['omit_s'], p['start_spread_s'], p['pairs']) == (1, 0, 1)


def test_netperf_version_and_selectors(fixture_text):
    """Debian's netperf 2.7.0: `netperf -V` then a TCP_RR run on loopback, as the check
    runs them."""
    r = netperf.parse_rr(fixture_text('netperf/netperf-2.7.0-debian-V-tcp_rr.out'))
    assert r['version'] == '2.7.0' and r['test'] == 'TCP_RR'
    assert (r['throughput'], r['throughput_units']) == (7147.91, 'Trans/s')
    assert (r['p50_us'], r['p90_us'], r['p99_us'], r['mean_us']) == (121, 167, 526, 139.62)
    assert (r['min_us'], r['max_us']) == (16, 6901)


def test_netperf_tcp_stream_throughput(fixture_text):
    """Debian's netperf 2.7.0 TCP_STREAM on loopback with -o selectors (NetperfToPeer)."""
    text = fixture_text('netperf/netperf-2.7.0-debian-V-tcp_stream.out')
    r = netperf.parse_stream(text)
    assert r == {'test': 'TCP_STREAM', 'version': '2.7.0', 'throughput_gbps': 23.24715,
                 'elapsed_s': 2.0}
    with pytest.raises(ParseError, match='TCP STREAM TEST'):
        netperf.parse_stream(fixture_text('netperf/netperf-2.7.0-debian-V-tcp_rr.out'))
    with pytest.raises(ParseError, match='no line of values'):
        netperf.parse_stream(text[:text.index('23247.15')])
