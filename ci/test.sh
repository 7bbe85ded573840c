#!/usr/bin/env bash
# The test suite, from a fresh Debian 12 machine (as root): install what is missing, start
# the real Slurm and Elasticsearch, and run pytest (unit and integration tests).
# Extra arguments go to pytest, e.g.  ci/test.sh -m 'not integration'
source "$(dirname "$0")/lib.sh"
prepare_local
python -m pytest -ra --durations=30 "$@"
