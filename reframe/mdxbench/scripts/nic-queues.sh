#!/bin/sh
# Set the queue count of the network interface that reaches PEER to N, with the command the
# site declares for it (partition extras.nic_queues.set, in $MDXBENCH_NIC_SET_QUEUES: {dev}
# and {n} are replaced), and print one line:
#   mdxbench-queues: host=node1 dev=eth0 before=16 after=1
# Fails, saying why, when the command fails or the count is not N afterwards.
peer=${1:?usage: nic-queues.sh PEER N}
n=${2:?usage: nic-queues.sh PEER N}
[ -n "${MDXBENCH_NIC_SET_QUEUES:-}" ] || { echo "mdxbench: no command to set NIC queues (extras.nic_queues.set)" >&2; exit 1; }
addr=$(getent ahostsv4 "$peer" | awk 'NR==1 {print $1}')
[ -n "$addr" ] || addr=$peer
dev=$(ip -o route get "$addr" 2>/dev/null | sed -n 's/.* dev \([^ ]*\).*/\1/p')
[ -n "$dev" ] || { echo "mdxbench: $(hostname): no interface reaches $peer" >&2; exit 1; }
# the receive queues ethtool reports (this network namespace's own), else /sys's
count() {
    c=$(ethtool -l "$dev" 2>/dev/null | awk '/Current hardware settings/ {h=1}
        h && /^RX:/ && $2 ~ /^[0-9]+$/ && $2 > 0 {print $2; exit}
        h && /^Combined:/ && $2 ~ /^[0-9]+$/ && $2 > 0 {print $2; exit}')
    [ -n "$c" ] && echo "$c" || ls -d /sys/class/net/"$dev"/queues/rx-* 2>/dev/null | wc -l
}
before=$(count)
cmd=$(printf '%s' "$MDXBENCH_NIC_SET_QUEUES" | sed "s/{dev}/$dev/g; s/{n}/$n/g")
sh -c "$cmd" || { echo "mdxbench: $(hostname): '$cmd' failed" >&2; exit 1; }
after=$(count)
echo "mdxbench-queues: host=$(hostname) dev=$dev before=$before after=$after"
[ "$after" -eq "$n" ] || { echo "mdxbench: $(hostname): $dev has $after queues after '$cmd', not $n" >&2; exit 1; }
