'''The application kernels of checks/apps/src, compiled in the job against the
environment's libraries: where their headers are, and the compile step.'''
import os

from mdxbench.base import job_environment

FFT_SOURCE = 'fftw-mpi-bench.c'


def find_header(name, env):
    '''Path of C header ``name`` in the job's CPATH or the system include directories.'''
    dirs = [d for d in env.get('CPATH', '').split(':') if d] + ['/usr/include',
                                                                '/usr/local/include']
    return next((os.path.join(d, name) for d in dirs if os.path.isfile(os.path.join(d, name))),
                None)


def fft_compile(mpicc):
    '''Job-script line that builds ./fftw-mpi-bench, failing the job with the compiler's
    words (which the FFT parser reports) when it cannot.'''
    return (f'{mpicc} -O3 -o fftw-mpi-bench {FFT_SOURCE} -lfftw3_mpi -lfftw3 -lm '
            '> compile.log 2>&1 || { echo "fftw-mpi-bench: compile failed:"; cat compile.log; '
            'exit 1; }')


def skip_unless_fftw_mpi(test):
    '''Skip ``test``, with the reason, where the job's environment has no FFTW MPI.'''
    env = job_environment(test.current_environ, test.current_partition)
    test.skip_if(find_header('fftw3-mpi.h', env) is None,
                 f'FFTW MPI (fftw3-mpi.h) is not installed on {test.current_system.name}:'
                 f'{test.current_partition.name} with environment {test.current_environ.name}:'
                 f' not in CPATH or /usr/include')
