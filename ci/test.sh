#!/usr/bin/env bash
# The test suite, from a fresh Debian 12 machine (as root): install what is missing, start
# the real Slurm and Elasticsearch, and run pytest (unit and integration tests).
# Extra arguments go to pytest, e.g.  ci/test.sh -m 'not integration'
source "$(dirname "$0")/lib.sh"
here=$(cd "$(dirname "$0")" && pwd)

bash "$here/install.sh"
bash "$here/services.sh" start
source "$here/activate.sh"
cd "$MDXBENCH_ROOT"
python -m pytest -ra "$@"
