#!/usr/bin/env bash
# Spack, set up like the other real components: which Spack the suite builds with, and its
# configuration. Idempotent; a second run reuses what the first set up.
# Usage: ci/spack.sh setup|status|path
#
# Which Spack:
#   - a `spack` on PATH (a site's own) is used as it is: its configuration, install tree
#     and mirrors are the site's; nothing here changes them;
#   - otherwise Spack and its builtin package repository come from two archives, named by
#       MDXBENCH_SPACK_TARBALL           Spack itself (spack-<version>.tar.gz: bin/spack, lib/, etc/)
#       MDXBENCH_SPACK_PACKAGES_TARBALL  the builtin package repository (repos/spack_repo/builtin)
#     (CI: ../shared/spack), unpacked under $MDXBENCH_STATE_DIR/spack, run by the project's
#     Python with PyPI's clingo (extra `spack` of pyproject.toml), bootstrapping off, with
#     its configuration, caches, build stage and install tree under the state directory
#     (SPACK_DISABLE_LOCAL_CONFIG: never ~/.spack nor /etc/spack);
#   - neither: where the network allows (MDXBENCH_SPACK_FETCH, default 1), the pinned Spack
#     and builtin repository of spack/pins.env are fetched with git, verified by their
#     trees' hashes, archived with `git archive` and set up as from archives above (a
#     newcomer's main job gets Spack by itself); where the fetch fails, no Spack: the
#     checks that need its builds skip, saying so, and the main job's summary says
#     "Spack: none" first.
# Sources:
#   MDXBENCH_SPACK_MIRROR     a Spack source mirror (directory or URL) to fetch from, first;
#                             with our own Spack it is the only one unless
#                             MDXBENCH_SPACK_NETWORK=1 (then Spack's default ones too)
#   MDXBENCH_SPACK_ARCHIVES   archives a package of spack/repo pins that a mirror keeps under
#                             another name (colon-separated files): each is checked against
#                             the sha256 a package of ours pins and put in the state's own
#                             mirror under that checksum (refused when no package pins it)
# The wrapper $MDXBENCH_STATE_DIR/spack/bin/spack (linked from the venv, so on PATH after
# `source ci/activate.sh`) runs our Spack with that environment.
source "$(dirname "$0")/lib.sh"

SPACK_HOME=$MDXBENCH_STATE_DIR/spack
WRAPPER=$SPACK_HOME/bin/spack
LOCAL_MIRROR=$SPACK_HOME/mirror
SITE_SCOPE=$SPACK_HOME/spack/etc/spack/site
# What Debian provides for the builds of spack/local, found as externals (not buildable):
# the compilers, and the build tools of the autotools, make and cmake packages
# (spack/local/site.yaml declares the libraries Spack cannot detect).
SPACK_FIND_EXTERNALS=(gcc autoconf automake libtool m4 perl gmake pkgconf cmake)

# spack_on_path: a site's own spack on PATH (not our wrapper), or nothing
site_spack() {
    local s
    s=$(command -v spack 2>/dev/null) || return 1
    [[ $(readlink -f "$s") == "$(readlink -f "$WRAPPER" 2>/dev/null)" ]] && return 1
    echo "$s"
}

