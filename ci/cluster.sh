#!/usr/bin/env bash
# A multi-node Slurm test cluster on this machine: N compute nodes, each a network namespace
# with its own hostname (UTS namespace) and a veth into a bridge, running its own slurmd;
# slurmctld on the host side of the bridge; slurmdbd with MariaDB for accounting (so that
# ReFrame's `slurm` backend, which needs sacct, is what the cluster is tested with). All
# nodes see the same filesystem, as a shared Lustre or NFS would be. Addresses come from
# 198.18.0.0/15, the range reserved for benchmarking networks.
# Usage: ci/cluster.sh start [N]|stop|status|env|restart-node NAME
#        ci/cluster.sh degrade NAME cpu PERCENT [PERIOD_MS] | degrade NAME net RATE |
#                      degrade NAME io BYTES_PER_S | restore NAME
#        ci/cluster.sh queues N [NAME...]: the NIC queues of the nodes (default all)
#        ci/cluster.sh gpu-partition [on|off]: a partition `gpu` of the nodes (GRES gpu)
# Tunables: MDXBENCH_CLUSTER_NODES (3), MDXBENCH_CLUSTER_NODES_PER_HOST (2: how many nodes
#           each stand-in physical host has, Slurm feature host_ns-host-K),
#           MDXBENCH_CLUSTER_PARTITION (nodes), MDXBENCH_CLUSTER_GPUS (8: GPUs each node
#           declares as GRES gpu, scheduled by count; partition `gpu`),
#           MDXBENCH_CLUSTER_TIMEOUT (90 s per wait), MDXBENCH_CLUSTER_DISK_MB (256: each
#           node's local disk, a sparse ext4 image).
source "$(dirname "$0")/lib.sh"

CDIR="$MDXBENCH_STATE_DIR/cluster"
LOGS="$MDXBENCH_STATE_DIR/logs"
CONF="$CDIR/etc/slurm.conf"
DBDCONF="$CDIR/etc/slurmdbd.conf"
PARTITION=${MDXBENCH_CLUSTER_PARTITION:-nodes}
TIMEOUT=${MDXBENCH_CLUSTER_TIMEOUT:-90}
DISK_MB=${MDXBENCH_CLUSTER_DISK_MB:-256}
PER_HOST=${MDXBENCH_CLUSTER_NODES_PER_HOST:-2}
GPUS=${MDXBENCH_CLUSTER_GPUS:-8}
LOCALDISK="$CDIR/localdisk"     # where every node sees its own disk (nscluster: node_local)
disk_image() { echo "$CDIR/disks/$1.img"; }     # the ext4 image of node $1's disk
BRIDGE=mdxbr0
NET=198.18.0
HOST_IP=$NET.1
DB_PORT=3307 DBD_PORT=6919 CTLD_PORT=6917 SLURMD_PORT=6918 PEER_PORT=12866
# the nodes' S3 server (nscluster's object target: warp from the nodes): a MinIO of its own
# on the bridge (ci/minio.sh), where ci/install.sh built MinIO
S3_PORT=${MDXBENCH_CLUSTER_S3_PORT:-9010}
cluster_minio() {
    MDXBENCH_MINIO_NAME=minio-cluster MDXBENCH_MINIO_ADDR=$HOST_IP MDXBENCH_MINIO_PORT=$S3_PORT \
        bash "$(dirname "${BASH_SOURCE[0]}")/minio.sh" "$@"
}
HOSTS_BEGIN='# BEGIN mdxbench test cluster'
HOSTS_END='# END mdxbench test cluster'
export SLURM_CONF="$CONF"

node_name() { echo "mdxnode$1"; }
node_ip() { echo "$NET.$((10 + $1))"; }
nodes_file="$CDIR/nodes"

munge_works() { munge -n 2>/dev/null | unmunge >/dev/null 2>&1; }

ensure_munge() {
    munge_works && return
    log "cluster: no working munged: start the one-node cluster's (ci/slurm.sh start) first"
    bash "$(dirname "$0")/slurm.sh" start >/dev/null
}

