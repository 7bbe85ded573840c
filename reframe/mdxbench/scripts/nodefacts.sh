#!/bin/sh
# Print what this node is, as `mdxbench-fact: key=value` lines, for the conformance check
# (checks/compute/conformance.py): CPUs, threads per core, sockets, CPU model, memory,
# kernel release, the queue counts of a network interface, and for each storage target
# whether its directory exists, the file system type under it and that file system's
# mount point (findmnt, util-linux).
# Usage: nodefacts.sh [--nic DEV] [NAME=PATH ...]
nic=
if [ "$1" = --nic ]; then nic=$2; shift 2; fi
fact() { printf 'mdxbench-fact: %s=%s\n' "$1" "$2"; }
fact hostname "$(hostname)"
fact lscpu_version "$(lscpu --version)"
fact cpus "$(nproc --all)"
LC_ALL=C lscpu | awk -F: '
    /^Thread\(s\) per core:/ {gsub(/^ +/, "", $2); print "mdxbench-fact: threads_per_core=" $2}
    /^Socket\(s\):/          {gsub(/^ +/, "", $2); print "mdxbench-fact: sockets=" $2}
    /^Model name:/           {gsub(/^ +/, "", $2); print "mdxbench-fact: cpu_model=" $2}'
fact mem_kib "$(awk '/^MemTotal:/ {print $2}' /proc/meminfo)"
fact kernel "$(uname -r)"
if [ -n "$nic" ]; then
    if [ -d "/sys/class/net/$nic" ]; then
        fact "nic.$nic.rx_queues" "$(ls -d /sys/class/net/"$nic"/queues/rx-* 2>/dev/null | wc -l)"
        fact "nic.$nic.combined" "$(ethtool -l "$nic" 2>/dev/null | awk '/Current hardware settings/ {c=1} c && /Combined:/ {print $2; exit}')"
    else
        fact "nic.$nic.rx_queues" missing
    fi
fi
for t in "$@"; do
    name=${t%%=*} path=${t#*=}
    if [ -d "$path" ]; then
        fact "target.$name" "$(findmnt -n -o FSTYPE -T "$path" || stat -f -c %T "$path")"
        fact "target.$name.mount" "$(findmnt -n -o TARGET -T "$path")"
    else
        fact "target.$name" missing
    fi
done
echo "mdxbench-facts: end"
