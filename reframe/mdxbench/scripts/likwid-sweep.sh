#!/bin/bash
# likwid-sweep.sh BENCH KERNEL SECONDS REPEATS SIZE...
# One core of socket 0 (likwid's S0 domain, 1 thread): likwid-bench KERNEL on each
# working-set SIZE (likwid syntax: 32kB, 4MB, 1GB), REPEATS times each, SECONDS per run.
# Each run's output is headed by "### mdxbench likwid size=SIZE rep=I"; a failed run
# stops the sweep with its exit code (a sweep with holes is not a result).
set -u
bench=$1 kernel=$2 secs=$3 reps=$4
shift 4
"$bench" -h 2>&1 | head -n 1
for size in "$@"; do
    for ((i = 1; i <= reps; i++)); do
        echo "### mdxbench likwid size=$size rep=$i"
        "$bench" -t "$kernel" -w "S0:$size:1" -s "$secs" || exit $?
    done
done
