# Host to GPU and GPU to GPU copies: NVIDIA nvbandwidth (Spack: nvbandwidth), the copy
# engine and the GPU's SMs, each GPU its own figures (host to device, device to host,
# device-local copy, host-device latency), and the worst GPU pair of the device-to-device
# copies where the node has several GPUs (waived by nvbandwidth where it has one: not
# measured). Through PCIe passthrough, host to device is the PCIe link's speed: a GPU
# whose link trained narrow or slow shows here.
import reframe as rfm
from reframe.core.builtins import run_before

from mdxbench.base import MdxBenchTest
from mdxbench.gpu import GpuMixin
from mdxbench.parsers import nvbandwidth

CASES = list(nvbandwidth.PER_GPU) + list(nvbandwidth.PAIRS)


@rfm.simple_test
class Nvbandwidth(GpuMixin, MdxBenchTest):
    descr = 'nvbandwidth: host-GPU bandwidth (copy engine, SM) and latency per GPU, GPU-GPU pairs'
    tags = {'acceptance', 'gpu'}
    bench_name = 'nvbandwidth'
    bench_binary = 'nvbandwidth'
    parser = staticmethod(nvbandwidth.parse)
    time_limit = '20m'
    per_gpu_table = {
        'h2d_ce': ('h2d_ce_gbs', 'GB/s', 'higher'), 'd2h_ce': ('d2h_ce_gbs', 'GB/s', 'higher'),
        'h2d_sm': ('h2d_sm_gbs', 'GB/s', 'higher'), 'd2h_sm': ('d2h_sm_gbs', 'GB/s', 'higher'),
        'local_copy': ('local_copy_gbs', 'GB/s', 'higher'),
        'host_latency': ('host_latency_ns', 'ns', 'lower'),
    }
    pair_table = {'d2d_read_ce': ('d2d_read_ce_gbs_worst', 'GB/s', 'higher'),
                  'd2d_write_ce': ('d2d_write_ce_gbs_worst', 'GB/s', 'higher')}

    @run_before('run')
    def set_options(self):
        self.executable_opts = ['-t'] + CASES

    def derive(self, results):
        self.check_gpus_seen(len(results['devices']), 'nvbandwidth')
        figures = nvbandwidth.per_gpu(results)
        self.mdx_extra = dict(self.mdx_extra, devices=results['devices'],
                              pairs=figures.pop('pairs_of'), waived=results['waived'])
        results.update(figures)
