# Data science: the Polars Decision Support (PDS) workload, TPC-H derived, in Polars, DuckDB,
# pandas and Dask (mdx II paper, sec. 3.2.5, Figure 11), queries 1 to 7 in each library.
# PdsBenchmark runs the paper's code: pola-rs/polars-benchmark at the paper's time (its
# footnote 10), its own dbgen and data preparation, its own query programs and timings, its
# answers checked at scale factor 1 (Spack: polars-benchmark; its libraries at their pins of
# that time, checks/apps/src/polars-benchmark.txt). PdsTpch stays as the answers'
# cross-check at any scale: our own implementations of the same queries on tpchgen-cli's
# tables, every answer equal to DuckDB's answer to the TPC-H specification's SQL text.
import os
import sys

import reframe as rfm
from reframe.core.builtins import run_after, run_before, variable

from mdxbench import settings
from mdxbench.base import MdxBenchTest
from mdxbench.parsers import pds, polars_benchmark
from mdxbench.provenance import binary_provenance

#: what is run: the program src/pds_tpch.py with these libraries and TPC-H queries
LIBRARIES = ('polars', 'duckdb', 'pandas', 'dask')
QUERIES = tuple(range(1, 8))
#: about 10 GB of data, as the paper (sec. 3.2.5)
PAPER_SCALE_FACTOR = 10
#: seconds of each query and each library's total, lower is better
PERF_TABLE = {f'{lib}_{q}': (f'{lib}_{q}', 's', 'lower') for lib in LIBRARIES
              for q in [f'q{n}' for n in QUERIES] + ['total']}


class _PdsWorkload(MdxBenchTest):
    '''What both PDS checks share: queries 1-7 of the four libraries, a scale factor, and
    where the tables go.'''
    tags = {'apps'}
    sourcesdir = 'src'
    time_limit = '2h'
    #: TPC-H scale factor (1 = 1 GB; the paper used about 10): by default the partition's
    #: ``extras.pds.scale_factor`` (site config), else the paper's 10
    scale_factor = variable(float, type(None), value=None)
    #: where the tables go, kept between runs; empty: the stage directory
    data_dir = variable(str, value='')
    perf_table = PERF_TABLE

    @run_before('run')
    def size_the_data(self):
        if self.scale_factor is None:
            self.scale_factor = float((self.current_partition.extras.get('pds') or {})
                                      .get('scale_factor', PAPER_SCALE_FACTOR))
        self.num_tasks = 1
        self.mdx_extra = {'scale_factor': self.scale_factor, 'queries': list(QUERIES),
                          'scale_factor_paper': PAPER_SCALE_FACTOR}


@rfm.simple_test
class PdsTpch(_PdsWorkload):
    descr = ('PDS cross-check: our Q1-Q7 in Polars, DuckDB, pandas and Dask, every answer '
             'checked against the TPC-H SQL')
    bench_name = 'pds'
    bench_binary = 'tpchgen-cli'
    parser = staticmethod(pds.parse)

    @run_before('run')
    def set_command(self):
        data = self.data_dir or f'{self.stagedir}/tpch-sf{self.scale_factor:g}'
        self.prerun_cmds = [
            f'test -f "{data}/lineitem.parquet" || '
            f'{self.bench_path} parquet -s {self.scale_factor:g} --output-dir="{data}" || exit 1'
        ]
        self.executable = sys.executable
        self.executable_opts = ['pds_tpch.py', '--data', f'"{data}"',
                                f'--queries={",".join(map(str, QUERIES))}'] + \
            [f'--library={lib}' for lib in LIBRARIES]
        self.mdx_extra['checked_against'] = 'TPC-H SQL text (src/tpch-sql) run by DuckDB'

    def derive(self, results):
        self.mdx_extra = dict(self.mdx_extra, answer_rows=results['answer_rows'],
                              reference_seconds=results['reference_seconds'])


@rfm.simple_test
class PdsBenchmark(_PdsWorkload):
    descr = ("PDS as the paper ran it: pola-rs/polars-benchmark's Q1-Q7 in Polars, DuckDB, "
             'pandas and Dask on its dbgen\'s tables')
    bench_name = 'polars-benchmark'
    #: its dbgen, built in the tree the package installs (share/polars-benchmark); the
    #: benchmark checks its answers at scale factor 1 only (its data/answers)
    bench_binary = 'dbgen'
    bench_origin = 'Spack: polars-benchmark@6e3fefc'
    parser = staticmethod(polars_benchmark.parse)
    #: the Python with the benchmark's libraries (empty: MDXBENCH_PDS_PYTHON, else the
    #: virtual environment ci/install.sh makes)
    python = variable(str, value='')

    @run_after('setup')
    def find_python(self):
        self.python = self.python or settings.get('MDXBENCH_PDS_PYTHON') or str(
            settings.state_dir() / 'pds-venv' / 'bin' / 'python')
        self.skip_if(not os.access(self.python, os.X_OK),
                     f'no Python with polars-benchmark\'s libraries at {self.python} '
                     f'(ci/install.sh makes it from checks/apps/src/polars-benchmark.txt; '
                     f'MDXBENCH_PDS_PYTHON names another)')

    @run_before('run')
    def set_command(self):
        tree = os.path.dirname(os.path.dirname(os.path.realpath(self.bench_path)))
        self.executable = 'bash'
        self.executable_opts = ['polars-benchmark.sh', self.python, tree,
                                self.data_dir or f'{self.stagedir}/tables',
                                f'{self.scale_factor:g}', f'"{" ".join(LIBRARIES)}"',
                                f'"{" ".join(map(str, QUERIES))}"']
        self.mdx_extra.update(tree=tree, python=self.python)

    def derive(self, results):
        results.update(polars_benchmark.figures(results, LIBRARIES, QUERIES))
        # the benchmark's version: its commit, as the Spack build of its tree names it (the
        # output does not print one); the libraries' versions are the run's own
        spec = binary_provenance(self.bench_path).get('spack_spec', '')
        if spec.startswith('polars-benchmark@'):
            results['version'] = spec.split()[0].split('@', 1)[1]
        self.mdx_extra = dict(self.mdx_extra, versions=results['versions'],
                              answers_checked=results['checked'],
                              ran_twice=results['ran_twice'])
