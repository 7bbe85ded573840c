# Host to GPU and GPU to GPU copies: NVIDIA nvbandwidth (Spack: nvbandwidth), the copy
# engine and the GPU's SMs, each GPU its own figures (host to device, device to host,
# device-local copy, host-device latency). Through PCIe passthrough, host to device is the
# PCIe link's speed under load: a GPU whose link trained narrow or slow shows here.
# Device to device needs peer access: nvbandwidth v0.8 waives those cases where no GPU pair
# has it (passthrough, or one GPU). Where the partition declares peer-to-peer
# (extras.facts.gpu_p2p) the worst pair of each is a figure and every pair must be
# measured; where it declares none, a pair measured fails the declaration.
import reframe as rfm
from reframe.core.builtins import run_before

from mdxbench.base import MdxBenchTest
from mdxbench.gpu import GpuMixin, peer_failures
from mdxbench.parsers import nvbandwidth


@rfm.simple_test
class Nvbandwidth(GpuMixin, MdxBenchTest):
    descr = 'nvbandwidth: host-GPU bandwidth (copy engine, SM) and latency per GPU, GPU-GPU pairs'
    tags = {'acceptance', 'gpu'}
    bench_name = 'nvbandwidth'
    bench_binary = 'nvbandwidth'
    parser = staticmethod(lambda text: nvbandwidth.parse(text, nvbandwidth.CHECK_CASES))
    time_limit = '20m'
    per_gpu_table = {
        'h2d_ce': ('h2d_ce_gbs', 'GB/s', 'higher'), 'd2h_ce': ('d2h_ce_gbs', 'GB/s', 'higher'),
        'h2d_sm': ('h2d_sm_gbs', 'GB/s', 'higher'), 'd2h_sm': ('d2h_sm_gbs', 'GB/s', 'higher'),
        'local_copy': ('local_copy_gbs', 'GB/s', 'higher'),
        'host_latency': ('host_latency_ns', 'ns', 'lower'),
    }
    pair_table = {'d2d_read_ce': ('d2d_read_ce_gbs_worst', 'GB/s', 'higher'),
                  'd2d_write_ce': ('d2d_write_ce_gbs_worst', 'GB/s', 'higher')}
    pairs_need_p2p = True

    @run_before('run')
    def set_options(self):
        self.executable_opts = ['-t'] + list(nvbandwidth.CHECK_CASES)

    def derive(self, results):
        self.check_gpus_seen(len(results['devices']), 'nvbandwidth',
                             [d['bus_id'] for d in results['devices']])
        figures = nvbandwidth.per_gpu(results)
        unmeasured = figures.pop('pairs_not_measured')
        pairs = figures.pop('pairs_of')
        worst = {name: figures.pop(f'{key}_worst_pair')
                 for name, (key, _, _) in self.pair_table.items()
                 if f'{key}_worst_pair' in figures}
        self.mdx_extra = dict(self.mdx_extra, devices=results['devices'], pairs=pairs,
                              waived=results['waived'], pairs_not_measured=unmeasured,
                              worst_pair=worst)
        results.update(figures)
        wrong = peer_failures(self.declared_p2p(), self.num_gpus,
                              [c for c in nvbandwidth.PAIRS if c in results['tests']],
                              [c for c in nvbandwidth.PAIRS if c in results['waived']],
                              {c: p for c, p in unmeasured.items()})
        if wrong:
            raise ValueError('peer-to-peer is not what the partition declares: '
                             + '; '.join(wrong))
