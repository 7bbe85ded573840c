#!/usr/bin/env bash
# The main job on the `local` system, from a fresh Debian 12 machine (as root):
# install what is missing, start Slurm and Elasticsearch, run the suite through Slurm,
# ingest the perflogs, and print the summary (fails unless Elasticsearch holds exactly
# as many documents as the perflogs hold records) and the session's cases by result, skips
# grouped by reason and minutes per area.
# Extra arguments go to reframe, e.g.  ci/main.sh -n HpccStream
source "$(dirname "$0")/lib.sh"
prepare_local

since=$(date +%Y-%m-%dT%H:%M:%S%:z)
stamp=$(date +%Y%m%dT%H%M%S)
mkdir -p "$MDXBENCH_STATE_DIR/reports"
report="$MDXBENCH_STATE_DIR/reports/main-$stamp.json" output="$MDXBENCH_STATE_DIR/logs/main-$stamp.out"
set +e
reframe -c checks/ -r --system local --report-file "$report" "$@" 2>&1 | tee "$output"
rc=${PIPESTATUS[0]}
set -e
ingest_rc=0
mdxbench ingest || ingest_rc=$?
echo
echo "== mdxbench: results of this run on 'local' (since $since) =="
summary_rc=0
mdxbench summary --since "$since" --expect-equal --require-records || summary_rc=$?
echo
echo "== mdxbench: the ReFrame session on 'local' =="
[[ -f $report ]] && mdxbench session --report "$report" --output "$output"
if ((rc != 0)); then
    log "reframe reported failures (exit $rc): see the summary of failures above"
fi
((ingest_rc == 0)) || log "mdxbench ingest did not store everything (exit $ingest_rc)"
exit $((rc || ingest_rc || summary_rc))
