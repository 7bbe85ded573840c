#!/usr/bin/env bash
# The main job, from a fresh Debian 12 machine (as root): install what is missing, start
# Slurm and Elasticsearch, run the suite on `local` through Slurm, then the cases that need
# several nodes on a namespace cluster of its own (ci/cluster.sh, stopped at the end),
# ingest the perflogs, run one cycle of the operator's loop per system (change points,
# incidents, the published site), and print:
#   - the records of this run (fails unless Elasticsearch holds exactly as many documents
#     as the perflogs hold records),
#   - each ReFrame session's cases by result, skips grouped by reason, minutes per area,
#   - where the published site is and the one command that serves it.
# Extra arguments go to the `local` run of reframe, e.g.  ci/main.sh -n HpccStream
# MDXBENCH_MAIN_CLUSTER_NODES=0 leaves the namespace cluster out (default 8 nodes: four
# stand-in physical hosts of two nodes each, for the same-host and different-hosts
# placements, and IOR on 4 nodes each on a host of its own as the paper placed its VMs).
# MDXBENCH_MAIN_DIR: where the ReFrame reports and logs, the cycles' state and the site go
# (default the state directory); the perflogs go where MDXBENCH_PERFLOG_DIR says and the
# records into the index prefix MDXBENCH_ES_INDEX_PREFIX, as for every command.
source "$(dirname "$0")/lib.sh"
prepare_local
OUT=${MDXBENCH_MAIN_DIR:-$MDXBENCH_STATE_DIR}

NODES=${MDXBENCH_MAIN_CLUSTER_NODES:-8}
# The cases that need two or more nodes, on the namespace cluster: network placements,
# iperf3 pairs, OSU and IOR across nodes, the FFT kernel on 2 and 4 nodes, warp from 2 and
# 4 client nodes against the cluster's MinIO
# (ReFrame matches -n in the display name with its spaces removed; several -n: any)
MULTI=('-n' '%placement=(same-host|different-hosts)'
       '-n' 'Iperf3Aggregate%pairs=[12]%'
       '-n' '^Osu(Latency|Bandwidth|BiBandwidth)' '-n' 'OsuAlltoall%num_nodes=2$'
       '-n' 'Ior%target=scratch.*%num_nodes=[24]%'
       '-n' 'FftwMpi2d%num_nodes=[24]$'
       '-n' 'WarpMultiClient%target=minio%op=(get|put)%clients=[24]$')

since=$(date +%Y-%m-%dT%H:%M:%S%:z)
stamp=$(date +%Y%m%dT%H%M%S)
mkdir -p "$OUT/reports" "$OUT/logs"

# run_suite SYSTEM ARGS...: reframe through Slurm, its output and report kept for the summary
run_suite() {
    local system=$1 rc
    shift
    set +e
    reframe -c checks/ -r --system "$system" \
        --report-file "$OUT/reports/main-$stamp-$system.json" "$@" 2>&1 \
        | tee "$OUT/logs/main-$stamp-$system.out"
    rc=${PIPESTATUS[0]}
    set -e
    return "$rc"
}

rc=0
run_suite local "$@" || rc=$?
cluster_rc=0
if ((NODES > 0)); then
    log "the cases that need several nodes: a namespace cluster of $NODES nodes (ci/cluster.sh)"
    bash ci/cluster.sh start "$NODES"
    # one case at a time: two network measurements on the same nodes disturb each other,
    # and a job that needs a node exclusively (the one-queue series) waits as
    # ReqNodeNotAvail, which ReFrame cancels as blocked. One OSU alltoall rank per node (the
    # namespace nodes share this machine's cores), 5 s network runs (the papers' 10 s stay
    # the default of the real systems)
    run_suite nscluster "${MULTI[@]}" --exec-policy=serial -S OsuAlltoall.ranks_per_node=1 \
        -S duration=5 || cluster_rc=$?
    bash ci/cluster.sh stop
fi

ingest_rc=0
mdxbench ingest || ingest_rc=$?
echo
echo "== mdxbench: results of this run (since $since) =="
# first: which Spack built the benchmarks, or that none did and what that cost
if spack_is=$(bash ci/spack.sh status 2>/dev/null); then
    echo "Spack: ${spack_is#spack: }"
else
    nospack=$(grep -E '^\[ +SKIP +\].* is not installed on ' "$OUT/logs/main-$stamp-"*.out 2>/dev/null \
        | grep -vc "Intel's download" || true)
    echo "Spack: none: ${nospack:-0} case(s) skipped for want of its builds (IOR, OSU, BabelStream, STREAM, ...);" \
        "name its archives (MDXBENCH_SPACK_TARBALL, MDXBENCH_SPACK_PACKAGES_TARBALL, MDXBENCH_SPACK_MIRROR) or put a spack on PATH (docs/spack.md)"
fi
summary_rc=0
mdxbench summary --since "$since" --expect-equal --require-records || summary_rc=$?

# the operator's view: one cycle per system (the history in Elasticsearch, change points,
# incidents, the site); a cycle that opens an incident says so and fails the job
cycle_rc=0
systems=(local)
((NODES > 0)) && systems+=(nscluster)
for system in "${systems[@]}"; do
    echo
    echo "== mdxbench cycle --system $system =="
    # the cycles' default layout (<state>/cycle/<system>, the systems' index above them)
    # under $OUT: the state directory is $OUT for the cycle alone, the perflogs and events
    # stay where they are
    MDXBENCH_STATE_DIR="$OUT" MDXBENCH_PERFLOG_DIR="${MDXBENCH_PERFLOG_DIR:-$MDXBENCH_STATE_DIR/perflogs}" \
        MDXBENCH_EVENTS="${MDXBENCH_EVENTS:-$MDXBENCH_STATE_DIR/events.jsonl}" \
        mdxbench cycle --system "$system" || cycle_rc=$?
done

for system in "${systems[@]}"; do
    report="$OUT/reports/main-$stamp-$system.json"
    echo
    echo "== mdxbench: the ReFrame session on '$system' =="
    [[ -f $report ]] && mdxbench session --report "$report" --output "$OUT/logs/main-$stamp-$system.out"
done

site="$OUT/cycle"
echo
echo "== the published site: $site/index.html =="
echo "   serve it:  mdxbench site serve --dir '$site'   (then http://127.0.0.1:8000/)"

((rc == 0)) || log "reframe reported failures on local (exit $rc): see its summary of failures above"
((cluster_rc == 0)) || log "reframe reported failures on nscluster (exit $cluster_rc)"
((ingest_rc == 0)) || log "mdxbench ingest did not store everything (exit $ingest_rc)"
((cycle_rc == 0)) || log "mdxbench cycle opened an incident or failed (exit $cycle_rc): see above"
exit $((rc || cluster_rc || ingest_rc || summary_rc || cycle_rc))
