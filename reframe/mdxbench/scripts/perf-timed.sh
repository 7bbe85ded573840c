#!/bin/bash
# perf stat of a program that switches the counters on and off itself (perf's --control):
# events start disabled (-D -1); the program gets the two ends of the control channel in
# MDXBENCH_PERF_CTL_FD and MDXBENCH_PERF_ACK_FD and writes "enable" / "disable" around
# what is to be counted (checks/apps/src/fftw-mpi-bench.c: the timed phases only).
# Usage: perf-timed.sh PERF OUTPUT EVENTS -- PROGRAM [ARGS...]
set -eu
perf=$1 out=$2 events=$3
shift 3
[ "${1:-}" = -- ] && shift
dir=$(mktemp -d)
trap 'rm -rf "$dir"' EXIT
mkfifo "$dir/ctl" "$dir/ack"
exec {ctl}<>"$dir/ctl" {ack}<>"$dir/ack"
MDXBENCH_PERF_CTL_FD=$ctl MDXBENCH_PERF_ACK_FD=$ack \
    "$perf" stat -D -1 --control "fd:$ctl,$ack" -x, -o "$out" -e "$events" -- "$@"