# --- network -------------------------------------------------------------------------
net_up() {
    local n=$1 i name
    if ! ip link show "$BRIDGE" >/dev/null 2>&1; then
        ip link add "$BRIDGE" type bridge
        ip addr add "$HOST_IP/24" dev "$BRIDGE"
    fi
    ip link set "$BRIDGE" up
    for ((i = 1; i <= n; i++)); do
        name=$(node_name "$i")
        if [[ ! -e /var/run/netns/$name ]]; then
            ip netns add "$name"
        fi
        if ! ip link show "mdxv$i" >/dev/null 2>&1; then
            # two queues each way, as a multiqueue virtio NIC has several (the one-queue
            # series of Iperf3OneQueue sets them to one for its run: nscluster nic_queues)
            ip link add "mdxv$i" numtxqueues 2 numrxqueues 2 type veth \
                peer name eth0 numtxqueues 2 numrxqueues 2 netns "$name"
            ip link set "mdxv$i" master "$BRIDGE" up
            ip -n "$name" addr add "$(node_ip "$i")/24" dev eth0
            ip -n "$name" link set eth0 up
            ip -n "$name" link set lo up
            ip -n "$name" route add default via "$HOST_IP"
        fi
    done
    hosts_block "$n"
}

hosts_block() {
    local n=$1 i tmp
    tmp=$(mktemp)
    sed "/^$HOSTS_BEGIN\$/,/^$HOSTS_END\$/d" /etc/hosts >"$tmp"
    {
        echo "$HOSTS_BEGIN"
        for ((i = 1; i <= n; i++)); do echo "$(node_ip "$i") $(node_name "$i")"; done
        echo "$HOSTS_END"
    } >>"$tmp"
    cat "$tmp" >/etc/hosts   # keep the inode: /etc/hosts may be a bind mount
    rm -f "$tmp"
}

net_down() {
    local name i tmp
    for name in $(ip netns list 2>/dev/null | awk '{print $1}' | grep '^mdxnode[0-9]*$'); do
        ip netns del "$name"
    done
    for i in $(ip -o link show 2>/dev/null | sed -n 's/^[0-9]*: \(mdxv[0-9]*\)@.*/\1/p'); do
        ip link del "$i" 2>/dev/null || true
    done
    ip link del "$BRIDGE" 2>/dev/null || true
    if grep -q "^$HOSTS_BEGIN\$" /etc/hosts; then
        tmp=$(mktemp)
        sed "/^$HOSTS_BEGIN\$/,/^$HOSTS_END\$/d" /etc/hosts >"$tmp"
        cat "$tmp" >/etc/hosts
        rm -f "$tmp"
    fi
}

# --- accounting: MariaDB + slurmdbd ----------------------------------------------------
db_start() {
    local d="$CDIR/mysql"
    if pid_alive "$CDIR/mariadbd.pid.ours"; then return; fi
    mkdir -p "$d"
    if [[ ! -d $d/mysql ]]; then
        mariadb-install-db --user=root --datadir="$d" --auth-root-authentication-method=socket \
            >"$LOGS/cluster-mariadb-install.log" 2>&1 \
            || { log_tail "$LOGS/cluster-mariadb-install.log"; die "mariadb-install-db failed"; }
    fi
    setsid mariadbd --user=root --datadir="$d" --socket="$CDIR/mysql.sock" --port=$DB_PORT \
        --bind-address=127.0.0.1 --pid-file="$CDIR/mariadbd.pid" --skip-name-resolve \
        --log-error="$LOGS/cluster-mariadb.log" </dev/null >/dev/null 2>&1 &
    echo $! >"$CDIR/mariadbd.pid.ours"
    wait_alive "MariaDB to answer" "$TIMEOUT" "$LOGS/cluster-mariadb.log" "$CDIR/mariadbd.pid.ours" \
        mariadb --socket="$CDIR/mysql.sock" -u root -e 'select 1'
    [[ -s $CDIR/db.pw ]] || (umask 077; head -c 18 /dev/urandom | base64 | tr -d '/+=' >"$CDIR/db.pw")
    local pw
    pw=$(cat "$CDIR/db.pw")
    mariadb --socket="$CDIR/mysql.sock" -u root <<SQL
CREATE USER IF NOT EXISTS 'slurm'@'127.0.0.1' IDENTIFIED BY '$pw';
ALTER USER 'slurm'@'127.0.0.1' IDENTIFIED BY '$pw';
GRANT ALL ON slurm_acct_db.* TO 'slurm'@'127.0.0.1';
FLUSH PRIVILEGES;
SQL
}

