'''A benchmark that calls BLAS (HPL): it runs in every environment of its partition --
those that swap the BLAS (``extras.blas_library``, e.g. Intel MKL through
``scripts/use-blas.sh``) among them, where no other check runs -- and its record says which
BLAS the job resolved (``libblas.so.3`` -> file, the package of that file: ``meta.blas``),
which must be the environment's where it declares one. A check says so by deriving from
:class:`BlasMixin`; nothing of this is in the base of all checks.'''
import os

import reframe as rfm
from reframe.core.builtins import run_after, run_before
from reframe.core.exceptions import SanityError

from mdxbench.parsers import ParseError, libinfo
from mdxbench.provenance import binary_provenance

SCRIPTS = os.path.join(os.path.dirname(__file__), 'scripts')
#: what scripts/libinfo.sh found of the benchmark's libraries, in the job
LIBINFO_FILE = 'libinfo.txt'


class BlasMixin(rfm.RegressionTestPlugin):
    '''Runs in every environment; in one that declares a BLAS, on that BLAS, and checked.'''

    uses_blas = True

    @run_after('init')
    def every_environment(self):
        self.valid_prog_environs = ['*']

    @run_after('setup')
    def require_environ_blas(self):
        lib = self.current_environ.extras.get('blas_library')
        self.skip_if(
            lib and not os.path.exists(lib),
            f'environment {self.current_environ.name} uses the BLAS {lib}, which is not '
            f'installed on {self.current_system.name}:{self.current_partition.name}'
        )

    @run_before('run')
    def apply_environ_blas(self):
        lib = self.current_environ.extras.get('blas_library')
        if lib:
            self.prerun_cmds = [f'. {SCRIPTS}/use-blas.sh {lib}'] + self.prerun_cmds
        self.prerun_cmds += [f'sh {SCRIPTS}/libinfo.sh {self.bench_path} > {LIBINFO_FILE}']

    def verify(self):
        super().verify()
        self.check_blas()

    def check_blas(self):
        '''meta.blas: the BLAS the job resolved; it must be the environment's, if declared.'''
        path = os.path.join(self.stagedir, LIBINFO_FILE)
        try:
            with open(path) as fp:
                found = libinfo.blas(libinfo.parse(fp.read()))
        except (OSError, ParseError) as err:
            raise SanityError(f'{self.bench_name}: no record of its BLAS: {err}') from None

        want = self.current_environ.extras.get('blas_library')
        if want and (found is None or not libinfo.same_file(want, found)):
            raise SanityError(
                f'{self.bench_name}: environment {self.current_environ.name} declares the '
                f'BLAS {want}, but {self.bench_path} resolved {found or "no BLAS"} in the job')
        if found:
            self.mdx_extra = dict(self.mdx_extra, blas={
                'library': found, **binary_provenance(found)})
