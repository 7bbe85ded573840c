# pola-rs/polars-benchmark, the PDS benchmark the mdx II paper ran (its footnote 10, Fig. 11):
# the TPC-H derived queries in Polars, DuckDB, pandas, Dask (and Modin, PySpark), their
# answers at scale factor 1, and TPC's dbgen, whose tables the queries read. This package
# installs the tree at the paper's time and builds its dbgen; the Python libraries are not
# Spack's here (the check's Python: MDXBENCH_PDS_PYTHON, checks/apps/src/polars-benchmark.txt).
from spack_repo.builtin.build_systems.generic import Package

from spack.package import *


class PolarsBenchmark(Package):
    """Polars Decision Support (PDS) benchmarks: TPC-H derived queries in several
    dataframe libraries, with TPC's dbgen."""

    homepage = "https://github.com/pola-rs/polars-benchmark"

    # MIT for the benchmark; dbgen (tpch-dbgen/) under TPC's EULA (TPC EULA.txt, installed)
    license("MIT")

    # the repository at 6e3fefc0 (2024-10-02, the last commit before the paper), archived
    # as polars-benchmark-6e3fefc/ (git archive, gzip -n). The repository has no tags:
    # Spack finds the archive only in a source mirror, checksum verified; the URL says so by
    # failing where no mirror has it (docs/spack.md: how a site makes the same archive).
    version(
        "6e3fefc",
        sha256="08c2a332b65146dd45a63f6a806b6e697aeb62aa966a073a53d2e74e0ff2e934",
        url="file:///only-in-a-source-mirror/polars-benchmark-6e3fefc.tar.gz",
    )

    depends_on("c", type="build")
    depends_on("gmake", type="build")

    def install(self, spec, prefix):
        # dbgen as its makefile builds it (the benchmark's `make -C tpch-dbgen dbgen`), with
        # Spack's compiler; it reads dists.dss from DSS_CONFIG (the installed tpch-dbgen/)
        make("-C", "tpch-dbgen", "dbgen", f"CC={spack_cc}")
        tree = join_path(prefix.share, "polars-benchmark")
        install_tree(".", tree)
        mkdirp(prefix.bin)
        symlink(join_path(tree, "tpch-dbgen", "dbgen"), join_path(prefix.bin, "dbgen"))
