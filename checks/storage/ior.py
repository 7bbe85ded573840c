# Parallel file-system bandwidth with IOR (POSIX), file per process and shared file, from
# one to N nodes: aggregate read and write GB/s, best of the repetitions. The defaults
# reproduce mdx I's command line: -w -r -C -g -i 3 -s S -b 1m -t 1m -a POSIX -e [-F];
# on one node with O_DIRECT, so that the read figure is storage, not the page cache.
import reframe as rfm
import reframe.utility.typecheck as typ
from reframe.core.builtins import parameter, run_after, run_before, variable

from mdxbench.base import partition_facts
from mdxbench.jobsteps import skip_unless_nodes
from mdxbench.parsers import ior
from mdxbench.storage import StorageTargetTest


@rfm.simple_test
class Ior(StorageTargetTest):
    descr = 'IOR POSIX sequential write and read, aggregate over the nodes'
    tags = {'storage'}
    bench_name = 'ior'
    bench_binary = 'ior'
    parser = staticmethod(ior.parse)
    access = parameter(['file-per-process', 'shared'])
    num_nodes = parameter([1, 2, 4, 8])
    #: ranks per node (0: the partition's cores)
    tasks_per_node = variable(int, value=0)
    segments = variable(int, value=16)
    block_size = variable(str, value='1m')
    transfer_size = variable(str, value='1m')
    repetitions = variable(int, value=3)
    #: O_DIRECT (--posix.odirect); None: on one node only, where nothing else keeps the
    #: read from being served by the page cache of the node that wrote (-C needs 2 nodes)
    odirect = variable(typ.Bool, type(None), value=None)
    perf_table = {'write_bw': ('write_gbs', 'GB/s', 'higher'), 'read_bw': ('read_gbs', 'GB/s', 'higher')}

    @run_after('init')
    def shared_target_for_several_nodes(self):
        # ranks read what ranks of other nodes wrote (-C): the target must be shared
        if self.num_nodes > 1:
            self.valid_systems = [f'+shared_storage_{self.target}']

    @run_after('setup')
    def require_nodes(self):
        skip_unless_nodes(self, self.num_nodes)

    @run_before('run')
    def set_command(self):
        tpn = self.tasks_per_node or partition_facts(self.current_partition)['cores']
        self.num_tasks_per_node = tpn
        self.num_tasks = tpn * self.num_nodes
        self.executable = self.bench_path
        self.executable_opts = [
            '-w', '-r', '-C', '-g', '-i', str(self.repetitions), '-s', str(self.segments),
            '-b', self.block_size, '-t', self.transfer_size, '-a', 'POSIX', '-e',
        ] + (['-F'] if self.access == 'file-per-process' else []) \
          + (['--posix.odirect'] if self.use_odirect() else []) + ['-o', '"$workdir/ior.dat"']

    def use_odirect(self):
        return self.num_nodes == 1 if self.odirect is None else self.odirect

    def derive(self, results):
        # a read served by the page cache is no storage figure: fail, naming why
        why = ior.read_not_from_storage(results)
        if why:
            raise ValueError(why)
