#!/usr/bin/env bash
# Install everything the suite needs on a fresh Debian 12 machine (as root), idempotently:
#   - Debian packages (Slurm, munge, Open MPI, fio, iperf3, hpcc, sockperf, Java 17, Maven, ...)
#   - the Python virtual environment with reframe-hpc (pinned) and this project (editable)
#   - Elasticsearch 8.19.21 from Maven Central, unpacked into the state directory
#   - scrontab, which Debian 12's slurm-client leaves out, built from Debian's own source
#     package of the installed Slurm version (install_scrontab)
#   - Spack (ci/spack.sh: a site's spack on PATH, or ours from MDXBENCH_SPACK_TARBALL), and
#     spack/local built with it from the source mirror (ci/spack-build.sh local), where a
#     Spack exists; without one the checks that need its builds skip, saying so; with it
#     also a compile-only CUDA from PyPI's wheels (ci/cuda.sh), for ci/spack-gpu.sh
#   - MinIO (an S3 server) and warp (the paper's S3 benchmark), Go modules built with the
#     machine's Go toolchain through the Go module proxy, versions pinned (install_go_tools;
#     skipped, saying so, where no Go toolchain new enough exists, or with
#     MDXBENCH_GO_TOOLS=0 on a site without an S3 target; Go's caches are per machine:
#     MDXBENCH_GO_CACHE, default /var/cache/mdxbench/go as root)
# Usage: ci/install.sh [--no-apt] [--no-es] [--go-tools-later]
#   (a site's login node: ci/site-install.sh)
#   --go-tools-later: MinIO's and warp's build goes on in the background after the install
#   ends, its exit status and log named in $MDXBENCH_STATE_DIR/gotools/build.status
#   (ci/test.sh: beside the tests that need neither them nor a quiet machine)
source "$(dirname "$0")/lib.sh"

ES_VERSION=${MDXBENCH_ES_VERSION:-8.19.21}
ES_ARTIFACT="org.elasticsearch.distribution.integ-test-zip:elasticsearch:${ES_VERSION}:zip"
APT_PACKAGES=(
    slurm-wlm slurm-client munge
    # the multi-node test cluster (ci/cluster.sh): accounting, so ReFrame's `slurm` backend works
    slurmdbd mariadb-server
    # each namespace node's local disk: an ext4 image on a loop device (mkfs.ext4, losetup)
    e2fsprogs util-linux
    openmpi-bin libopenmpi-dev
    fio iperf3 hpcc sockperf ethtool likwid linux-perf
    # from Debian's non-free component (enable_nonfree): netperf 2.7.0 (the papers' version;
    # the `mkl` environment's MKL is PyPI's oneAPI wheel in the venv, extra `mkl`)
    netperf
    # the FFT application kernel (checks/apps/fft.py) compiles against FFTW MPI
    libfftw3-dev libfftw3-mpi-dev
    # hpcc links libblas.so.3: OpenBLAS (serial: one thread per MPI rank) instead of the
    # reference BLAS makes its HPL and DGEMM figures meaningful
    libopenblas0-serial
    # what Spack builds spack/local with (ci/spack.sh finds them as externals): the
    # compilers (gfortran: STREAM's Fortran part), libtool for IOR's autoreconf, and the
    # libraries of fio (+libaio, zlib) and IOR (+aio) that the source mirror does not hold
    gfortran libtool libtool-bin libaio-dev zlib1g-dev
    # libs3 (IOR's S3-libs3 backend, ior +s3): its GNUmakefile asks curl-config and
    # xml2-config; OpenSSL for its signatures
    libcurl4-openssl-dev libxml2-dev libssl-dev
    # nvbandwidth's Boost.Program_options (ci/spack-gpu.sh: the GPU benchmarks compiled
    # with ci/cuda.sh's CUDA, no GPU needed)
    libboost-program-options-dev
    iproute2 procps util-linux hostname
    # scrontab's build from Debian's source package (install_scrontab)
    dpkg-dev gcc make binutils
    openjdk-17-jre-headless maven unzip
    python3 python3-venv python3-pip git
    # the HTML report is tested in headless Chromium
    chromium
)

