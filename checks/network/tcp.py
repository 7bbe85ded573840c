# TCP throughput and latency between a client and a server, placed as in the mdx II paper
# (sec. 3.2.2): two VMs on the same physical host, two on different hosts (the site
# declares the hosts: mdxbench.placement), and loopback inside one node; iperf3 with zero copy and 1..16 parallel
# streams; netperf TCP_RR round trips; sockperf ping-pong where netperf is absent.
# Every run records the client NIC's queue counts (virtio-net multiqueue on or off).
import os

import reframe as rfm
from reframe.core.backends import getlauncher
from reframe.core.builtins import parameter, run_after, run_before, variable

import mdxbench
from mdxbench.base import MdxBenchTest
from mdxbench import placement as place
from mdxbench.jobsteps import (NIC_QUEUES, ClientServerTest, job_port, partition_name,
                                physical_hosts, skip_unless_nodes)
from mdxbench.parsers import iperf3, netperf, nic, sockperf

PAIRS_SCRIPT = os.path.join(os.path.dirname(mdxbench.__file__), 'scripts', 'iperf3-pairs.sh')


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
    perf_table = {'throughput': ('received_gbps', 'Gbit/s', 'higher')}

    def server_command(self):
        return f'{self.bench_path} -s -1 -p $port'

    def client_options(self):
        return ['-c', '"$server"', '-p', '$port', '-Z', '-P', str(self.streams),
                '-t', str(self.duration), '-J', '--logfile', self.output_file]


@rfm.simple_test
class Iperf3OneQueue(Iperf3Throughput):
    '''The paper's series without multiqueue (Figure 3), where the site lets a job change
    the NIC's queue count (``extras.nic_queues.set``, a command with ``{dev}`` and ``{n}``):
    both nodes' interfaces are set to one queue for the run and set back after it.'''
    descr = 'iperf3 TCP throughput with both NICs set to one queue (no multiqueue)'
    #: its references are the paper's figures without multiqueue, whatever the partition runs
    reference_fixed_conditions = {'multiqueue': False}

    @run_after('setup')
    def require_settable_queues(self):
        part = self.current_partition
        self.skip_if(self.placement == 'loopback', 'loopback does not go through the NIC')
        self.skip_if(not (part.extras.get('nic_queues') or {}).get('set'),
                     f'{self.current_system.name}:{part.name} does not let a job change the '
                     f'NIC queue count (site config extras.nic_queues.set)')

    def before_server(self):
        # the nodes to itself: a case sharing them would measure with one queue too (a
        # partition that forces oversubscription, as nscluster, cannot grant it)
        self.job.options += ['--exclusive']
        cmd = self.current_partition.extras['nic_queues']['set']
        lines = [f"export MDXBENCH_NIC_SET_QUEUES='{cmd}'", 'declare -A queues_before']
        self.postrun_cmds = []
        for node, peer in (('server', 'client'), ('client', 'server')):
            lines.append(f'line=$(srun -N1 -n1 --nodelist="${node}" {NIC_QUEUES} "${peer}" 1) '
                         f'|| exit 1; echo "$line"; b=${{line##*before=}}; '
                         f'queues_before[${node}]=${{b%% *}}')
            # set back whatever the measurement did (also printed: before=1 after=N)
            self.postrun_cmds.append(f'srun -N1 -n1 --nodelist="${node}" {NIC_QUEUES} '
                                     f'"${peer}" "${{queues_before[${node}]}}"')
        return lines

    def derive(self, results):
        super().derive(results)
        info = results['nic']
        if info['rx_queues'] != 1 or info['tx_queues'] != 1:
            raise ValueError(f'{info["dev"]} has {info["rx_queues"]} rx and '
                             f'{info["tx_queues"]} tx queues during the run, not 1')
        self.mdx_extra = dict(self.mdx_extra, one_queue=True)


@rfm.simple_test
class NetperfTcpRR(ClientServerTest):
    descr = 'netperf TCP_RR round-trip latency (mean, p50, p90, p99)'
    tags = {'network'}
    bench_name = 'netperf'
    bench_binary = 'netperf'
    parser = staticmethod(netperf.parse_rr)
    duration = variable(int, value=10)
    perf_table = {'mean_rtt': ('mean_us', 'us', 'lower'), 'p50_rtt': ('p50_us', 'us', 'lower'),
                  'p90_rtt': ('p90_us', 'us', 'lower'), 'p99_rtt': ('p99_us', 'us', 'lower')}

    def server_command(self):
        return 'netserver -D -p $port'

    @run_before('run')
    def print_version(self):
        self.prerun_cmds += [f'{self.bench_path} -V']

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
    perf_table = {'mean_rtt': ('rtt_avg_us', 'us', 'lower'), 'p50_rtt': ('rtt_p50_us', 'us', 'lower'),
                  'p99_rtt': ('rtt_p99_us', 'us', 'lower')}

    def server_command(self):
        return f'{self.bench_path} server --tcp -i 0.0.0.0 -p $port'

    def client_options(self):
        return ['ping-pong', '--tcp', '-i', '$server_ip', '-p', '$port', '-t', str(self.duration)]


