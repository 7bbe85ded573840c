#!/usr/bin/env bash
# Concretize a system's Spack environment (spack/<system>) with real Spack and build it and
# its view, which the site config's `spack` environment puts first on PATH.
# Usage: ci/spack-build.sh SYSTEM [--concretize-only] [--mirror DIR|URL] [--binary-only]
#                                 [--create-mirror DIR] [-j N]
#   --concretize-only    concretize (and check the roots against spack/tools/needs.yaml), no build
#   --mirror DIR|URL     fetch sources (or binaries) from this mirror first (compute nodes
#                        without internet); default: $MDXBENCH_SPACK_MIRROR
#   --binary-only        install only from build caches (no source builds)
#   --create-mirror DIR  on a connected machine: fetch every source of the environment into
#                        DIR (then copy DIR to the site and use --mirror DIR there)
# Spack is the one ci/spack.sh set up: a site's `spack` on PATH, or ours from the archives
# that MDXBENCH_SPACK_TARBALL names. Concretizing is skipped when nothing it reads changed
# since the lockfile was made (spack/tools/lockinputs.py; the site environments' lockfiles
# are kept in the repository with what they were made from).
source "$(dirname "$0")/lib.sh"

system=${1:-}
[[ -n $system ]] || die "usage: ci/spack-build.sh SYSTEM [--concretize-only] [--mirror DIR|URL] [--binary-only] [--create-mirror DIR] [-j N]"
shift
env_dir="$MDXBENCH_ROOT/spack/$system"
[[ -f $env_dir/spack.yaml ]] || die "no Spack environment for system '$system' ($env_dir/spack.yaml); known: $(cd "$MDXBENCH_ROOT/spack" && ls -d */spack.yaml | cut -d/ -f1 | tr '\n' ' ')"
spack=$(bash "$MDXBENCH_ROOT/ci/spack.sh" path 2>/dev/null) \
    || die "spack is not on PATH and ci/spack.sh set up none (MDXBENCH_SPACK_TARBALL unset?): put a site's spack on PATH (source <spack>/share/spack/setup-env.sh) or run ci/spack.sh setup"

mirror='' binary_only=0 create='' jobs='' concretize_only=0
while (($#)); do
    case $1 in
        --concretize-only) concretize_only=1; shift ;;
        --mirror) mirror=${2:?--mirror needs a directory or URL}; shift 2 ;;
        --binary-only) binary_only=1; shift ;;
        --create-mirror) create=${2:?--create-mirror needs a directory}; shift 2 ;;
        -j) jobs=${2:?-j needs a number}; shift 2 ;;
        *) die "unknown option '$1'" ;;
    esac
done

# Mirrors for this build go in a configuration scope of ours (never into spack.yaml): the
# --mirror of the command line; with a site's Spack also MDXBENCH_SPACK_MIRROR and the
# state's own mirror (ours has both in its site scope already, ci/spack.sh)
scope=$MDXBENCH_STATE_DIR/spack/scope
mkdir -p "$scope" "$MDXBENCH_STATE_DIR/logs"
mirrors=()
[[ -n $mirror ]] && mirrors+=("mdxbench-cli $mirror")
if [[ $(cat "$MDXBENCH_STATE_DIR/spack/mode" 2>/dev/null) != own ]]; then
    [[ -n ${MDXBENCH_SPACK_MIRROR:-} ]] && mirrors+=("mdxbench-site $MDXBENCH_SPACK_MIRROR")
    [[ -d $MDXBENCH_STATE_DIR/spack/mirror/_source-cache ]] && mirrors+=("mdxbench-local $MDXBENCH_STATE_DIR/spack/mirror")
