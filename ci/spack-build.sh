#!/usr/bin/env bash
# Build a system's Spack environment (spack/<system>) and its view, which the site config's
# `spack` environment puts first on PATH.
# Usage: ci/spack-build.sh SYSTEM [--mirror DIR|URL] [--binary-only] [--create-mirror DIR] [-j N]
#   --mirror DIR|URL     use this source/binary mirror (compute nodes without internet)
#   --binary-only        install only from build caches (no source builds)
#   --create-mirror DIR  on a connected machine: fetch every source of the environment into
#                        DIR (then copy DIR to the site and use --mirror DIR there)
# Spack must be on PATH (source share/spack/setup-env.sh). Nothing else is downloaded.
source "$(dirname "$0")/lib.sh"

system=${1:-}
[[ -n $system ]] || die "usage: ci/spack-build.sh SYSTEM [--mirror DIR|URL] [--binary-only] [--create-mirror DIR] [-j N]"
shift
env_dir="$MDXBENCH_ROOT/spack/$system"
[[ -f $env_dir/spack.yaml ]] || die "no Spack environment for system '$system' ($env_dir/spack.yaml); known: $(ls "$MDXBENCH_ROOT/spack" | grep -v common | tr '\n' ' ')"
command -v spack >/dev/null || die "spack is not on PATH: source <spack>/share/spack/setup-env.sh first"

mirror='' binary_only=0 create='' jobs=''
while (($#)); do
    case $1 in
        --mirror) mirror=${2:?--mirror needs a directory or URL}; shift 2 ;;
        --binary-only) binary_only=1; shift ;;
        --create-mirror) create=${2:?--create-mirror needs a directory}; shift 2 ;;
        -j) jobs=${2:?-j needs a number}; shift 2 ;;
        *) die "unknown option '$1'" ;;
    esac
done

# Validate offline first: a typo in a spec fails here, with the file and the closest names.
"$MDXBENCH_VENV/bin/python" "$MDXBENCH_ROOT/spack/tools/spackcheck.py" "$env_dir"

spack -e "$env_dir" concretize --fresh --force
if [[ -n $create ]]; then
    spack -e "$env_dir" mirror create --directory "$create" --all
    log "sources of spack/$system are in $create: copy it to the site and use --mirror"
    exit 0
fi
if [[ -n $mirror ]]; then
    [[ $mirror == *://* ]] || mirror="file://$(cd "$mirror" && pwd)"
    spack -e "$env_dir" mirror list | grep -q "^mdxbench-site " \
        || spack -e "$env_dir" mirror add mdxbench-site "$mirror"
fi
args=()
((binary_only)) && args+=(--use-buildcache only)
[[ -n $jobs ]] && args+=(-j "$jobs")
spack -e "$env_dir" install --fail-fast "${args[@]}"
log "spack/$system built; view: $env_dir/.spack-env/view (the site config's 'spack' environment)"