dbd_start() {
    pid_alive "$CDIR/slurmdbd.pid.ours" && return
    mkdir -p "$CDIR/etc"
    (umask 077; cat >"$DBDCONF" <<CONF
# Generated by ci/cluster.sh
AuthType=auth/munge
DbdHost=localhost
DbdAddr=127.0.0.1
DbdPort=$DBD_PORT
SlurmUser=root
StorageType=accounting_storage/mysql
StorageHost=127.0.0.1
StoragePort=$DB_PORT
StorageUser=slurm
StoragePass=$(cat "$CDIR/db.pw")
StorageLoc=slurm_acct_db
LogFile=$LOGS/cluster-slurmdbd.log
PidFile=$CDIR/slurmdbd.pid
CONF
    )
    # slurmdbd reads slurmdbd.conf from the directory of $SLURM_CONF
    setsid slurmdbd -D >>"$LOGS/cluster-slurmdbd.out" 2>&1 </dev/null &
    echo $! >"$CDIR/slurmdbd.pid.ours"
    wait_alive "slurmdbd to listen on $DBD_PORT" "$TIMEOUT" "$LOGS/cluster-slurmdbd.log:$LOGS/cluster-slurmdbd.out" \
        "$CDIR/slurmdbd.pid.ours" \
        bash -c "exec 3<>/dev/tcp/127.0.0.1/$DBD_PORT"
}

# --- Slurm -----------------------------------------------------------------------------
write_conf() {
    local n=$1 i cpus mem host
    host=$(hostname -s)
    cpus=$(nproc)
    mem=$(( $(awk '/MemTotal/ {print $2}' /proc/meminfo) / 1024 / (n + 1) ))
    mkdir -p "$CDIR/etc" "$CDIR/state" "$CDIR/spool"
    {
        echo "# Generated by ci/cluster.sh ($n nodes); edits are overwritten."
        cat <<CONF
ClusterName=mdxns
SlurmctldHost=$host($HOST_IP)
SlurmctldPort=$CTLD_PORT
SlurmdPort=$SLURMD_PORT
StateSaveLocation=$CDIR/state
SlurmdSpoolDir=$CDIR/spool/%n
SlurmctldPidFile=$CDIR/slurmctld.daemon.pid
SlurmdPidFile=$CDIR/slurmd.%n.daemon.pid
SlurmctldLogFile=$LOGS/cluster-slurmctld.log
SlurmdLogFile=$LOGS/cluster-slurmd.%n.log
TmpFS=$CDIR/nodetmp
JobRequeue=0
AccountingStorageType=accounting_storage/slurmdbd
AccountingStorageHost=localhost
AccountingStoragePort=$DBD_PORT
SlurmdTimeout=15
KillWait=5
MinJobAge=600
CONF
        slurm_conf_common
        # Every node declares GPUs as generic resources, as a GPU site's slurm.conf does
        # (GresTypes, the node's Gres, gres.conf): Slurm schedules them by count -- a job
        # asking for more than a node has is refused. A partition of them for the GPU
        # checks (nscluster:gpu) is made where a test needs it: ci/cluster.sh gpu-partition
        echo "GresTypes=gpu"
        # and accounts for them (sacct's AllocTRES names gres/gpu=N), as a GPU site does
        echo "AccountingStorageTRES=gres/gpu"
        # Each node is tagged with the physical host it stands for, two nodes a host, as a
        # cloud tenant tags VMs with their hypervisor (nscluster: extras.placement)
        for ((i = 1; i <= n; i++)); do
            echo "NodeName=$(node_name "$i") NodeAddr=$(node_ip "$i") CPUs=$cpus RealMemory=$mem Gres=gpu:$GPUS Features=host_ns-host-$(((i - 1) / PER_HOST + 1)) State=UNKNOWN"
        done
        echo "PartitionName=$PARTITION Nodes=mdxnode[1-$n] Default=YES MaxTime=INFINITE State=UP OverSubscribe=FORCE:4"
    } >"$CONF.new"
    mv "$CONF.new" "$CONF"
    # the GPUs each node's slurmd reports (AutoDetect off: no NVML here). Slurm 22.05 drops
    # a GPU without a device file and refuses a File= that is no character device: each
    # node's "GPUs" are character devices of the null device (1:3), nothing behind them --
    # the scheduling is by count, no job opens them (TaskPlugin=task/none: no cgroup
    # device confinement on these nodes)
    mkdir -p "$CDIR/gpudev"
    for ((i = 0; i < GPUS; i++)); do
        [[ -c $CDIR/gpudev/nvidia$i ]] || mknod "$CDIR/gpudev/nvidia$i" c 1 3
    done
    {
        echo "# Generated by ci/cluster.sh"
        echo "AutoDetect=off"
        echo "Name=gpu File=$CDIR/gpudev/nvidia[0-$((GPUS - 1))]"
    } >"$CDIR/etc/gres.conf"
}

