#!/bin/sh
# per-gpu.sh N OPTION CMD [ARGS...]: run CMD ARGS OPTION i for each GPU i of 0..N-1, one
# after another, each run's output between "== mdxbench: GPU i ==" and
# "== mdxbench: GPU i exit RC ==" (mdxbench.parsers.pergpu splits on them), its stderr
# with its stdout: BabelStream reports wrong results ("Validation failed") on stderr and
# exits 0. Exits 1 when a run failed, after running the others.
n=${1:?number of GPUs}
opt=${2:?the option that selects a GPU, e.g. --device}
shift 2
[ "$#" -gt 0 ] || { echo "per-gpu.sh: no command" >&2; exit 2; }
failed=0
i=0
while [ "$i" -lt "$n" ]; do
    echo "== mdxbench: GPU $i =="
    "$@" "$opt" "$i" 2>&1
    rc=$?
    echo "== mdxbench: GPU $i exit $rc =="
    [ "$rc" -eq 0 ] || failed=1
    i=$((i + 1))
done
exit "$failed"
