#!/usr/bin/env bash
# A local single-node Elasticsearch 8.19 (integ-test-zip: core modules only, so no security,
# no ingest pipelines, no painless, no data streams) for the `local` system and the tests.
# Usage: ci/elasticsearch.sh start|stop|status|url|ca
# Tunables: MDXBENCH_ES_PORT (9200), MDXBENCH_ES_HEAP (512m, at most 1g),
# MDXBENCH_ES_USER (mdxbench-es), MDXBENCH_ES_TIMEOUT (180 s), MDXBENCH_ES_VERSION (8.19.21),
# MDXBENCH_ES_HOME (the unpacked distribution; default: the one ci/install.sh unpacked).
# MDXBENCH_ES_SECURITY=1 starts a secured instance instead, as production clusters are:
# HTTPS with a CA and certificate made by elasticsearch-certutil (`ca` prints the CA file)
# and one file-realm superuser, MDXBENCH_ES_ADMIN_USER with the password in the 0600 file
# MDXBENCH_ES_ADMIN_PASSWORD_FILE. Used by the tests of TLS and credentials.
source "$(dirname "$0")/lib.sh"

ES_VERSION=${MDXBENCH_ES_VERSION:-8.19.21}
ES_PORT=${MDXBENCH_ES_PORT:-9200}
ES_HEAP=${MDXBENCH_ES_HEAP:-512m}
TIMEOUT=${MDXBENCH_ES_TIMEOUT:-180}
URL="http://127.0.0.1:$ES_PORT"
# Where Elasticsearch lives (see es_base in lib.sh); read-only commands do not create it.
set_paths() {
    ES_HOME=${MDXBENCH_ES_HOME:-$ES_BASE/elasticsearch-$ES_VERSION}
    LAUNCHER_PID="$ES_BASE/run/launcher.pid"
    SERVER_PID="$ES_BASE/run/server.pid"
    ES_LOGS="$ES_BASE/logs"
    LOG="$ES_LOGS/elasticsearch.out"
    CA="$ES_BASE/config/certs/ca/ca.crt"
}
if [[ -L $MDXBENCH_STATE_DIR/es ]]; then
    ES_BASE=$(readlink -f "$MDXBENCH_STATE_DIR/es")
else
    ES_BASE="$MDXBENCH_STATE_DIR/es"
fi
set_paths
SECURITY=${MDXBENCH_ES_SECURITY:-0}
if [[ $SECURITY == 1 ]]; then
    URL="https://127.0.0.1:$ES_PORT"
fi
LAUNCHER_PID="$ES_BASE/run/launcher.pid"
SERVER_PID="$ES_BASE/run/server.pid"
ES_LOGS="$ES_BASE/logs"
LOG="$ES_LOGS/elasticsearch.out"

healthy() {
    if [[ $SECURITY == 1 ]]; then
        # credentials through curl's config on stdin: never on a command line
        printf 'user = "%s:%s"\n' "$MDXBENCH_ES_ADMIN_USER" "$(cat "$MDXBENCH_ES_ADMIN_PASSWORD_FILE")" |
            curl -fs --max-time 5 --cacert "$CA" -K - "$URL/_cluster/health?wait_for_status=yellow&timeout=1s" >/dev/null
    else
        curl -fs --max-time 5 "$URL/_cluster/health?wait_for_status=yellow&timeout=1s" >/dev/null
    fi
}

# Security: certificates from elasticsearch-certutil, a file-realm superuser, TLS on HTTP.
setup_security() {
    local pwfile=${MDXBENCH_ES_ADMIN_PASSWORD_FILE:-} user=${MDXBENCH_ES_ADMIN_USER:-}
    [[ -n $user && -n $pwfile ]] || die "MDXBENCH_ES_SECURITY=1 needs MDXBENCH_ES_ADMIN_USER and MDXBENCH_ES_ADMIN_PASSWORD_FILE"
    [[ -f $pwfile ]] || die "MDXBENCH_ES_ADMIN_PASSWORD_FILE=$pwfile: no such file"
    [[ $(stat -c %a "$pwfile") == 600 ]] || die "MDXBENCH_ES_ADMIN_PASSWORD_FILE=$pwfile: mode $(stat -c %a "$pwfile"), must be 600"
    local certs="$ES_BASE/config/certs" envs=(env -i PATH=/usr/bin:/bin ES_JAVA_HOME="$(java_home)" ES_PATH_CONF="$ES_BASE/config")
    if [[ ! -f $certs/node/node.crt ]]; then
        mkdir -p "$certs"
        "${envs[@]}" "$ES_HOME/bin/elasticsearch-certutil" ca --pem --silent --out "$certs/ca.zip" >/dev/null
        unzip -oq "$certs/ca.zip" -d "$certs"
        "${envs[@]}" "$ES_HOME/bin/elasticsearch-certutil" cert --pem --silent --ca-cert "$CA" \
            --ca-key "$certs/ca/ca.key" --name node --ip 127.0.0.1 --dns localhost --out "$certs/node.zip" >/dev/null
        unzip -oq "$certs/node.zip" -d "$certs"
    fi
    "${envs[@]}" "$ES_HOME/bin/elasticsearch-users" userdel "$user" >/dev/null 2>&1 || true
    "${envs[@]}" "$ES_HOME/bin/elasticsearch-users" useradd "$user" -r superuser -p "$(cat "$pwfile")" >/dev/null
    security_yml 0 >>"$ES_BASE/config/elasticsearch.yml"
}