start_slurmd() {
    local i=$1 name img
    name=$(node_name "$i")
    pid_alive "$CDIR/slurmd.$name.pid.ours" && return
    # nsenter --net + unshare --uts --mount (not `ip netns exec`, which remounts /sys and
    # breaks slurmd's cgroup detection); all exec, so $! is slurmd's own PID. Each node gets
    # its own TmpFS (PMIx keeps per-step directories there, which must not collide between
    # nodes): a per-node directory bound over $CDIR/nodetmp in the node's mount namespace,
    # and its own local disk at $LOCALDISK: an ext4 image mounted through a loop device
    # (a block device, so `degrade NODE io` can throttle it; detached when the node's last
    # process ends). Everything else, the project's directories included, is shared as a
    # cluster file system would be.
    mkdir -p "$CDIR/spool/$name" "$CDIR/tmp/$name" "$CDIR/nodetmp" "$CDIR/disks" "$LOCALDISK"
    chmod 1777 "$CDIR/tmp/$name"
    img=$(disk_image "$name")
    if [[ ! -s $img ]]; then
        truncate -s "${DISK_MB}M" "$img.new"
        mkfs.ext4 -q -F -L "$name" "$img.new" || die "mkfs.ext4 $img failed"
        mv "$img.new" "$img"
    fi
    setsid nsenter --net="/var/run/netns/$name" unshare --uts --mount --propagation private \
        sh -c "mount --bind '$CDIR/tmp/$name' '$CDIR/nodetmp' && mount -o loop '$img' '$LOCALDISK' && chmod 1777 '$LOCALDISK' && hostname $name && SLURM_CONF='$CONF' exec slurmd -D -N $name -f '$CONF'" \
        >>"$LOGS/cluster-slurmd.$name.out" 2>&1 </dev/null &
    echo $! >"$CDIR/slurmd.$name.pid.ours"
}

# the nodes' disks: their loop devices go when the last process of a node's mount
# namespace ends (autoclear); detach what is left, then remove the images
disks_down() {
    local img dev t
    for img in "$CDIR"/disks/mdxnode*.img; do
        [[ -e $img ]] || continue
        for ((t = 0; t < 20; t++)); do
            [[ -z $(losetup -n -O NAME -j "$img") ]] && break
            sleep 0.5
        done
        for dev in $(losetup -n -O NAME -j "$img"); do
            losetup -d "$dev" 2>/dev/null || log "cluster: $dev ($img) still in use"
        done
        rm -f "$img"
    done
}

