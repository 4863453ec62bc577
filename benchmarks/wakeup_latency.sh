#!/usr/bin/env bash
# Wake-up lateness of a nice-0 thread on this machine, idle and beside two busy loops (one per core
# of the 2-core development VM) at nice +10 (as flashps serve runs denoising), as SCHED_IDLE, and
# at nice 0: benchmarks/README.md, issue 20's HTTP tail.
#   benchmarks/wakeup_latency.sh [SECONDS per condition, default 20] [BUSY LOOPS, default nproc]
set -euo pipefail
seconds=${1:-20}
loops=${2:-$(nproc)}
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
cc -O2 -o "$work/wakeup_latency" "$(dirname "$0")/wakeup_latency.c"
run_beside() {  # LABEL [COMMAND PREFIX...]: the measurement beside $loops busy loops started with the prefix
  local label=$1
  shift
  local pids=()
  if [ $# -gt 0 ]; then
    for ((i = 0; i < loops; ++i)); do "$@" sh -c 'while :; do :; done' & pids+=($!); done
    sleep 0.5
  fi
  printf '%-22s ' "$label"
  "$work/wakeup_latency" "$seconds"
  [ ${#pids[@]} -eq 0 ] || kill "${pids[@]}"
  wait 2>/dev/null || true
}
run_beside "idle"
run_beside "beside nice +10 loops" nice -n 10
run_beside "beside SCHED_IDLE loops" chrt -i 0
run_beside "beside nice 0 loops" env
