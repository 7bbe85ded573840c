'''The application kernels of checks/apps/src, compiled in the job against the
environment's libraries: where their headers are, and the compile step.'''
import os

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
