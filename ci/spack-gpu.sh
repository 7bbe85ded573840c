#!/usr/bin/env bash
# Build the GPU benchmarks of the GPU systems' Spack environments -- spack/mdx1's for the
# A100 (cuda_arch=80) and spack/gpunode's for the H100/H200 (cuda_arch=90) -- with real
# Spack and the compile-only CUDA of ci/cuda.sh: what CI does to show that each builds for
# the architecture it names (compiling needs no GPU). Each environment is concretized on a
# copy of spack/ in the state directory (the checkout's lockfiles and views stay a site's),
# with ci/cuda.sh's scope (its CUDA and Boost) over the environment's own externals, and
# only its GPU roots are installed. Writes $MDXBENCH_STATE_DIR/spack/gpu-build/binaries.tsv:
# environment, package, cuda_arch, binary -- one line per benchmark.
# Usage: ci/spack-gpu.sh [-j N]
source "$(dirname "$0")/lib.sh"

jobs=()
[[ ${1:-} == -j ]] && jobs=(-j "${2:?-j needs a number}")
spack=$(bash "$MDXBENCH_ROOT/ci/spack.sh" path 2>/dev/null) \
    || die "no Spack (ci/spack.sh setup, or a spack on PATH)"
bash "$MDXBENCH_ROOT/ci/cuda.sh" setup
cuda_scope=$(bash "$MDXBENCH_ROOT/ci/cuda.sh" scope)
mirror_scope=$MDXBENCH_STATE_DIR/spack/scope
work=$MDXBENCH_STATE_DIR/spack/gpu-build
mkdir -p "$work" "$MDXBENCH_STATE_DIR/logs"
# the environments and what they include, as they are in the checkout
rm -rf "$work/spack" && mkdir -p "$work/spack"
cp -r "$MDXBENCH_ROOT/spack/common" "$MDXBENCH_ROOT/spack/repo" "$work/spack/"
scopes=(-C "$cuda_scope")
[[ -d $mirror_scope ]] && scopes=(-C "$mirror_scope" "${scopes[@]}")
out=$work/binaries.tsv.tmp
: >"$out"
# GPU roots: the packages of the `gpu` definition (spack/common/definitions.yaml)
roots=(babelstream nvbandwidth cuda-samples-p2p nccl-tests gpu-burn)
# the file of each that holds its GPU code, in its prefix (gpu-burn's is the fatbin it loads)
declare -A binary=([babelstream]=bin/cuda-stream [nvbandwidth]=bin/nvbandwidth
                   [cuda-samples-p2p]=bin/p2pBandwidthLatencyTest
                   [nccl-tests]=bin/all_reduce_perf
                   [gpu-burn]=share/gpu-burn/compare.fatbin)
envs=(mdx1 gpunode)
sp() { local env=$1; shift; "$spack" "${scopes[@]}" -e "$work/spack/$env" "$@"; }
# both concretized at once (one core each), then built one after the other
t0=$SECONDS
pids=()
for env in "${envs[@]}"; do
    mkdir -p "$work/spack/$env"
    cp "$MDXBENCH_ROOT/spack/$env"/*.yaml "$work/spack/$env/"
    sp "$env" concretize --fresh --force >"$MDXBENCH_STATE_DIR/logs/spack-gpu-$env-concretize.log" 2>&1 &
    pids+=($!)
done
for k in "${!envs[@]}"; do
    env=${envs[$k]}
    wait "${pids[$k]}" || { log_tail "$MDXBENCH_STATE_DIR/logs/spack-gpu-$env-concretize.log" 60; die "spack -e spack/$env concretize (GPU build) failed"; }
    "$MDXBENCH_VENV/bin/python" "$MDXBENCH_ROOT/spack/tools/spackcheck.py" --lock "$work/spack/$env/spack.lock"
done
log "spack/${envs[*]}: concretized in $((SECONDS - t0)) s"
for env in "${envs[@]}"; do
    t0=$SECONDS
    sp "$env" install --fail-fast "${jobs[@]}" "${roots[@]}" >"$MDXBENCH_STATE_DIR/logs/spack-gpu-$env-install.log" 2>&1 \
        || { log_tail "$MDXBENCH_STATE_DIR/logs/spack-gpu-$env-install.log" 80; die "spack -e spack/$env install ${roots[*]} (GPU build) failed"; }
    log "spack/$env: GPU roots (${roots[*]}) built in $((SECONDS - t0)) s"
    for r in "${roots[@]}"; do
        arch=$(sp "$env" find --format '{variants.cuda_arch}' "$r" | grep -oE '[0-9]+' | paste -sd, -)
        prefix=$(sp "$env" location -i "$r")
        printf '%s\t%s\t%s\t%s\n' "$env" "$r" "$arch" "$prefix/${binary[$r]}" >>"$out"
    done
done
mv "$out" "$work/binaries.tsv"
log "GPU benchmarks built: $work/binaries.tsv"
