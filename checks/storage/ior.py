# Parallel file-system bandwidth with IOR (POSIX), file per process and shared file, from
# one to N nodes: aggregate read and write GB/s, best of the repetitions. The defaults
# reproduce mdx I's command line (seeds/003): -w -r -C -g -i 3 -s 8192 -b 1m -t 1m -a POSIX
# -e [-F], 8 GiB per rank, with and without O_DIRECT as two series on every node count;
# ranks per node: one (the mdx II paper, seeds/002 sec. 3.2.3: one I/O operation in flight
# per VM) or one per core (mdx I).
import reframe as rfm
from reframe.core.builtins import parameter, run_after, run_before, variable

from mdxbench.base import partition_facts
from mdxbench.jobsteps import skip_unless_nodes, spread_over_hosts
from mdxbench.parsers import ior
from mdxbench.storage import StorageTargetTest


def _bytes(size):
    '''IOR's size notation (1m, 4k, 1g) in bytes.'''
    units = {'k': 2 ** 10, 'm': 2 ** 20, 'g': 2 ** 30, 't': 2 ** 40}
    return int(size[:-1]) * units[size[-1].lower()] if size[-1].lower() in units else int(size)


@rfm.simple_test
class Ior(StorageTargetTest):
    descr = 'IOR POSIX sequential write and read, aggregate over the nodes'
    tags = {'storage'}
    bench_name = 'ior'
    bench_binary = 'ior'
    parser = staticmethod(ior.parse)
    access = parameter(['file-per-process', 'shared'])
    num_nodes = parameter([1, 2, 4, 8])
    #: O_DIRECT (--posix.odirect), both series as mdx I ran them
    odirect = parameter([True, False])
    #: ranks per node: 1, or one per core of the partition, and mdx I's sweep of the
    #: process count in one VM (Figs 5-6) where a partition declares it
    #: (extras.ior.ranks_sweep; the default [1, 'cores'])
    ranks_per_node = parameter([1, 2, 4, 8, 16, 32, 64, 'cores'])
    #: several nodes each on a host of its own, where the partition says its hosts
    run_conditions = ('distinct_hosts',)
    #: segments of one block per rank: mdx I's 8192 x 1 MiB = 8 GiB per rank, unless the
    #: partition sizes IOR for itself (extras.ior.segments); -S segments=N wins over both
    segments = variable(int, type(None), value=None)
    #: mdx I's segments (8 GiB per rank with 1 MiB blocks), where nothing else is said
    MDX1_SEGMENTS = 8192
    block_size = variable(str, value='1m')
    transfer_size = variable(str, value='1m')
    repetitions = variable(int, value=3)
    perf_table = {'write_bw': ('write_gbs', 'GB/s', 'higher'), 'read_bw': ('read_gbs', 'GB/s', 'higher')}

    @run_after('init')
    def shared_target_for_several_nodes(self):
        # ranks read what ranks of other nodes wrote (-C): the target must be shared
        if self.num_nodes > 1:
            self.valid_systems = [f'+shared_storage_{self.target}']

    @run_after('setup')
    def in_ranks_sweep(self):
        sweep = (self.current_partition.extras.get('ior') or {}).get('ranks_sweep', [1, 'cores'])
        where = f'{self.current_system.name}:{self.current_partition.name}'
        self.skip_if(str(self.ranks_per_node) not in map(str, sweep),
                     f'ranks_per_node {self.ranks_per_node} is not in the process sweep of '
                     f'{where} (extras.ior.ranks_sweep: {", ".join(map(str, sweep))})')
        cores = partition_facts(self.current_partition)['cores']
        self.skip_if(self.ranks_per_node != 'cores' and int(self.ranks_per_node) > cores,
                     f'{self.ranks_per_node} ranks per node: {where} has {cores} cores')

    @run_after('setup')
    def require_nodes(self):
        skip_unless_nodes(self, self.num_nodes)
        # several VMs as the paper ran them: each on a host of its own, where hosts are known
        spread_over_hosts(self, self.num_nodes)

    @run_after('setup')
    def size_for_partition(self):
        # a partition may size IOR for its purpose (extras.ior.segments: a small node), and
        # cap what a run writes in all (extras.ior.max_total_gib: mdx I's 32 GB on its VM
        # disk, segments lowered as the process count grows)
        sizing = self.current_partition.extras.get('ior') or {}
        if self.segments is None:
            self.segments = int(sizing.get('segments', self.MDX1_SEGMENTS))
            cap = sizing.get('max_total_gib')
            if cap:
                ranks = self.tasks_per_node() * self.num_nodes
                self.segments = max(1, min(self.segments, int(
                    cap * 2 ** 30 // (ranks * _bytes(self.block_size)))))

    def tasks_per_node(self):
        return (partition_facts(self.current_partition)['cores']
                if self.ranks_per_node == 'cores' else int(self.ranks_per_node))

    @run_after('setup')
    def skip_page_cache_reads(self):
        # decided from the sizing before the job runs: a read served by the page cache of
        # the writing node measures no storage (the same rule judges IOR's own report)
        facts = partition_facts(self.current_partition)
        mem = facts.get('memory_gib')
        per_node = self.segments * _bytes(self.block_size) * self.tasks_per_node()
        # nodes that share one kernel (namespaces, containers) share its page cache: -C
        # then reads what the same cache holds
        shared = bool(self.current_partition.extras.get('shared_page_cache'))
        why = ior.page_cache_reason(self.odirect, not shared, self.num_nodes, per_node,
                                    mem * 2 ** 30 if mem else None)
        if why and shared:
            why += ' (the nodes of this partition share one page cache)'
        self.skip_if(why is not None, why)

    @run_before('run')
    def set_command(self):
        tpn = self.tasks_per_node()
        self.num_tasks_per_node = tpn
        self.num_tasks = tpn * self.num_nodes
        self.executable_opts = [
            '-w', '-r', '-C', '-g', '-i', str(self.repetitions), '-s', str(self.segments),
            '-b', self.block_size, '-t', self.transfer_size, '-a', 'POSIX', '-e',
        ] + (['-F'] if self.access == 'file-per-process' else []) \
          + (['--posix.odirect'] if self.odirect else []) + ['-o', '"$workdir/ior.dat"']

    def derive(self, results):
        # what ran, as IOR reports it (a site may lower segments with -S: recorded)
        self.mdx_extra = dict(self.mdx_extra, **{
            k: results[k] for k in ('segments', 'tasks_per_node', 'aggregate_bytes')
            if k in results})
        # a read served by the page cache is no storage figure: fail, naming why
        mem = partition_facts(self.current_partition).get('memory_gib')
        why = ior.read_not_from_storage(results, mem * 2 ** 30 if mem else None)
        if why:
            raise ValueError(why)
