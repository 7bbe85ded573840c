# TCP throughput and latency between a client and a server, on one node and across two
# nodes, as in the mdx II paper (sec. 3.2.3): iperf3 with zero copy and 1..16 parallel
# streams; netperf TCP_RR round trips; sockperf ping-pong where netperf is absent.
# Every run records the client NIC's queue counts (virtio-net multiqueue on or off).
import reframe as rfm
from reframe.core.builtins import parameter, variable

from mdxbench.netbase import ClientServerTest
from mdxbench.parsers import iperf3, netperf, sockperf


@rfm.simple_test
class Iperf3Throughput(ClientServerTest):
    descr = 'iperf3 TCP throughput, zero copy, parallel streams'
    tags = {'network'}
    bench_name = 'iperf3'
    bench_binary = 'iperf3'
    output_file = 'iperf3.json'
    parser = staticmethod(iperf3.parse)
    streams = parameter([1, 2, 4, 8, 16])
    duration = variable(int, value=10)
    perf_table = {'throughput': ('received_gbps', 'Gbit/s')}

    def server_command(self):
        return f'{self.bench_path} -s -1 -p $port'

    def client_options(self):
        return ['-c', '"$server"', '-p', '$port', '-Z', '-P', str(self.streams),
                '-t', str(self.duration), '-J', '--logfile', self.output_file]


@rfm.simple_test
class NetperfTcpRR(ClientServerTest):
    descr = 'netperf TCP_RR round-trip latency (mean, p50, p90, p99)'
    tags = {'network'}
    bench_name = 'netperf'
    bench_binary = 'netperf'
    parser = staticmethod(netperf.parse_rr)
    duration = variable(int, value=10)
    perf_table = {'mean_rtt': ('mean_us', 'us'), 'p50_rtt': ('p50_us', 'us'),
                  'p90_rtt': ('p90_us', 'us'), 'p99_rtt': ('p99_us', 'us')}

    def server_command(self):
        return 'netserver -D -p $port'

    def client_options(self):
        return ['-H', '$server_ip', '-p', '$port', '-t', 'TCP_RR', '-l', str(self.duration),
                '--', '-o', 'THROUGHPUT,THROUGHPUT_UNITS,P50_LATENCY,P90_LATENCY,P99_LATENCY,'
                'MEAN_LATENCY,STDDEV_LATENCY,MIN_LATENCY,MAX_LATENCY']


@rfm.simple_test
class SockperfPingPong(ClientServerTest):
    descr = 'sockperf TCP ping-pong round trip (twice the one-way latency sockperf prints)'
    tags = {'network'}
    bench_name = 'sockperf'
    bench_binary = 'sockperf'
    parser = staticmethod(sockperf.parse)
    duration = variable(int, value=10)
    perf_table = {'mean_rtt': ('rtt_avg_us', 'us'), 'p50_rtt': ('rtt_p50_us', 'us'),
                  'p99_rtt': ('rtt_p99_us', 'us')}

    def server_command(self):
        return f'{self.bench_path} server --tcp -i 0.0.0.0 -p $port'

    def client_options(self):
        return ['ping-pong', '--tcp', '-i', '$server_ip', '-p', '$port', '-t', str(self.duration)]
