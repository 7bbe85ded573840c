#!/usr/bin/env bash
# warp-enough.sh OP EXTEND WARP ARGS...   (used by checks/storage/warp.py)
#
# Runs `WARP ARGS...` (a `warp get|put ... --duration=D --json` command) and, where warp
# reports that the measured operation OP had too few samples -- its analysis needs at
# least two one-second segments during which every client thread was busy, which a short
# run of many slow 10 MiB requests may not have -- runs it again with twice the duration,
# at most EXTEND more times. The duration is thus the one the samples need, not a guess
# tuned on one machine. Only the last run's output reaches stdout (the parser reads one
# report); each extension is said on stderr and in warp-durations.txt.
# A GET run's preparation (its upload, reported as a skipped PUT) is not the measured
# operation and never extends the run.
set -u
op=$(printf %s "$1" | tr '[:lower:]' '[:upper:]')
extend=$2
shift 2
args=("$@")

# the index of --duration=... in args, and its value in seconds (warp's s, m and h units)
dur_i=-1 secs=
for i in "${!args[@]}"; do
    if [[ ${args[$i]} == --duration=* ]]; then
        dur_i=$i
        v=${args[$i]#--duration=}
        case $v in
            *h) secs=$((${v%h} * 3600)) ;;
            *m) secs=$((${v%m} * 60)) ;;
            *s) secs=${v%s} ;;
            *) secs=$v ;;
        esac
        [[ $secs =~ ^[0-9]+$ ]] || secs=
    fi
done

# too_few FILE: warp's JSON report says the operation OP was skipped (json.MarshalIndent:
# an operation's own keys are indented by six spaces, its nested objects' deeper)
too_few() {
    awk -v op="\"$op\"," '
        /^      "type": / { t = $2 }
        /^      "skipped": true/ && t == op { found = 1 }
        END { exit !found }' "$1"
}

out=warp-attempt.out
: >warp-durations.txt
for ((try = 0; ; try++)); do
    "${args[@]}" >"$out" 2>&1
    rc=$?
    echo "${secs:-?}" >>warp-durations.txt
    if ((rc == 0 && try < extend && dur_i >= 0)) && [[ -n $secs ]] && too_few "$out"; then
        echo "mdxbench: warp $op had too few samples in ${secs}s: running it again for $((secs * 2))s" >&2
        secs=$((secs * 2))
        args[dur_i]="--duration=${secs}s"
        continue
    fi
    break
done
cat "$out"
exit "$rc"
