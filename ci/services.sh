#!/usr/bin/env bash
# Start, stop or report the real services of the `local` system: Slurm, Elasticsearch and,
# where ci/install.sh could build it (a Go toolchain), MinIO (the S3 target of the warp checks).
# Usage: ci/services.sh start|stop|status
source "$(dirname "$0")/lib.sh"
here=$(dirname "$0")
minio() {
    if [[ -x $MDXBENCH_VENV/bin/minio ]]; then
        bash "$here/minio.sh" "$1"
    elif [[ -f $GO_TOOLS_LOG && ! -f $GO_TOOLS_STATUS ]]; then
        log "minio: still being built (ci/install.sh --go-tools-later): start it when the build ends (ci/minio.sh start)"
    else
        log "minio: not installed (ci/install.sh found no Go toolchain new enough): the warp checks skip on local"
    fi
}

case ${1:-} in
    start) bash "$here/slurm.sh" start && bash "$here/elasticsearch.sh" start && minio start ;;
    stop) bash "$here/minio.sh" stop; bash "$here/elasticsearch.sh" stop; bash "$here/slurm.sh" stop ;;
    status) rc=0; bash "$here/slurm.sh" status || rc=$?; bash "$here/elasticsearch.sh" status || rc=$?
            minio status || rc=$?; exit $rc ;;
    *) die "usage: ci/services.sh start|stop|status" ;;
esac
