# STREAM of HPC Challenge (Debian's hpcc, or Spack's): all physical cores (StarSTREAM) and
# one core alone (SingleSTREAM). A stand-in, not Guidi et al.'s method (Table II ran
# McCalpin's STREAM 5.10 at 120 M elements: StreamOmp): HPCC sizes its arrays from HPL's N,
# and the report names it "not the paper's method", never beside the paper's figures.
import reframe as rfm
from reframe.core.builtins import run_before, variable

import mdxbench.hpcc as launch
from mdxbench.base import MdxBenchTest, partition_facts
from mdxbench.parsers import hpcc


@rfm.simple_test
class HpccStream(MdxBenchTest):
    descr = 'STREAM (HPCC 1.5): Copy/Scale/Add/Triad with all cores and with one core'
    tags = {'memory', 'acceptance'}
    bench_name = 'hpcc'
    bench_binary = 'hpcc'
    executable = 'hpcc'
    output_file = 'hpccoutf.txt'
    parser = staticmethod(hpcc.stream)
    time_limit = '20m'
    #: every STREAM array at least this many times the last-level cache (the record says
    #: which: below 1 the arrays fit in it, and the figure is the cache's). None: the
    #: partition's (extras.hpcc_stream.llc_factor), else STREAM's rule, 4
    llc_factor = variable(float, type(None), value=None)
    RULE = 4.0
    perf_table = {
        'copy': ('copy', 'GB/s', 'higher'), 'scale': ('scale', 'GB/s', 'higher'),
        'add': ('add', 'GB/s', 'higher'), 'triad': ('triad', 'GB/s', 'higher'),
        'copy_1t': ('copy_1t', 'GB/s', 'higher'), 'triad_1t': ('triad_1t', 'GB/s', 'higher'),
    }

    @run_before('run')
    def write_input(self):
        facts = partition_facts(self.current_partition)
        if self.llc_factor is None:
            # HPCC runs every kernel at the N STREAM's arrays need: a partition whose
            # last-level cache makes that N take HPL most of an hour may size it down
            sized = self.current_partition.extras.get('hpcc_stream') or {}
            self.llc_factor = float(sized.get('llc_factor', self.RULE))
        self.num_tasks = facts['cores']
        self.num_cpus_per_task = 1
        self.env_vars['OMP_NUM_THREADS'] = 1
        n = launch.stream_problem_size(facts.get('llc_bytes'), self.llc_factor)
        p, q = launch.write_input(self.stagedir, n, self.num_tasks)

        self.mdx_extra = {'hpl_n': n, 'grid': f'{p}x{q}', 'llc_factor': self.llc_factor}
