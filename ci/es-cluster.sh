#!/usr/bin/env bash
# An Elasticsearch cluster of N nodes on this machine, as a site runs one: each node its own
# address, data directory and JVM, all master-eligible data nodes that find each other
# through discovery.seed_hosts (no single-node discovery). The same distribution and user
# as ci/elasticsearch.sh, and the same security option: off, or with MDXBENCH_ES_SECURITY=1
# HTTPS and a file-realm superuser (MDXBENCH_ES_ADMIN_USER, _PASSWORD_FILE), and TLS between
# the nodes.
# The addresses are loopback ones, 127.0.0.11 and up, not network namespaces (as the Slurm
# test cluster's): a node bound to a non-loopback address runs Elasticsearch's production
# bootstrap checks, and this machine's hard limit of open files (20,000; a container's, not
# raised by root) is below the 65,535 they demand. A node is cut off from the others and
# from the clients by tc on lo, which drops its address's packets.
# Usage: ci/es-cluster.sh start [N]|stop|status|urls
#        ci/es-cluster.sh kill NAME     SIGKILL a node's JVM (a crash: nothing flushed)
#        ci/es-cluster.sh restart NAME  start a killed or stopped node again, wait for it
#        ci/es-cluster.sh cut NAME|join NAME  its link down (cut off from the others and
#                                       from the clients) or up again
#        ci/es-cluster.sh master        the elected master's name
#        ci/es-cluster.sh roll          a rolling restart of every node, one at a time
#        ci/es-cluster.sh wipe          an empty cluster: the nodes' data removed, restarted
#        ci/es-cluster.sh stop-node NAME  stop one node (SIGTERM: it leaves cleanly)
#        ci/es-cluster.sh ca            with security on, the CA file that verifies the nodes
#        ci/es-cluster.sh snapshots     the snapshot repositories' root (path.repo), a
#                                       directory all nodes share, as a site's NFS mount
# Tunables: MDXBENCH_ES_CLUSTER_NODES (3), MDXBENCH_ES_CLUSTER_HEAP (256m each),
#           MDXBENCH_ES_CLUSTER_ADDRESS (127.0.0.11: the first node's, the others next),
#           MDXBENCH_ES_TIMEOUT (180 s per wait), MDXBENCH_ES_VERSION, MDXBENCH_ES_HOME.
source "$(dirname "$0")/lib.sh"

