# A sustained load on every GPU of a node, long enough to heat it: gpu-burn (wilicc/gpu-burn,
# our Spack package) runs DGEMM on each GPU and compares every result GPU-side. A GPU that
# miscomputes when hot fails by name, whatever its speed; each GPU's Gflop/s is its figure
# (the median of its batches). nvidia-smi -q -x before and after the burn: the time each
# clock event reason held a GPU down during it (the driver's counters), judged by the
# partition's extras.gpu_burn.max_throttle_s -- a GPU that throttled from heat or a power
# brake says so and fails -- and its temperature at the end. How long it burns, and whether
# it runs without being asked, is the site's (extras.gpu_burn: seconds, by_default);
# `-S GpuBurn.seconds=N` wins, `-S GpuBurn.burn=1` runs it where the site leaves it out.
import os

import reframe as rfm
from reframe.core.builtins import run_after, run_before, variable

from mdxbench.base import MdxBenchTest
from mdxbench.gpu import GpuMixin
from mdxbench.parsers import ParseError, gpuburn, nvsmi

BEFORE, AFTER = 'smi-before-burn.xml', 'smi-after-burn.xml'
#: gpu-burn's length where the site says none: a few minutes
DEFAULT_SECONDS = 300


@rfm.simple_test
class GpuBurn(GpuMixin, MdxBenchTest):
    descr = 'gpu-burn: DGEMM on every GPU for minutes, every result checked; throttling under load'
    tags = {'acceptance', 'gpu', 'burn-in'}
    bench_name = 'gpu-burn'
    bench_binary = 'gpu_burn'
    parser = staticmethod(gpuburn.parse)
    per_gpu_table = {'gflops': ('gflops', 'Gflop/s', 'higher'),
                     'temp_end': ('temp_end', 'C', 'lower')}
    #: seconds of load (0: the site's extras.gpu_burn.seconds, else DEFAULT_SECONDS)
    seconds = variable(int, value=0)
    #: run where the site's extras.gpu_burn.by_default is false (None: as the site says)
    burn = variable(bool, type(None), value=None)

    def site(self):
        return self.current_partition.extras.get('gpu_burn') or {}

    @run_after('setup')
    def as_the_site_says(self):
        asked = self.burn if self.burn is not None else self.site().get('by_default', True)
        self.skip_if(not asked, f'{self.current_system.name}:{self.current_partition.name} '
                     'runs the burn-in only when asked (extras.gpu_burn.by_default: false): '
                     '-S GpuBurn.burn=1')
        self.seconds = self.seconds or int(self.site().get('seconds', DEFAULT_SECONDS))
        self.time_limit = f'{self.seconds + 600}s'

    @run_before('run')
    def set_options(self):
        # line buffered: each of gpu-burn's processes writes its lines as it prints them
        # (into a file its stdio would hold them until it exits, out of order)
        self.executable = f'stdbuf -oL {self.bench_path}'
        self.executable_opts = ['-d', str(self.seconds)]
        # the compare kernel it loads: beside the program (a vetting bundle's bin/) or in
        # its prefix's share/ (a Spack view); else the installed path built into it
        here = os.path.dirname(os.path.realpath(self.bench_path))
        for fatbin in (os.path.join(os.path.dirname(self.bench_path), 'compare.fatbin'),
                       os.path.join(here, '..', 'share', 'gpu-burn', 'compare.fatbin')):
            if os.path.isfile(fatbin):
                self.executable_opts += ['-c', os.path.normpath(fatbin)]
                break
        self.prerun_cmds += [f'nvidia-smi -q -x > {BEFORE} 2>&1 || true']
        self.postrun_cmds += [f'nvidia-smi -q -x > {AFTER} 2>&1 || true']
        self.mdx_extra = dict(self.mdx_extra, seconds=self.seconds, doubles=True)

    def reading(self, name):
        try:
            with open(os.path.join(self.stagedir, name)) as fp:
                return nvsmi.parse_xml(fp.read())
        except (OSError, ParseError) as err:
            raise ValueError(f'{name} (nvidia-smi -q -x around the burn): {err}') from None

    def derive(self, results):
        gpus = results['gpus']
        self.check_gpus_seen(len(gpus), 'gpu-burn')
        before, after = self.reading(BEFORE), self.reading(AFTER)
        held, slowed = nvsmi.throttled(before, after, self.site().get('max_throttle_s'))
        for g, smi in zip(gpus, after):
            results[f'gpu{g["index"]}_gflops'] = g['gflops']
            results[f'gpu{g["index"]}_temp_end'] = smi.get('temperature.gpu')
        self.mdx_extra = dict(self.mdx_extra, gpus=[
            dict(g, bus_id=smi['pci.bus_id'], throttled_s=held.get(smi['pci.bus_id']),
                 sm_clock_end=smi.get('clocks.sm')) for g, smi in zip(gpus, after)])
        wrong = gpuburn.faults(results, [smi['pci.bus_id'] for smi in after]) + slowed
        if wrong:
            raise ValueError('gpu-burn: ' + '; '.join(wrong))
