#!/usr/bin/env bash
# The test suite, from a fresh Debian 12 machine (as root): install what is missing, start
# the real Slurm and Elasticsearch, and run pytest (unit and integration tests).
# Extra arguments go to pytest, one run, e.g.  ci/test.sh -m 'not integration'
# Without them: the unit tests first, on two pytest-xdist workers (pure Python, CPU-bound:
# 3.5 min on one core, 2 on two), then the integration tests in one process, one after
# another (they share the Slurm clusters and measure this machine's CPUs). Both run, and
# either failing fails the suite.
source "$(dirname "$0")/lib.sh"
prepare_local
if (($#)); then
    exec python -m pytest -ra --durations=30 "$@"
fi
rc=0
python -m pytest -ra --durations=15 -n 2 tests/unit || rc=$?
python -m pytest -ra --durations=30 tests/integration || rc=$((rc ? rc : $?))
exit "$rc"
