#!/usr/bin/env bash
# The test suite, from a fresh Debian 12 machine (as root): install what is missing, start
# the real Slurm and Elasticsearch, and run pytest (unit and integration tests).
# Extra arguments go to pytest, one run, e.g.  ci/test.sh -m 'not integration'
# Without them: three pytest sessions at once. The modules that judge figures this machine
# measures (tests/integration/conftest.py: QUIET -- the incident split, the main job, the
# namespace cluster's inter-node runs, the fleet's acceptance) one after another at normal
# priority; beside them at nice 19 the other integration modules (they wait on Slurm,
# Elasticsearch, Chromium, or judge no figure a busy machine moves): those that use this
# machine's Slurm, Elasticsearch or MinIO in one session (one module at a time with the
# quiet session's: conftest.SERVICES_LOCK), the others in another; then the unit tests on
# two pytest-xdist workers, in whichever of the two ends its modules first. The fleet's acceptance, whose MPI runs nothing may share
# the cores with, waits for both to end (conftest.ALONE) and runs last but the account of
# the checks. The output of the sessions beside goes to logs, printed at the end.
# MinIO's and warp's Go builds (about 7 CPU-minutes from empty Go caches) start with the
# install at nice 19 and go on beside the side's first modules (conftest.EARLY) and the
# incident split (conftest.QUIET_WITHOUT_GO), which need neither MinIO nor warp; every other
# module waits for the build's status (MDXBENCH_GO_TOOLS_BUILD); a module of the quiet
# session that has to wait (the main job's) takes the build to its own priority
# (MDXBENCH_GO_TOOLS_PID), instead of building MinIO a second time as its install did.
source "$(dirname "$0")/lib.sh"
if (($#)); then
    prepare_local
    exec python -m pytest -ra --durations=30 "$@"
fi
prepare_local --go-tools-later
export MDXBENCH_GO_TOOLS_BUILD=$GO_TOOLS_STATUS MDXBENCH_GO_TOOLS_PID=$GO_TOOLS_PID
# the GPU benchmarks' build, where ci/install.sh started one (Spack at hand)
if [[ -f $GPU_BUILD_LOG ]]; then export MDXBENCH_GPU_BUILD=$GPU_BUILD_STATUS; fi
rc=0
# The sessions beside, at nice 19, each with its log (printed at the end) and a file its exit
# status is written to when it ends: the modules that need the machine to themselves
# (conftest.ALONE) wait for all of them (MDXBENCH_TESTS_BESIDE_DONE, colon-separated).
#   services: the modules that use this machine's Slurm, Elasticsearch or MinIO (one at a
#             time with the quiet session's, conftest.SERVICES_LOCK); /tmp's pytest
#             directory, which test_site opens to an unprivileged user
#   other:    the modules that use none of them (Spack's, the builds', the reports'); a
#             temporary directory of its own
# and then, in whichever of the two ends its modules first, the unit tests on two workers.
names=(services other)
export MDXBENCH_TESTS_BESIDE_DONE=
for name in "${names[@]}"; do
    rm -f "$MDXBENCH_STATE_DIR/logs/tests-$name.done"
    MDXBENCH_TESTS_BESIDE_DONE+=${MDXBENCH_TESTS_BESIDE_DONE:+:}$MDXBENCH_STATE_DIR/logs/tests-$name.done
done
mkdir -p "$MDXBENCH_STATE_DIR/logs"
unit_claim=$MDXBENCH_STATE_DIR/logs/unit-tests.claimed
rmdir "$unit_claim" 2>/dev/null || true
pids=()
beside() {      # NAME: one session beside, in the background
    local name=$1 done=$MDXBENCH_STATE_DIR/logs/tests-$1.done
    (
        renice -n 19 -p "$BASHPID" >/dev/null
        src=0
        if [[ $name == services ]]; then
            python -m pytest -ra --durations=30 -m 'not quiet and services' tests/integration || src=$?
        else
            export TMPDIR
            TMPDIR=$(mktemp -d "${TMPDIR:-/tmp}/mdxbench-$name.XXXXXX")
            python -m pytest -ra --durations=30 -m 'not quiet and not services' tests/integration || src=$?
        fi
        # the unit tests: by the session that ends its modules first (mkdir is atomic), so
        # that the fleet's acceptance, which waits for both, waits for the shorter tail
        if mkdir "$unit_claim" 2>/dev/null; then
            echo "================ the unit tests, in the session that ended its modules first ($name) ================"
            python -m pytest -ra --durations=15 -n 2 tests/unit \
                || src=$((src ? src : $?))
        fi
        echo "$src" >"$done"
        exit "$src"
    ) >"$MDXBENCH_STATE_DIR/logs/tests-$name.log" 2>&1 </dev/null &
    pids+=($!)
}
for name in "${names[@]}"; do beside "$name"; done
log "tests: the modules that measure here one after another; beside them at nice 19 the modules of this machine's services, and the others, then the unit tests in whichever ends first (their output: $MDXBENCH_STATE_DIR/logs/tests-{${names[*]// /,}}.log, printed when all end)"
quiet_tmp=$(mktemp -d "${TMPDIR:-/tmp}/mdxbench-quiet.XXXXXX")
TMPDIR=$quiet_tmp python -m pytest -ra --durations=30 -m quiet tests/integration || rc=$?
for i in "${!names[@]}"; do
    side_rc=0
    wait "${pids[$i]}" || side_rc=$?
    echo "================ beside (nice 19): ${names[$i]} ================"
    cat "$MDXBENCH_STATE_DIR/logs/tests-${names[$i]}.log"
    echo "================ end of ${names[$i]}'s output (exit $side_rc) ================"
    ((rc)) || rc=$side_rc
done
# a build no test waited for (all of them deselected) still has to end, and succeed
wait_for "MinIO's and warp's build ($MDXBENCH_GO_TOOLS_BUILD)" 1800 \
    "$GO_TOOLS_LOG" test -f "$MDXBENCH_GO_TOOLS_BUILD"
read -r gorc golog <"$MDXBENCH_GO_TOOLS_BUILD"
if ((gorc != 0)); then
    tail -n 40 "$golog" >&2
    die "MinIO and warp failed to build (exit $gorc): $golog"
fi
exit "$rc"
