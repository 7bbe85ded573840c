#!/usr/bin/env bash
# A local MinIO S3 server on loopback, the `local` system's object target (the warp checks),
# built by ci/install.sh (install_go_tools). It runs as an unprivileged user; its root
# credentials are made once, at random, into a 0600 file of access_key=/secret_key= lines
# (the format the warp checks read, mdxbench/scripts/s3cred.sh), and reach the server
# through its environment, never a command line.
# Usage: ci/minio.sh start|stop|status|url|credentials
# Tunables: MDXBENCH_MINIO_PORT (9000; the console on the next port), MDXBENCH_MINIO_USER
# (mdxbench-s3), MDXBENCH_MINIO_TIMEOUT (60 s); for a second instance (ci/cluster.sh's, on
# the namespace cluster's bridge): MDXBENCH_MINIO_ADDR (127.0.0.1) and MDXBENCH_MINIO_NAME
# (minio: its directory under the state directory). The credentials file is shared.
source "$(dirname "$0")/lib.sh"

PORT=${MDXBENCH_MINIO_PORT:-9000}
ADDR=${MDXBENCH_MINIO_ADDR:-127.0.0.1}
NAME=${MDXBENCH_MINIO_NAME:-minio}
MINIO_USER=${MDXBENCH_MINIO_USER:-mdxbench-s3}
TIMEOUT=${MDXBENCH_MINIO_TIMEOUT:-60}
URL="http://$ADDR:$PORT"
MINIO="$MDXBENCH_VENV/bin/minio"
CREDENTIALS="$MDXBENCH_STATE_DIR/minio-credentials"
if [[ -L $MDXBENCH_STATE_DIR/$NAME ]]; then
    BASE=$(readlink -f "$MDXBENCH_STATE_DIR/$NAME")
else
    BASE="$MDXBENCH_STATE_DIR/$NAME"
fi
PIDFILE="$BASE/run/minio.pid"
LOG="$BASE/logs/minio.out"

healthy() { curl -fs --max-time 3 "$URL/minio/health/live" >/dev/null; }

make_credentials() {
    [[ -s $CREDENTIALS ]] && return
    (umask 077
     printf 'access_key=mdxbench-%s\nsecret_key=%s\n' "$(od -An -N4 -tx4 /dev/urandom | tr -d ' ')" \
         "$(od -An -N24 -tx1 /dev/urandom | tr -d ' \n')" >"$CREDENTIALS")
    log "minio: root credentials made in $CREDENTIALS (mode 0600)"
}

start() {
    require_root "ci/minio.sh start"
    [[ -x $MINIO ]] || die "MinIO is not installed ($MINIO): ci/install.sh builds it where a Go toolchain exists"
    if pid_alive "$PIDFILE"; then
        wait_alive "MinIO at $URL" "$TIMEOUT" "$LOG" "$PIDFILE" healthy
        log "minio: already running (PID $(cat "$PIDFILE")) at $URL"
        return
    fi
    if healthy; then
        # name the process (another checkout's MinIO, often: its cluster's bridge has the same
        # address), so that the operator knows what to stop
        local who
        who=$(ss -Hltnp "sport = :$PORT" 2>/dev/null | grep -o 'users:(.*)' | head -n 1)
        die "something not started by us already answers at $URL (${who:-its process unknown}; ours would have $PIDFILE): stop it, or set MDXBENCH_MINIO_PORT to a free port"
    fi
    id -u "$MINIO_USER" >/dev/null 2>&1 \
        || useradd --system --no-create-home --shell /usr/sbin/nologin "$MINIO_USER"
    BASE=$(reachable_dir "$NAME" "$MINIO_USER")
    PIDFILE="$BASE/run/minio.pid"
    LOG="$BASE/logs/minio.out"
    mkdir -p "$BASE/data" "$BASE/run" "$BASE/logs" "$BASE/bin"
    chown -R "$MINIO_USER" "$BASE/data" "$BASE/logs"
    # the binary where its user can reach it (the build may be under a private directory)
    cmp -s "$(readlink -f "$MINIO")" "$BASE/bin/minio" || install -m 755 "$(readlink -f "$MINIO")" "$BASE/bin/minio"
    runuser -u "$MINIO_USER" -- test -x "$BASE/bin/minio" \
        || die "user $MINIO_USER cannot run $BASE/bin/minio"
    make_credentials
    local access secret
    access=$(sed -n 's/^access_key=//p' "$CREDENTIALS")
    secret=$(sed -n 's/^secret_key=//p' "$CREDENTIALS")
    log "minio: starting on $URL (data $BASE/data, user $MINIO_USER)"
    # only what MinIO needs in its environment; setpriv execs, so $! is MinIO itself
    (while read -r v; do unset "$v"; done < <(compgen -e)
     export PATH=/usr/bin:/bin HOME="$BASE" MINIO_ROOT_USER="$access" MINIO_ROOT_PASSWORD="$secret"
     export MINIO_BROWSER=off MINIO_UPDATE=off
     exec setsid setpriv --reuid="$MINIO_USER" --regid="$(id -g "$MINIO_USER")" --clear-groups \
         "$BASE/bin/minio" server --quiet --address "$ADDR:$PORT" \
         --console-address "$ADDR:$((PORT + 1))" "$BASE/data") >"$LOG" 2>&1 </dev/null &
    echo $! >"$PIDFILE"
    wait_alive "MinIO at $URL" "$TIMEOUT" "$LOG" "$PIDFILE" healthy
    log "minio: healthy at $URL"
}

stop() { stop_pid "$NAME" "$PIDFILE" 30; }

status() {
    if pid_alive "$PIDFILE"; then
        echo "minio: running (PID $(cat "$PIDFILE")) at $URL"
        healthy && echo "minio: live" || { echo "minio: not answering at $URL"; return 1; }
    else
        echo "minio: not running"
        return 3
    fi
}

case ${1:-} in
    start) start ;;
    stop) stop ;;
    status) status ;;
    url) echo "$URL" ;;
    credentials) echo "$CREDENTIALS" ;;
    *) die "usage: ci/minio.sh start|stop|status|url|credentials" ;;
esac
