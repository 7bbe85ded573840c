#!/usr/bin/env bash
# A CUDA toolkit to compile the GPU benchmarks on a machine without a GPU (compiling needs no
# device): NVIDIA's CUDA 13.0 wheels from PyPI, pinned (nvcc 13.0.88, the nvcc of the H200
# whose outputs are the GPU fixtures), installed into one prefix and arranged as a toolkit
# there, for Spack's `cuda` external (spack/gpubuild.yaml, written here):
#   - the wheels share one tree, nvidia/cu13/{bin,include,lib,nvvm}: the prefix;
#   - nvcc.profile links from lib64/ (lib64 -> lib); the driver's libraries (the CUDA
#     driver API, NVML: nvbandwidth links both) are linked against lib64/stubs/ on a
#     machine without the driver, and no wheel ships those stubs: each is built here from
#     the toolkit's own header (cuda.h, nvml.h: every function it declares, each
#     returning an error) with the real library's soname (libcuda.so.1,
#     libnvidia-ml.so.1) -- what the toolkit's own stubs are: a binary links against them
#     and loads the driver's at run time;
#   - libcudart.so (the unversioned name a link line asks for) -> libcudart.so.13.
#   - cuBLAS (gpu-burn's DGEMM) is a wheel of the same tree; NCCL (nccl-tests') one of its
#     own, nvidia/nccl: its own external; each gets the unversioned name a link line asks
#     for (libcublas.so, libnccl.so).
# cuobjdump (13.2.51, the oldest wheel of it) lists the architectures a binary holds.
# Usage: ci/cuda.sh setup | prefix | scope     (scope: the Spack configuration scope)
source "$(dirname "$0")/lib.sh"

CUDA_VERSION=13.0.88
CUDA_WHEELS=(nvidia-cuda-nvcc==13.0.88 nvidia-cuda-crt==13.0.88 nvidia-nvvm==13.0.88
             nvidia-cuda-runtime==13.0.88 nvidia-cuda-cccl==13.0.85 nvidia-nvml-dev==13.0.87
             nvidia-cuda-cuobjdump==13.2.51 nvidia-cublas==13.0.2.14
             nvidia-nccl-cu13==2.32.3)
NCCL_VERSION=2.32.3
CUDA_HOME=$MDXBENCH_STATE_DIR/cuda/$CUDA_VERSION
PREFIX=$CUDA_HOME/nvidia/cu13
NCCL_PREFIX=$CUDA_HOME/nvidia/nccl
SCOPE=$MDXBENCH_STATE_DIR/cuda/spack-scope

setup() {
    local want stamp=$CUDA_HOME/.mdxbench-stamp
    want=$(printf '%s\n' "${CUDA_WHEELS[@]}" | sha256sum | cut -d' ' -f1)
    if [[ -x $PREFIX/bin/nvcc && $(cat "$stamp" 2>/dev/null) == "$want" ]]; then
        log "CUDA $CUDA_VERSION (PyPI's wheels) present in $PREFIX"
    else
        log "CUDA $CUDA_VERSION: installing PyPI's wheels ${CUDA_WHEELS[*]} into $CUDA_HOME"
        rm -rf "$CUDA_HOME" && mkdir -p "$CUDA_HOME" "$MDXBENCH_STATE_DIR/logs"
        "$MDXBENCH_VENV/bin/pip" install -q --no-deps --target "$CUDA_HOME" "${CUDA_WHEELS[@]}" \
            >"$MDXBENCH_STATE_DIR/logs/cuda.log" 2>&1 \
            || { log_tail "$MDXBENCH_STATE_DIR/logs/cuda.log"; die "pip install of the CUDA wheels failed"; }
        [[ -x $PREFIX/bin/nvcc && -f $PREFIX/include/cuda.h ]] \
            || die "the CUDA wheels left no $PREFIX/bin/nvcc or include/cuda.h"
        ln -sfn lib "$PREFIX/lib64"
        ln -sf libcudart.so.13 "$PREFIX/lib/libcudart.so"
        ln -sf libcublas.so.13 "$PREFIX/lib/libcublas.so"
        ln -sf libnccl.so.2 "$NCCL_PREFIX/lib/libnccl.so"
        stub cuda.h cu libcuda
        stub nvml.h nvml libnvidia-ml
        echo "$want" >"$stamp"
    fi
    write_scope
    log "CUDA: $("$PREFIX/bin/nvcc" --version | tail -n 2 | head -n 1)"
}

# stub HEADER PREFIX LIB: LIB.so in lib/stubs, soname LIB.so.1, a function for every
# name PREFIX<Capital>... that HEADER declares as a function (see above)
stub() {
    local header=$1 prefix=$2 lib=$3 src=$CUDA_HOME/$3-stub.c
    mkdir -p "$PREFIX/lib/stubs"
    {
        echo "/* written by ci/cuda.sh: a link stub of $lib.so.1 (every function $header declares) */"
        gcc -E -P -I"$PREFIX/include" -x c "$PREFIX/include/$header" \
            | grep -oE "\\b$prefix[A-Z][A-Za-z0-9_]*[[:space:]]*\\(" | tr -d '( \t' | sort -u \
            | sed 's/.*/int &(void) { return 999; }/'
    } >"$src"
    gcc -shared -fPIC -Wl,-soname,"$lib.so.1" -o "$PREFIX/lib/stubs/$lib.so" "$src"
    log "CUDA: $lib stub with $(grep -c '^int ' "$src") functions in $PREFIX/lib/stubs/$lib.so"
}

# Spack's externals for the GPU builds: this CUDA, its NCCL, Debian's Boost.Program_options
# (libboost-program-options-dev, nvbandwidth's) and Debian's Open MPI (libopenmpi-dev,
# nccl-tests' across nodes); a configuration scope of its own, over each environment's
# site.yaml (`::`: the site's entries replaced, not added to)
write_scope() {
    local boost ompi
    boost=$(dpkg-query -W -f='${Version}' libboost-program-options-dev 2>/dev/null | sed -E 's/^([0-9]+\.[0-9]+)\..*/\1.0/') \
        || die "libboost-program-options-dev is not installed (ci/install.sh installs it)"
    ompi=$(dpkg-query -W -f='${Version}' libopenmpi-dev 2>/dev/null | sed -E 's/^([0-9]+\.[0-9]+\.[0-9]+).*/\1/') \
        || die "libopenmpi-dev is not installed (ci/install.sh installs it)"
    mkdir -p "$SCOPE"
    cat >"$SCOPE/packages.yaml" <<YAML
# written by ci/cuda.sh: the compile-only CUDA and NCCL of PyPI's wheels, Debian's Boost
# and Open MPI
packages:
  cuda::
    buildable: false
    externals:
      - spec: cuda@$CUDA_VERSION
        prefix: $PREFIX
  boost::
    buildable: false
    externals:
      - spec: boost@$boost +program_options
        prefix: /usr
  nccl::
    buildable: false
    externals:
      - spec: nccl@$NCCL_VERSION
        prefix: $NCCL_PREFIX
  openmpi::
    buildable: false
    externals:
      - spec: openmpi@$ompi schedulers=slurm fabrics=ofi
        prefix: /usr
YAML
}

case ${1:-} in
    setup) setup ;;
    prefix) echo "$PREFIX" ;;
    scope) echo "$SCOPE" ;;
    *) die "usage: ci/cuda.sh setup | prefix | scope" ;;
esac
