#!/usr/bin/env bash
# Start, stop or report the real services of the `local` system: Slurm and Elasticsearch.
# Usage: ci/services.sh start|stop|status
source "$(dirname "$0")/lib.sh"
here=$(dirname "$0")
case ${1:-} in
    start) bash "$here/slurm.sh" start && bash "$here/elasticsearch.sh" start ;;
    stop) bash "$here/elasticsearch.sh" stop; bash "$here/slurm.sh" stop ;;
    status) rc=0; bash "$here/slurm.sh" status || rc=$?; bash "$here/elasticsearch.sh" status || rc=$?; exit $rc ;;
    *) die "usage: ci/services.sh start|stop|status" ;;
esac
