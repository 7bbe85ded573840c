# GPU to GPU within a node, as the mdx I paper measured it (sec. 5.2): NVIDIA's
# p2pBandwidthLatencyTest (CUDA samples, built by Spack from our package in spack/repo).
# Under PCIe passthrough peer-to-peer cannot be enabled: about 20 GB/s between GPUs, PCIe
# speed, where bare metal of the same architecture with P2P reaches 275 GB/s over NVLink.
# Each GPU's copy within its own memory, the worst pair of each matrix (P2P disabled and
# enabled, unidirectional and bidirectional, latency), and the pairs that can use P2P; every
# pair's figures go to the perflog. A node of one GPU has no pair: those are not measured.
import reframe as rfm

from mdxbench.base import MdxBenchTest
from mdxbench.gpu import GpuMixin
from mdxbench.parsers import p2p


@rfm.simple_test
class GpuP2pBandwidthLatency(GpuMixin, MdxBenchTest):
    descr = 'p2pBandwidthLatencyTest (CUDA samples): GPU-GPU bandwidth and latency, P2P off and on'
    tags = {'acceptance', 'gpu'}
    bench_name = 'p2pBandwidthLatencyTest'
    bench_binary = 'p2pBandwidthLatencyTest'
    parser = staticmethod(p2p.parse)
    time_limit = '20m'
    per_gpu_table = {'local_copy': ('local_gbs', 'GB/s', 'higher')}
    pair_table = {
        'uni_p2p_disabled': ('uni_p2p_disabled_worst_gbs', 'GB/s', 'higher'),
        'uni_p2p_enabled': ('uni_p2p_enabled_worst_gbs', 'GB/s', 'higher'),
        'bi_p2p_disabled': ('bi_p2p_disabled_worst_gbs', 'GB/s', 'higher'),
        'bi_p2p_enabled': ('bi_p2p_enabled_worst_gbs', 'GB/s', 'higher'),
        'latency_p2p_enabled': ('latency_p2p_enabled_worst_us', 'us', 'lower'),
        'p2p_pairs': ('p2p_pairs', 'count', 'higher'),
    }

    def derive(self, results):
        self.check_gpus_seen(len(results['devices']), 'p2pBandwidthLatencyTest')
        s = p2p.summary(results)
        pairs = s.pop('pairs_of')
        results.update({k: v for k, v in s.items() if v is not None})
        self.mdx_extra = dict(self.mdx_extra, devices=results['devices'], pairs=pairs,
                              connectivity=results['connectivity'])
