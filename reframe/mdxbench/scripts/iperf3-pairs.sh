#!/bin/bash
# N iperf3 client/server pairs at once inside a Slurm allocation of 2N nodes: servers on the
# nodes SERVERS names and clients on CLIENTS (comma lists, pair i = the i-th of each: the
# placement the check chose), or else servers on the first N nodes of the allocation and
# clients on the last N; each client with S parallel zero-copy streams.
# The clients start together: each job step sleeps until one common start time (the steps
# are launched one after another, which takes time), then iperf3 leaves the first OMIT
# seconds out of its result (-O: the ramp-up). Prints each client's JSON after a line
# "### mdxbench iperf3 pair I"; servers are always stopped when the script ends.
# Usage: iperf3-pairs.sh PAIRS STREAMS DURATION PORT [IPERF3 [OMIT [SERVERS CLIENTS]]]
set -u
pairs=$1 streams=$2 duration=$3 port=$4 iperf3=${5:-iperf3} omit=${6:-2}
here=$(cd "$(dirname "$0")" && pwd)
if [[ -n ${7:-} && -n ${8:-} ]]; then
    IFS=, read -ra servers <<<"$7"
    IFS=, read -ra clients <<<"$8"
    nodes=("${servers[@]}" "${clients[@]}")
else
    mapfile -t nodes < <(scontrol show hostnames "$SLURM_JOB_NODELIST")
fi
if (( ${#nodes[@]} != 2 * pairs )) && [[ -n ${7:-} ]] || (( ${#nodes[@]} < 2 * pairs )); then
    echo "mdxbench: $pairs pairs need $((2 * pairs)) nodes, got ${#nodes[@]}: ${nodes[*]}" >&2
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
# one start time for every client, far enough ahead for all the job steps to be launched
start=$(awk -v now="$(date +%s.%N)" -v n="$pairs" 'BEGIN { printf "%.3f", now + 2 + 0.5 * n }')
for ((i = 0; i < pairs; i++)); do
    srun -N1 -n1 --nodelist="${nodes[pairs + i]}" bash -c \
        'sleep "$(awk -v s="$1" -v now="$(date +%s.%N)" "BEGIN { d = s - now; print (d > 0 ? d : 0) }")"
         shift; exec "$@"' _ "$start" \
        "$iperf3" -c "${nodes[i]}" -p "$port" -Z -P "$streams" -t "$duration" -O "$omit" \
        -J --logfile "client-$i.json" &
    cli+=($!)
done
rc=0
for p in "${cli[@]}"; do wait "$p" || rc=1; done
for ((i = 0; i < pairs; i++)); do
    echo "### mdxbench iperf3 pair $i"
    cat "client-$i.json"
done
exit $rc
