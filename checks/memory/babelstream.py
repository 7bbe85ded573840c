# Memory bandwidth: BabelStream 5.0, OpenMP model, as the mdx II paper ran it (Tables 1
# and 4): one thread per core of the partition, bound to cores (every vCPU where the
# partition's facts say its figures are of all vCPUs: mdx II's AWS c7i.4xlarge), every
# array at least 4x the last-level cache of the node.
import math

import reframe as rfm
from reframe.core.builtins import run_before, variable

from mdxbench.base import MdxBenchTest, compute_threads, partition_facts
from mdxbench.parsers import babelstream


@rfm.simple_test
class BabelStreamOmp(MdxBenchTest):
    descr = 'BabelStream 5.0 (OpenMP): Copy, Mul, Add, Triad, Dot with all cores'
    tags = {'memory', 'acceptance'}
    bench_name = 'babelstream'
    bench_binary = 'omp-stream'
    parser = staticmethod(babelstream.parse)
    time_limit = '20m'
    num_times = variable(int, value=100)
    lengthen = {'num_times': 1}
    llc_factor = variable(int, value=4)
    perf_table = {k: (k, 'GB/s', 'higher') for k in ('copy', 'mul', 'add', 'triad', 'dot')}

    @run_before('run')
    def set_threads_and_size(self):
        facts = partition_facts(self.current_partition)
        llc_node = facts['llc_bytes'] * facts.get('sockets', 1)
        elements = int(math.ceil(self.llc_factor * llc_node / 8 / 2**20)) * 2**20
        self.num_tasks = 1
        self.num_cpus_per_task = facts['cores'] * facts.get('threads_per_core', 1)
        threads, places, rule = compute_threads(facts)
        if places == 'threads':           # Slurm's --hint=multithread
            self.use_multithreading = True
        self.env_vars.update({'OMP_NUM_THREADS': threads, 'OMP_PROC_BIND': 'spread',
                              'OMP_PLACES': places})
        self.executable_opts = ['-s', str(elements), '-n', str(self.num_times)]
        self.mdx_extra = {'array_elements': elements, 'array_bytes': elements * 8,
                          'threads': threads, 'threads_rule': rule}