idle_nodes() { sinfo -h -N -p "$PARTITION" -o '%N %T' 2>/dev/null | grep -c ' idle'; }

start() {
    require_root "ci/cluster.sh start"
    local n=${1:-${MDXBENCH_CLUSTER_NODES:-3}} i
    [[ $n =~ ^[0-9]+$ && $n -ge 2 && $n -le 16 ]] || die "node count '$n': give 2 to 16"
    mkdir -p "$CDIR" "$LOGS"
    [[ $PER_HOST =~ ^[0-9]+$ && $PER_HOST -ge 1 ]] || die "MDXBENCH_CLUSTER_NODES_PER_HOST '$PER_HOST': give 1 or more"
    if [[ -f $nodes_file && $(cat "$nodes_file") != "$n $PER_HOST" ]] && pid_alive "$CDIR/slurmctld.pid.ours"; then
        log "cluster: nodes (and nodes per host) change from $(cat "$nodes_file") to $n $PER_HOST: restarting the controller"
        stop_pid slurmctld "$CDIR/slurmctld.pid.ours"
    fi
    echo "$n $PER_HOST" >"$nodes_file"
    ensure_munge
    net_up "$n"
    # the network peer of the nodes (NetperfToPeer, `extras.network_peer` of nscluster):
    # a netserver on the host side of the bridge, one process per connection
    if ! pid_alive "$CDIR/netserver.pid.ours"; then
        setsid netserver -D -p "$PEER_PORT" -L "$HOST_IP" >>"$LOGS/cluster-netserver.out" 2>&1 </dev/null &
        echo $! >"$CDIR/netserver.pid.ours"
    fi
    if [[ -x $MDXBENCH_VENV/bin/minio ]]; then
        cluster_minio start
    else
        log "cluster: MinIO is not installed (ci/install.sh found no Go toolchain): nscluster's warp cases fail to reach $HOST_IP:$S3_PORT"
    fi
    db_start
    dbd_start
    write_conf "$n"
    if ! pid_alive "$CDIR/slurmctld.pid.ours"; then
        # -c: a test cluster starts clean -- a node left drained or down in the saved state
        # of an earlier run would keep it from ever becoming idle
        log "cluster: starting slurmctld on $HOST_IP:$CTLD_PORT (clean state)"
        setsid slurmctld -D -c -f "$CONF" >>"$LOGS/cluster-slurmctld.out" 2>&1 </dev/null &
        echo $! >"$CDIR/slurmctld.pid.ours"
    fi
    wait_alive "the cluster's slurmctld (scontrol ping)" "$TIMEOUT" \
        "$LOGS/cluster-slurmctld.log:$LOGS/cluster-slurmctld.out" "$CDIR/slurmctld.pid.ours" bash -c "scontrol ping | grep -q 'is UP'"
    sacctmgr -i add cluster mdxns >/dev/null 2>&1 || true
    for ((i = 1; i <= n; i++)); do start_slurmd "$i"; done
    wait_for "$n idle nodes in partition $PARTITION" "$TIMEOUT" \
        "$LOGS/cluster-slurmd.mdxnode1.log:$LOGS/cluster-slurmd.mdxnode1.out:$LOGS/cluster-slurmctld.log" \
        bash -c "[ \$(sinfo -h -N -p $PARTITION -o '%T' | grep -c idle) -ge $n ]"
    log "cluster: $n nodes idle in partition '$PARTITION': $(sinfo -h -p "$PARTITION" -o '%N')"
}

