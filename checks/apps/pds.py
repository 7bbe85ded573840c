# Data science: the Polars Decision Support (PDS) workload, TPC-H derived, with Polars,
# DuckDB, pandas and Dask (mdx II paper, sec. 3.2.5): data generated to Parquet by
# tpchgen-cli, the documented subset Q1/Q3/Q6 per library, per-query seconds and the total,
# answers cross-checked between the libraries.
import sys

import reframe as rfm
from reframe.core.builtins import run_before, variable

from mdxbench.base import MdxBenchTest
from mdxbench.parsers import pds

#: what is run: the program src/pds_tpch.py with these libraries and TPC-H queries
LIBRARIES = ('polars', 'duckdb', 'pandas', 'dask')
QUERIES = (1, 3, 6)


@rfm.simple_test
class PdsTpch(MdxBenchTest):
    descr = 'PDS (TPC-H derived) Q1, Q3, Q6 with Polars, DuckDB, pandas and Dask'
    tags = {'apps'}
    bench_name = 'pds'
    bench_binary = 'tpchgen-cli'
    parser = staticmethod(pds.parse)
    sourcesdir = 'src'
    time_limit = '2h'
    #: TPC-H scale factor (1 = 1 GB; the paper used about 10)
    scale_factor = variable(float, value=1.0)
    #: where the Parquet data goes; empty: the stage directory (removed after a pass)
    data_dir = variable(str, value='')
    perf_table = {f'{lib}_{q}': (f'{lib}_{q}', 's', 'lower') for lib in LIBRARIES
                  for q in [f'q{n}' for n in QUERIES] + ['total']}

    @run_before('run')
    def set_command(self):
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
        self.mdx_extra = {'scale_factor': self.scale_factor, 'queries': list(QUERIES)}
