# Hardware counters of one core, as Guidi et al. read them with `perf` (instructions,
# cache misses, page faults) while an application kernel runs: here the FFT kernel of
# fft.py on one rank, under `perf stat`, with 4 KiB pages as in the paper (the kernel opts
# out of transparent huge pages; the system's mode is recorded). Two windows (the kernel
# switches the counters on and off through perf's --control): `run`, the paper's Table IV,
# one transform counted from the first touch of its data (its 9,766.8 K page faults are
# the array's 50,000^2 x 16 B / 4 KiB, 9,765.6 K, and a few more), with the plan FFTW
# measured -- in an earlier process, whose wisdom the counted one plans from without
# touching the data (FFTW_WISDOM_ONLY); and `timed`, the timed
# phases of 10 repetitions summed (no first touch, no planning, no correctness check). A node must expose a hardware
# PMU: a VM without a virtual PMU is skipped where the site facts say so (`pmu: false`,
# detected on `local`) and fails, naming the events it cannot count, where they do not.
import os
import re

import reframe as rfm
import reframe.utility.typecheck as typ
from reframe.core.builtins import parameter, run_after, run_before, variable

import mdxbench
from mdxbench.apps import PAPER_POINTS, FftKernelBuild, problem_size
from mdxbench.base import MdxBenchBuiltTest, partition_facts
from mdxbench.parsers import fft, perfstat

HARDWARE = ('instructions', 'cycles', 'cache-references', 'cache-misses')
PERF_TIMED = os.path.join(os.path.dirname(mdxbench.__file__), 'scripts', 'perf-timed.sh')
SOFTWARE = ('page-faults', 'task-clock')


@rfm.simple_test
class PerfCountersFft(MdxBenchBuiltTest, FftKernelBuild):
    descr = 'perf stat of the FFT kernel on one core: instructions, IPC, cache misses, page faults'
    tags = {'apps', 'counters'}
    bench_name = 'perf'
    bench_binary = 'perf'
    output_file = 'perf.csv'
    parser = staticmethod(perfstat.parse)
    #: points per dimension; None: Guidi et al.'s 50,000 (Table IV) where the node's memory
    #: holds it, as FftwMpi2d (:func:`mdxbench.apps.problem_size`), the rule in meta
    points = variable(int, type(None), value=None)
    #: run: Guidi et al.'s window (one transform, first touch included: Table IV);
    #: timed: the timed phases of ``repeats`` repetitions, summed
    window = parameter(['run', 'timed'])
    repeats = variable(int, value=10)
    #: what the kernel's "pages" line says for each window
    COUNTING = {'run': 'one-run', 'timed': 'timed-phases'}
    #: ... and how FFTW planned the transforms: measured either way, in the run window from
    #: the wisdom of an earlier process
    PLAN = {'run': 'measured-wisdom', 'timed': 'measured'}
    #: False: run even where the facts say there is no PMU (to see what perf says, e.g.
    #: after enabling a VM's virtual PMU and before updating the facts)
    skip_without_pmu = variable(typ.Bool, value=True)
    perf_table = {'instructions': ('instructions_g', 'G', 'lower'),      # for the same work
                  'ipc': ('ipc', 'instr/cycle', 'higher'),
                  'cache_miss_rate': ('cache_miss_percent', '%', 'lower'),
                  'cache_misses': ('cache_misses_m', 'M', 'lower'),
                  'page_faults': ('page_faults', 'count', 'lower')}

    @run_after('setup')
    def require_pmu(self):
        where = f'{self.current_system.name}:{self.current_partition.name}'
        self.skip_if(self.skip_without_pmu and
                     partition_facts(self.current_partition).get('pmu') is False,
                     f'{where} has no hardware PMU for perf (facts.pmu is false: a VM '
                     f'without a virtual PMU)')

    @run_before('run')
    def set_command(self):
        self.num_tasks = 1
        self.num_cpus_per_task = 1
        self.prerun_cmds = [f'{self.bench_path} --version']
        self.env_vars['MDXBENCH_THP'] = 'off'           # 4 KiB pages, as the paper counted
        self.env_vars['MDXBENCH_PERF_WINDOW'] = self.window
        repeats = 1 if self.window == 'run' else self.repeats
        self.executable = PERF_TIMED
        n, why = problem_size(self.points, partition_facts(self.current_partition))
        self.mdx_extra = dict(self.mdx_extra, points_paper=PAPER_POINTS, points_rule=why,
                              repeats=repeats, data_pages=n * n * 16 // 4096)
        self.executable_opts = [self.bench_path, self.output_file,
                                ','.join(HARDWARE + SOFTWARE), '--', './fftw-mpi-bench',
                                str(n), str(repeats)]
        if self.window == 'run':
            # the paper's counts are of FFTW's measured plan: measured here in a process of
            # its own (its measurements touch that process's arrays), planned from its
            # wisdom in the counted one
            self.env_vars['MDXBENCH_FFTW_WISDOM'] = 'fft.wisdom'
            self.prerun_cmds.append(f'MDXBENCH_PERF_WINDOW=plan ./fftw-mpi-bench {n} 1')

    def derive(self, results):
        with open(self.stagedir + '/' + self.stdout.evaluate()) as fp:
            out = fp.read()
        kernel = fft.parse(out)                     # the kernel ran and its FFT was right
        version = re.search(r'^perf version (\S+)', out, re.M)
        ev = results['events']
        lost = [e for e in HARDWARE + SOFTWARE if ev.get(e) is None]
        if lost:
            raise ValueError(f'perf could not count {", ".join(lost)} on '
                             f'{",".join(self.job.nodelist or ["?"])}'
                             f' ({"; ".join(results["not_counted"]) or "absent"}): no hardware '
                             f'PMU visible to the node (a VM needs a virtual PMU)')
        results.update(instructions_g=ev['instructions'] / 1e9,
                       ipc=ev['instructions'] / ev['cycles'],
                       cache_misses_m=ev['cache-misses'] / 1e6,
                       cache_miss_percent=100.0 * ev['cache-misses'] / ev['cache-references'],
                       page_faults=ev['page-faults'],
                       version=version.group(1) if version else 'unknown')
        want = self.COUNTING[self.window]
        if kernel['perf_counting'] != want:
            raise ValueError(f"the kernel says perf counted {kernel['perf_counting']!r}, not "
                             f"{want!r} (window {self.window})")
        plan = self.PLAN[self.window]
        if kernel['plan'] != plan:
            raise ValueError(f"the kernel says FFTW planned {kernel['plan']!r}, not {plan!r} "
                             f"(window {self.window})")
        self.mdx_extra = dict(self.mdx_extra, kernel_gflops=kernel['gflops'],
                              task_clock_ms=ev['task-clock'], points=kernel['n'],
                              counted=('one transform, first touch of its data included '
                                       '(Guidi et al., Table IV)' if self.window == 'run' else
                                       f'the timed phases of {kernel["reps"]} repetitions, '
                                       f'summed'),
                              thp_system=kernel['thp_system'], plan=kernel['plan'],
                              thp_process=kernel['thp_process'])