restart_node() {
    local name=$1 i=${1#mdxnode} t state
    [[ $i =~ ^[0-9]+$ ]] || die "no such node '$1'"
    start_slurmd "$i"
    # Wait for the node to be back in service: slurmd answers (no '*' after the state) and
    # Slurm no longer has it down, drained or failed -- resume it when it does.
    for ((t = 0; t < TIMEOUT; t++)); do
        state=$(sinfo -h -N -n "$name" -o '%T' 2>/dev/null | head -n 1)
        case $state in
            ''|*'*') ;;
            *down*|*drain*|*fail*) scontrol update nodename="$name" state=resume || true ;;
            *) log "cluster: $name is back in service ($state)"; return 0 ;;
        esac
        sleep 1
    done
    log_tail "$LOGS/cluster-slurmd.$name.log" 30
    squeue -w "$name" >&2 || true
    die "timed out after ${TIMEOUT}s waiting for $name to be back in service (last state: ${state:-unknown})"
}

stop() {
    local f
    local -a daemons=()
    # the nodes' slurmds and slurmctld together, then what they used (each waits for its
    # slowest, not for the sum)
    for f in "$CDIR"/slurmd.mdxnode*.pid.ours; do
        [[ -e $f ]] || continue
        daemons+=("$(basename "$f" .pid.ours):$f")
    done
    stop_pids 30 "${daemons[@]}" "slurmctld:$CDIR/slurmctld.pid.ours"
    for f in /sys/fs/cgroup/$CG_NAME-mdxnode* /sys/fs/cgroup/{cpu,blkio}/$CG_NAME-mdxnode*; do
        [[ -d $f ]] && rmdir "$f" 2>/dev/null || true     # degraded nodes' cgroups, now empty
    done
    disks_down
    stop_pid netserver "$CDIR/netserver.pid.ours" &
    cluster_minio stop &
    stop_pid slurmdbd "$CDIR/slurmdbd.pid.ours"
    wait
    stop_pid mariadbd "$CDIR/mariadbd.pid.ours"
    net_down
}

# --- degrading one node, reversibly ------------------------------------------------
# cpu PERCENT [PERIOD_MS]: a CPU quota (PERCENT of one CPU in every period of PERIOD_MS,
#   default 100 ms) on the node's slurmd, in a cgroup of our own; its jobs inherit it
#   (proctrack/linuxproc, task/none: job steps stay in slurmd's cgroup). cgroup v2
#   (cpu.max) or v1 (cpu.cfs_quota_us). A short period throttles short kernels too (a
#   STREAM kernel of 8 ms runs whole inside a 100 ms period's quota: its best time would
#   not see the quota).
# net RATE: a token-bucket rate limit (tc tbf, e.g. 50mbit) on both ends of the node's veth.
# io BYTES_PER_S: a read and write bandwidth limit (e.g. 20M) on the node's local disk (its
#   loop device) for slurmd and its jobs: cgroup v2 io.max or v1 blkio.throttle.*_bps_device
#   (direct I/O, as fio runs, is throttled; the page cache is not).
# restore: slurmd back to the root cgroups, the qdiscs removed.
CG_NAME=mdxbench-degrade
cgroup_v2() { [[ -f /sys/fs/cgroup/cgroup.controllers ]]; }
# cgroup_dir NODE CONTROLLER: our cgroup of the node for that controller
cgroup_dir() {
    if cgroup_v2; then echo "/sys/fs/cgroup/$CG_NAME-$1"
    else echo "/sys/fs/cgroup/$2/$CG_NAME-$1"; fi
}
cgroup_join() {     # cgroup_join DIR PID
    echo "$2" >"$1/cgroup.procs" || die "cannot move PID $2 into $1"
    grep -qx "$2" "$1/cgroup.procs" || die "PID $2 is not in $1 after the move"
}

node_index() { [[ $1 =~ ^mdxnode([0-9]+)$ ]] || die "no such node '$1'"; echo "${BASH_REMATCH[1]}"; }

disk_devno() {      # MAJ:MIN of the loop device under NODE's local disk
    local img dev
    img=$(disk_image "$1")
    dev=$(losetup -n -O NAME -j "$img" | head -n 1)
    [[ -n $dev ]] || die "$1: its local disk ($img) is on no loop device (is the node up?)"
    cat "/sys/block/${dev#/dev/}/dev"
}

