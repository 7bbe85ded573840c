# The collectives training jobs live on: NVIDIA's nccl-tests (Spack: nccl-tests +mpi), an
# all-reduce, an all-gather and a send/receive ring over every GPU of a node (one process
# driving them all, -g N) and over two nodes (one MPI rank per GPU through Slurm). The
# figure is nccl-tests' bus bandwidth -- comparable with a link's speed whatever the rank
# count -- at the largest size (8 GiB: bandwidth, not latency) and its own average over
# every size. Every size's result is checked (nccl-tests' -c 1, its default): one wrong
# element fails the case, whatever the bandwidth. mdx I's VMs have no peer-to-peer between
# their GPUs (seeds/003 sec. 5.2): an all-reduce there goes through host memory, what the
# node case shows; the paper's tf_cnn_benchmarks on two GPU nodes is the two-node case.
import reframe as rfm
from reframe.core.builtins import parameter, run_after, run_before, variable

from mdxbench import settings
from mdxbench.base import MdxBenchTest
from mdxbench.gpu import GpuMixin, gpu_count
from mdxbench.jobsteps import partition_nodes
from mdxbench.parsers import nccl


@rfm.simple_test
class NcclTests(GpuMixin, MdxBenchTest):
    descr = 'nccl-tests: bus bandwidth of all-reduce, all-gather, send/receive within a node and across two'
    tags = {'acceptance', 'gpu'}
    bench_name = 'nccl-tests'
    #: the collective's program, <collective>_perf (named at init; the class's own default
    #: is the all-reduce's, what a reader of the class -- or its binary lookup -- sees)
    bench_binary = 'all_reduce_perf'
    collective = parameter(['all_reduce', 'all_gather', 'sendrecv'])
    #: node: every GPU of one node; nodes: two nodes, a rank per GPU
    scope = parameter(['node', 'nodes'])
    #: the sizes swept: 8 B to this, doubling (nccl-tests' -b -e -f 2)
    max_bytes = variable(str, value='8G')
    #: across nodes, the GPUs each MPI rank drives (-g): 1, a rank per GPU, as training
    #: jobs run; more, fewer ranks a node (the node's GPUs divided by it) on the same GPUs
    gpus_per_rank = variable(int, value=1)
    time_limit = '20m'
    parser = staticmethod(nccl.parse)
    perf_table = {'busbw': ('busbw_largest', 'GB/s', 'higher'),
                  'busbw_avg': ('busbw_avg', 'GB/s', 'higher')}

    @run_after('init')
    def name_the_program(self):
        self.bench_binary = f'{self.collective}_perf'
        if self.scope == 'nodes':
            # a pair check: `mdxbench accept` runs it on two nodes for one of them
            self.tags = self.tags | {'pair'}

    def not_here(self):
        why = super().not_here()
        where = f'{self.current_system.name}:{self.current_partition.name}'
        gpus = gpu_count(self.current_partition)
        if why or (self.scope == 'node' and gpus < 2):
            return why or f'{where} has {gpus} GPU per node: a collective within a node needs two'
        if self.scope == 'nodes':
            if self.current_partition.scheduler.registered_name == 'local' and \
                    not settings.get('MDXBENCH_PAIR_SUBJECT'):
                # (inside the two-node allocation `mdxbench accept` gives a pair check,
                # the allocation's srun reaches both nodes)
                return f'{where} runs its jobs on this one node: a collective across nodes needs two'
            nodes = partition_nodes(self.current_partition)
            if nodes is not None and nodes < 2:
                return f'{where} has {nodes} node: a collective across nodes needs two'
        return None

    @run_before('run')
    def place_ranks(self):
        sweep = ['-b', '8', '-e', self.max_bytes, '-f', '2']
        if self.scope == 'node':
            # GpuMixin's one process on the node, driving its GPUs
            self.executable_opts = sweep + ['-g', str(self.num_gpus)]
        else:
            if self.gpus_per_rank < 1 or self.num_gpus % self.gpus_per_rank:
                raise ValueError(f'gpus_per_rank={self.gpus_per_rank}: not a divisor of the '
                                 f'node\'s {self.num_gpus} GPUs')
            self.num_tasks_per_node = self.num_gpus // self.gpus_per_rank
            self.num_tasks = 2 * self.num_tasks_per_node
            self.executable_opts = sweep + ['-g', str(self.gpus_per_rank)]
        self.mdx_extra = dict(self.mdx_extra, collective=self.collective, scope=self.scope,
                              processes=self.num_tasks,
                              gpus_per_process=int(self.executable_opts[-1]))

    def derive(self, results):
        hosts = sorted({r['host'] for r in results['ranks']})
        if self.scope == 'node':
            self.check_gpus_seen(len(results['ranks']), results['program'],
                                 [r['bus_id'] for r in results['ranks']])
        elif len(results['ranks']) != 2 * self.num_gpus or len(hosts) != 2:
            # (nccl-tests prints a "Rank" line per GPU: a rank of -g G is G of them)
            raise ValueError(f'{results["program"]}: {len(results["ranks"])} GPU rank(s) on '
                             f'{len(hosts)} host(s) ({", ".join(hosts)}), the job asked for '
                             f'{2 * self.num_gpus} on 2')
        wrong = nccl.wrong_results(results)
        if wrong:
            raise ValueError(f'{results["program"]} computed wrong results: '
                             + '; '.join(wrong[:6]) + (' ...' if len(wrong) > 6 else ''))
        if results['error']:
            raise ValueError(f'{results["program"]}: NCCL reported "{results["error"]}"')
        results.update(nccl.figures(results))
        self.mdx_extra = dict(self.mdx_extra, hosts=hosts, nccl=results['nccl_library'],
                              largest_bytes=results['largest_bytes'],
                              curve={str(r['size']): r['out_of_place']['busbw']
                                     for r in results['rows']})