do_apt=1 do_es=1 go_tools=now
for a in "$@"; do
    case $a in
        --no-apt) do_apt=0 ;;
        --no-es) do_es=0 ;;
        --go-tools-later) go_tools=later ;;
        *) die "unknown option '$a' (known: --no-apt --no-es --go-tools-later)" ;;
    esac
done

# netperf and Intel MKL live in Debian's contrib/non-free components, served by the same
# registry as main. Add them in a sources file of our own, with the URIs and Signed-By of
# the machine's own Debian entries (nothing else is changed, no host is named here).
NONFREE_SOURCES=/etc/apt/sources.list.d/mdxbench-nonfree.sources

enable_nonfree() {
    local src=/etc/apt/sources.list.d/debian.sources
    [[ -f $NONFREE_SOURCES ]] && return 1
    [[ -f $src ]] || die "enable_nonfree: $src not found (a deb822 Debian sources file is expected on Debian 12)"
    # Every stanza of the Debian archive (main component, Debian keyring), with its
    # components replaced by contrib and non-free.
    awk -v RS= -v ORS='\n\n' '/Components:[^\n]*main/ && /Signed-By: *\/usr\/share\/keyrings\/debian-archive-keyring.gpg/ {
            gsub(/Components:[^\n]*/, "Components: contrib non-free"); print }' "$src" >"$NONFREE_SOURCES.tmp"
    grep -q '^URIs:' "$NONFREE_SOURCES.tmp" \
        || { rm -f "$NONFREE_SOURCES.tmp"; die "enable_nonfree: no Debian archive stanza (Components: main, Signed-By the Debian keyring) in $src"; }
    mv "$NONFREE_SOURCES.tmp" "$NONFREE_SOURCES"
    log "enabled Debian contrib/non-free in $NONFREE_SOURCES"
}