degrade() {
    require_root "ci/cluster.sh degrade"
    local name=$1 what=$2 arg=${3:-} period=${4:-100} i cg pid devno bps
    i=$(node_index "$name")
    pid_alive "$CDIR/slurmd.$name.pid.ours" || die "degrade: slurmd of $name is not running"
    pid=$(cat "$CDIR/slurmd.$name.pid.ours")
    case $what in
        cpu)
            [[ $arg =~ ^[0-9]+$ && $arg -ge 1 ]] || die "degrade $name cpu PERCENT (of one CPU, >= 1)"
            [[ $period =~ ^[0-9]+$ && $period -ge 1 && $period -le 1000 ]] \
                || die "degrade $name cpu PERCENT PERIOD_MS: PERIOD_MS is 1 to 1000"
            cg=$(cgroup_dir "$name" cpu)
            mkdir -p "$cg"
            if cgroup_v2; then
                echo +cpu >/sys/fs/cgroup/cgroup.subtree_control 2>/dev/null || true
                echo "$((arg * period * 10)) $((period * 1000))" >"$cg/cpu.max"
            else echo $((period * 1000)) >"$cg/cpu.cfs_period_us"; echo $((arg * period * 10)) >"$cg/cpu.cfs_quota_us"; fi
            cgroup_join "$cg" "$pid"
            log "cluster: $name: slurmd (PID $pid) and its jobs limited to $arg% of one CPU in periods of $period ms ($cg)" ;;
        net)
            [[ $arg =~ ^[0-9]+[kmg]?bit$ ]] || die "degrade $name net RATE (e.g. 50mbit)"
            tc qdisc replace dev "mdxv$i" root tbf rate "$arg" burst 32kbit latency 100ms
            ip netns exec "$name" tc qdisc replace dev eth0 root tbf rate "$arg" burst 32kbit latency 100ms
            log "cluster: $name: network limited to $arg each way (tc tbf on mdxv$i and its eth0)" ;;
        io)
            [[ $arg =~ ^[0-9]+[KMG]?$ ]] || die "degrade $name io BYTES_PER_S (e.g. 20M)"
            bps=$(numfmt --from=iec "$arg")
            devno=$(disk_devno "$name")
            cg=$(cgroup_dir "$name" blkio)
            mkdir -p "$cg"
            if cgroup_v2; then
                echo +io >/sys/fs/cgroup/cgroup.subtree_control 2>/dev/null || true
                echo "$devno rbps=$bps wbps=$bps" >"$cg/io.max"
            else
                echo "$devno $bps" >"$cg/blkio.throttle.read_bps_device"
                echo "$devno $bps" >"$cg/blkio.throttle.write_bps_device"
            fi
            cgroup_join "$cg" "$pid"
            log "cluster: $name: local disk (device $devno) limited to $arg bytes/s each way for slurmd (PID $pid) and its jobs ($cg)" ;;
        *) die "degrade NODE cpu PERCENT | net RATE | io BYTES_PER_S" ;;
    esac
}

restore() {
    require_root "ci/cluster.sh restore"
    local name=$1 i cg p
    i=$(node_index "$name")
    for cg in $(cgroup_dir "$name" cpu) $(cgroup_dir "$name" blkio); do
        [[ -d $cg ]] || continue
        # every process still in it (slurmd, and jobs it started meanwhile) goes back
        while read -r p; do echo "$p" >"$(dirname "$cg")/cgroup.procs" 2>/dev/null || true; done <"$cg/cgroup.procs"
        rmdir "$cg" 2>/dev/null || log "cluster: $name: $cg not removed (a process is still leaving it)"
    done
    tc qdisc del dev "mdxv$i" root 2>/dev/null || true
    ip netns exec "$name" tc qdisc del dev eth0 root 2>/dev/null || true
    log "cluster: $name: restored (no CPU quota, no I/O limit, no rate limit)"
}

