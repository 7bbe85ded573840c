#!/bin/sh
# gpu-xid.sh: the NVIDIA driver's Xid events since boot from the kernel log, for the GPU
# conformance check (mdxbench.parsers.nvsmi.parse_xid). Prints the log's "NVRM: Xid" lines,
# then "# read: HOW" -- or, where no way of reading the kernel log works, "# unreadable:
# WHY": dmesg refused (kernel.dmesg_restrict=1 for a user without CAP_SYSLOG), and the
# journal shows no kernel message (a user outside the systemd-journal and adm groups sees
# only their own; no journald). A kernel log that was read is never empty: the kernel
# writes its first messages at boot.
if out=$(dmesg 2>&1) && [ -n "$out" ]; then
    printf '%s\n' "$out" | grep 'NVRM: Xid'
    echo "# read: dmesg (kernel ring buffer since boot)"
    exit 0
fi
why="dmesg: $(printf '%s' "${out:-printed nothing}" | head -n 1)"
if ! command -v journalctl >/dev/null 2>&1; then
    echo "# unreadable: $why; journalctl: not installed"
    exit 0
fi
if out=$(journalctl -k -b -q --no-pager 2>&1) && [ -n "$out" ] &&
    ! printf '%s' "$out" | grep -q '^No journal files'; then
    printf '%s\n' "$out" | grep 'NVRM: Xid'
    echo "# read: journalctl -k -b (kernel messages of this boot)"
    exit 0
fi
echo "# unreadable: $why; journalctl -k -b: $(printf '%s' "${out:-no kernel message visible to $(id -un)}" | head -n 1)"