install_apt() {
    local missing=() p
    for p in "${APT_PACKAGES[@]}"; do
        [[ $(dpkg-query -W -f='${Status}' "$p" 2>/dev/null) == *'install ok installed'* ]] || missing+=("$p")
    done
    if ((${#missing[@]} == 0)); then
        log "Debian packages: all ${#APT_PACKAGES[@]} present"
        return
    fi
    require_root "installing Debian packages (${missing[*]})"
    log "Debian packages: installing ${missing[*]}"
    export DEBIAN_FRONTEND=noninteractive
    enable_nonfree || true
    apt-get update -qq
    # Debian's postinst scripts try to start daemons; we start them ourselves.
    apt-get install -y -qq --no-install-recommends "${missing[@]}" >"$MDXBENCH_STATE_DIR/logs/apt.log" 2>&1 \
        || { log_tail "$MDXBENCH_STATE_DIR/logs/apt.log"; die "apt-get install failed"; }
}

install_venv() {
    local py=${MDXBENCH_PYTHON:-python3} stamp="$MDXBENCH_VENV/.mdxbench-stamp" want
    local extras=${MDXBENCH_PIP_EXTRAS:-test,docs,datascience,mkl,spack}
    "$py" -c 'import sys; sys.exit(sys.version_info < (3, 11))' \
        || die "$py is $("$py" --version 2>&1); mdxbench needs Python >= 3.11 (set MDXBENCH_PYTHON)"
    want=$( (cat "$MDXBENCH_ROOT/pyproject.toml"; echo "$extras") | sha256sum | cut -d' ' -f1)
    if [[ -f $stamp && $(cat "$stamp") == "$want" && -x $MDXBENCH_VENV/bin/reframe ]]; then
        log "virtual environment $MDXBENCH_VENV is up to date"
        return
    fi
    log "creating virtual environment $MDXBENCH_VENV"
    [[ -x $MDXBENCH_VENV/bin/python ]] || "$py" -m venv "$MDXBENCH_VENV"
    "$MDXBENCH_VENV/bin/pip" install -q --upgrade pip >"$MDXBENCH_STATE_DIR/logs/pip.log" 2>&1 || true
    "$MDXBENCH_VENV/bin/pip" install -q -e "$MDXBENCH_ROOT[$extras]" >>"$MDXBENCH_STATE_DIR/logs/pip.log" 2>&1 \
        || { log_tail "$MDXBENCH_STATE_DIR/logs/pip.log"; die "pip install failed"; }
    echo "$want" >"$stamp"
}

install_pds_python() {   # the Python of PdsBenchmark: polars-benchmark's libraries as pinned
    local venv=$MDXBENCH_STATE_DIR/pds-venv req=$MDXBENCH_ROOT/checks/apps/src/polars-benchmark.txt
    local want
    want=$(sha256sum "$req" | cut -d' ' -f1)
    if [[ -x $venv/bin/python && $(cat "$venv/.mdxbench-stamp" 2>/dev/null) == "$want" ]]; then
        log "PDS: polars-benchmark's Python in $venv is up to date"
        return
    fi
    rm -rf "$venv"
    "${MDXBENCH_PYTHON:-python3}" -m venv "$venv"
    "$venv/bin/pip" install -q -r "$req" >"$MDXBENCH_STATE_DIR/logs/pds-pip.log" 2>&1 \
        || { log_tail "$MDXBENCH_STATE_DIR/logs/pds-pip.log"; die "pip install of $req failed"; }
    echo "$want" >"$venv/.mdxbench-stamp"
    log "PDS: polars-benchmark's Python in $venv ($("$venv/bin/python" -c 'import polars, duckdb, pandas, dask; print("polars", polars.__version__, "duckdb", duckdb.__version__, "pandas", pandas.__version__, "dask", dask.__version__)'))"
}

install_es() {
    local base home repo zip
    require_root "installing Elasticsearch (it creates the user $ES_USER)"
    ensure_es_user
    base=$(es_base)
    home="$base/elasticsearch-$ES_VERSION"
    if [[ -x $home/bin/elasticsearch ]]; then
        log "Elasticsearch $ES_VERSION present in $home"
        return
    fi
    command -v mvn >/dev/null || die "mvn not found: run without --no-apt, or install maven"
    log "fetching $ES_ARTIFACT with mvn dependency:get"
    mvn -q -B dependency:get -Dartifact="$ES_ARTIFACT" -Dtransitive=false \
        >"$MDXBENCH_STATE_DIR/logs/mvn.log" 2>&1 \
        || { log_tail "$MDXBENCH_STATE_DIR/logs/mvn.log"; die "mvn dependency:get $ES_ARTIFACT failed"; }
    repo=$(mvn -q -B help:evaluate -Dexpression=settings.localRepository -DforceStdout 2>/dev/null || true)
    [[ -d $repo ]] || repo="$HOME/.m2/repository"
    zip="$repo/org/elasticsearch/distribution/integ-test-zip/elasticsearch/$ES_VERSION/elasticsearch-$ES_VERSION.zip"
    [[ -f $zip ]] || die "mvn reported success but $zip does not exist"
    rm -rf "$home.tmp" && mkdir -p "$home.tmp"
    unzip -q "$zip" -d "$home.tmp"
    mv "$home.tmp/elasticsearch-$ES_VERSION" "$home" && rmdir "$home.tmp"
    log "Elasticsearch $ES_VERSION unpacked into $home"
}

# scrontab (Slurm's per-user crontab, `mdxbench schedule`): slurmctld 22.05 in Debian 12
# implements it (ScronParameters=enable), but the slurm-client package does not install the
# client. Build it from Debian's source package of exactly the installed version (its
# patches applied), against the installed libslurmfull, into /usr/local/bin. Sources come
# from the same Debian archive as the packages (a deb-src list of our own, in a private apt
# state directory: the machine's apt configuration is not changed).
install_scrontab() {
    local version have work apt_opts src
    command -v scrontab >/dev/null && [[ $(command -v scrontab) != /usr/local/bin/scrontab ]] \
        && { log "scrontab: $(command -v scrontab) present"; return; }
    version=$(dpkg-query -W -f='${Version}' slurm-client 2>/dev/null) \
        || { log "scrontab: slurm-client is not installed; skipped"; return; }
    have=$(cat /usr/local/lib/mdxbench-scrontab.version 2>/dev/null || true)
    if [[ -x /usr/local/bin/scrontab && $have == "$version" ]]; then
        log "scrontab: /usr/local/bin/scrontab built from slurm-wlm $version present"
        return
    fi
    require_root "building scrontab into /usr/local/bin"
    work=$(mktemp -d)
    mkdir -p "$work/apt/lists/partial" "$work/apt/parts"
    awk -v RS= -v ORS='\n\n' '/Signed-By: *\/usr\/share\/keyrings\/debian-archive-keyring.gpg/ {
            gsub(/Types:[^\n]*/, "Types: deb-src"); gsub(/Components:[^\n]*/, "Components: main"); print }' \
        /etc/apt/sources.list.d/debian.sources >"$work/apt/parts/src.sources"
    apt_opts=(-o Dir::Etc::sourcelist=/dev/null -o "Dir::Etc::sourceparts=$work/apt/parts"
              -o "Dir::State::Lists=$work/apt/lists")
    log "scrontab: building it from Debian's source package slurm-wlm $version"
    (
        set -e
        cd "$work"
        apt-get "${apt_opts[@]}" update -qq
        apt-get "${apt_opts[@]}" source --download-only "slurm-wlm=$version"
        dpkg-source -x slurm-wlm_*.dsc src
        cd src
        ./configure --prefix=/usr --sysconfdir=/etc/slurm --libdir=/usr/lib/x86_64-linux-gnu
        cd src/scrontab
        for t in default_crontab usage; do
            ld -r -o "$t.bino" -z noexecstack --format=binary "$t.txt"
            objcopy --rename-section .data=.rodata,alloc,load,readonly,data,contents "$t.bino"
        done
        libdir=$(dirname "$(dpkg -L slurm-wlm-basic-plugins | grep -m1 '/libslurmfull.so$')")
        gcc -O2 -I../.. -I../../slurm -DHAVE_CONFIG_H -o scrontab env.c opt.c parse.c scrontab.c \
            default_crontab.bino usage.bino -L"$libdir" -lslurmfull -Wl,-rpath,"$libdir" \
            -ldl -lpthread -rdynamic
        install -m 0755 scrontab /usr/local/bin/scrontab
    ) >"$MDXBENCH_STATE_DIR/logs/scrontab-build.log" 2>&1 \
        || { log_tail "$MDXBENCH_STATE_DIR/logs/scrontab-build.log"; rm -rf "$work"; die "building scrontab failed"; }
    rm -rf "$work"
    mkdir -p /usr/local/lib && echo "$version" >/usr/local/lib/mdxbench-scrontab.version
    log "scrontab: installed /usr/local/bin/scrontab (slurm-wlm $version)"
}

# MinIO and warp, pinned. MinIO publishes no tagged Go module versions: its pin is the
# proxy's pseudo-version of a commit. The paper's warp is 1.0.8, which the Go module proxy
# reachable here does not serve (403 "not available" for every version after 1.0.0, and no
# checksum-database entry for any): warp 1.0.0 is built instead, its module hash pinned
# here in place of the checksum database's, and the report says which warp ran.
MINIO_MODULE=github.com/minio/minio
MINIO_VERSION=v0.0.0-20260212201848-7aac2a2c5b7c
WARP_MODULE=github.com/minio/warp
WARP_VERSION=v1.0.0
WARP_SUM='h1:woAI+71OyvDQoI6U0xeL9NvX2TxZHXpgGHexU4R6K9Y='
GO_MIN_MINOR=24       # MinIO's go.mod: go 1.24

find_go() {
    local g
    for g in "$(command -v go 2>/dev/null)" /usr/local/go/bin/go; do
        [[ -n $g && -x $g ]] && { echo "$g"; return 0; }
    done
    return 1
}

install_go_tools() {
    local go gover minor tools="$MDXBENCH_STATE_DIR/gotools" dir
    local bin="$MDXBENCH_STATE_DIR/gotools/bin" glog="$MDXBENCH_STATE_DIR/logs/go.log"
    if [[ -x $MDXBENCH_VENV/bin/minio && -x $MDXBENCH_VENV/bin/warp ]] &&
        [[ $(cat "$tools/pins" 2>/dev/null) == "$MINIO_VERSION $WARP_VERSION $WARP_SUM" ]]; then
        log "MinIO $MINIO_VERSION and warp $WARP_VERSION present"
        return
    fi
    if [[ ${MDXBENCH_GO_TOOLS:-1} == 0 ]]; then
        log "MinIO and warp: not built (MDXBENCH_GO_TOOLS=0); the warp checks skip on local"
        return
    fi
    if ! go=$(find_go); then
        log "MinIO and warp: no Go toolchain (go on PATH or /usr/local/go): skipped; the warp checks skip on local"
        return
    fi
    gover=$("$go" env GOVERSION)
    minor=$(sed -E 's/^go1\.([0-9]+).*/\1/' <<<"$gover")
    if ! [[ $minor =~ ^[0-9]+$ ]] || ((minor < GO_MIN_MINOR)); then
        log "MinIO and warp: $go is $gover, MinIO needs go1.$GO_MIN_MINOR: skipped; the warp checks skip on local"
        return
    fi
    mkdir -p "$bin"
    # Go's module and build caches are content-addressed and safe to share: kept per
    # machine (as Debian's packages are), a second clone on the same machine builds MinIO
    # and warp from them in seconds rather than minutes (MDXBENCH_GO_CACHE; default
    # /var/cache/mdxbench/go as root, else in the state directory)
    local gocache=${MDXBENCH_GO_CACHE:-}
    if [[ -z $gocache ]]; then
        if [[ $(id -u) -eq 0 ]]; then gocache=/var/cache/mdxbench/go; else gocache=$tools/cache; fi
    fi
    mkdir -p "$gocache/mod" "$gocache/build"
    local genv=(env GOPATH="$tools/gopath" GOMODCACHE="$gocache/mod" GOCACHE="$gocache/build"
                GOBIN="$bin" GOTOOLCHAIN=local GOFLAGS=-modcacherw)
    log "MinIO $MINIO_VERSION: go install through the Go module proxy ($gover)"
    "${genv[@]}" "$go" install "$MINIO_MODULE@$MINIO_VERSION" >"$glog" 2>&1 \
        || { log_tail "$glog"; die "go install $MINIO_MODULE@$MINIO_VERSION failed"; }
    # warp: downloaded (the module proxy), its hash checked against ours, built from the
    # module's own go.mod and go.sum (every dependency checked by go.sum)
    log "warp $WARP_VERSION: go mod download, hash checked against the pin, go build"
    "${genv[@]}" GONOSUMDB="$WARP_MODULE" "$go" mod download -json "$WARP_MODULE@$WARP_VERSION" \
        >"$tools/warp.json" 2>>"$glog" || { log_tail "$glog"; die "go mod download $WARP_MODULE@$WARP_VERSION failed"; }
    grep -q "\"Sum\": \"$WARP_SUM\"" "$tools/warp.json" \
        || die "warp $WARP_VERSION: module hash is not the pinned $WARP_SUM ($(grep '"Sum"' "$tools/warp.json"))"
    dir=$(sed -n 's/^[[:space:]]*"Dir": "\(.*\)",$/\1/p' "$tools/warp.json")
    (cd "$dir" && "${genv[@]}" GOFLAGS="-mod=readonly -modcacherw" "$go" build -trimpath \
        -ldflags "-X $WARP_MODULE/pkg.Version=${WARP_VERSION#v} -X $WARP_MODULE/pkg.ReleaseTag=$WARP_VERSION" \
        -o "$bin/warp" .) >>"$glog" 2>&1 || { log_tail "$glog"; die "go build of warp $WARP_VERSION failed"; }
    ln -sf "$bin/minio" "$MDXBENCH_VENV/bin/minio"
    ln -sf "$bin/warp" "$MDXBENCH_VENV/bin/warp"
    echo "$MINIO_VERSION $WARP_VERSION $WARP_SUM" >"$tools/pins"
    log "MinIO and warp installed in $bin (linked from $MDXBENCH_VENV/bin): $("$bin/warp" --version)"
}

# Spack and spack/local's build (the benchmarks of the `spack` environment on `local`)
install_spack() {
    bash "$MDXBENCH_ROOT/ci/spack.sh" setup
    [[ $(cat "$MDXBENCH_STATE_DIR/spack/mode") == none ]] && return 0
    ((do_apt)) || { log "Spack: --no-apt: spack/local is not built here (ci/spack-build.sh SYSTEM builds a site's)"; return 0; }
    bash "$MDXBENCH_ROOT/ci/spack-build.sh" local
    # the compile-only CUDA the GPU benchmarks' builds use (ci/spack-gpu.sh; PyPI's wheels)
    bash "$MDXBENCH_ROOT/ci/cuda.sh" setup
}

# beside(NAME FUNCTION): run an install step in the background (its own log lines as it
# goes); wait_beside: wait for every such step, failing with the names of those that
# failed. MinIO's and warp's Go builds and the Elasticsearch download depend on no other
# step: they run while pip fills the venv and Spack builds spack/local (downloads beside
# compiles: 1-2 minutes off a fresh clone's install)
beside_pids=() beside_names=()
beside() {
    "$2" & beside_pids+=($!); beside_names+=("$1")
    # a step of the foreground that dies takes these with it
    trap 'kill "${beside_pids[@]}" 2>/dev/null || true' EXIT
}
wait_beside() {
    local i failed=()
    for i in "${!beside_pids[@]}"; do
        wait "${beside_pids[$i]}" || failed+=("${beside_names[$i]}")
    done
    trap - EXIT
    ((${#failed[@]} == 0)) || die "install failed: ${failed[*]} (its lines above)"
}

mkdir -p "$MDXBENCH_STATE_DIR/logs"
((do_apt)) && install_apt
((do_apt)) && install_scrontab
# the venv's directory first: the Go tools are linked into its bin/
[[ -x $MDXBENCH_VENV/bin/python ]] || "${MDXBENCH_PYTHON:-python3}" -m venv "$MDXBENCH_VENV"
if [[ $go_tools == now ]]; then
    beside 'MinIO and warp' install_go_tools
else
    # not waited for: the status file appears when the build ends ("EXIT-CODE LOG"). At
    # nice 19 it takes the cores only when nothing else wants them (pip's downloads,
    # Spack's one-core steps, the tests' waits): beside them at the same priority it took
    # half of them and stretched Spack's build as much as building first would
    mkdir -p "${GO_TOOLS_STATUS%/*}" && rm -f "$GO_TOOLS_STATUS"
    (
        renice -n 19 -p "$BASHPID" >/dev/null
        rc=0
        (install_go_tools) >"$GO_TOOLS_LOG" 2>&1 </dev/null || rc=$?
        echo "$rc $GO_TOOLS_LOG" >"$GO_TOOLS_STATUS.tmp" && mv "$GO_TOOLS_STATUS.tmp" "$GO_TOOLS_STATUS"
    ) </dev/null >/dev/null 2>&1 &
    echo $! >"$GO_TOOLS_PID"
    log "MinIO and warp: building in the background ($GO_TOOLS_LOG; its end in $GO_TOOLS_STATUS)"
fi
((do_es)) && beside Elasticsearch install_es
[[ ${MDXBENCH_PDS:-1} == 1 ]] && beside "polars-benchmark's Python" install_pds_python
install_venv
install_spack
# the GPU benchmarks compiled for sm_80 and sm_90 (ci/spack-gpu.sh), at nice 19 beside the
# first tests, which mostly wait (as MinIO's and warp's build): test_spack.py waits for its
# status (MDXBENCH_GPU_BUILD, which ci/test.sh sets where the log below exists)
[[ $go_tools == later ]] && rm -f "$GPU_BUILD_STATUS" "$GPU_BUILD_LOG"
if [[ $go_tools == later && $(cat "$MDXBENCH_STATE_DIR/spack/mode" 2>/dev/null) != none ]] && ((do_apt)); then
    mkdir -p "${GPU_BUILD_STATUS%/*}" "${GPU_BUILD_LOG%/*}" && : >"$GPU_BUILD_LOG"
    (
        renice -n 19 -p "$BASHPID" >/dev/null
        rc=0
        bash "$MDXBENCH_ROOT/ci/spack-gpu.sh" >"$GPU_BUILD_LOG" 2>&1 </dev/null || rc=$?
        echo "$rc $GPU_BUILD_LOG" >"$GPU_BUILD_STATUS.tmp" && mv "$GPU_BUILD_STATUS.tmp" "$GPU_BUILD_STATUS"
    ) </dev/null >/dev/null 2>&1 &
    log "GPU benchmarks: building in the background ($GPU_BUILD_LOG; its end in $GPU_BUILD_STATUS)"
fi
wait_beside
log "install complete"
