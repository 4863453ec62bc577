#!/usr/bin/env bash
# flashps batch loses nothing silently: a folder output fails alone, an empty output is redone,
# SIGINT / SIGTERM stop at the next step and still print the summary and write the --json report
# (exit 130 / 143, no temporaries left), a second SIGINT ends it at once, and the .partial files
# of a SIGKILLed run are removed by the next run. Usage: cli_batch_interrupt.sh PATH_TO_FLASHPS
set -uo pipefail
flashps="$1"
samples="$(cd "$(dirname "$0")/../../samples" && pwd)"
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
export FLASHPS_CACHE_DIR="$work/store" FLASHPS_THREADS="${FLASHPS_THREADS:-2}"
# Job control: a non-interactive shell starts background jobs with SIGINT ignored, which the
# CLI (like any tool) then keeps ignored.
set -m
failures=0
fail() { echo "FAIL: $*"; failures=$((failures + 1)); }

# manifest FILE N: N edits of the sample photo into $work/out/oI.png, 2 steps each.
manifest() {
  for i in $(seq 1 "$2"); do
    printf '{"image": "%s/images/fig.jpg", "mask": "%s/masks/fig.png", "output": "%s/out/o%d.png", "steps": 2, "seed": %d}\n' \
      "$samples" "$samples" "$work" "$i" "$i"
  done >"$1"
}
partials() { find "$work/out" -maxdepth 1 -name '.partial-*' 2>/dev/null; }
# Starts a batch of 6 edits, one at a time, in the background ($batch_pid); returns once the
# first output is written (the second edit is then running).
start_batch() {
  rm -rf "$work/out" "$work/report.json" "$work/stdout" "$work/stderr"
  manifest "$work/six.jsonl" 6
  "$flashps" batch "$work/six.jsonl" -q --max-queued 1 --json "$work/report.json" \
    >"$work/stdout" 2>"$work/stderr" &
  batch_pid=$!
  for _ in $(seq 1 1200); do
    [ -f "$work/out/o1.png" ] && return 0
    kill -0 "$batch_pid" 2>/dev/null || break
    sleep 0.05
  done
  fail "the first output of the batch never appeared: $(cat "$work/stderr")"
  return 1
}
# check_interrupted NAME SIGNAL EXIT_CODE STDERR_TEXT: a clean stop after `kill -SIGNAL`.
check_interrupted() {
  local name="$1" signal="$2" expected="$3" status
  if ! start_batch; then kill -KILL "$batch_pid" 2>/dev/null; wait "$batch_pid" 2>/dev/null; return; fi
  kill -"$signal" "$batch_pid"
  wait "$batch_pid"
  status=$?
  local summary done cancelled
  summary=$(grep '^batch .*: [0-9]* done' "$work/stdout")
  done=$(sed -n 's/.*: \([0-9]*\) done.*/\1/p' <<<"$summary")
  cancelled=$(sed -n 's/.* \([0-9]*\) cancelled.*/\1/p' <<<"$summary")
  if [ $status -ne "$expected" ]; then
    fail "$name: exit $status (expected $expected): $(cat "$work/stdout" "$work/stderr")"
  elif [ -z "$summary" ] || [ "${done:-0}" -lt 1 ] || [ "${cancelled:-0}" -lt 1 ] || [ $((done + cancelled)) -ne 6 ]; then
    fail "$name: no summary with the done and cancelled edits: $(cat "$work/stdout")"
  elif ! grep -q '"cancelled": '"$cancelled" "$work/report.json" 2>/dev/null ||
       [ "$(grep -c '"status": "cancelled"' "$work/report.json")" -ne "$cancelled" ] ||
       [ "$(grep -c '"status": "done"' "$work/report.json")" -ne "$done" ]; then
    fail "$name: the --json report is missing or does not match the summary"
  elif [ "$(find "$work/out" -name 'o*.png' | wc -l)" -ne "$done" ] || [ -n "$(partials)" ]; then
    fail "$name: outputs do not match the done edits, or temporaries remain: $(ls -A "$work/out")"
  elif ! grep -q "$4" "$work/stderr"; then
    fail "$name: stderr does not say how it ended: $(cat "$work/stderr")"
  else
    echo "ok: $name: exit $status, $done done, $cancelled cancelled, report written, no temporaries"
  fi
}

check_interrupted "SIGINT" INT 130 "interrupted: "
check_interrupted "SIGTERM" TERM 143 "terminated: "

# A second SIGINT while the batch is finishing ends it at once: no summary.
if start_batch; then
  kill -INT "$batch_pid"
  for _ in $(seq 1 200); do grep -q 'interrupted: stopping' "$work/stderr" && break; sleep 0.01; done
  kill -INT "$batch_pid" 2>/dev/null
  wait "$batch_pid"
  status=$?
  if [ $status -eq 130 ] && ! grep -q ' done, ' "$work/stdout"; then
    echo "ok: a second SIGINT ends the batch at once"
  else
    fail "second SIGINT: exit $status, stdout: $(cat "$work/stdout")"
  fi
fi

# SIGKILL: nothing runs after it, so the next run removes the unfinished files of the killed
# process (planted as it leaves them: the write window is too short to hit reliably) and redoes
# what is missing; a live process's partial file is left alone.
if start_batch; then
  kill -KILL "$batch_pid"
  wait "$batch_pid" 2>/dev/null
  printf 'half' >"$work/out/.partial-$batch_pid-o5.png.tmp-$batch_pid-0"
  printf 'half' >"$work/out/.partial-$batch_pid-o6.png"
  printf 'busy' >"$work/out/.partial-$$-o9.png"  # this shell is alive
  output=$("$flashps" batch "$work/six.jsonl" -q 2>&1)
  status=$?
  if [ $status -eq 0 ] && grep -q "removed [23] unfinished output file" <<<"$output" &&
     [ "$(partials)" = "$work/out/.partial-$$-o9.png" ] && [ "$(find "$work/out" -name 'o*.png' | wc -l)" -eq 6 ]; then
    echo "ok: after SIGKILL the next run removes the stale .partial files and finishes"
  else
    fail "after SIGKILL: exit $status, output: $output, left: $(ls -A "$work/out")"
  fi
fi

# A folder output fails that line only; an empty output is not "already written".
rm -rf "$work/out" && mkdir -p "$work/out/o1.png" && : >"$work/out/o2.png"
manifest "$work/two.jsonl" 2
output=$("$flashps" batch "$work/two.jsonl" -q 2>&1)
status=$?
if [ $status -eq 2 ] && grep -q "two.jsonl:1: output $work/out/o1.png is a folder, not an image file" <<<"$output" &&
   [ -s "$work/out/o2.png" ] && grep -q '1 done, 0 skipped' <<<"$output"; then
  echo "ok: a folder output fails alone, an empty output is redone"
else
  fail "folder/empty outputs: exit $status, output: $output"
fi

[ $failures -eq 0 ] || { echo "$failures failure(s)"; exit 1; }
echo "all batch interruption checks passed"