ES_VERSION=${MDXBENCH_ES_VERSION:-8.19.21}
HEAP=${MDXBENCH_ES_CLUSTER_HEAP:-256m}
TIMEOUT=${MDXBENCH_ES_TIMEOUT:-180}
FIRST=${MDXBENCH_ES_CLUSTER_ADDRESS:-127.0.0.11}
[[ $FIRST =~ ^127\.([0-9]+\.){2}[0-9]+$ ]] || die "MDXBENCH_ES_CLUSTER_ADDRESS=$FIRST: a loopback address (127.x.y.z)"
NET=${FIRST%.*}
node_name() { echo "mdxes$1"; }
node_ip() { echo "$NET.$((${FIRST##*.} - 1 + $1))"; }
node_url() { echo "$SCHEME://$(node_ip "$1"):9200"; }
node_index() { local n=${1#mdxes}; [[ $n =~ ^[0-9]+$ ]] || die "no node $1 (mdxes1, mdxes2, ...)"; echo "$n"; }

set_paths() {
    ES_HOME=${MDXBENCH_ES_HOME:-$(readlink -f "$MDXBENCH_STATE_DIR/es")/elasticsearch-$ES_VERSION}
    CBASE="$MDXBENCH_STATE_DIR/es-cluster"
    [[ -L $CBASE ]] && CBASE=$(readlink -f "$CBASE")
    NODES_FILE="$CBASE/nodes"
}
set_paths
# security as the cluster was started with it (kept beside it), unless said now
SECURITY=${MDXBENCH_ES_SECURITY:-$(cat "$CBASE/security" 2>/dev/null || echo 0)}
SCHEME=http
[[ $SECURITY == 1 ]] && SCHEME=https
node_dir() { echo "$CBASE/$(node_name "$1")"; }
count() { cat "$NODES_FILE" 2>/dev/null || echo 0; }

# curl to a node: with security on, through the cluster's CA and as the admin user (from a
# 0600 config file, so the password is on no command line)
es_curl() {
    if [[ $SECURITY == 1 ]]; then
        curl -fs --cacert "$CBASE/certs/ca/ca.crt" -K "$CBASE/curl.conf" "$@"
    else
        curl -fs "$@"
    fi
}

# security as the single node has it (ci/elasticsearch.sh, MDXBENCH_ES_SECURITY=1): HTTPS
# with a CA of the cluster's own and a file-realm superuser on every node, and TLS between
# the nodes too (a cluster's transport carries the data: verified by the same CA). One
# certificate names every node's address.
setup_certs() {
    local n=$1 pwfile=${MDXBENCH_ES_ADMIN_PASSWORD_FILE:-} user=${MDXBENCH_ES_ADMIN_USER:-} ips="" i
    [[ -n $user && -n $pwfile ]] || die "MDXBENCH_ES_SECURITY=1 needs MDXBENCH_ES_ADMIN_USER and MDXBENCH_ES_ADMIN_PASSWORD_FILE"
    [[ -f $pwfile ]] || die "MDXBENCH_ES_ADMIN_PASSWORD_FILE=$pwfile: no such file"
    [[ $(stat -c %a "$pwfile") == 600 ]] || die "MDXBENCH_ES_ADMIN_PASSWORD_FILE=$pwfile: mode $(stat -c %a "$pwfile"), must be 600"
    for ((i = 1; i <= n; i++)); do ips+="${ips:+,}$(node_ip "$i")"; done
    local certs="$CBASE/certs" envs=(env -i PATH=/usr/bin:/bin ES_JAVA_HOME="$(java_home)" ES_PATH_CONF="$ES_HOME/config")
    if [[ ! -f $certs/node/node.crt || $(cat "$certs/ips" 2>/dev/null) != "$ips" ]]; then
        rm -rf "$certs" && mkdir -p "$certs"
        "${envs[@]}" "$ES_HOME/bin/elasticsearch-certutil" ca --pem --silent --out "$certs/ca.zip" >/dev/null
        unzip -oq "$certs/ca.zip" -d "$certs"
        "${envs[@]}" "$ES_HOME/bin/elasticsearch-certutil" cert --pem --silent --ca-cert "$certs/ca/ca.crt" \
            --ca-key "$certs/ca/ca.key" --name node --ip "$ips" --dns localhost --out "$certs/node.zip" >/dev/null
        unzip -oq "$certs/node.zip" -d "$certs"
        echo "$ips" >"$certs/ips"
    fi
    (umask 077; printf 'user = "%s:%s"\n' "$user" "$(cat "$pwfile")" >"$CBASE/curl.conf")
}

node_security() {
    local dir=$1 envs
    if [[ $SECURITY != 1 ]]; then
        echo 'xpack.security.enabled: false' >>"$dir/config/elasticsearch.yml"
        return
    fi
    mkdir -p "$dir/config/certs"
    cp -r "$CBASE/certs/ca" "$CBASE/certs/node" "$dir/config/certs/"
    # the user with the password given now, when one is given: a cluster started before
    # with another password file (a test run earlier in this checkout) would refuse it. A
    # restart without one (`restart NAME`) keeps the node's user as it was.
    if [[ -n ${MDXBENCH_ES_ADMIN_PASSWORD_FILE:-} ]]; then
        envs=(env -i PATH=/usr/bin:/bin ES_JAVA_HOME="$(java_home)" ES_PATH_CONF="$dir/config")
        "${envs[@]}" "$ES_HOME/bin/elasticsearch-users" userdel "${MDXBENCH_ES_ADMIN_USER:?MDXBENCH_ES_ADMIN_PASSWORD_FILE given without MDXBENCH_ES_ADMIN_USER}" >/dev/null 2>&1 || true
        "${envs[@]}" "$ES_HOME/bin/elasticsearch-users" useradd "$MDXBENCH_ES_ADMIN_USER" \
            -r superuser -p "$(cat "$MDXBENCH_ES_ADMIN_PASSWORD_FILE")" >/dev/null
    elif [[ ! -s $dir/config/users ]]; then
        die "es-cluster: $(basename "$dir") has no admin user yet: MDXBENCH_ES_SECURITY=1 needs MDXBENCH_ES_ADMIN_USER and MDXBENCH_ES_ADMIN_PASSWORD_FILE"
    fi
    security_yml 1 >>"$dir/config/elasticsearch.yml"
}

# (the integ-test-zip answers 405 to GET /: its root handler is a module it lacks)
answers() { es_curl --max-time 3 "$(node_url "$1")/_cluster/health?local=true" >/dev/null; }

cluster_green() {
    local n=$1
    es_curl --max-time 5 "$(node_url 1)/_cluster/health?wait_for_status=green&wait_for_nodes=$n&timeout=1s" >/dev/null
}

start_node() {
    local i=$1 dir name seeds masters j
    dir=$(node_dir "$i") name=$(node_name "$i")
    if pid_alive "$dir/run/launcher.pid"; then return; fi
    mkdir -p "$dir/config" "$dir/data" "$dir/logs" "$dir/run"
    cp -n "$ES_HOME"/config/* "$dir/config/" 2>/dev/null || true
    seeds="" masters=""
    for ((j = 1; j <= $(count); j++)); do
        seeds+="${seeds:+, }$(node_ip "$j"):9300"
        masters+="${masters:+, }$(node_name "$j")"
    done
    cat >"$dir/config/elasticsearch.yml" <<YML
# Generated by ci/es-cluster.sh; edits are overwritten.
cluster.name: mdxbench-cluster
node.name: $name
path.data: $dir/data
path.logs: $dir/logs
network.host: $(node_ip "$i")
http.port: 9200
transport.port: 9300
path.repo: $CBASE/snapshots
discovery.seed_hosts: [$seeds]
cluster.initial_master_nodes: [$masters]
action.destructive_requires_name: true
cluster.routing.allocation.disk.watermark.low: 3gb
cluster.routing.allocation.disk.watermark.high: 2gb
cluster.routing.allocation.disk.watermark.flood_stage: 1gb
YML
    node_security "$dir"
    mkdir -p "$CBASE/snapshots"
    chown -R "$ES_USER" "$dir" "$CBASE/snapshots"
    setsid setpriv --reuid="$ES_USER" --regid="$(id -g "$ES_USER")" --clear-groups \
        env -i PATH=/usr/bin:/bin HOME="$dir" ES_JAVA_HOME="$(java_home)" \
        ES_PATH_CONF="$dir/config" ES_JAVA_OPTS="-Xms$HEAP -Xmx$HEAP" \
        "$ES_HOME/bin/elasticsearch" -p "$dir/run/server.pid" >"$dir/logs/out.log" 2>&1 </dev/null &
    echo $! >"$dir/run/launcher.pid"
}

start() {
    require_root "ci/es-cluster.sh start"
    local n=${1:-${MDXBENCH_ES_CLUSTER_NODES:-3}} i t0=$SECONDS
    [[ -x $ES_HOME/bin/elasticsearch ]] || die "Elasticsearch is not installed in $ES_HOME: run ci/install.sh first"
    ensure_es_user
    mkdir -p "$MDXBENCH_STATE_DIR"
    CBASE=$(reachable_dir es-cluster "$ES_USER")
    NODES_FILE="$CBASE/nodes"
    runuser -u "$ES_USER" -- test -r "$ES_HOME/bin/elasticsearch" \
        || die "user $ES_USER cannot read $ES_HOME"
    echo "$n" >"$NODES_FILE"
    echo "$SECURITY" >"$CBASE/security"
    [[ $SECURITY == 1 ]] && setup_certs "$n"
    log "es-cluster: starting $n nodes ($ES_VERSION, heap $HEAP each) on $(node_ip 1)-$(node_ip "$n")"
    for ((i = 1; i <= n; i++)); do start_node "$i"; done
    wait_for "the cluster's $n nodes, green" "$TIMEOUT" "$(node_dir 1)/logs/out.log" cluster_green "$n"
    log "es-cluster: green with $n nodes after $((SECONDS - t0))s: $(urls)"
}

stop() {
    local i dir
    for ((i = 1; i <= $(count); i++)); do
        dir=$(node_dir "$i")
        stop_pid "es-$(node_name "$i")" "$dir/run/launcher.pid" 60
        stop_pid "es-$(node_name "$i")-server" "$dir/run/server.pid" 60
    done
    join_all
}

# wipe: an empty cluster of as many nodes (a site's new cluster after losing the old one):
# every node stopped, its data removed, the nodes started again; the snapshot
# repositories (path.repo) stay
wipe() {
    local n i
    n=$(count)
    [[ $n -gt 0 ]] || die "es-cluster: not started"
    stop
    for ((i = 1; i <= n; i++)); do rm -rf "$(node_dir "$i")/data"; done
    log "es-cluster: the data of $n nodes removed"
    start "$n"
}

# whether lo has our htb root: tc's output read whole first -- `tc ... | grep -q` under
# pipefail is false whenever grep's early exit makes tc die of SIGPIPE (a join that left
# the node cut off, in a fresh clone's run on 2026-12-02, while saying "joined again")
has_htb() {
    local qdiscs
    qdiscs=$(tc qdisc show dev lo)
    [[ $qdiscs == *'qdisc htb 1:'* ]]
}

# cut NAME: every packet to or from the node's address dropped: an htb root qdisc on lo
# (everything else through its default class, unlimited), the node's address classified
# into a class of its own whose queue holds nothing (pfifo limit 0: each packet dropped).
# (This kernel has neither the prio qdisc nor tc actions.) CBASE/cut lists the nodes cut.
cut() {
    local i ip
    i=$(node_index "$1") ip=$(node_ip "$i")
    if ! has_htb; then
        tc qdisc add dev lo root handle 1: htb default 10 2>/dev/null
        tc class add dev lo parent 1: classid 1:10 htb rate 100gbit 2>/dev/null
    fi
    tc class add dev lo parent 1: classid "1:$((20 + i))" htb rate 1mbit 2>/dev/null
    tc qdisc add dev lo parent "1:$((20 + i))" handle "$((20 + i)):" pfifo limit 0
    tc filter add dev lo parent 1: protocol ip prio 1 u32 match ip dst "$ip/32" flowid "1:$((20 + i))"
    tc filter add dev lo parent 1: protocol ip prio 1 u32 match ip src "$ip/32" flowid "1:$((20 + i))"
    grep -qx "$1" "$CBASE/cut" 2>/dev/null || echo "$1" >>"$CBASE/cut"
    log "es-cluster: $1 cut off ($ip dropped on lo)"
}

join_all() {
    if has_htb; then tc qdisc del dev lo root; fi
    rm -f "$CBASE/cut"
}

# join NAME: lo's qdisc made again without it (the others cut stay cut)
join() {
    local keep=() n
    while read -r n; do [[ -n $n && $n != "$1" ]] && keep+=("$n"); done < <(cat "$CBASE/cut" 2>/dev/null)
    join_all
    for n in "${keep[@]}"; do cut "$n" >/dev/null; done
    ! has_htb || ((${#keep[@]})) || die "es-cluster: $1: lo still drops packets after the join"
    log "es-cluster: $1 joined again"
}

kill_node() {
    local i dir pid
    i=$(node_index "$1") dir=$(node_dir "$i")
    pid=$(cat "$dir/run/server.pid" 2>/dev/null) || die "$1: no server PID (not running?)"
    kill -KILL "$pid" 2>/dev/null || die "$1: PID $pid is not running"
    # the launcher ends with its server; wait for both
    local t
    for ((t = 0; t < 30; t++)); do
        pid_alive "$dir/run/launcher.pid" || break
        sleep 1
    done
    rm -f "$dir/run/server.pid"
    log "es-cluster: $1 killed (SIGKILL, PID $pid)"
}

restart_node() {
    local i
    i=$(node_index "$1")
    start_node "$i"
    wait_for "$1 answering" "$TIMEOUT" "$(node_dir "$i")/logs/out.log" answers "$i"
    log "es-cluster: $1 started again"
}

# roll: a rolling restart as Elastic's manual describes it, one node after the other:
# replica allocation off (primaries only, so the cluster does not copy a leaving node's
# shards elsewhere), the node stopped (SIGTERM: it leaves cleanly) and started again, once
# it is back allocation on again, and the next node only when the cluster is green
alive_other() {
    local i
    for ((i = 1; i <= $(count); i++)); do
        [[ $i != "$1" ]] && answers "$i" && { echo "$i"; return; }
    done
    return 1
}

allocation() {
    local via=$1 value=$2
    es_curl --max-time 30 -X PUT -H 'Content-Type: application/json' \
        "$(node_url "$via")/_cluster/settings" \
        -d "{\"persistent\": {\"cluster.routing.allocation.enable\": $value}}" >/dev/null \
        || die "es-cluster: cannot set cluster.routing.allocation.enable to $value"
}

stop_node() {
    local i dir
    i=$(node_index "$1") dir=$(node_dir "$i")
    stop_pid "es-$1-server" "$dir/run/server.pid" 120
    stop_pid "es-$1" "$dir/run/launcher.pid" 60
    log "es-cluster: $1 stopped"
}

green_via() { es_curl --max-time 5 "$(node_url "$1")/_cluster/health?wait_for_status=green&wait_for_nodes=$2&timeout=1s" >/dev/null; }

roll() {
    local i via n t0=$SECONDS
    n=$(count)
    for ((i = 1; i <= n; i++)); do
        via=$(alive_other "$i") || die "es-cluster: no node answers but $(node_name "$i")"
        allocation "$via" '"primaries"'
        es_curl --max-time 60 -X POST "$(node_url "$via")/_flush" >/dev/null || true
        stop_node "$(node_name "$i")"
        start_node "$i"
        wait_for "$(node_name "$i") answering" "$TIMEOUT" "$(node_dir "$i")/logs/out.log" answers "$i"
        allocation "$i" null
        wait_for "the cluster's $n nodes, green" "$TIMEOUT" "$(node_dir "$i")/logs/out.log" green_via "$i" "$n"
        log "es-cluster: $(node_name "$i") restarted, the cluster green"
    done
    log "es-cluster: rolling restart of $n nodes in $((SECONDS - t0))s"
}

master() {
    es_curl --max-time 5 "$(node_url "${1:-1}")/_cat/master?h=node" | tr -d ' \n'
}

urls() {
    local i out=""
    for ((i = 1; i <= $(count); i++)); do out+="${out:+,}$(node_url "$i")"; done
    echo "$out"
}

status() {
    local i
    [[ $(count) -gt 0 ]] || { echo "es-cluster: not started"; return 3; }
    for ((i = 1; i <= $(count); i++)); do
        if pid_alive "$(node_dir "$i")/run/launcher.pid"; then
            echo "$(node_name "$i"): running at $(node_url "$i")"
        else
            echo "$(node_name "$i"): not running"
        fi
    done
}

case ${1:-} in
    start) start "${2:-}" ;;
    stop) stop ;;
    status) status ;;
    urls) urls ;;
    kill) kill_node "${2:?node}" ;;
    restart) restart_node "${2:?node}" ;;
    cut) cut "${2:?node}" ;;
    join) join "${2:?node}" ;;
    master) master "${2:-1}" ;;
    roll) roll ;;
    wipe) wipe ;;
    stop-node) stop_node "${2:?node}" ;;
    snapshots) echo "$CBASE/snapshots" ;;
    ca) echo "$CBASE/certs/ca/ca.crt" ;;
    *) die "usage: ci/es-cluster.sh start [N]|stop|status|urls|kill NAME|restart NAME|stop-node NAME|roll|wipe|cut NAME|join NAME|master|snapshots|ca" ;;
esac
