#!/bin/bash
# N iperf3 client/server pairs at once inside a Slurm allocation of 2N nodes: servers on the
# first N nodes, clients on the last N, each client with S parallel zero-copy streams.
# Prints each client's JSON after a line "### mdxbench iperf3 pair I"; servers are always
# stopped when the script ends.
# Usage: iperf3-pairs.sh PAIRS STREAMS DURATION PORT [IPERF3]
set -u
pairs=$1 streams=$2 duration=$3 port=$4 iperf3=${5:-iperf3}
here=$(cd "$(dirname "$0")" && pwd)
mapfile -t nodes < <(scontrol show hostnames "$SLURM_JOB_NODELIST")
if (( ${#nodes[@]} < 2 * pairs )); then
    echo "mdxbench: $pairs pairs need $((2 * pairs)) nodes, the allocation has ${#nodes[@]}" >&2
    exit 1
fi
srv=() cli=()
trap 'kill "${srv[@]}" 2>/dev/null; wait "${srv[@]}" 2>/dev/null' EXIT
for ((i = 0; i < pairs; i++)); do
    srun -N1 -n1 --nodelist="${nodes[i]}" "$iperf3" -s -1 -p "$port" > "server-$i.out" 2>&1 &
    srv+=($!)
done
sleep 2
srun -N1 -n1 --nodelist="${nodes[pairs]}" "$here/nicinfo.sh" "${nodes[0]}"
for ((i = 0; i < pairs; i++)); do
    srun -N1 -n1 --nodelist="${nodes[pairs + i]}" "$iperf3" -c "${nodes[i]}" -p "$port" -Z \
        -P "$streams" -t "$duration" -J --logfile "client-$i.json" &
    cli+=($!)
done
rc=0
for p in "${cli[@]}"; do wait "$p" || rc=1; done
for ((i = 0; i < pairs; i++)); do
    echo "### mdxbench iperf3 pair $i"
    cat "client-$i.json"
done
exit $rc
