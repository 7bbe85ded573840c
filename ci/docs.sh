#!/usr/bin/env bash
# Build the reference documentation (docs/) with Sphinx, warnings as errors, into
# $MDXBENCH_STATE_DIR/docs (or the directory given). Needs the venv with the docs extra
# (ci/install.sh installs it).
source "$(dirname "$0")/lib.sh"
out=${1:-$MDXBENCH_STATE_DIR/docs}
[[ -x $MDXBENCH_VENV/bin/python ]] || die "no virtual environment at $MDXBENCH_VENV: run ci/install.sh (or ci/site-install.sh) first"
"$MDXBENCH_VENV/bin/python" -m sphinx -W --keep-going -q -b html "$MDXBENCH_ROOT/docs" "$out"
log "documentation built: $out/index.html"
