#!/usr/bin/env bash
# On a site (a login node of mdx II, Laurel or AWS ParallelCluster): install the Python
# side of mdxbench for the current user -- no root, no apt, no Elasticsearch, no daemons.
# It makes the virtual environment in the state directory (reframe-hpc pinned, this
# project editable, the data-science workload's libraries) and the state directory itself.
# Then:  source ci/activate.sh && reframe -c checks/ -r --system mdx2 && mdxbench ingest
# Needs: python3 >= 3.11 with venv (MDXBENCH_PYTHON names another), and PyPI (or a mirror
# pip is configured for).
source "$(dirname "$0")/lib.sh"
MDXBENCH_PIP_EXTRAS=${MDXBENCH_PIP_EXTRAS:-datascience} bash "$(dirname "$0")/install.sh" --no-apt --no-es
log "done: source ci/activate.sh, then e.g. reframe -c checks/ -l --system mdx2"
