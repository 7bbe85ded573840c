# Floating-point compute: LINPACK. Intel oneAPI MKL's shared-memory LINPACK, as the mdx II
# paper ran it (Tables 1 and 4), its MPI LINPACK for several nodes, and HPL from Debian's
# hpcc where MKL is absent (`local`). GFLOPS and the percentage of the partition's nominal
# peak (cores x clock x FLOPs/cycle, from the site config facts; the clock it uses is in the
# record: the base clock unless a site knows the AVX-512 all-core frequency, so turbo can
# take a run above 100% of it).
import os

import reframe as rfm
import reframe.utility.typecheck as typ
from reframe.core.builtins import parameter, run_before, variable

import mdxbench.hpcc as launch
from mdxbench.base import MdxBenchTest, compute_threads, partition_facts, peak_gflops
from mdxbench.blas import BlasMixin
from mdxbench.parsers import hpcc, linpack

#: said where Intel's binaries are missing: no registry, Spack mirror or PyPI wheel has them
INTEL_DOWNLOAD = ("Intel's LINPACK binaries are Intel's download (oneAPI MKL benchmarks), "
                  "in no registry or mirror: install them and set MKLROOT")
MKL_DIRS = ['$MKLROOT/share/mkl/benchmarks/linpack', '$MKLROOT/benchmarks/linpack',
            '$MKLROOT/share/mkl/benchmarks/mp_linpack', '$MKLROOT/benchmarks/mp_linpack']


class _Linpack(MdxBenchTest):
    tags = {'compute', 'acceptance'}
    perf_table = {'gflops': ('gflops', 'GFLOPS', 'higher'),
                  'percent_nominal_peak': ('percent_nominal_peak', '%', 'higher')}

    def derive(self, results):
        # the nominal peak of every node the run used, and the clock it is taken at
        node_peak, clock, kind = peak_gflops(partition_facts(self.current_partition))
        peak = node_peak * getattr(self, 'num_nodes', 1)
        results['peak_gflops'] = peak
        results['percent_nominal_peak'] = 100.0 * results['gflops'] / peak
        self.mdx_extra = dict(self.mdx_extra, peak_gflops=peak, peak_clock_ghz=clock,
                              peak_clock=kind)


@rfm.simple_test
class HpccHpl(BlasMixin, _Linpack):
    descr = 'HPL from HPC Challenge 1.5, all cores, one rank per core, on the environment\'s BLAS'
    bench_name = 'hpcc'
    bench_binary = 'hpcc'
    executable = 'hpcc'
    output_file = 'hpccoutf.txt'
    parser = staticmethod(hpcc.hpl)
    time_limit = '30m'
    #: HPL problem size (hpcc also sizes its other kernels from it)
    problem_size = variable(int, value=6000)
    lengthen = {'problem_size': 1 / 3}          # HPL's work: N cubed

    @run_before('run')
    def write_input(self):
        self.num_tasks = partition_facts(self.current_partition)['cores']
        self.num_cpus_per_task = 1
        self.env_vars['OMP_NUM_THREADS'] = 1
        p, q = launch.write_input(self.stagedir, self.problem_size, self.num_tasks)
        self.mdx_extra = {'hpl_n': self.problem_size, 'grid': f'{p}x{q}'}


@rfm.simple_test
class MklLinpackShm(_Linpack):
    descr = 'Intel oneAPI MKL shared-memory LINPACK (xlinpack_xeon64), one node, all cores'
    bench_name = 'intel-mkl-linpack'
    bench_binary = 'xlinpack_xeon64'
    bench_search_dirs = MKL_DIRS
    bench_origin = INTEL_DOWNLOAD
    parser = staticmethod(linpack.shm_linpack)
    time_limit = '1h'
    #: problem sizes; the best Maximal GFlops is reported
    problem_sizes = variable(typ.List[int], value=[])
    #: fraction of the node's memory for the largest matrix when problem_sizes is empty
    memory_fraction = variable(float, value=0.6)

    @run_before('run')
    def write_input(self):
        facts = partition_facts(self.current_partition)
        sizes = self.problem_sizes
        if not sizes:
            n = int((self.memory_fraction * facts['memory_gib'] * 2**30 / 8) ** 0.5)
            sizes = [n // 1000 * 1000]

        self.num_tasks = 1
        self.num_cpus_per_task = facts['cores'] * facts.get('threads_per_core', 1)
        threads, places, rule = compute_threads(facts)
        if places == 'threads':           # Slurm's --hint=multithread
            self.use_multithreading = True
        self.env_vars['OMP_NUM_THREADS'] = threads
        self.env_vars['KMP_AFFINITY'] = 'granularity=fine,compact,1,0'
        with open(os.path.join(self.stagedir, 'lininput'), 'w') as fp:
            fp.write(launch.linpack_input(sizes))

        self.executable_opts = ['-i', 'lininput']
        self.mdx_extra = {'problem_sizes': sizes, 'threads': threads, 'threads_rule': rule}


@rfm.simple_test
class MklLinpackMpi(_Linpack):
    descr = 'Intel oneAPI MKL MPI LINPACK (xhpl_intel64_dynamic), one rank per socket'
    tags = {'compute'}
    bench_name = 'intel-mkl-mp-linpack'
    bench_binary = 'xhpl_intel64_dynamic'
    bench_search_dirs = MKL_DIRS
    bench_origin = INTEL_DOWNLOAD
    parser = staticmethod(linpack.mp_linpack)
    time_limit = '2h'
    num_nodes = parameter([1, 2])
    memory_fraction = variable(float, value=0.6)
    block_size = variable(int, value=384)

    @run_before('run')
    def set_grid(self):
        facts = partition_facts(self.current_partition)
        sockets = facts.get('sockets', 1)
        self.num_tasks = self.num_nodes * sockets
        self.num_tasks_per_node = sockets
        self.num_cpus_per_task = facts['cores'] // sockets
        self.env_vars['OMP_NUM_THREADS'] = self.num_cpus_per_task
        mem = self.memory_fraction * facts['memory_gib'] * 2**30 * self.num_nodes
        n = int((mem / 8) ** 0.5) // self.block_size * self.block_size
        p, q = hpcc.process_grid(self.num_tasks)
        self.executable_opts = ['-n', str(n), '-b', str(self.block_size), '-p', str(p),
                                '-q', str(q)]
        self.mdx_extra = {'hpl_n': n, 'grid': f'{p}x{q}'}
