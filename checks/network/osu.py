# MPI with the OSU micro-benchmarks, as Guidi et al. ran them: osu_latency and osu_bw
# between two nodes with one rank each (one node with two ranks on a one-node partition),
# osu_bibw the same way (ours: no paper ran it),
# osu_alltoall on several nodes with several ranks per node. The whole size->value curve
# goes into the perflog (meta.curve) for plots.
import reframe as rfm
from reframe.core.builtins import parameter, run_after, run_before, variable

from mdxbench.base import PAPER_RANKS_PER_NODE, MdxBenchTest, partition_facts, ranks_per_node
from mdxbench.jobsteps import partition_nodes, skip_unless_nodes
from mdxbench.parsers import osu

OSU_DIRS = [f'$MDXBENCH_SPACK_VIEW/libexec/osu-micro-benchmarks/mpi/{d}'
            for d in ('pt2pt', 'collective', 'startup')]


class _Osu(MdxBenchTest):
    tags = {'network', 'mpi'}
    bench_name = 'osu-micro-benchmarks'
    bench_search_dirs = OSU_DIRS
    time_limit = '20m'

    def derive(self, results):
        self.mdx_extra = dict(self.mdx_extra, curve={str(k): v for k, v in
                                                     results['curve'].items()})


class _OsuPt2Pt(_Osu):
    @run_before('run')
    def place_ranks(self):
        nodes = min(2, partition_nodes(self.current_partition) or 2)
        self.num_tasks = 2
        self.num_tasks_per_node = 2 // nodes
        self.mdx_extra = {'nodes': nodes}


@rfm.simple_test
class OsuLatency(_OsuPt2Pt):
    descr = 'osu_latency: point-to-point latency, 2 ranks on 2 nodes (1 node if alone)'
    bench_binary = 'osu_latency'
    parser = staticmethod(osu.latency)
    perf_table = {'latency_8B': ('latency', 'us', 'lower')}


@rfm.simple_test
class OsuBandwidth(_OsuPt2Pt):
    '''Both figures of the curve: the bandwidth at the largest message size
    (``bandwidth``, ``bandwidth_gbps``) and the peak over all sizes (``peak_gbps``, the
    size in ``meta.peak_size``), which is what Guidi et al. quote (86-90 Gbit/s); a
    reference names the one it means by its variable.'''
    descr = 'osu_bw: point-to-point bandwidth at the largest message size, and the peak'
    bench_binary = 'osu_bw'
    parser = staticmethod(osu.bandwidth)
    perf_table = {'bandwidth': ('bandwidth', 'MB/s', 'higher'),
                  'bandwidth_gbps': ('bandwidth_gbps', 'Gbit/s', 'higher'),
                  'peak_gbps': ('peak_gbps', 'Gbit/s', 'higher')}

    def derive(self, results):
        super().derive(results)
        self.mdx_extra = dict(self.mdx_extra, peak_size=results['peak_size'],
                              max_size=results['max_size'])


@rfm.simple_test
class OsuBiBandwidth(OsuBandwidth):
    '''osu_bibw: both ranks send at once, the figures of the sum of both directions (a
    full-duplex link's is twice osu_bw's; a NIC, switch port or virtual switch that shares
    one direction's capacity between both shows less). No paper measured it: no reference,
    the value tracked.'''
    descr = 'osu_bibw: bidirectional point-to-point bandwidth at the largest message size'
    bench_binary = 'osu_bibw'
    parser = staticmethod(osu.bibandwidth)


@rfm.simple_test
class OsuAlltoall(_Osu):
    descr = 'osu_alltoall: all-to-all latency at 8 B, nodes x ranks per node'
    bench_binary = 'osu_alltoall'
    parser = staticmethod(osu.latency)
    num_nodes = parameter([1, 2, 8])
    #: ranks per node: Guidi et al.'s 32, or all the node's cores where it has fewer (said
    #: in meta); 0: the node's cores
    ranks_per_node = variable(int, value=PAPER_RANKS_PER_NODE)
    perf_table = {'latency_8B': ('latency', 'us', 'lower')}

    @run_after('setup')
    def require_nodes(self):
        skip_unless_nodes(self, self.num_nodes)

    def rpn(self):
        return ranks_per_node(
            partition_facts(self.current_partition)['cores'], self.ranks_per_node)[0]

    @run_after('setup')
    def require_two_ranks(self):
        n = self.rpn() * self.num_nodes
        self.skip_if(n < 2, f'osu_alltoall needs at least two ranks: {self.num_nodes} node(s) '
                            f'x {self.rpn()} rank(s) per node is {n}')

    @run_before('run')
    def place_ranks(self):
        rpn, rule = ranks_per_node(
            partition_facts(self.current_partition)['cores'], self.ranks_per_node)
        self.mdx_extra = dict(self.mdx_extra, ranks_per_node=rpn,
                              ranks_per_node_paper=PAPER_RANKS_PER_NODE, ranks_rule=rule)
        self.num_tasks_per_node = rpn
        self.num_tasks = rpn * self.num_nodes