start() {
    require_root "ci/elasticsearch.sh start"
    [[ -x $ES_HOME/bin/elasticsearch ]] || die "Elasticsearch is not installed in $ES_HOME: run ci/install.sh first"
    case $ES_HEAP in
        *[gG]) [[ ${ES_HEAP%[gG]} -le 1 ]] || die "MDXBENCH_ES_HEAP=$ES_HEAP: at most 1g" ;;
        *[mM]) [[ ${ES_HEAP%[mM]} -le 1024 ]] || die "MDXBENCH_ES_HEAP=$ES_HEAP: at most 1024m" ;;
        *) die "MDXBENCH_ES_HEAP=$ES_HEAP: give a size like 512m or 1g" ;;
    esac
    if pid_alive "$LAUNCHER_PID"; then
        wait_for "Elasticsearch health at $URL" "$TIMEOUT" "$ES_LOGS/mdxbench.log" healthy
        log "elasticsearch: already running (PID $(cat "$LAUNCHER_PID")) at $URL"
        return
    fi
    if healthy; then
        die "something not started by us already answers at $URL: set MDXBENCH_ES_PORT to a free port"
    fi
    ensure_es_user
    ES_BASE=$(es_base)      # may move out of a private directory (and link to it)
    set_paths
    runuser -u "$ES_USER" -- test -r "$ES_HOME/bin/elasticsearch" \
        || die "user $ES_USER cannot read $ES_HOME (a parent directory is private): remove $MDXBENCH_STATE_DIR/es and run ci/install.sh again"
    mkdir -p "$ES_BASE/config" "$ES_BASE/data" "$ES_BASE/run" "$ES_LOGS"
    # Our own config directory: the distribution's files plus our elasticsearch.yml.
    cp -n "$ES_HOME"/config/* "$ES_BASE/config/" 2>/dev/null || true
    cat >"$ES_BASE/config/elasticsearch.yml" <<YML
# Generated by ci/elasticsearch.sh; edits are overwritten.
cluster.name: mdxbench
node.name: mdxbench-local
path.data: $ES_BASE/data
path.logs: $ES_LOGS
network.host: 127.0.0.1
http.port: $ES_PORT
transport.port: $((ES_PORT + 100))
discovery.type: single-node
action.destructive_requires_name: true
# Disk watermarks as free space, not as a share of the disk: this node shares a large disk
# with everything else, where the default 90% high watermark (25 GB free of 250 GB) stops
# allocating a new monthly index's primary shard (bulk refused: 503 unavailable_shards)
cluster.routing.allocation.disk.watermark.low: 3gb
cluster.routing.allocation.disk.watermark.high: 2gb
cluster.routing.allocation.disk.watermark.flood_stage: 1gb
YML
    if [[ $SECURITY == 1 ]]; then
        setup_security
    else
        # The local instance runs without security (plain HTTP, no auth) on loopback only.
        # Production clusters keep security on; mdxbench talks TLS and credentials to them.
        echo 'xpack.security.enabled: false' >>"$ES_BASE/config/elasticsearch.yml"
    fi
    chown -R "$ES_USER" "$ES_BASE/config" "$ES_BASE/data" "$ES_BASE/run" "$ES_LOGS"
    log "elasticsearch: starting $ES_VERSION on $URL (heap $ES_HEAP, user $ES_USER)"
    # setpriv execs (no forking wrapper), so $! is Elasticsearch's launcher itself.
    setsid setpriv --reuid="$ES_USER" --regid="$(id -g "$ES_USER")" --clear-groups \
        env -i PATH=/usr/bin:/bin HOME="$ES_BASE" ES_JAVA_HOME="$(java_home)" \
        ES_PATH_CONF="$ES_BASE/config" ES_JAVA_OPTS="-Xms$ES_HEAP -Xmx$ES_HEAP" \
        "$ES_HOME/bin/elasticsearch" -p "$SERVER_PID" >"$LOG" 2>&1 </dev/null &
    echo $! >"$LAUNCHER_PID"
    local i
    for ((i = 0; i < TIMEOUT; i++)); do
        healthy && { log "elasticsearch: healthy at $URL after ${i}s"; return; }
        if ! pid_alive "$LAUNCHER_PID"; then
            log_tail "$LOG" 60
            log_tail "$ES_LOGS/mdxbench.log" 60
            die "elasticsearch exited during start-up"
        fi
        sleep 1
    done
    log_tail "$LOG" 60
    log_tail "$ES_LOGS/mdxbench.log" 60
    die "timed out after ${TIMEOUT}s waiting for Elasticsearch health at $URL"
}

stop() {
    stop_pid elasticsearch "$LAUNCHER_PID" 60
    # The launcher stops the server JVM it started; if it died without doing so, stop the
    # server by the PID Elasticsearch itself recorded.
    stop_pid elasticsearch-server "$SERVER_PID" 60
}

status() {
    if pid_alive "$LAUNCHER_PID"; then
        echo "elasticsearch: running (PID $(cat "$LAUNCHER_PID")) at $URL"
        curl -fsS --max-time 5 "$URL/_cluster/health?pretty" | grep -E '"(status|number_of_nodes)"' || true
    else
        echo "elasticsearch: not running"
        return 3
    fi
}

case ${1:-} in
    start) start ;;
    stop) stop ;;
    status) status ;;
    url) echo "$URL" ;;
    ca) echo "$CA" ;;
    *) die "usage: ci/elasticsearch.sh start|stop|status|url|ca" ;;
esac
