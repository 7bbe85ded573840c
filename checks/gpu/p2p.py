# GPU to GPU within a node, as the mdx I paper measured it (sec. 5.2): NVIDIA's
# p2pBandwidthLatencyTest (CUDA samples, built by Spack from our package in spack/repo).
# Under PCIe passthrough peer-to-peer cannot be enabled: at most about 20 GB/s between GPUs,
# PCIe speed, where bare metal of the same architecture with P2P reaches 275 GB/s over
# NVLink. The paper's figure bounds the best pair: the reference is on the best pair of the
# P2P-enabled matrix (`uni_p2p_enabled_best`), the worst pair of each matrix is tracked as
# its own series. The connectivity measured must be what the partition declares
# (extras.facts.gpu_p2p: every pair, or none). Each GPU's copy within its own memory is a
# figure too; every pair's figures go to the perflog. A node of one GPU has no pair.
import reframe as rfm

from mdxbench.base import MdxBenchTest
from mdxbench.gpu import GpuMixin, connectivity_failures
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
        'uni_p2p_enabled_best': ('uni_p2p_enabled_best_gbs', 'GB/s', 'higher'),
        'bi_p2p_disabled': ('bi_p2p_disabled_worst_gbs', 'GB/s', 'higher'),
        'bi_p2p_enabled': ('bi_p2p_enabled_worst_gbs', 'GB/s', 'higher'),
        'latency_p2p_enabled': ('latency_p2p_enabled_worst_us', 'us', 'lower'),
        'p2p_pairs': ('p2p_pairs', 'count', 'higher'),
    }

    def derive(self, results):
        self.check_gpus_seen(len(results['devices']), 'p2pBandwidthLatencyTest')
        s = p2p.summary(results)
        pairs, worst = s.pop('pairs_of'), s.pop('worst_pair')
        results.update({k: v for k, v in s.items() if v is not None})
        self.mdx_extra = dict(self.mdx_extra, devices=results['devices'], pairs=pairs,
                              connectivity=results['connectivity'], worst_pair={
                                  name: worst[key] for name, (key, _, _)
                                  in self.pair_table.items() if key in worst})
        wrong = connectivity_failures(self.declared_p2p(), results['connectivity'])
        if wrong:
            raise ValueError('peer-to-peer is not what the partition declares: '
                             + '; '.join(wrong))
