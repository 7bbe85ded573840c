# Conformance and health of a node's GPUs before their performance (node acceptance), read
# from `nvidia-smi -q -x`. Conformance: the GPUs are what the partition declares -- count
# (ReFrame's devices), model, memory, driver, persistence mode (the mdx I paper: its GPU VM
# template turns it on), ECC, MIG mode, and the PCIe link (the generation and width the
# partition declares it can reach; the width it trained to; not the current generation,
# which an idle GPU lowers). Health, what an operator reads first: uncorrectable ECC
# errors, page retirement and row remapping pending or failed, clock slowdowns from outside
# the workload (HW slowdown, thermal, power brake), a power limit below the default, and
# the driver's Xid events in the kernel log since boot (skipped, saying why, where the
# job cannot read the kernel log). The most each counter may reach is data: the
# partition's extras.gpu_health. Each fact that differs fails the case, naming the GPU's
# index, bus id and the counter; every GPU's facts and counters go to the perflog either way.
import os

import reframe as rfm
from reframe.core.builtins import run_before

from mdxbench.base import SCRIPTS, MdxBenchTest
from mdxbench.gpu import GpuMixin
from mdxbench.parsers import ParseError, nvsmi

XID_FILE = 'xid.txt'


@rfm.simple_test
class GpuConformance(GpuMixin, MdxBenchTest):
    descr = ('The GPUs are what the site declares (count, model, memory, driver, persistence, '
             'ECC, MIG, PCIe) and healthy (ECC, retired pages, remapped rows, slowdowns, power '
             'limit, Xid)')
    tags = {'acceptance', 'conformance', 'gpu'}
    bench_name = 'nvidia-smi'
    bench_binary = 'nvidia-smi'
    parser = staticmethod(lambda text: {'gpus': nvsmi.parse_xml(text)})
    perf_table = {'gpus': ('gpu_count', 'count', 'higher')}
    per_gpu_table = {'memory': ('memory_mib', 'MiB', 'higher'),
                     'pcie_width': ('pcie_width', 'lanes', 'higher')}
    lists_gpus = False

    @run_before('run')
    def set_options(self):
        self.executable_opts = ['-q', '-x']
        self.postrun_cmds += [f'sh {SCRIPTS}/gpu-xid.sh > {XID_FILE} 2>&1']

    def xid(self):
        try:
            with open(os.path.join(self.stagedir, XID_FILE)) as fp:
                return nvsmi.parse_xid(fp.read())
        except (OSError, ParseError) as err:
            return {'read': None, 'unreadable': f'{XID_FILE}: {err}', 'events': []}

    def derive(self, results):
        gpus = results['gpus']
        xid = self.xid()
        stray = nvsmi.xid_per_gpu(gpus, xid)
        results['gpu_count'] = len(gpus)
        for g in gpus:
            results[f"gpu{g['index']}_memory_mib"] = g.get('memory.total')
            results[f"gpu{g['index']}_pcie_width"] = g.get('pcie.link.width.current')
        results['version'] = gpus[0].get('driver_version') if gpus else None
        self.mdx_extra = dict(self.mdx_extra, gpus=gpus, xid={
            'read': xid['read'], 'unreadable': xid['unreadable'],
            'events': [dict(e, bus='%04x:%02x:%02x' % e['bus']) for e in xid['events']]})
        wrong = nvsmi.conformance(gpus, self.declared_gpu())
        wrong += nvsmi.health_failures(gpus, self.current_partition.extras.get('gpu_health'))
        wrong += [f"Xid {e['xid']} on {'%04x:%02x:%02x' % e['bus']}, which is none of the "
                  f"node's GPUs: {e['text']}" for e in stray]
        if wrong:
            raise ValueError(f'the GPUs are not what {self.current_system.name}:'
                             f'{self.current_partition.name} declares, or not healthy: '
                             + '; '.join(wrong))