fi
{
    echo "# written by ci/spack-build.sh for this build"
    echo "mirrors:"
    for m in "${mirrors[@]}"; do
        url=${m#* }
        [[ $url == *://* ]] || url="file://$(cd "$url" && pwd)"
        echo "  ${m%% *}: {url: '$url', source: true, binary: true}"
    done
    ((${#mirrors[@]})) || echo "  {}"
} >"$scope/mirrors.yaml"
((${#mirrors[@]})) || rm -f "$scope/mirrors.yaml"
sp() { "$spack" -C "$scope" -e "$env_dir" "$@"; }

# Validate offline first: a typo in a spec fails here, with the file and the closest names.
"$MDXBENCH_VENV/bin/python" "$MDXBENCH_ROOT/spack/tools/spackcheck.py" "$env_dir"

# What concretization reads (spack/tools/lockinputs.py: the environment, what it includes,
# our repository, Spack's version, platform, configuration and builtin repository), as a
# manifest beside the lockfile it gave: the site environments keep both in the repository
# (spack/<system>/spack.lock and spack.lock.inputs: CI and every clone concretize them only
# when an input changed); the others (local: this machine's own) in .spack-env
kept=$env_dir/spack.lock.inputs
stamp=$env_dir/.spack-env/mdxbench-concretized
[[ -f $kept ]] && stamp=$kept
lockinputs() { "$MDXBENCH_VENV/bin/python" "$MDXBENCH_ROOT/spack/tools/lockinputs.py" "$env_dir" \
                   --spack "$spack" -C "$scope" "$@"; }
t0=$SECONDS
rc=2                                    # no record of the inputs: concretize
if [[ -f $stamp ]]; then
    rc=0
    changes=$(lockinputs --check "$stamp") || rc=$?
fi
((rc <= 2)) || die "spack/tools/lockinputs.py failed on spack/$system (exit $rc)"
if [[ -f $env_dir/spack.lock ]] && ((rc == 0)); then
    log "spack/$system: concretized already (nothing it reads changed since ${stamp#"$MDXBENCH_ROOT/"})"
else
    if ((rc == 1)); then
        n=$(wc -l <<<"$changes")
        log "spack/$system: concretizing again, $n input(s) changed since ${stamp#"$MDXBENCH_ROOT/"}: $(head -n 5 <<<"$changes" | paste -sd' ')$( ((n > 5)) && echo " and $((n - 5)) more")"
    fi
    log "spack/$system: concretizing with $("$spack" --version)"
    sp concretize --fresh --force >"$MDXBENCH_STATE_DIR/logs/spack-concretize-$system.log" 2>&1 \
        || { log_tail "$MDXBENCH_STATE_DIR/logs/spack-concretize-$system.log" 60; die "spack -e spack/$system concretize failed"; }
    mkdir -p "$(dirname "$stamp")" && lockinputs --write "$stamp"
    log "spack/$system: concretized in $((SECONDS - t0)) s ($("$MDXBENCH_VENV/bin/python" -c \
        'import json, sys; d = json.load(open(sys.argv[1])); print(len(d["roots"]), "roots,", len(d["concrete_specs"]), "specs")' \
        "$env_dir/spack.lock"))"
    [[ $stamp == "$kept" ]] && log "spack/$system: the repository keeps this lockfile: commit spack/$system/spack.lock and spack.lock.inputs"
fi
# The roots must be what the checks need (versions, variants, flags)
"$MDXBENCH_VENV/bin/python" "$MDXBENCH_ROOT/spack/tools/spackcheck.py" --lock "$env_dir/spack.lock"
((concretize_only)) && exit 0

if [[ -n $create ]]; then
    sp mirror create --directory "$create" --all
    log "sources of spack/$system are in $create: copy it to the site and use --mirror"
    exit 0
fi
args=()
((binary_only)) && args+=(--use-buildcache only)
[[ -n $jobs ]] && args+=(-j "$jobs")
t0=$SECONDS
sp install --fail-fast "${args[@]}" >"$MDXBENCH_STATE_DIR/logs/spack-install-$system.log" 2>&1 \
    || { log_tail "$MDXBENCH_STATE_DIR/logs/spack-install-$system.log" 60; die "spack -e spack/$system install failed"; }
log "spack/$system built in $((SECONDS - t0)) s: $(grep -c 'Successfully installed' "$MDXBENCH_STATE_DIR/logs/spack-install-$system.log" || true) package(s) installed now; view: $env_dir/.spack-env/view (the site config's 'spack' environment)"
