#!/usr/bin/env bash
# The test suite, from a fresh Debian 12 machine (as root): install what is missing, start
# the real Slurm and Elasticsearch, and run pytest (unit and integration tests).
# Extra arguments go to pytest, one run, e.g.  ci/test.sh -m 'not integration'
# Without them: the unit tests first, on two pytest-xdist workers (pure Python, CPU-bound:
# 3.5 min on one core, 2 on two), then the integration tests in one process, one after
# another (they share the Slurm clusters and measure this machine's CPUs). Both run, and
# either failing fails the suite. MinIO's and warp's Go builds (about 7 CPU-minutes from
# empty Go caches) run beside the unit tests and the integration modules that need neither
# them nor a quiet machine (tests/integration/conftest.py: EARLY, run first); every other
# module waits for them (MDXBENCH_GO_TOOLS_BUILD: the file their exit status is written to).
source "$(dirname "$0")/lib.sh"
if (($#)); then
    prepare_local
    exec python -m pytest -ra --durations=30 "$@"
fi
prepare_local --go-tools-later
export MDXBENCH_GO_TOOLS_BUILD=$MDXBENCH_STATE_DIR/gotools/build.status
golog=$MDXBENCH_STATE_DIR/logs/go-tools.log
mkdir -p "${MDXBENCH_GO_TOOLS_BUILD%/*}"
rm -f "$MDXBENCH_GO_TOOLS_BUILD"
(
    rc=0
    bash ci/install.sh --go-tools-only >"$golog" 2>&1 || rc=$?
    echo "$rc $golog" >"$MDXBENCH_GO_TOOLS_BUILD.tmp"
    mv "$MDXBENCH_GO_TOOLS_BUILD.tmp" "$MDXBENCH_GO_TOOLS_BUILD"
) &
gopid=$!
rc=0
python -m pytest -ra --durations=15 -n 2 tests/unit || rc=$?
python -m pytest -ra --durations=30 tests/integration || rc=$((rc ? rc : $?))
# a build no test waited for (all deselected) still has to succeed
wait "$gopid"
read -r gorc _ <"$MDXBENCH_GO_TOOLS_BUILD"
if ((gorc != 0)); then
    cat "$golog" >&2
    die "MinIO and warp failed to build (exit $gorc): $golog"
fi
exit "$rc"
