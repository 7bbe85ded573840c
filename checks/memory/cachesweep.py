# Cache and memory bandwidth of one core against the working-set size, where Guidi et al.
# ran CacheBench's memcpy (single core, array-size sweep, 2 s a point, median of 10). This
# is a different tool: likwid-bench (Debian's or Spack's), its AVX copy kernel on one core of
# socket 0, with the paper's sweep, seconds and repetitions on the sites. CacheBench
# (llcbench) is in no registry or mirror here; the record says which tool ran
# (meta.tool, meta.paper_tool) and the report names it beside the figure. Perf variables are the
# medians at half of L1d, half of L2, half of the last-level cache, and 4x the LLC
# (memory); the whole curve is in the perflog meta for plots.
import os

import reframe as rfm
from reframe.core.backends import getlauncher
from reframe.core.builtins import run_before, variable

import mdxbench
from mdxbench.base import MdxBenchTest, partition_facts
from mdxbench.parsers import likwid

SWEEP = os.path.join(os.path.dirname(mdxbench.__file__), 'scripts', 'likwid-sweep.sh')
LEVELS = {'l1': ('l1d_bytes', 0.5), 'l2': ('l2_bytes', 0.5), 'l3': ('llc_bytes', 0.5),
          'memory': ('llc_bytes', 4)}


def sweep_sizes(facts, step=4, smallest=8):
    '''Working sets in likwid's kB (1000 B): ``smallest`` kB up by ``step`` to 4x the LLC,
    plus the one size per level of LEVELS; ``{level: kB}`` for the latter.'''
    missing = sorted({f for f, _ in LEVELS.values() if not facts.get(f)})
    if missing:
        raise ValueError(f'partition facts lack {", ".join(missing)}: cannot place the sweep')
    levels = {name: max(1, round(facts[f] * k / 1000)) for name, (f, k) in LEVELS.items()}
    sizes, s = set(levels.values()), smallest
    while s < levels['memory']:
        sizes.add(s)
        s *= step
    return sorted(sizes), levels


@rfm.simple_test
class LikwidCacheSweep(MdxBenchTest):
    descr = ('likwid-bench AVX copy on one core: bandwidth of L1, L2, L3 and memory '
             '(not the paper\'s CacheBench memcpy)')
    tags = {'memory'}
    bench_name = 'likwid-bench'
    bench_binary = 'likwid-bench'
    parser = staticmethod(likwid.parse_sweep)
    #: likwid-bench kernel: AVX copy, as close to a libc memcpy as likwid has
    kernel = variable(str, value='copy_avx')
    #: repetitions per size (the paper: median of 10) and seconds per run (integer);
    #: None: the partition's sizing (extras.cache_sweep), else the paper's
    repeats = variable(int, type(None), value=None)
    run_seconds = variable(int, type(None), value=None)
    #: sweep step (x4 from 8 kB to 4x LLC), or the partition's (extras.cache_sweep.step)
    step = variable(int, type(None), value=None)
    PAPER = {'repeats': 10, 'step': 4, 'run_seconds': 2}
    perf_table = {f'{lv}_bw': (f'{lv}_gbs', 'GB/s', 'higher') for lv in LEVELS}
    #: {level: likwid kB} of the points behind the perf variables (set before the run)
    levels_kb = variable(dict, value={})

    @run_before('run')
    def set_sweep(self):
        # a partition may size the sweep for its purpose (a small test machine: fewer
        # points and repetitions); -S repeats=N / step=N win over both
        sized = self.current_partition.extras.get('cache_sweep') or {}
        for name, paper in self.PAPER.items():
            if getattr(self, name) is None:
                setattr(self, name, int(sized.get(name, paper)))
        sizes, self.levels_kb = sweep_sizes(partition_facts(self.current_partition),
                                            step=self.step)
        self.num_tasks = 1
        self.num_cpus_per_task = 1
        self.job.launcher = getlauncher('local')()   # likwid-bench pins its own thread
        self.executable = SWEEP
        self.executable_opts = [self.bench_path, self.kernel, str(self.run_seconds),
                                str(self.repeats)] + [f'{kb}kB' for kb in sizes]

    def derive(self, results):
        curve = results['curve']
        for name, kb in self.levels_kb.items():
            used = results['sizes'].get(f'{kb}kB')
            if used not in curve:
                raise ValueError(f'the sweep has no point at {kb}kB ({name})')
            results[f'{name}_gbs'] = curve[used]
        self.mdx_extra = dict(self.mdx_extra, kernel=results['kernel'], repeats=self.repeats,
                              step=self.step, run_seconds=self.run_seconds,
                              tool='likwid-bench ' + results['kernel'],
                              paper_tool='CacheBench memcpy (Guidi et al.)',
                              curve={str(k): round(v, 3) for k, v in curve.items()},
                              level_kb=self.levels_kb)
