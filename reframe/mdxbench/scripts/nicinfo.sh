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
# The queue counts ethtool reports (asked through the process's own network namespace;
# virtio-net and most NICs say Combined, veth says RX and TX), else /sys's queue entries
# (which show the network namespace that mounted /sys, not always the process's own)
set -- $(ethtool -l "$dev" 2>/dev/null | awk '/Current hardware settings/ {c=1}
    c && /^RX:/ {rx=$2} c && /^TX:/ {tx=$2} c && /^Combined:/ {cb=$2}
    END {print (rx ? rx : "n/a"), (tx ? tx : "n/a"), (cb ? cb : "n/a")}')
num() { case $1 in ''|*[!0-9]*) return 1 ;; esac; [ "$1" -gt 0 ]; }
combined=${3:-n/a}
if num "$1"; then rx=$1; elif num "$combined"; then rx=$combined; else rx=$(ls -d /sys/class/net/"$dev"/queues/rx-* 2>/dev/null | wc -l); fi
if num "$2"; then tx=$2; elif num "$combined"; then tx=$combined; else tx=$(ls -d /sys/class/net/"$dev"/queues/tx-* 2>/dev/null | wc -l); fi
echo "mdxbench-nic: dev=$dev address=$addr rx_queues=$rx tx_queues=$tx combined=$combined"