abs() { [[ $1 == *://* ]] && echo "$1" || echo "$(cd "$(dirname "$1")" && pwd)/$(basename "$1")"; }

# The sha256 pins of spack/repo's packages: "sha256 package@version" lines
repo_pins() {
    local f pkg
    for f in "$MDXBENCH_ROOT"/spack/repo/spack_repo/mdxbench/packages/*/package.py; do
        pkg=$(basename "$(dirname "$f")" | tr _ -)
        tr -d '\n ' <"$f" | grep -oE 'version\("[^"]+",sha256="[0-9a-f]{64}"' \
            | sed -E "s/version\\(\"([^\"]+)\",sha256=\"([0-9a-f]{64})\"/\\2 $pkg@\\1/"
    done
}

fill_local_mirror() {
    local a sum ext pins want
    mkdir -p "$LOCAL_MIRROR"
    [[ -n ${MDXBENCH_SPACK_ARCHIVES:-} ]] || return 0
    pins=$(repo_pins)
    IFS=: read -ra archives <<<"$MDXBENCH_SPACK_ARCHIVES"
    for a in "${archives[@]}"; do
        [[ -f $a ]] || die "MDXBENCH_SPACK_ARCHIVES: $a does not exist"
        sum=$(sha256sum "$a" | cut -d' ' -f1)
        want=$(awk -v s="$sum" '$1 == s {print $2}' <<<"$pins")
        [[ -n $want ]] || die "MDXBENCH_SPACK_ARCHIVES: $a (sha256 $sum) is pinned by no package of spack/repo: not added"
        case $a in *.tar.gz) ext=tar.gz ;; *.tar.xz) ext=tar.xz ;; *.tar.bz2) ext=tar.bz2 ;; *) ext=${a##*.} ;; esac
        mkdir -p "$LOCAL_MIRROR/_source-cache/archive/${sum:0:2}"
        ln -sf "$(abs "$a")" "$LOCAL_MIRROR/_source-cache/archive/${sum:0:2}/$sum.$ext"
        log "Spack mirror $LOCAL_MIRROR: $a is $want (sha256 $sum verified)"
    done
}

mirrors_yaml() {
    echo "# written by ci/spack.sh: the mirrors Spack fetches sources from, in this order"
    if [[ ${MDXBENCH_SPACK_NETWORK:-0} == 1 ]]; then echo "mirrors:"; else echo "mirrors::"; fi
    echo "  mdxbench-local: {url: 'file://$LOCAL_MIRROR', source: true, binary: false}"
    if [[ -n ${MDXBENCH_SPACK_MIRROR:-} ]]; then
        local m=$MDXBENCH_SPACK_MIRROR
        [[ $m == *://* ]] || m="file://$(cd "$m" && pwd)"
        echo "  mdxbench-site: {url: '$m', source: true, binary: false}"
    fi
}

setup_own() {
    local tar=${MDXBENCH_SPACK_TARBALL} pkgs=${MDXBENCH_SPACK_PACKAGES_TARBALL:-} stamp want
    [[ -f $tar ]] || die "MDXBENCH_SPACK_TARBALL=$tar does not exist"
    [[ -n $pkgs && -f $pkgs ]] || die "MDXBENCH_SPACK_PACKAGES_TARBALL='$pkgs' does not exist (Spack's builtin package repository)"
    "$MDXBENCH_VENV/bin/python" -c 'import clingo' 2>/dev/null \
        || die "clingo is missing from $MDXBENCH_VENV (extra 'spack' of pyproject.toml: MDXBENCH_PIP_EXTRAS)"
    stamp=$SPACK_HOME/.unpacked
    want="$(sha256sum "$tar" "$pkgs" | cut -d' ' -f1 | tr '\n' ' ')"
    if [[ ! -x $SPACK_HOME/spack/bin/spack || $(cat "$stamp" 2>/dev/null) != "$want" ]]; then
        log "Spack: unpacking $tar and $pkgs into $SPACK_HOME"
        rm -rf "$SPACK_HOME/spack" "$SPACK_HOME/packages"
        mkdir -p "$SPACK_HOME/spack" "$SPACK_HOME/packages"
        tar -xzf "$tar" -C "$SPACK_HOME/spack" --strip-components=1
        tar -xzf "$pkgs" -C "$SPACK_HOME/packages" --strip-components=1
        [[ -x $SPACK_HOME/spack/bin/spack ]] || die "$tar holds no spack/bin/spack"
        [[ -f $SPACK_HOME/packages/repos/spack_repo/builtin/repo.yaml ]] \
            || die "$pkgs holds no repos/spack_repo/builtin/repo.yaml"
        echo "$want" >"$stamp"
    fi
    mkdir -p "$SITE_SCOPE" "$SPACK_HOME/bin" "$SPACK_HOME/cache" "$SPACK_HOME/stage"
    # The site scope of our own Spack ($spack/etc/spack/site) holds everything of ours
    cat >"$SITE_SCOPE/repos.yaml" <<EOF
# written by ci/spack.sh: the builtin repository unpacked from $pkgs
repos:
  builtin: $SPACK_HOME/packages/repos/spack_repo/builtin
EOF
    cat >"$SITE_SCOPE/bootstrap.yaml" <<EOF
# written by ci/spack.sh: clingo comes from PyPI (the project's venv); nothing is fetched
bootstrap:
  enable: false
EOF
    cat >"$SITE_SCOPE/config.yaml" <<EOF
# written by ci/spack.sh: install tree, stage and caches under the state directory
config:
  install_tree:
    root: $SPACK_HOME/opt
  build_stage: [$SPACK_HOME/stage]
  source_cache: $SPACK_HOME/cache/source
  misc_cache: $SPACK_HOME/cache/misc
EOF
    mirrors_yaml >"$SITE_SCOPE/mirrors.yaml"
    cat >"$WRAPPER.tmp" <<EOF
#!/bin/sh
# mdxbench's Spack (ci/spack.sh): the project's Python with clingo, our scopes only
export SPACK_PYTHON='$MDXBENCH_VENV/bin/python'
export SPACK_DISABLE_LOCAL_CONFIG=1
export SPACK_USER_CACHE_PATH='$SPACK_HOME/cache/user'
exec '$SPACK_HOME/spack/bin/spack' "\$@"
EOF
    chmod 755 "$WRAPPER.tmp" && mv "$WRAPPER.tmp" "$WRAPPER"
    ln -sf "$WRAPPER" "$MDXBENCH_VENV/bin/spack"
    if [[ ! -f $SITE_SCOPE/packages.yaml ]]; then
        log "Spack: finding the machine's compilers and build tools (${SPACK_FIND_EXTERNALS[*]})"
        "$WRAPPER" external find --scope site --not-buildable "${SPACK_FIND_EXTERNALS[@]}" \
            >"$MDXBENCH_STATE_DIR/logs/spack-externals.log" 2>&1 \
            || { log_tail "$MDXBENCH_STATE_DIR/logs/spack-externals.log"; rm -f "$SITE_SCOPE/packages.yaml"; die "spack external find failed"; }
    fi
    log "Spack: $("$WRAPPER" --version) in $SPACK_HOME/spack (builtin repository $(basename "$pkgs"))"
}

# pin NAME: the value of NAME in spack/pins.env, or of MDXBENCH_<NAME> where that is set
pin() {
    local var="MDXBENCH_$1"
    if [[ -n ${!var:-} ]]; then echo "${!var}"; return; fi
    (set +u; source "$MDXBENCH_ROOT/spack/pins.env"; echo "${!1}")
}

# fetch_one NAME GIT COMMIT TREES: a git checkout of COMMIT verified by TREES ("path=hash
# ..."), archived as $SPACK_HOME/fetched/NAME.tar.gz (the paths of TREES and the files at
# the top, under NAME/). Fails, saying why, on any difference.
fetch_one() {
    local name=$1 url=$2 commit=$3 trees=$4 dir=$SPACK_HOME/fetched/$1.git glog full
    local paths=() pt path want got
    glog=$MDXBENCH_STATE_DIR/logs/spack-fetch-$name.log
    if [[ ! -d $dir ]]; then
        log "Spack: fetching $name from $url (commit $commit)"
        timeout "${MDXBENCH_SPACK_FETCH_TIMEOUT:-900}" git clone --quiet --filter=blob:none \
            --no-checkout "$url" "$dir.tmp" >"$glog" 2>&1 \
            || { rm -rf "$dir.tmp"; log_tail "$glog" 10; log "Spack: could not fetch $url"; return 1; }
        mv "$dir.tmp" "$dir"
    fi
    git -C "$dir" -c advice.detachedHead=false checkout --quiet --detach "$commit" >>"$glog" 2>&1 \
        || { log_tail "$glog" 10; log "Spack: $url has no commit $commit"; return 1; }
    full=$(git -C "$dir" rev-parse HEAD)
    [[ $full == "$commit"* ]] || { log "Spack: $url: $commit is $full"; return 1; }
    for pt in $trees; do
        path=${pt%%=*} want=${pt#*=}
        got=$(git -C "$dir" rev-parse "HEAD:$path" 2>/dev/null) || got=none
        [[ $got == "$want" ]] || { log "Spack: $name at $full: the tree of $path is $got, the pin (spack/pins.env) says $want: refused"; return 1; }
        paths+=("$path")
    done
    paths+=($(git -C "$dir" ls-tree --name-only HEAD | while read -r f; do
        [[ $(git -C "$dir" cat-file -t "HEAD:$f") == blob ]] && echo "$f"; done))
    git -C "$dir" archive --format=tar --prefix="$name/" HEAD -- "${paths[@]}" | gzip -n \
        >"$SPACK_HOME/fetched/$name.tar.gz" || { log "Spack: git archive of $name failed"; return 1; }
    log "Spack: $name at $full verified ($trees) and archived"
}

# fetch_pinned: Spack and its builtin repository from spack/pins.env, as archives
fetch_pinned() {
    mkdir -p "$SPACK_HOME/fetched"
    fetch_one spack "$(pin SPACK_GIT)" "$(pin SPACK_COMMIT)" "$(pin SPACK_TREES)" || return 1
    fetch_one spack-packages "$(pin SPACK_PACKAGES_GIT)" "$(pin SPACK_PACKAGES_COMMIT)" \
        "$(pin SPACK_PACKAGES_TREES)" || return 1
    MDXBENCH_SPACK_TARBALL=$SPACK_HOME/fetched/spack.tar.gz
    MDXBENCH_SPACK_PACKAGES_TARBALL=$SPACK_HOME/fetched/spack-packages.tar.gz
    # a machine that reaches Spack's repositories fetches the benchmarks' sources too
    MDXBENCH_SPACK_NETWORK=${MDXBENCH_SPACK_NETWORK:-1}
}

setup() {
    local s
    mkdir -p "$MDXBENCH_STATE_DIR/logs" "$SPACK_HOME"
    fill_local_mirror
    if s=$(site_spack); then
        echo site >"$SPACK_HOME/mode"
        log "Spack: using the site's $s ($(spack --version 2>/dev/null || echo 'version unknown')) as it is"
    elif [[ -n ${MDXBENCH_SPACK_TARBALL:-} ]]; then
        setup_own
        echo own >"$SPACK_HOME/mode"
    elif [[ -x $WRAPPER && -d $SPACK_HOME/spack && $(cat "$SPACK_HOME/mode" 2>/dev/null) == own ]]; then
        # ours, set up by an earlier run that was given the archives: kept as it is (a
        # later ci/test.sh without MDXBENCH_SPACK_TARBALL must not lose its builds)
        log "Spack: ours, set up earlier in $SPACK_HOME/spack (MDXBENCH_SPACK_TARBALL unset: kept as it is)"
    elif [[ ${MDXBENCH_SPACK_FETCH:-1} == 1 ]] && fetch_pinned; then
        setup_own
        echo own >"$SPACK_HOME/mode"
        echo fetched >"$SPACK_HOME/origin"
    else
        echo none >"$SPACK_HOME/mode"
        rm -f "$MDXBENCH_VENV/bin/spack"
        log "Spack: none (no spack on PATH, MDXBENCH_SPACK_TARBALL unset, $( [[ ${MDXBENCH_SPACK_FETCH:-1} == 1 ]] && echo 'the pinned Spack could not be fetched' || echo 'MDXBENCH_SPACK_FETCH=0')): the checks that need its builds (IOR, OSU, BabelStream, STREAM) skip on local"
    fi
}

# path: the spack command to use (ours or the site's); fails when there is none
path() {
    local s
    if s=$(site_spack); then echo "$s"
    elif [[ -x $WRAPPER && $(cat "$SPACK_HOME/mode" 2>/dev/null) == own ]]; then echo "$WRAPPER"
    else return 1
    fi
}

case ${1:-} in
    setup) setup ;;
    path) path ;;
    status) if p=$(path); then echo "spack: $p ($(cat "$SPACK_HOME/mode" 2>/dev/null || echo site)): $("$p" --version)"
            else echo "spack: none"; exit 1; fi ;;
    *) die "usage: ci/spack.sh setup|status|path" ;;
esac
