# Conformance of a node's GPUs before their performance (node acceptance): the GPUs are what
# the partition declares -- count (ReFrame's devices), model, memory, driver, persistence
# mode (the mdx I paper: its GPU VM template turns it on), ECC, MIG mode, and the PCIe link
# (generation and width the partition declares; the current link not trained below its
# maximum: a GPU at Gen4 x8 in a Gen5 x16 slot). Each fact that differs fails the case,
# naming the GPU's index and bus id; every GPU's facts go to the perflog either way.
import reframe as rfm
from reframe.core.builtins import run_before

from mdxbench.base import MdxBenchTest
from mdxbench.gpu import GpuMixin
from mdxbench.parsers import nvsmi


@rfm.simple_test
class GpuConformance(GpuMixin, MdxBenchTest):
    descr = 'The GPUs are what the site declares: count, model, memory, driver, persistence, ECC, MIG, PCIe link'
    tags = {'acceptance', 'conformance', 'gpu'}
    bench_name = 'nvidia-smi'
    bench_binary = 'nvidia-smi'
    parser = staticmethod(lambda text: {'gpus': nvsmi.parse_query(text)})
    perf_table = {'gpus': ('gpu_count', 'count', 'higher')}
    per_gpu_table = {'memory': ('memory_mib', 'MiB', 'higher'),
                     'pcie_width': ('pcie_width', 'lanes', 'higher')}

    @run_before('run')
    def set_options(self):
        self.executable_opts = [f'--query-gpu={",".join(nvsmi.QUERY)}', '--format=csv']

    def derive(self, results):
        gpus = results['gpus']
        results['gpu_count'] = len(gpus)
        for g in gpus:
            results[f"gpu{g['index']}_memory_mib"] = g.get('memory.total')
            results[f"gpu{g['index']}_pcie_width"] = g.get('pcie.link.width.current')
        results['version'] = gpus[0].get('driver_version') if gpus else None
        self.mdx_extra = dict(self.mdx_extra, gpus=gpus)
        wrong = nvsmi.conformance(gpus, self.declared_gpu())
        if wrong:
            raise ValueError(f'the GPUs are not what {self.current_system.name}:'
                             f'{self.current_partition.name} declares: ' + '; '.join(wrong))
