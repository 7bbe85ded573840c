'''Client/server measurements (iperf3, netperf, sockperf): a server started in one job step
and the measuring client in another -- over loopback in one node, or on two nodes placed on
the same physical host or on different hosts (mdxbench.placement) -- with the server always
stopped when the job script ends.'''
import os
import subprocess

from reframe.core.builtins import parameter, run_after, run_before, variable

from mdxbench.base import MdxBenchTest
from mdxbench import placement as place
from mdxbench import references
from mdxbench.parsers import nic

NICINFO = os.path.join(os.path.dirname(__file__), 'scripts', 'nicinfo.sh')
NIC_QUEUES = os.path.join(os.path.dirname(__file__), 'scripts', 'nic-queues.sh')


def partition_nodes(partition):
    '''Number of nodes of a partition: site-config fact ``nodes``, else asked of Slurm
    (``sinfo``) for slurm/squeue partitions, else None (unknown).'''
    facts = partition.extras.get('facts') or {}
    if facts.get('nodes'):
        return int(facts['nodes'])

    if partition.scheduler.registered_name not in ('slurm', 'squeue'):
        return None

    name = place.slurm_partition(partition)
    cmd = ['sinfo', '-h', '-o', '%D'] + (['-p', name] if name else [])
    try:
        out = subprocess.run(cmd, capture_output=True, text=True, timeout=30, check=True).stdout
    except (OSError, subprocess.SubprocessError):
        return None

    return sum(int(x) for x in out.split() if x.isdigit()) or None


def job_port(port=0):
    '''``port``, or a TCP port derived from the Slurm job id (shell arithmetic).'''
    return str(port) if port else '$((20000 + ${SLURM_JOB_ID:-$$} % 20000))'


def background_step(command, log, what, wait):
    '''Job-script lines that start ``command`` in the background (output to ``log``),
    stop it when the script exits, and fail the job, showing ``log``, if it is not still
    running after ``wait`` seconds.'''
    return [
        f'{command} > {log} 2>&1 &',
        'bg_pid=$!',
        'trap \'kill $bg_pid 2>/dev/null; wait $bg_pid 2>/dev/null\' EXIT',
        f'sleep {wait}',
        f'kill -0 $bg_pid 2>/dev/null || {{ echo "mdxbench: {what} did not start:"; '
        f'cat {log}; exit 1; }}',
    ]


def skip_unless_nodes(test, needed, what='this run'):
    '''Skip the test, with the reason, when its partition has fewer than `needed` nodes.'''
    have = partition_nodes(test.current_partition)
    test.skip_if(have is not None and have < needed,
                 f'{test.current_system.name}:{test.current_partition.name} has {have} '
                 f'node(s); {what} needs {needed}')


def partition_name(test):
    return f'{test.current_system.name}:{test.current_partition.name}'


def physical_hosts(test):
    '''({node: physical host}, how that is known) of the test's partition's usable nodes,
    from its ``extras.placement`` and Slurm; skips the test, saying why, where the site
    declares no hosts.'''
    part = test.current_partition
    where, how = place.node_hosts(part.extras.get('placement'), place.sinfo_nodes(part))
    test.skip_if(not where, f'{partition_name(test)}: {how}: placement {test.placement} '
                            f'cannot be chosen')
    return where, how


def spread_over_hosts(test, n):
    '''Put the test's ``n`` nodes on ``n`` different physical hosts, as the paper placed its
    VMs for multi-VM storage and object-store runs, where the partition declares its hosts
    (``--nodelist``; skipped, saying why, where too few hosts have a usable node, or where
    the declaration finds no host at all: a ``host_feature`` no usable node carries). Where
    it declares none, any ``n`` nodes: the record says the hosts are not known, and the
    references measured with every node on a host of its own (``conditions:
    {distinct_hosts: true}``) are not applied to the run, saying so.'''
    part = test.current_partition
    try:
        nodes, hosts, how = place.spread(part.extras.get('placement'), place.sinfo_nodes(part), n)
    except place.Unavailable as err:
        test.skip(f'{partition_name(test)}: {n} nodes on {n} physical hosts: {err}')
    if nodes is None:
        test.mdx_extra = dict(test.mdx_extra, hosts_from=how)
        if n >= 2:
            drop_references(test, 'distinct_hosts', f'{n} nodes on any hosts ({how})')
        return
    test.job.options += [f'--nodelist={",".join(nodes)}']
    test.mdx_extra = dict(test.mdx_extra, placement='different-hosts', nodes_chosen=nodes,
                          hosts=[hosts[nd] for nd in nodes], hosts_from=how)


