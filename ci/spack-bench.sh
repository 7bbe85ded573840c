#!/usr/bin/env bash
# What Spack costs this project, measured (a benchmark that prints figures, not a test):
#   - concretizing each environment of spack/, cold (Spack's misc cache cleared: the
#     package repository indexed again) and warm (a second time),
#   - building spack/local cold (an empty install tree and source cache of its own, sources
#     from the mirrors) and warm (nothing changed: ci/spack-build.sh's path),
# beside the targets of issue 27 (local <= 5 min cold, <= 30 s when nothing changed).
# Usage: ci/spack-bench.sh [ENV ...]      (default: every environment; local is built)
# Needs the Spack of ci/spack.sh; works on copies (the checkout's lockfiles stay as they are).
source "$(dirname "$0")/lib.sh"

spack=$(bash "$MDXBENCH_ROOT/ci/spack.sh" path) || die "no Spack (ci/spack.sh setup first)"
envs=("$@")
((${#envs[@]})) || mapfile -t envs < <(cd "$MDXBENCH_ROOT/spack" && ls -d */spack.yaml | cut -d/ -f1)
work=$(mktemp -d "$MDXBENCH_STATE_DIR/spack-bench.XXXXXX")
trap 'rm -rf "$work"' EXIT
rsync -a --exclude .spack-env --exclude spack.lock "$MDXBENCH_ROOT/spack/" "$work/spack/" 2>/dev/null \
    || { cp -r "$MDXBENCH_ROOT/spack" "$work/spack"; rm -rf "$work"/spack/*/.spack-env "$work"/spack/*/spack.lock; }

secs() { local t0=$SECONDS; "$@" >>"$work/log" 2>&1 || { tail -40 "$work/log" >&2; die "failed: $*"; }; echo $((SECONDS - t0)); }

declare -A cold warm
for e in "${envs[@]}"; do
    "$spack" clean -m >>"$work/log" 2>&1
    cold[$e]=$(secs "$spack" -e "$work/spack/$e" concretize --fresh --force)
    warm[$e]=$(secs "$spack" -e "$work/spack/$e" concretize --fresh --force)
done
build_cold='-' build_warm='-' roots='-'
if [[ " ${envs[*]} " == *" local "* ]]; then
    # an install tree and source cache of the bench's own: every source fetched from the
    # mirrors and every package built, as on a new machine
    mkdir -p "$work/scope"
    printf 'config:\n  install_tree: {root: %s}\n  source_cache: %s\n  build_stage: [%s]\n' \
        "$work/opt" "$work/cache" "$work/stage" >"$work/scope/config.yaml"
    [[ -f $MDXBENCH_STATE_DIR/spack/scope/mirrors.yaml ]] && cp "$MDXBENCH_STATE_DIR/spack/scope/mirrors.yaml" "$work/scope/"
    build_cold=$(secs "$spack" -C "$work/scope" -e "$work/spack/local" install --fail-fast)
    build_warm=$(secs "$spack" -C "$work/scope" -e "$work/spack/local" install --fail-fast)
    roots=$("$MDXBENCH_VENV/bin/python" -c 'import json, sys; print(len(json.load(open(sys.argv[1]))["roots"]))' \
        "$work/spack/local/spack.lock")
fi

echo
echo "== Spack's cost on this machine ($(nproc) cores, $("$spack" --version)) =="
printf '%-14s %14s %14s\n' environment 'concretize cold' 'concretize warm'
for e in "${envs[@]}"; do printf '%-14s %13s s %13s s\n' "$e" "${cold[$e]}" "${warm[$e]}"; done
echo
echo "spack/local build, $roots roots from the mirror: cold ${build_cold} s (target <= 300 s), nothing changed ${build_warm} s (target <= 30 s; ci/spack-build.sh also skips concretizing then)"
