# STREAM 5.10 (McCalpin) from Spack's `stream` package, as Guidi et al. ran it (Table II):
# 120,000,000-element arrays and 10 iterations (compiled in: see spack/common), best time
# excluding the first, with all physical cores and with one thread (run `repetitions` times
# where a run is made longer: the best of them all). On `local`, where no
# Spack view exists, HpccStream measures the same kernels from Debian's hpcc.
import shlex

import reframe as rfm
from reframe.core.builtins import parameter, run_before, variable

from mdxbench.base import MdxBenchTest, partition_facts
from mdxbench.parsers import stream


@rfm.simple_test
class StreamOmp(MdxBenchTest):
    descr = 'STREAM 5.10 (OpenMP): Copy/Scale/Add/Triad with all cores or one thread'
    tags = {'memory', 'acceptance'}
    bench_name = 'stream'
    bench_binary = 'stream_c.exe'
    parser = staticmethod(stream.parse)
    threads = parameter(['all-cores', 'one-thread'])
    perf_table = {k: (k, 'GB/s', 'higher') for k in ('copy', 'scale', 'add', 'triad')}
    #: runs of the binary (its 10 iterations are compiled in, the paper's): the best rate
    #: of each kernel over them all, as STREAM takes the best of its iterations
    repetitions = variable(int, value=1)
    lengthen = {'repetitions': 1}

    @run_before('run')
    def set_threads(self):
        facts = partition_facts(self.current_partition)
        n = facts['cores'] if self.threads == 'all-cores' else 1
        self.num_tasks = 1
        self.num_cpus_per_task = facts['cores'] * facts.get('threads_per_core', 1)
        self.env_vars.update({'OMP_NUM_THREADS': n, 'OMP_PROC_BIND': 'spread',
                              'OMP_PLACES': 'cores'})
        if self.repetitions > 1:
            self.executable = 'sh'
            self.executable_opts = ['-c', shlex.quote(
                f'for i in $(seq {self.repetitions}); do {shlex.quote(self.bench_path)}; done')]

    def derive(self, results):
        want = self.env_vars['OMP_NUM_THREADS']
        if results['threads'] != want:
            raise ValueError(f'STREAM counted {results["threads"]} threads, {want} were asked '
                             f'for (a build without OpenMP?)')
        self.mdx_extra = dict(self.mdx_extra, array_elements=results['array_elements'],
                              runs=results['runs'])