def drop_references(test, condition, why):
    '''Leave out of this run's ReFrame references those of the current partition measured
    under a run condition (``references.RUN_CONDITIONS``) this run could not meet; the
    record says which and why (``meta.references_not_applied``).'''
    target, check, params = partition_name(test), type(test).__name__, test.param_values()
    # the references as load_references set them (ReFrame keeps them as a ScopedDict)
    ref, dropped = references.without_condition(references.for_check(check, params), check,
                                                target, params, condition)
    if dropped:
        test.reference = ref
        test.mdx_extra = dict(test.mdx_extra, references_not_applied={
            var: f"measured with {condition} ({references.RUN_CONDITIONS[condition]}); this "
                 f"run: {why}" for var in dropped})


class ClientServerTest(MdxBenchTest):
    #: what every reference of a network figure states (references.CONDITIONS): virtio
    #: multiqueue changes both throughput and latency in the paper
    reference_conditions = ('multiqueue',)
    #: loopback: client and server in one node (one VM, not through its NIC); same-host:
    #: two nodes (VMs) on one physical host; different-hosts: two nodes on two hosts
    placement = parameter(list(place.PLACEMENTS))
    #: the two nodes of a two-node placement, (server, client), chosen at setup
    node_pair = variable(tuple, value=())

    #: TCP port of the server; 0 derives one from the job id
    port = variable(int, value=0)

    #: seconds to wait for the server to listen
    server_wait = variable(int, value=2)

    def server_command(self):
        '''Shell command that runs the server in the foreground.'''
        raise NotImplementedError

    def client_options(self):
        '''Options of ``bench_binary`` as the client; may use $server, $server_ip, $port.'''
        raise NotImplementedError

    @property
    def nodes_needed(self):
        return 1 if self.placement == 'loopback' else 2

    @run_after('setup')
    def choose_nodes(self):
        skip_unless_nodes(self, self.nodes_needed, f'placement {self.placement}')
        if self.placement == 'loopback':
            return

        where, how = physical_hosts(self)
        try:
            self.node_pair = place.choose_pair(where, self.placement)
        except place.Unavailable as err:
            self.skip(f'{partition_name(self)}: placement {self.placement}: {err} ({how})')
        self.mdx_extra = dict(self.mdx_extra, server_node=self.node_pair[0],
                              client_node=self.node_pair[1],
                              server_host=where[self.node_pair[0]],
                              client_host=where[self.node_pair[1]], hosts_from=how)

    @run_before('run')
    def set_job(self):
        self.num_tasks = self.nodes_needed
        self.num_tasks_per_node = 1
        two = self.nodes_needed == 2
        if self.node_pair:
            self.job.options += [f'--nodelist={",".join(self.node_pair)}']
        on_server = 'srun -N1 -n1 --nodelist="$server" ' if two else ''
        on_client = 'srun -N1 -n1 --nodelist="$client" ' if two else ''
        self.prerun_cmds = [
            'nodes=($(scontrol show hostnames "${SLURM_JOB_NODELIST:-$(hostname)}" '
            '2>/dev/null || hostname))',
            # the pair chosen at setup, server first (Slurm lists a job's nodes sorted)
            f'server={self.node_pair[0]}; client={self.node_pair[1]}' if self.node_pair else
            'server=${nodes[0]}; client=${nodes[-1]}',
            'server_ip=$(getent ahostsv4 "$server" | awk \'NR==1 {print $1}\')',
            f'port={job_port(self.port)}',
            *self.before_server(),
            *background_step(f'{on_server}{self.server_command()}', 'server.out', 'server',
                             self.server_wait),
            f'{on_client}{NICINFO} "$server"',
        ]
        self.executable = self.bench_path
        self.executable_opts = self.client_options()
        if two:
            self.job.launcher.options = ['-N1', '-n1', '--nodelist="$client"']

    def before_server(self):
        '''Job-script lines run on the batch host before the server starts.'''
        return []

    def derive(self, results):
        with open(os.path.join(self.stagedir, self.stdout.evaluate())) as fp:
            info = nic.parse(fp.read())

        results['nic'] = info
        self.mdx_extra = dict(self.mdx_extra, nic_dev=info['dev'],
                              nic_rx_queues=info['rx_queues'],
                              nic_tx_queues=info['tx_queues'],
                              multiqueue=info['multiqueue'])