# queues N [NODE...]: N queue pairs on both ends of each node's veth (ethtool -L), as a
# VM flavour with (2) or without (1: no virtio multiqueue) several; the nodes start with 2.
queues() {
    require_root "ci/cluster.sh queues"
    local n=$1 name i
    shift
    [[ $n =~ ^[12]$ ]] || die "queues N [NODE...]: N is 1 or 2 (the veths are made with 2)"
    (($#)) || set -- $(ip netns list 2>/dev/null | awk '{print $1}' | grep '^mdxnode[0-9]*$' | sort -V)
    (($#)) || die "queues: no node is up"
    for name in "$@"; do
        i=$(node_index "$name")
        ethtool -L "mdxv$i" rx "$n" tx "$n" || die "queues: ethtool -L mdxv$i rx $n tx $n failed"
        ip netns exec "$name" ethtool -L eth0 rx "$n" tx "$n" \
            || die "queues: ethtool -L eth0 rx $n tx $n failed in $name"
    done
    log "cluster: $n queue(s) each way on the NICs of $*"
}

# gpu_partition [on|off]: a Slurm partition `gpu` of every node (their GRES gpu), made and
# removed while the cluster runs (scontrol): nscluster:gpu submits there. Not in
# slurm.conf: a second partition of the same nodes would list each node twice in sinfo
gpu_partition() {
    local nodes
    nodes=$(SLURM_CONF=$CONF sinfo -h -p "$PARTITION" -o '%N' 2>/dev/null) || true
    [[ -n $nodes ]] || die "gpu-partition: the cluster is not running (no node in $PARTITION)"
    case ${1:-on} in
        on) SLURM_CONF=$CONF scontrol show partition gpu >/dev/null 2>&1 \
                || SLURM_CONF=$CONF scontrol create PartitionName=gpu "Nodes=$nodes" \
                    MaxTime=INFINITE State=UP OverSubscribe=FORCE:4 \
                || die "gpu-partition: scontrol create failed"
            log "cluster: partition gpu of $nodes ($GPUS GRES gpu each)" ;;
        off) SLURM_CONF=$CONF scontrol delete PartitionName=gpu 2>/dev/null || true ;;
        *) die "gpu-partition: on or off" ;;
    esac
}

status() {
    local rc=0 f
    for f in mariadbd slurmdbd slurmctld; do
        if pid_alive "$CDIR/$f.pid.ours"; then echo "$f: running (PID $(cat "$CDIR/$f.pid.ours"))"
        else echo "$f: not running"; rc=3; fi
    done
    for f in "$CDIR"/slurmd.mdxnode*.pid.ours; do
        [[ -e $f ]] || continue
        n=${f##*/slurmd.}; n=${n%.pid.ours}
        if pid_alive "$f"; then echo "slurmd $n: running (PID $(cat "$f"))"; else echo "slurmd $n: not running"; rc=3; fi
    done
    ip netns list 2>/dev/null | grep -q mdxnode && echo "namespaces: $(ip netns list | awk '{print $1}' | grep mdxnode | tr '\n' ' ')"
    [[ -f $CONF ]] && sinfo -p "$PARTITION" 2>/dev/null || true
    return $rc
}

case ${1:-} in
    start) start "${2:-}" ;;
    stop) stop ;;
    status) status ;;
    env) echo "export SLURM_CONF=$CONF" ;;
    restart-node) restart_node "${2:?node name}" ;;
    degrade) degrade "${2:?node name}" "${3:?cpu, net or io}" "${4:-}" "${5:-}" ;;
    restore) restore "${2:?node name}" ;;
    queues) shift; queues "$@" ;;
    gpu-partition) gpu_partition "${2:-on}" ;;
    *) die "usage: ci/cluster.sh start [N]|stop|status|env|restart-node NAME|degrade NAME cpu PERCENT [PERIOD_MS]|net RATE|io BYTES_PER_S|restore NAME|queues N [NAME...]|gpu-partition [on|off]" ;;
esac
