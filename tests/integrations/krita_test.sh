#!/usr/bin/env bash
# The FlashPS Krita plugin (plugins/krita) in the real Krita 5, headless under Xvfb, against a real
# `flashps serve`. Installs it with scripts/integrate-krita.sh into a temporary HOME, plus a
# test-only startup plugin (krita_scenario/) that drives the docker's own methods (generate,
# cancel, show_result, apply_current), writes report.json and quits Krita. Checked: a cache miss
# then a hit on the same region, 3 variations, Apply's new layer (the whole result, with a
# transparency mask equal to the selection: 0/255 for a plain selection, the soft values of a
# feathered one; the composite changes inside the selection only), PNG export, a 422 and an
# unreachable server shown in the docker, cancel, and a server killed mid-edit (reported; a
# generate after its restart works). Also: the --zip archive imports with Krita's own importer.
# Usage: krita_test.sh FLASHPS_BUILD_DIR   (exit 77: skipped, Krita or Xvfb missing)
#        krita_test.sh --installed          the packages' files: krita-plugin-flashps in Krita's system
#                                           pykrita folder (enabled in kritarc), flashps on PATH
# FLASHPS_KRITA_SCREENSHOT=FILE saves a screenshot of the docker. FLASHPS_KRITA_QUIT_SECONDS (60):
# how long Krita may take to quit after the report (a loaded machine's chroot needed more).
set -euo pipefail

installed=""
if [ "${1:-}" = --installed ]; then
  installed=/usr/share/krita/pykrita
  flashps=$(command -v flashps) || { echo "installed: no flashps on PATH" >&2; exit 2; }
