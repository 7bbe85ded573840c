#!/bin/sh
# Print the network interface used to reach $1 and its queue counts, as one line:
#   mdxbench-nic: dev=eth0 rx_queues=4 tx_queues=4 combined=4
# virtio-net multiqueue is on when the queue counts are above 1 (the mdx II paper: without
# it a VM is stuck near 13-32 Gbit/s).
target=${1:?usage: nicinfo.sh ADDRESS}
addr=$(getent ahostsv4 "$target" | awk 'NR==1 {print $1}')
[ -n "$addr" ] || addr=$target
dev=$(ip -o route get "$addr" 2>/dev/null | sed -n 's/.* dev \([^ ]*\).*/\1/p')
[ -n "$dev" ] || dev=unknown
rx=$(ls -d /sys/class/net/"$dev"/queues/rx-* 2>/dev/null | wc -l)
tx=$(ls -d /sys/class/net/"$dev"/queues/tx-* 2>/dev/null | wc -l)
combined=$(ethtool -l "$dev" 2>/dev/null | awk '/Current hardware settings/ {c=1} c && /Combined:/ {print $2; exit}')
echo "mdxbench-nic: dev=$dev address=$addr rx_queues=$rx tx_queues=$tx combined=${combined:-n/a}"
