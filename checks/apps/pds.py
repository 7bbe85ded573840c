# Data science: the Polars Decision Support (PDS) workload, TPC-H derived, with Polars,
# DuckDB, pandas and Dask (mdx II paper, sec. 3.2.5): data generated to Parquet by
# tpchgen-cli, the documented subset Q1/Q3/Q6 per library, per-query seconds and the total,
# answers cross-checked between the libraries.
import sys

import reframe as rfm
from reframe.core.builtins import run_before, variable

from mdxbench import pds as workload
from mdxbench.base import MdxBenchTest
from mdxbench.parsers import pds


@rfm.simple_test
class PdsTpch(MdxBenchTest):
    descr = 'PDS (TPC-H derived) Q1, Q3, Q6 with Polars, DuckDB, pandas and Dask'
    tags = {'apps'}
    bench_name = 'pds'
    bench_binary = 'tpchgen-cli'
    parser = staticmethod(pds.parse)
    time_limit = '2h'
    #: TPC-H scale factor (1 = 1 GB; the paper used about 10)
    scale_factor = variable(float, value=1.0)
    #: where the Parquet data goes; empty: the stage directory (removed after a pass)
    data_dir = variable(str, value='')
    perf_table = {f'{lib}_{q}': (f'{lib}_{q}', 's', 'lower') for lib in workload.LIBRARIES
                  for q in [f'q{n}' for n in workload.QUERIES] + ['total']}

    @run_before('run')
    def set_command(self):
        data = self.data_dir or f'{self.stagedir}/tpch-sf{self.scale_factor:g}'
        self.num_tasks = 1
        self.prerun_cmds = [
            f'test -f "{data}/lineitem.parquet" || '
            f'{self.bench_path} parquet -s {self.scale_factor:g} --output-dir="{data}" || exit 1'
        ]
        self.executable = sys.executable
        self.executable_opts = ['-m', 'mdxbench.pds', '--data', f'"{data}"'] + \
            [f'--library={lib}' for lib in workload.LIBRARIES]
        self.mdx_extra = {'scale_factor': self.scale_factor,
                          'queries': list(workload.QUERIES)}