@rfm.simple_test
class Iperf3Aggregate(MdxBenchTest):
    '''Takahashi et al.'s Figure 5: N pairs started together, all on one physical host
    (``same-host``) or servers on one host and clients on another (``different-hosts``);
    where the site declares hosts (``extras.placement``).'''
    descr = 'iperf3 aggregate throughput of N node pairs started together, 16 streams each'
    tags = {'network'}
    bench_name = 'iperf3'
    bench_binary = 'iperf3'
    parser = staticmethod(iperf3.parse_pairs)
    #: the paper's figures depend on virtio multiqueue (references.CONDITIONS)
    reference_conditions = ('multiqueue',)
    #: 1 to 4 pairs: the paper's Figure 5 saturates at 3 (126 Gbit/s across hosts)
    pairs = parameter([1, 2, 3, 4])
    placement = parameter(['same-host', 'different-hosts'])
    streams = variable(int, value=16)
    duration = variable(int, value=10)
    #: seconds of ramp-up iperf3 leaves out of the result (-O)
    omit = variable(int, value=2)
    #: the nodes chosen at setup: servers, then clients
    servers = variable(list, value=[])
    clients = variable(list, value=[])
    perf_table = {'aggregate': ('aggregate_gbps', 'Gbit/s', 'higher'),
                  'min_pair': ('min_pair_gbps', 'Gbit/s', 'higher')}

    @run_after('setup')
    def choose_nodes(self):
        skip_unless_nodes(self, 2 * self.pairs, f'{self.pairs} pair(s)')
        where, how = physical_hosts(self)
        try:
            self.servers, self.clients = place.choose_groups(where, self.placement, self.pairs)
        except place.Unavailable as err:
            self.skip(f'{partition_name(self)}: placement {self.placement}: {err} ({how})')
        self.mdx_extra = dict(self.mdx_extra, server_nodes=self.servers,
                              client_nodes=self.clients,
                              server_hosts=sorted({where[n] for n in self.servers}),
                              client_hosts=sorted({where[n] for n in self.clients}),
                              hosts_from=how)

    @run_before('run')
    def set_job(self):
        self.num_tasks = 2 * self.pairs
        self.num_tasks_per_node = 1
        self.job.options += [f'--nodelist={",".join(self.servers + self.clients)}']
        self.job.launcher = getlauncher('local')()   # the script starts its own job steps
        self.executable = PAIRS_SCRIPT
        self.executable_opts = [str(self.pairs), str(self.streams), str(self.duration),
                                job_port(), self.bench_path, str(self.omit),
                                ','.join(self.servers), ','.join(self.clients)]

    def derive(self, results):
        # pairs that did not run together measure no aggregate (iperf3 records start
        # times in whole seconds: one second apart can be the same instant)
        if results['start_spread_s'] > 1:
            raise ValueError(f"the {self.pairs} clients started {results['start_spread_s']} s "
                             f"apart: not an aggregate of pairs running together")

        with open(self.output_path) as fp:
            info = nic.parse(fp.read())

        self.mdx_extra = dict(self.mdx_extra, per_pair_gbps=results['per_pair_gbps'],
                              omit_s=results['omit_s'],
                              start_spread_s=results['start_spread_s'],
                              nic_dev=info['dev'], multiqueue=info['multiqueue'],
                              nic_rx_queues=info['rx_queues'], nic_tx_queues=info['tx_queues'])


@rfm.simple_test
class NetperfToPeer(MdxBenchTest):
    '''Node acceptance of the network: this node's TCP throughput to a netserver every
    node reaches (``extras.network_peer`` of the partition: a login or service node),
    netperf 2.7.0 TCP_STREAM. One node at a time or all at once (netserver serves each
    connection in a process of its own); a node whose NIC or path is degraded stands
    out among the nodes.'''
    descr = 'netperf TCP_STREAM from the node to the site\'s network peer'
    valid_systems = ['+network_peer']
    tags = {'network', 'acceptance'}
    bench_name = 'netperf'
    bench_binary = 'netperf'
    parser = staticmethod(netperf.parse_stream)
    duration = variable(int, value=5)
    lengthen = {'duration': 1}
    perf_table = {'throughput': ('throughput_gbps', 'Gbit/s', 'higher')}

    @run_before('run')
    def set_command(self):
        peer = self.current_partition.extras['network_peer']
        self.num_tasks = 1
        self.num_tasks_per_node = 1
        self.prerun_cmds += [f'{self.bench_path} -V']
        self.executable_opts = ['-H', str(peer['host']), '-p', str(peer.get('port', 12865)),
                                '-t', 'TCP_STREAM', '-l', str(self.duration), '--', '-o',
                                'THROUGHPUT,THROUGHPUT_UNITS,LOCAL_SEND_SIZE,ELAPSED_TIME']
