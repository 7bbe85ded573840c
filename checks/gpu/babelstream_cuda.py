# GPU memory bandwidth: BabelStream 5.0's CUDA model (Spack: babelstream +cuda), one run
# per GPU (--device i, one after another), each GPU its own figures: a node's report names
# the GPU whose memory is slow. A GPU whose results BabelStream finds wrong ("Validation
# failed", on stderr, exit 0) fails the case: per-gpu.sh reads stderr with stdout. Arrays of 2^25 doubles (BabelStream's default, 268 MB each,
# far past any GPU's L2), 100 times.
import reframe as rfm
from reframe.core.builtins import run_before, variable

from mdxbench.base import SCRIPTS, MdxBenchTest
from mdxbench.gpu import GpuMixin
from mdxbench.parsers import babelstream, pergpu

KERNELS = ('copy', 'mul', 'add', 'triad', 'dot')


@rfm.simple_test
class BabelStreamCuda(GpuMixin, MdxBenchTest):
    descr = 'BabelStream 5.0 (CUDA): Copy, Mul, Add, Triad, Dot on each GPU'
    tags = {'memory', 'acceptance', 'gpu'}
    bench_name = 'babelstream'
    bench_binary = 'cuda-stream'
    parser = staticmethod(lambda text: pergpu.parse(text, babelstream.parse, KERNELS))
    time_limit = '20m'
    array_size = variable(int, value=2**25)
    num_times = variable(int, value=100)
    per_gpu_table = {k: (k, 'GB/s', 'higher') for k in KERNELS}

    @run_before('run')
    def one_run_per_gpu(self):
        self.executable = f'sh {SCRIPTS}/per-gpu.sh'
        self.executable_opts = [str(self.num_gpus), '--device', self.bench_path,
                                '--arraysize', str(self.array_size),
                                '--numtimes', str(self.num_times)]
        self.mdx_extra = {'array_elements': self.array_size, 'array_bytes': self.array_size * 8}

    def derive(self, results):
        # the GPUs BabelStream ran on, as it names them ("Using CUDA device ..."), against
        # nvidia-smi's list in the same job: not the count of its own loop
        self.check_gpus_seen(len(results['devices']), 'BabelStream')
