#!/usr/bin/env bash
# The test suite, from a fresh Debian 12 machine (as root): install what is missing, start
# the real Slurm and Elasticsearch, and run pytest (unit and integration tests).
# Extra arguments go to pytest, one run, e.g.  ci/test.sh -m 'not integration'
# Without them: two pytest sessions at once. The modules that judge figures this machine
# measures (tests/integration/conftest.py: QUIET -- the namespace cluster's splits, fleet
# and inter-node runs, the main job) one after another at normal priority; beside them at
# nice 19 every other integration module (they wait on Slurm, Elasticsearch, Chromium, or
# judge no figure a busy machine moves), then the unit tests on two pytest-xdist workers.
# The two sessions share this machine's Slurm, Elasticsearch and MinIO one module at a
# time (conftest.SERVICES_LOCK); the fleet's acceptance, whose MPI runs nothing may share
# the cores with, waits for the side to end (conftest.ALONE) and runs last but the
# account of the checks. The side's output goes to a log, printed at the end.
# MinIO's and warp's Go builds (about 7 CPU-minutes from empty Go caches) start with the
# install at nice 19 and go on beside the side's first modules (conftest.EARLY) and the
# incident split (conftest.QUIET_WITHOUT_GO), which need neither MinIO nor warp; every other
# module waits for the build's status (MDXBENCH_GO_TOOLS_BUILD).
source "$(dirname "$0")/lib.sh"
if (($#)); then
    prepare_local
    exec python -m pytest -ra --durations=30 "$@"
fi
prepare_local --go-tools-later
export MDXBENCH_GO_TOOLS_BUILD=$GO_TOOLS_STATUS
# the GPU benchmarks' build, where ci/install.sh started one (Spack at hand)
if [[ -f $GPU_BUILD_LOG ]]; then export MDXBENCH_GPU_BUILD=$GPU_BUILD_STATUS; fi
rc=0
side_log=$MDXBENCH_STATE_DIR/logs/tests-beside.log
# written when the side's tests end: the modules that need the machine to themselves
# (conftest.ALONE) wait for it
export MDXBENCH_TESTS_BESIDE_DONE=$MDXBENCH_STATE_DIR/logs/tests-beside.done
mkdir -p "${side_log%/*}"
rm -f "$MDXBENCH_TESTS_BESIDE_DONE"
(
    renice -n 19 -p "$BASHPID" >/dev/null
    src=0
    python -m pytest -ra --durations=30 -m 'not quiet' tests/integration || src=$?
    python -m pytest -ra --durations=15 -n 2 tests/unit || src=$((src ? src : $?))
    echo "$src" >"$MDXBENCH_TESTS_BESIDE_DONE"
    exit "$src"
) >"$side_log" 2>&1 </dev/null &
side=$!
log "tests: the modules that measure here, one after another; every other module and the unit tests beside them at nice 19 (their output: $side_log, printed when both end)"
# its own temporary directory: the side's pytest owns /tmp/pytest-of-root (test_site opens
# it to an unprivileged user; a second session there would close it again)
quiet_tmp=$(mktemp -d "${TMPDIR:-/tmp}/mdxbench-quiet.XXXXXX")
TMPDIR=$quiet_tmp python -m pytest -ra --durations=30 -m quiet tests/integration || rc=$?
side_rc=0
wait "$side" || side_rc=$?
echo "================ beside (nice 19): the other integration modules, then the unit tests ================"
cat "$side_log"
echo "================ end of the side's output (exit $side_rc) ================"
((rc)) || rc=$side_rc
# a build no test waited for (all of them deselected) still has to end, and succeed
wait_for "MinIO's and warp's build ($MDXBENCH_GO_TOOLS_BUILD)" 1800 \
    "$GO_TOOLS_LOG" test -f "$MDXBENCH_GO_TOOLS_BUILD"
read -r gorc golog <"$MDXBENCH_GO_TOOLS_BUILD"
if ((gorc != 0)); then
    tail -n 40 "$golog" >&2
    die "MinIO and warp failed to build (exit $gorc): $golog"
fi
exit "$rc"
