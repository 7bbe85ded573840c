'''The application kernels of checks/apps/src, built by ReFrame against the environment's
libraries: where their headers are, and how the FFT kernel is built.'''
import os

import reframe as rfm
from reframe.core.builtins import run_after, run_before

from mdxbench.base import job_environment


#: Guidi et al.'s size: 50,000 x 50,000 complex doubles
PAPER_POINTS = 50000
#: the size where one node cannot hold the paper's
FALLBACK_POINTS = 8192
#: bytes the kernel holds per point: the data, the reference of its check, FFTW's buffers
BYTES_PER_POINT = 48
#: of a node's memory the kernel may take
MEMORY_SHARE = 0.7


def problem_size(points, facts):
    '''(N, why): ``points`` when set, else the paper's N where one node's memory holds it
    (the same N on every node count: strong scaling), else :data:`FALLBACK_POINTS`.'''
    if points:
        return points, 'set (-S points)'
    need = BYTES_PER_POINT * PAPER_POINTS ** 2
    mem = facts.get('memory_gib')
    if mem and need <= MEMORY_SHARE * mem * 2 ** 30:
        return PAPER_POINTS, 'the paper\'s'
    have = f'one node has {mem} GiB' if mem else 'the memory of a node is not in its facts'
    return FALLBACK_POINTS, (f'the paper\'s {PAPER_POINTS:,}^2 needs '
                             f'{need / 2 ** 30:.0f} GiB at most {MEMORY_SHARE:.0%} of a node: {have}')


def find_header(name, env):
    '''Path of C header ``name`` in the job's CPATH or the system include directories.'''
    dirs = [d for d in env.get('CPATH', '').split(':') if d] + ['/usr/include',
                                                                '/usr/local/include']
    return next((os.path.join(d, name) for d in dirs if os.path.isfile(os.path.join(d, name))),
                None)


def skip_unless_fftw_mpi(test):
    '''Skip ``test``, with the reason, where the job's environment has no FFTW MPI.'''
    env = job_environment(test.current_environ, test.current_partition)
    test.skip_if(find_header('fftw3-mpi.h', env) is None,
                 f'FFTW MPI (fftw3-mpi.h) is not installed on {test.current_system.name}:'
                 f'{test.current_partition.name} with environment {test.current_environ.name}:'
                 f' not in CPATH or /usr/include')


class FftKernelBuild(rfm.RegressionTestPlugin):
    '''For a :class:`~mdxbench.base.MdxBenchBuiltTest`: ReFrame's ``SingleSource`` build of
    the FFT kernel (``src/fftw-mpi-bench.c`` -> ``./fftw-mpi-bench``) with the
    environment's MPI wrapper against its FFTW MPI (headers and libraries from CPATH and
    LIBRARY_PATH, which the Spack environment exports); skipped where FFTW MPI is absent.
    A failed build is ReFrame's build failure, with the compiler's words.'''

    @run_after('init')
    def fft_kernel_build(self):
        self.compiler = 'mpicc'
        self.build_system = 'SingleSource'
        self.sourcepath = 'fftw-mpi-bench.c'
        self.executable = './fftw-mpi-bench'     # what the build makes (ReFrame's rule)

    @run_after('setup')
    def require_fftw_mpi(self):
        skip_unless_fftw_mpi(self)

    @run_before('compile')
    def fft_kernel_flags(self):
        self.build_system.cflags = ['-O3']
        self.build_system.ldflags = ['-lfftw3_mpi', '-lfftw3', '-lm']
