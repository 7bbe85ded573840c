#!/usr/bin/env bash
# Vetting one GPU node before it joins Slurm, with no network on the node (docs/checks.md,
# "Vetting one GPU node"): on a connected machine of the node's OS and Python, make a
# directory to copy to the node -- the checks and their library from this tree (git
# archive of checks/, reframe/, site-configs/), ReFrame's wheel and its requirements but
# its analytics (reframe-hpc pinned as pyproject.toml pins it; no polars), the GPU
# benchmarks' binaries where given (--binaries DIR: e.g. spack/gpunode's view, built for
# the node's architecture; nccl-tests and gpu-burn load the node's NCCL and the CUDA
# toolkit's cuBLAS, which a GPU node's image has), and vet.sh, which on the node makes a venv from the wheels
# alone (pip --no-index) and runs
#     reframe -c checks/gpu -r --system gpunode
# (ReFrame's local scheduler, the GPU count from the node's nvidia-smi). Prints its size;
# fails where it is over MDXBENCH_BUNDLE_MAX_MIB (60).
# Usage: ci/gpunode-bundle.sh OUT_DIR [--binaries DIR]
source "$(dirname "$0")/lib.sh"

out=${1:?usage: ci/gpunode-bundle.sh OUT_DIR [--binaries DIR]}
shift
bins=''
while (($#)); do
    case $1 in
        --binaries) bins=${2:?--binaries needs a directory}; shift 2 ;;
        *) die "unknown option '$1'" ;;
    esac
done
max=${MDXBENCH_BUNDLE_MAX_MIB:-60}
pin=$(grep -oE 'reframe-hpc==[0-9.]+' "$MDXBENCH_ROOT/pyproject.toml") \
    || die "pyproject.toml pins no reframe-hpc"
python=${MDXBENCH_PYTHON:-python3}
rm -rf "$out" && mkdir -p "$out/tree" "$out/wheels" "$out/bin"
# the tree as committed (no state, no tests), the working tree's changes left out
git -C "$MDXBENCH_ROOT" archive --format=tar HEAD checks reframe site-configs | tar -x -C "$out/tree"
# ReFrame's wheel, then its requirements but those its no-analytics extra drops (pip keeps
# a requirement marked `extra != "no-analytics"` whatever the extras asked: polars, 45 MiB)
"$python" -m pip download -q --no-deps --only-binary=:all: -d "$out/wheels" "$pin" \
    >"$out/pip-download.log" 2>&1 || { log_tail "$out/pip-download.log"; die "pip download $pin failed"; }
mapfile -t reqs < <("$python" - "$out/wheels"/reframe_hpc-*.whl <<'PY'
import sys, zipfile
with zipfile.ZipFile(sys.argv[1]) as z:
    meta = next(n for n in z.namelist() if n.endswith('.dist-info/METADATA'))
    for line in z.read(meta).decode().splitlines():
        if line.startswith('Requires-Dist: '):
            req, _, marker = line[len('Requires-Dist: '):].partition(';')
            if 'extra' not in marker:
                print(req.strip())
PY
)
"$python" -m pip download -q --only-binary=:all: -d "$out/wheels" "${reqs[@]}" \
    >>"$out/pip-download.log" 2>&1 || { log_tail "$out/pip-download.log"; die "pip download of ReFrame's requirements failed"; }
rm -f "$out/pip-download.log"
if [[ -n $bins ]]; then
    for b in cuda-stream nvbandwidth p2pBandwidthLatencyTest all_reduce_perf all_gather_perf \
             sendrecv_perf gpu_burn; do
        [[ -x $bins/$b ]] || die "--binaries $bins: no $b"
        cp -L "$bins/$b" "$out/bin/"
    done
    # gpu-burn's compare kernel, beside it (GpuBurn passes it with -c): in DIR, or in the
    # share/ of the view or prefix DIR is the bin/ of
    fatbin=$bins/compare.fatbin
    [[ -f $fatbin ]] || fatbin=$bins/../share/gpu-burn/compare.fatbin
    [[ -f $fatbin ]] || die "--binaries $bins: no compare.fatbin (gpu-burn's) there or in ../share/gpu-burn"
    cp -L "$fatbin" "$out/bin/compare.fatbin"
fi
cat >"$out/vet.sh" <<'VET'
#!/bin/sh
# vet.sh [reframe options]: this node's GPUs, before it joins Slurm, with no network:
# a venv from the wheels alone, then reframe -c checks/gpu -r --system gpunode.
# MDXBENCH_GPUNODE_* declare what the node should be (docs/checks.md); the GPU count is
# nvidia-smi's unless MDXBENCH_GPUNODE_GPUS is set.
set -eu
here=$(cd "$(dirname "$0")" && pwd)
state=${MDXBENCH_STATE_DIR:-$here/state}
if [ ! -x "$state/venv/bin/reframe" ]; then
    python3 -m venv "$state/venv"
    # every wheel as it is, nothing resolved (ReFrame's analytics, polars, left out)
    "$state/venv/bin/pip" install -q --no-index --no-deps "$here"/wheels/*.whl
fi
export MDXBENCH_STATE_DIR="$state" RFM_CONFIG_FILES="$here/tree/site-configs/settings.py"
export PATH="$here/bin:$PATH"
cd "$here/tree"
exec "$state/venv/bin/reframe" -c checks/gpu -r --system gpunode "$@"
VET
chmod 755 "$out/vet.sh"
mib=$(( $(du -sk "$out" | cut -f1) / 1024 ))
log "bundle $out: $mib MiB ($(ls "$out/wheels" | wc -l) wheels, $(ls "$out/bin" | wc -l) binaries); on the node: sh vet.sh"
((mib <= max)) || die "bundle $out is $mib MiB, over $max MiB"
