#!/bin/bash
# PdsBenchmark's job: pola-rs/polars-benchmark as its Makefile runs it, for the queries and
# libraries given. Usage: polars-benchmark.sh PYTHON TREE DATA SCALE_FACTOR "LIBS" "QUERIES"
#   TREE: the benchmark's tree (its dbgen built in tpch-dbgen/); DATA: where its tables go
#   (PATH_TABLES; kept between runs: generated only where lineitem.parquet is missing)
# Its tables: dbgen -f -s SF (DSS_CONFIG: its dists.dss), then its scripts.prepare_data
# (Parquet; it also writes CSV, removed with dbgen's .tbl files: the queries read Parquet).
# Each query runs as `python -m queries.<lib>.q<n>` (what its `execute_all` does for every
# query of a library), timings logged (RUN_LOG_TIMINGS) to ./timings.csv, and at scale
# factor 1 -- the only one its answers are for -- each answer checked (RUN_CHECK_RESULTS).
# Output: the benchmark's own lines, a line `polars-benchmark: <lib> q<n> exit <status>`
# after each query, then `polars-benchmark: timings.csv` and that file (its own format).
set -u
py=$1 tree=$2 data=$3 sf=$4 libs=$5 queries=$6
export PYTHONPATH=$tree PATH_TABLES=$data PATH_ANSWERS=$tree/data/answers PATH_TIMINGS=$PWD \
    PATH_TIMINGS_FILENAME=timings.csv RUN_LOG_TIMINGS=1 RUN_IO_TYPE=parquet SCALE_FACTOR=$sf
if "$py" -c 'import sys; sys.exit(float(sys.argv[1]) != 1)' "$sf"; then
    export RUN_CHECK_RESULTS=1
    echo "polars-benchmark: answers checked against $PATH_ANSWERS (scale factor 1)"
else
    echo "polars-benchmark: answers not checked (its answers are of scale factor 1)"
fi
dir=$("$py" -c 'from settings import Settings; print(Settings().dataset_base_dir)') || exit 1
if [[ ! -f $dir/lineitem.parquet ]]; then
    mkdir -p "$dir" || exit 1
    DSS_CONFIG=$tree/tpch-dbgen DSS_PATH=$dir "$tree/tpch-dbgen/dbgen" -f -s "$sf" || exit 1
    "$py" -m scripts.prepare_data || exit 1
    rm -f "$dir"/*.tbl "$dir"/*.csv
fi
rm -f timings.csv
# a query whose process a signal ended (seen: pandas q5 aborted by the C++ runtime at exit,
# "terminate called without an active exception", once in five runs) runs once more,
# said; the parser takes the last run's timing and the check records that it ran twice
for lib in $libs; do
    for q in $queries; do
        for try in 1 2; do
            "$py" -m "queries.$lib.q$q"
            rc=$?
            echo "polars-benchmark: $lib q$q exit $rc"
            ((rc > 128 && try == 1)) || break
        done
    done
done
echo 'polars-benchmark: timings.csv'
cat timings.csv
