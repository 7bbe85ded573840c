# The FFT application kernel of Guidi et al. (FFTW MPI, strong scaling on 1, 2, 4 and 8
# nodes, median of 10, time split into computation and communication): a 2-D complex FFT
# of N x N points with the paper's 32 MPI ranks per node (Figs 13-16; all the node's cores
# where it has fewer, said in meta); N is the paper's 50,000 (40 GB of data)
# where one node's memory holds it, else 8,192, the size run recorded with the reason, built by ReFrame (SingleSource, the
# environment's MPI compiler wrapper) from checks/apps/src against the environment's FFTW
# (Debian's on `local`, the Spack view's `fftw +mpi` elsewhere). Its result is checked
# against FFTW's own distributed plan before timing.
import reframe as rfm
from reframe.core.builtins import parameter, run_after, run_before, variable

from mdxbench.apps import PAPER_POINTS, FftKernelBuild, problem_size
from mdxbench.base import PAPER_RANKS_PER_NODE, MdxBenchBuiltTest, partition_facts, ranks_per_node
from mdxbench.jobsteps import skip_unless_nodes
from mdxbench.parsers import fft


@rfm.simple_test
class FftwMpi2d(MdxBenchBuiltTest, FftKernelBuild):
    descr = '2-D complex FFT with FFTW MPI: computation and communication (transpose) times'
    tags = {'apps', 'mpi'}
    bench_name = 'fftw-mpi-bench'
    parser = staticmethod(fft.parse)
    num_nodes = parameter([1, 2, 4, 8])
    #: points per dimension, the same for every node count (strong scaling); None: the
    #: paper's where one node holds it (:meth:`problem_size`)
    points = variable(int, type(None), value=None)
    repeats = variable(int, value=10)
    #: ranks per node: Guidi et al.'s 32 (Figs 13-16; their C5 ran 36, the node's cores),
    #: or all the node's cores where it has fewer (said in meta); 0: the node's cores
    tasks_per_node = variable(int, value=PAPER_RANKS_PER_NODE)
    perf_table = {'total_time': ('median_total_s', 's', 'lower'),
                  'compute_time': ('median_compute_s', 's', 'lower'),
                  'comm_time': ('median_comm_s', 's', 'lower'),
                  'gflops': ('gflops', 'GFLOPS', 'higher'),
                  'comm_share': ('comm_percent', '%', 'lower')}

    @run_after('setup')
    def require_nodes(self):
        skip_unless_nodes(self, self.num_nodes)

    @run_before('run')
    def launch(self):
        tpn, rule = ranks_per_node(
            partition_facts(self.current_partition)['cores'], self.tasks_per_node)
        self.mdx_extra = dict(self.mdx_extra, ranks_per_node=tpn,
                              ranks_per_node_paper=PAPER_RANKS_PER_NODE, ranks_rule=rule)
        self.num_tasks_per_node = tpn
        self.num_tasks = tpn * self.num_nodes
        self.num_cpus_per_task = 1
        self.env_vars['OMP_NUM_THREADS'] = 1
        n, why = problem_size(self.points, partition_facts(self.current_partition))
        self.mdx_extra = dict(self.mdx_extra, points_paper=PAPER_POINTS, points_rule=why)
        self.executable_opts = [str(n), str(self.repeats)]

    def derive(self, results):
        if results['ranks'] != self.num_tasks:
            raise ValueError(f'the kernel ran on {results["ranks"]} ranks, the job asked for '
                             f'{self.num_tasks}')
        self.mdx_extra = dict(self.mdx_extra, n=results['n'], fftw=results['version'],
                              check_rel_err=results['check_rel_err'],
                              total_s=results['total_s'], thp_system=results['thp_system'])
