#!/usr/bin/env bash
# The test suite, from a fresh Debian 12 machine (as root): install what is missing, start
# the real Slurm and Elasticsearch, and run pytest (unit and integration tests).
# Extra arguments go to pytest, one run, e.g.  ci/test.sh -m 'not integration'
# Without them: the integration tests in one process, one after another (they share the
# Slurm clusters and measure this machine's CPUs), then the unit tests on two
# pytest-xdist workers (pure Python, CPU-bound: 3.5 min on one core, 1.6 on two). Both run,
# and either failing fails the suite. MinIO's and warp's Go builds (about 7 CPU-minutes
# from empty Go caches) start with the install and go on beside the integration modules
# that need neither them nor a quiet machine (tests/integration/conftest.py: EARLY, run
# first, most of them waiting on Elasticsearch or Slurm); every other module waits for the
# build's status (MDXBENCH_GO_TOOLS_BUILD). The unit tests, which would only share the two
# cores with it, come last.
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
python -m pytest -ra --durations=30 tests/integration || rc=$?
python -m pytest -ra --durations=15 -n 2 tests/unit || rc=$((rc ? rc : $?))
# a build no test waited for (all of them deselected) still has to end, and succeed
wait_for "MinIO's and warp's build ($MDXBENCH_GO_TOOLS_BUILD)" 1800 \
    "$GO_TOOLS_LOG" test -f "$MDXBENCH_GO_TOOLS_BUILD"
read -r gorc golog <"$MDXBENCH_GO_TOOLS_BUILD"
if ((gorc != 0)); then
    tail -n 40 "$golog" >&2
    die "MinIO and warp failed to build (exit $gorc): $golog"
fi
exit "$rc"