else
  [ $# -eq 1 ] && [ -x "$1/cli/flashps" ] || { echo "usage: $0 FLASHPS_BUILD_DIR (with cli/flashps) | --installed" >&2; exit 2; }
  flashps=$(cd "$1" && pwd)/cli/flashps
fi
here=$(cd "$(dirname "$0")" && pwd)
root=$(cd "$here/../.." && pwd)
for tool in krita xvfb-run; do
  command -v "$tool" >/dev/null || { echo "skipped: $tool is not installed (apt install krita xvfb xauth)" >&2; exit 77; }
done
/usr/bin/python3 -c 'import PyQt5.QtCore' 2>/dev/null ||
  { echo "skipped: Krita's Python plugins need PyQt5 (apt install python3-pyqt5)" >&2; exit 77; }

tmp=$(mktemp -d)
server_pid="" krita_pid=""
cleanup() {
  local status=$?
  set +e
  # Krita runs in its own process group (setsid): this ends xvfb-run, Xvfb and Krita together,
  # politely first (a killed Xvfb leaves its /tmp/.X*-lock behind).
  if [ -n "$krita_pid" ] && kill -TERM -- "-$krita_pid" 2>/dev/null; then
    for _ in $(seq 25); do kill -0 -- "-$krita_pid" 2>/dev/null || break; sleep 0.2; done
    kill -KILL -- "-$krita_pid" 2>/dev/null
  fi
  [ -n "$server_pid" ] && kill -TERM "$server_pid" 2>/dev/null && wait "$server_pid" 2>/dev/null
  if [ $status -eq 0 ]; then rm -rf "$tmp"; else echo "kept $tmp for inspection"; fi
  exit $status
}
trap cleanup EXIT
fail() {
  echo "FAIL: $*"
  [ -f "$tmp/out/progress.log" ] && { echo "--- scenario progress:"; cat "$tmp/out/progress.log"; }
  [ -s "$tmp/out/stacks.txt" ] && { echo "--- Python stacks in Krita (every 120 s):"; tail -n 40 "$tmp/out/stacks.txt"; }
  [ -f "$tmp/krita.log" ] && { echo "--- krita log (tail):"; grep -v -i -E 'qt.svg|kf.i18n' "$tmp/krita.log" | tail -n 25; }
  [ -f "$tmp/server.err" ] && { echo "--- server stderr:"; tail -n 5 "$tmp/server.err"; }
  exit 1
}
ok() { echo "ok - $*"; }

# A private Krita: fresh config, resources and caches; a private activation store.
export HOME=$tmp/home XDG_DATA_HOME=$tmp/home/.local/share XDG_CONFIG_HOME=$tmp/home/.config
export XDG_CACHE_HOME=$tmp/home/.cache XDG_RUNTIME_DIR=$tmp/runtime FLASHPS_CACHE_DIR=$tmp/cache
export FLASHPS_THREADS=${FLASHPS_THREADS:-2} FLASHPS_KRITA_TEST_DIR=$tmp/out
mkdir -p "$XDG_CONFIG_HOME" "$XDG_DATA_HOME" "$XDG_RUNTIME_DIR" "$tmp/out"
chmod 700 "$XDG_RUNTIME_DIR"
printf '[python]\nenable_flashps_krita_test=true\n' >"$XDG_CONFIG_HOME/kritarc"
pykrita=$XDG_DATA_HOME/krita/pykrita
if [ -n "$installed" ]; then  # a system plugin is enabled as a user ticks it: one kritarc line
  [ -f "$installed/flashps_krita/__init__.py" ] && [ -f "$installed/flashps_krita.desktop" ] || fail "not installed in $installed"
  printf 'enable_flashps_krita=true\n' >>"$XDG_CONFIG_HOME/kritarc"
  mkdir -p "$pykrita"
  ok "the plugin is installed in $installed; enabled in kritarc"
else
  "$root/scripts/integrate-krita.sh" >"$tmp/install.log" || fail "integrate-krita.sh: $(cat "$tmp/install.log")"
  [ -f "$pykrita/flashps_krita/__init__.py" ] && [ -f "$pykrita/flashps_krita.desktop" ] || fail "not installed in $pykrita"
  grep -qx 'enable_flashps_krita=true' "$XDG_CONFIG_HOME/kritarc" && grep -qx 'enable_flashps_krita_test=true' "$XDG_CONFIG_HOME/kritarc" ||
    fail "kritarc: $(cat "$XDG_CONFIG_HOME/kritarc")"
  ok "integrate-krita.sh installed the plugin and enabled it in kritarc"
fi
cp -R "$here/krita_scenario/flashps_krita_test" "$here/krita_scenario/flashps_krita_test.desktop" "$pykrita/"

# The zip, through Krita's own importer module (pure Python; i18n is Krita's builtin there).
importer=/usr/share/krita/pykrita/plugin_importer/plugin_importer.py
[ -n "$installed" ] || "$root/scripts/integrate-krita.sh" --zip "$tmp/flashps_krita.zip" >/dev/null
if [ -z "$installed" ] && [ -f "$importer" ]; then
  mkdir -p "$tmp/imported"
  /usr/bin/python3 -c 'import builtins, runpy, sys; builtins.i18n = str; sys.argv[:] = sys.argv[1:]
runpy.run_path(sys.argv[0], run_name="__main__")' "$importer" "$tmp/flashps_krita.zip" "$tmp/imported" >"$tmp/import.log" 2>&1 ||
    fail "Krita's importer refused the zip: $(cat "$tmp/import.log")"
  [ -f "$tmp/imported/pykrita/flashps_krita/docker.py" ] && [ -f "$tmp/imported/pykrita/flashps_krita.desktop" ] ||
    fail "the importer did not extract the plugin: $(cat "$tmp/import.log")"
  ok "integrate-krita.sh --zip: Krita's importer extracts it ($(cat "$tmp/import.log"))"
fi

start_server() {  # start_server LISTEN: waits for the port file (the model loads first)
  rm -f "$tmp/port"
  "$flashps" serve --listen "$1" --port-file "$tmp/port" --quiet --access-log off >"$tmp/server.out" 2>"$tmp/server.err" &
  server_pid=$!
  local deadline=$((SECONDS + 120))
  until [ -f "$tmp/port" ] && read -r port <"$tmp/port" && [[ $port =~ ^[0-9]+$ ]]; do
    kill -0 "$server_pid" 2>/dev/null || fail "flashps serve exited: $(tail -n 3 "$tmp/server.err")"
    [ $SECONDS -lt $deadline ] || fail "flashps serve wrote no port file in 120 s"
    sleep 0.2
  done
}
start_server 127.0.0.1:0
ok "flashps serve on 127.0.0.1:$port"
# A copy of the image: Krita writes autosaves (and lock files) next to the file it opened.
cp "$root/samples/images/fig.jpg" "$tmp/fig.jpg"
printf '{"url": "http://127.0.0.1:%s", "image": "%s", "selection": [176, 176, 160, 144], "screenshot": "%s"}\n' \
  "$port" "$tmp/fig.jpg" "${FLASHPS_KRITA_SCREENSHOT:-}" >"$tmp/out/config.json"

# Krita's window needs a display: Xvfb. -noreset: by default Xvfb resets when its last client
# leaves, and a client connecting during the reset is dropped. Krita with a fresh config (as
# here) connects, disconnects and connects again at once while starting: "could not connect to
# display", now and then, more often on a loaded machine. The startup plugin runs the scenario,
# then quits Krita.
setsid xvfb-run -a -s "-screen 0 1600x1000x24 -noreset" krita --nosplash >"$tmp/krita.log" 2>&1 &
krita_pid=$!
deadline=$((SECONDS + 300))
until [ -f "$tmp/out/running" ]; do
  [ ! -f "$tmp/out/report.json" ] || fail "the scenario ended before the kill step: $(cat "$tmp/out/report.json")"
  kill -0 "$krita_pid" 2>/dev/null || fail "Krita exited before the scenario reached the kill step"
  [ $SECONDS -lt $deadline ] || fail "the scenario did not reach the kill step in 300 s"
  sleep 0.2
done
kill -KILL "$server_pid"
wait "$server_pid" 2>/dev/null || true
ok "killed the server in the middle of an edit"
sleep 1
start_server "127.0.0.1:$port"
touch "$tmp/out/restarted"
ok "restarted the server on port $port"
until [ -f "$tmp/out/report.json" ]; do
  kill -0 "$krita_pid" 2>/dev/null || fail "Krita exited without a report"
  [ $SECONDS -lt $deadline ] || fail "no report in 300 s"
  sleep 0.2
done
# The scenario ends a quit that Krita 5.1 leaves hanging after 10 s; a loaded machine needs more.
quit_seconds=${FLASHPS_KRITA_QUIT_SECONDS:-60}
for _ in $(seq $((quit_seconds * 5))); do kill -0 "$krita_pid" 2>/dev/null || break; sleep 0.2; done
kill -0 "$krita_pid" 2>/dev/null && fail "Krita did not quit $quit_seconds s after the report"
wait "$krita_pid" || true
krita_pid=""
ok "Krita ran the scenario and quit"
sed -n 's/^ *[0-9.]* s  \(still running .*\)/note: Krita \1/p' "$tmp/out/progress.log"

# The report, judged with Python (there whenever Krita's PyQt5 is).
/usr/bin/python3 - "$tmp/out/report.json" "$tmp/out/result.png" <<'PY' || fail "report: $(cat "$tmp/out/report.json")"
import json, os, sys
r = json.load(open(sys.argv[1]))
failed = []
def check(cond, what, fatal=False):  # every check runs: one run shows all that fail
    print(("ok - " if cond else "FAIL: ") + what)
    if not cond:
        failed.append(what)
        if fatal:
            sys.exit(1)
check(r.get("completed"), "the scenario completed " + (r.get("error") or ""), fatal=True)
check(not r["no_document"]["started"] and "Open an image" in r["no_document"]["status"],
      "no document: " + r["no_document"]["status"])
f, s, v = r["first"], r["second"], r["variations"]
check(f["ok"] and f["cache_hits"] == [False] and f["template"] and "template captured" in f["status"],
      "first generate: cache miss, template captured: " + f["status"])
check(s["ok"] and s["cache_hits"] == [True] and s["status"].startswith("cache hit"), "second: " + s["status"])
check(v["ok"] and v["seeds"] == [7, 8, 9] and v["counter"].startswith("3/3"),
      "3 variations, seeds 7..9, cycled to %s: %s" % (v["counter"], v["status"]))
a = r["apply"]
check(a["layers_added"] == 1 and a["layer"] == "FlashPS seed 9" and
      a["layers"].index(a["layer"]) == a["layers"].index("Background") + 1, "a new layer above: %s" % a["layers"])
check(a["outside_changed"] == 0, "no pixel outside the selection changed (of %d)" % a["outside_total"])
check(a["inside_changed"] > a["inside_total"] // 2,
      "%d of %d pixels inside the selection changed" % (a["inside_changed"], a["inside_total"]))
def check_masked(m, what):  # the layer holds the whole result; its transparency mask is the selection
    check(m["children"] == ["Transparency Mask:transparencymask"],
          "%s: one transparency mask: %s" % (what, m["children"]))
    check(m["mask_equals_selection"],
          "%s: the mask's pixels equal the selection's (mask levels %s)" % (what, m["mask_levels"]))
    check(m["region_opaque"] == m["region_total"] and m["unselected_in_region"] > 0,
          "%s: the layer is whole: %d of %d pixels opaque, %d of them unselected (none cleared)"
          % (what, m["region_opaque"], m["region_total"], m["unselected_in_region"]))
    check(m["unselected_changed"] == 0 and m["unselected_total"] > 0,
          "%s: the composite is unchanged where unselected (%d of %d changed)"
          % (what, m["unselected_changed"], m["unselected_total"]))
    check(m["unselected_changed_painted"] == 0 and m["selected_shown_painted"] == m["selected_total"] > 0,
          "%s: with the layer painted over, the mask hides it where unselected (%d changed) and shows "
          "it where selected (%d of %d)"
          % (what, m["unselected_changed_painted"], m["selected_shown_painted"], m["selected_total"]))
check_masked(a, "binary selection")
check(a["mask_levels"]["partial"] == 0 and a["mask_levels"]["255"] == a["inside_total"],
      "binary selection: the mask is 0/255")
check(a["selection_kept"], "the selection is the same after Apply")
soft = r["feathered"]
check(r["feathered_generate"]["ok"], "generate with a feathered selection: " + r["feathered_generate"]["status"])
check_masked(soft, "feathered selection")
check(soft["selection_partial"] > 1000 and soft["mask_levels"]["partial"] == soft["selection_partial"],
      "feathered selection: %d soft mask pixels, as the selection" % soft["mask_levels"]["partial"])
check(r["export"] and os.path.getsize(sys.argv[2]) > 1000, "exported result.png")
check(r["refused"]["started"] and not r["refused"]["ok"] and "HTTP 422" in r["refused"]["status"]
      and "prompt" in r["refused"]["status"], "422 shown: " + r["refused"]["status"])
check("Cannot reach" in r["unreachable"]["status"], "unreachable shown: " + r["unreachable"]["status"])
check(r["cancel"]["cancelled"] and r["cancel"]["status"].startswith("Cancelled"), "cancel: " + r["cancel"]["status"])
k = r["killed"]
check(not k["ok"] and k["generate_enabled"] and ("lost" in k["status"] or "stop" in k["status"]),
      "server killed mid-edit shown: " + k["status"])
check(r["after_restart"]["ok"], "generate after the restart: " + r["after_restart"]["status"])
sys.exit(1 if failed else 0)
PY
echo "all checks passed"
