# Data science: the Polars Decision Support (PDS) workload, TPC-H derived, with Polars,
# DuckDB, pandas and Dask (mdx II paper, sec. 3.2.5, Figure 11): data generated to Parquet
# by tpchgen-cli, queries 1 to 7 in each library, per-query seconds and the total; every
# answer must equal DuckDB's answer to the TPC-H specification's SQL text of the query.
import sys

import reframe as rfm
from reframe.core.builtins import run_before, variable

from mdxbench.base import MdxBenchTest
from mdxbench.parsers import pds

#: what is run: the program src/pds_tpch.py with these libraries and TPC-H queries
LIBRARIES = ('polars', 'duckdb', 'pandas', 'dask')
QUERIES = tuple(range(1, 8))
#: about 10 GB of data, as the paper (sec. 3.2.5)
PAPER_SCALE_FACTOR = 10


@rfm.simple_test
class PdsTpch(MdxBenchTest):
    descr = 'PDS (TPC-H derived) Q1-Q7 with Polars, DuckDB, pandas and Dask, answers checked'
    tags = {'apps'}
    bench_name = 'pds'
    bench_binary = 'tpchgen-cli'
    parser = staticmethod(pds.parse)
    sourcesdir = 'src'
    time_limit = '2h'
    #: TPC-H scale factor (1 = 1 GB; the paper used about 10): by default the partition's
    #: ``extras.pds.scale_factor`` (site config), else the paper's 10
    scale_factor = variable(float, type(None), value=None)
    #: where the Parquet data goes; empty: the stage directory (removed after a pass)
    data_dir = variable(str, value='')
    perf_table = {f'{lib}_{q}': (f'{lib}_{q}', 's', 'lower') for lib in LIBRARIES
                  for q in [f'q{n}' for n in QUERIES] + ['total']}

    @run_before('run')
    def set_command(self):
        if self.scale_factor is None:
            self.scale_factor = float((self.current_partition.extras.get('pds') or {})
                                      .get('scale_factor', PAPER_SCALE_FACTOR))
        data = self.data_dir or f'{self.stagedir}/tpch-sf{self.scale_factor:g}'
        self.num_tasks = 1
        self.prerun_cmds = [
            f'test -f "{data}/lineitem.parquet" || '
            f'{self.bench_path} parquet -s {self.scale_factor:g} --output-dir="{data}" || exit 1'
        ]
        self.executable = sys.executable
        self.executable_opts = ['pds_tpch.py', '--data', f'"{data}"',
                                f'--queries={",".join(map(str, QUERIES))}'] + \
            [f'--library={lib}' for lib in LIBRARIES]
        self.mdx_extra = {'scale_factor': self.scale_factor, 'queries': list(QUERIES),
                          'scale_factor_paper': PAPER_SCALE_FACTOR,
                          'checked_against': 'TPC-H SQL text (src/tpch-sql) run by DuckDB'}

    def derive(self, results):
        self.mdx_extra = dict(self.mdx_extra, answer_rows=results['answer_rows'],
                              reference_seconds=results['reference_seconds'])
