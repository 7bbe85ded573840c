# Common helpers for the ci/ scripts. Source it; do not run it.
# Every path the scripts write lives under one state directory ($MDXBENCH_STATE_DIR,
# default <repo>/.mdxbench): configs, logs, data and the PIDs of what we started.
set -euo pipefail

_inherited_root=${MDXBENCH_ROOT:-}
MDXBENCH_ROOT=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
# A state directory or venv inherited from another checkout (its ci/activate.sh sourced in
# this shell) would run this one on the other's venv and services: use this checkout's.
# One set on purpose, outside any checkout, is kept.
if [[ -n $_inherited_root && $_inherited_root != "$MDXBENCH_ROOT" ]]; then
    for _v in MDXBENCH_STATE_DIR MDXBENCH_VENV; do
        if [[ ${!_v:-} == "$_inherited_root"/* ]]; then
            printf '[%s] %s=%s belongs to the checkout %s (an activated shell?): using this checkout'"'"'s\n' \
                "$(basename "$0")" "$_v" "${!_v}" "$_inherited_root" >&2
            unset "$_v"
        fi
    done
fi
MDXBENCH_STATE_DIR=${MDXBENCH_STATE_DIR:-$MDXBENCH_ROOT/.mdxbench}
MDXBENCH_VENV=${MDXBENCH_VENV:-$MDXBENCH_STATE_DIR/venv}
export MDXBENCH_ROOT MDXBENCH_STATE_DIR MDXBENCH_VENV
# MinIO's and warp's build in the background (ci/install.sh --go-tools-later): its log, and
# the file that holds "EXIT-CODE LOG" once it ended
GO_TOOLS_LOG=$MDXBENCH_STATE_DIR/logs/go-tools.log
GO_TOOLS_STATUS=$MDXBENCH_STATE_DIR/gotools/build.status
# ... and the PID of the process that runs it (tests/integration/conftest.py's go_tools
# renices it when the quiet session has to wait for it)
GO_TOOLS_PID=$MDXBENCH_STATE_DIR/gotools/build.pid
# the GPU benchmarks' build in the background (ci/install.sh --go-tools-later, where Spack
# is at hand: ci/spack-gpu.sh at nice 19), its log and "EXIT-CODE LOG" once it ended
GPU_BUILD_LOG=$MDXBENCH_STATE_DIR/logs/spack-gpu.log
GPU_BUILD_STATUS=$MDXBENCH_STATE_DIR/spack/gpu-build.status

log()  { printf '[%s] %s\n' "$(basename "$0")" "$*" >&2; }
die()  { printf '[%s] ERROR: %s\n' "$(basename "$0")" "$*" >&2; exit 1; }

# Print the last lines of a log file, framed, to stderr.
log_tail() {
    local f=$1 n=${2:-40}
    if [[ -f $f ]]; then
        printf -- '----- last %s lines of %s -----\n' "$n" "$f" >&2
        tail -n "$n" "$f" >&2
        printf -- '----- end of %s -----\n' "$f" >&2
    else
        printf -- '(no log file at %s)\n' "$f" >&2
    fi
}

# pid_alive PIDFILE: true when the file names a live process.
pid_alive() {
    local f=$1 pid
    [[ -s $f ]] || return 1
    pid=$(cat "$f")
    [[ $pid =~ ^[0-9]+$ ]] || return 1
    kill -0 "$pid" 2>/dev/null
}

# stop_pid NAME PIDFILE [TIMEOUT]: TERM the recorded PID, wait, then KILL.
# Only the PID we recorded is ever signalled; never a process found by name.
stop_pid() { stop_pids "${3:-30}" "$1:$2"; }

# stop_pids TIMEOUT NAME:PIDFILE...: stop_pid for several at once -- TERM to every
# recorded PID, then one wait for all (TIMEOUT seconds), then KILL to what is left: daemons
# that do not depend on each other stop in the time of the slowest, not of their sum.
stop_pids() {
    local timeout=$1 arg name f pid i left
    shift
    local -a pids=() files=()
    for arg in "$@"; do
        name=${arg%%:*}; f=${arg#*:}
        if ! pid_alive "$f"; then
            log "$name: not running"
            rm -f "$f"
            continue
        fi
        pid=$(cat "$f")
        log "$name: stopping PID $pid"
        kill -TERM "$pid" 2>/dev/null || true
        pids+=("$pid"); files+=("$f:$name")
    done
    for ((i = 0; i < timeout * 10; i++)); do
        left=0
        for pid in "${pids[@]}"; do kill -0 "$pid" 2>/dev/null && left=1 && break; done
        ((left)) || break
        sleep 0.1
    done
    for i in "${!pids[@]}"; do
        if kill -0 "${pids[$i]}" 2>/dev/null; then
            log "${files[$i]##*:}: PID ${pids[$i]} still alive after ${timeout}s, sending KILL"
            kill -KILL "${pids[$i]}" 2>/dev/null || true
        fi
        rm -f "${files[$i]%:*}"
    done
}

# wait_for DESCRIPTION TIMEOUT LOGFILES CMD...: poll CMD every second until it
# succeeds; after TIMEOUT seconds of the clock (not TIMEOUT polls: a probe such as
# `scontrol ping` against a daemon that never came can itself take seconds) print the tail
# of the service's logs (LOGFILES is a colon-separated list) and fail. The wait ends at
# most one probe past the deadline.
wait_for() {
    local what=$1 timeout=$2 logfiles=$3 f deadline
    shift 3
    deadline=$((SECONDS + timeout))
    while :; do
        if "$@" >/dev/null 2>&1; then
            return 0
        fi
        ((SECONDS < deadline)) || break
        sleep 1
    done
    IFS=: read -ra files <<<"$logfiles"
    for f in "${files[@]}"; do
        log_tail "$f" 40
    done
    die "timed out after ${timeout}s waiting for $what"
}

require_root() {
    [[ $(id -u) -eq 0 ]] || die "$1 must run as root (it installs packages and starts system daemons)"
}

# --- Directories other users must reach -------------------------------------------
# Daemons we start share some state with processes of other users: Elasticsearch runs as
# MDXBENCH_ES_USER; slurmd executes every job's script from its spool as the job's user.
# Such state lives in $MDXBENCH_STATE_DIR/NAME unless that user cannot traverse the state
# directory (a checkout under a private directory: /root, mktemp -d): then in
# /var/lib/mdxbench/NAME-<hash of the state dir>, linked from $MDXBENCH_STATE_DIR/NAME.
# reachable_dir NAME USER prints the real path (what configuration files must name: a
# path through the link would still cross the private directory).
ES_USER=${MDXBENCH_ES_USER:-mdxbench-es}

reachable_dir() {
    local name=$1 user=$2 link="$MDXBENCH_STATE_DIR/$1" ext
    if [[ -L $link ]]; then
        readlink -f "$link"
        return
    fi
    mkdir -p "$MDXBENCH_STATE_DIR"
    if [[ $(id -u) -ne 0 || -d $link ]] || runuser -u "$user" -- test -x "$MDXBENCH_STATE_DIR" 2>/dev/null; then
        mkdir -p "$link"
        echo "$link"
        return
    fi
    ext=/var/lib/mdxbench/$name-$(printf %s "$MDXBENCH_STATE_DIR" | sha256sum | cut -c1-12)
    mkdir -p "$ext"
    chmod 755 /var/lib/mdxbench "$ext"
    ln -s "$ext" "$link"
    log "user $user cannot reach $MDXBENCH_STATE_DIR: $name lives in $ext (linked from $link)"
    echo "$ext"
}

ensure_es_user() {
    id -u "$ES_USER" >/dev/null 2>&1 \
        || useradd --system --no-create-home --shell /usr/sbin/nologin "$ES_USER"
}

# The Java 17 Elasticsearch runs on (ES_JAVA_HOME, Debian's, or the java on PATH).
java_home() {
    local j
    for j in "${ES_JAVA_HOME:-}" /usr/lib/jvm/java-17-openjdk-amd64 /usr/lib/jvm/java-17-openjdk-arm64; do
        [[ -n $j && -x $j/bin/java ]] && { echo "$j"; return; }
    done
    j=$(readlink -f "$(command -v java)") || die "no Java runtime found (install openjdk-17-jre-headless)"
    dirname "$(dirname "$j")"
}

# Elasticsearch's home: it refuses to run as root, and runs as ES_USER.
es_base() { reachable_dir es "$ES_USER"; }

# wait_alive DESCRIPTION TIMEOUT LOGFILES PIDFILE CMD...: like wait_for, but fails at once,
# with the log tail, when the process of PIDFILE dies.
wait_alive() {
    local what=$1 timeout=$2 logfiles=$3 pidfile=$4 i f
    shift 4
    for ((i = 0; i < timeout; i++)); do
        if "$@" >/dev/null 2>&1; then
            return 0
        fi
        if ! pid_alive "$pidfile"; then
            IFS=: read -ra files <<<"$logfiles"
            for f in "${files[@]}"; do log_tail "$f" 40; done
            die "$what: the process exited (waited ${i}s)"
        fi
        sleep 1
    done
    IFS=: read -ra files <<<"$logfiles"
    for f in "${files[@]}"; do log_tail "$f" 40; done
    die "timed out after ${timeout}s waiting for $what"
}

# prepare_local: what ci/main.sh and ci/test.sh both need first -- install what is missing,
# start Slurm and Elasticsearch, activate the environment, and go to the repository root.
# Its arguments go to ci/install.sh.
prepare_local() {
    local here
    here=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
    bash "$here/install.sh" "$@"
    bash "$here/services.sh" start
    source "$here/activate.sh"
    cd "$MDXBENCH_ROOT"
}

# slurm_conf_common: the slurm.conf lines the one-node cluster (ci/slurm.sh) and the
# namespace cluster (ci/cluster.sh) share: root daemons, munge, no cgroups (this machine's
# cgroup layout is not the daemons' to manage), cores as consumable, nodes back in service
# when they register again.
slurm_conf_common() {
    cat <<CONF
SlurmUser=root
AuthType=auth/munge
ProctrackType=proctrack/linuxproc
TaskPlugin=task/none
MpiDefault=none
SchedulerType=sched/backfill
SelectType=select/cons_tres
SelectTypeParameters=CR_Core
ReturnToService=2
JobAcctGatherType=jobacct_gather/none
JobCompType=jobcomp/none
SlurmctldTimeout=30
InactiveLimit=0
CONF
}

# security_yml TRANSPORT_TLS: the elasticsearch.yml lines of a secured node (ci/elasticsearch.sh,
# ci/es-cluster.sh): HTTPS with certs/node and certs/ca under its config directory, a
# file-realm user, and TLS between nodes when TRANSPORT_TLS is 1 (a cluster's) else none
security_yml() {
    cat <<YML
xpack.security.enabled: true
xpack.security.enrollment.enabled: false
xpack.security.authc.realms.file.file1.order: 0
xpack.security.http.ssl.enabled: true
xpack.security.http.ssl.key: certs/node/node.key
xpack.security.http.ssl.certificate: certs/node/node.crt
xpack.security.http.ssl.certificate_authorities: [certs/ca/ca.crt]
YML
    if [[ $1 == 1 ]]; then
        cat <<YML
xpack.security.transport.ssl.enabled: true
xpack.security.transport.ssl.verification_mode: certificate
xpack.security.transport.ssl.key: certs/node/node.key
xpack.security.transport.ssl.certificate: certs/node/node.crt
xpack.security.transport.ssl.certificate_authorities: [certs/ca/ca.crt]
YML
    else
        echo 'xpack.security.transport.ssl.enabled: false'
    fi
}
