#!/usr/bin/env bash
# `flashps serve` with the official OpenAI Node library (the version pinned in package-lock.json):
# openai_images_edit.mjs runs against a loopback server without keys, then against one started
# with --api-key-file (the right key works, a wrong one gets 401). Each server is stopped with
# SIGTERM and must exit 0.
# Usage: run_openai_client_test.sh FLASHPS_BINARY [BUILD_DIR]
# The library is installed with `npm ci` under BUILD_DIR/clients-node/<hash of the lock file>/
# (reused while the lock file is unchanged; a temporary folder without BUILD_DIR), never in the
# source tree. Exits 77 (ctest's skip) without node 18+ and npm, or when the registry cannot be
# reached.
set -euo pipefail

flashps="${1:?usage: run_openai_client_test.sh FLASHPS_BINARY [BUILD_DIR]}"
build_dir="${2:-}"
here="$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)"
samples="$(cd "$here/../../samples" && pwd)"
[ -x "$flashps" ] || { echo "FAIL: $flashps is not an executable"; exit 1; }
flashps="$(cd "$(dirname "$flashps")" && pwd)/$(basename "$flashps")"

skip() { echo "SKIP: $*"; exit 77; }
command -v node >/dev/null 2>&1 || skip "node is not installed"
command -v npm >/dev/null 2>&1 || skip "npm is not installed"
node_major="$(node -p 'process.versions.node.split(".")[0]')"
[ "$node_major" -ge 18 ] || skip "node $(node --version) is too old (18+ needed)"

work="$(mktemp -d "${TMPDIR:-/tmp}/flashps-openai-client.XXXXXX")"
server_pid=""
cleanup() {
  if [ -n "$server_pid" ] && kill -0 "$server_pid" 2>/dev/null; then
    kill -TERM "$server_pid" 2>/dev/null || true
    for _ in $(seq 1 300); do kill -0 "$server_pid" 2>/dev/null || break; sleep 0.1; done
    kill -KILL "$server_pid" 2>/dev/null || true
    wait "$server_pid" 2>/dev/null || true
  fi
  rm -rf "$work"
}
trap cleanup EXIT
trap 'exit 130' INT
trap 'exit 143' TERM

# ---- The pinned client library, installed once per lock file ----
lock_hash="$(cat "$here/package.json" "$here/package-lock.json" | sha256sum | cut -c1-64)"
if [ -n "$build_dir" ]; then
  mkdir -p "$build_dir/clients-node"
  cache_root="$(cd "$build_dir/clients-node" && pwd)"
else
  cache_root="$work/clients-node"
  mkdir -p "$cache_root"
fi
modules="$cache_root/$lock_hash"
export npm_config_update_notifier=false npm_config_fund=false npm_config_audit=false
[ -n "${HOME:-}" ] || export npm_config_cache="$cache_root/npm-cache"
if [ ! -f "$modules/.installed" ]; then
  staging="$cache_root/.staging.$$"
  rm -rf "$staging"
  mkdir -p "$staging"
  cp "$here/package.json" "$here/package-lock.json" "$staging/"
  install_rc=0
  (cd "$staging" && timeout 300 npm ci --no-audit --no-fund --prefer-offline --loglevel=error \
      --fetch-retries=2 --fetch-retry-maxtimeout=20000) >"$work/npm.log" 2>&1 || install_rc=$?
  if [ "$install_rc" -ne 0 ]; then
    rm -rf "$staging"
    reason="$(grep -m1 -oE 'E(NOTFOUND|AI_AGAIN|CONNREFUSED|CONNRESET|TIMEDOUT|NETUNREACH|HOSTUNREACH|PROXY)[^"]*|network[^"]*|socket hang up|request to [^ ]+ failed[^"]*|(SELF_SIGNED|UNABLE_TO_GET_ISSUER|CERT_)[A-Z_]*' \
                "$work/npm.log" | head -c 300 || true)"
    if [ "$install_rc" -eq 124 ]; then
      skip "npm registry unreachable: npm ci took over 300 s"
    elif [ -n "$reason" ]; then
      skip "npm registry unreachable: $reason"
    fi
    echo "FAIL: npm ci exited $install_rc:"
    cat "$work/npm.log"
    exit 1
  fi
  touch "$staging/.installed"
  # Another run may have finished first: theirs is as good as ours.
  if ! mv -T "$staging" "$modules" 2>/dev/null; then rm -rf "$staging"; fi
  # Earlier lock files' installs are dead weight.
  for old in "$cache_root"/*; do
    name="$(basename "$old")"
    if [[ "$name" =~ ^[0-9a-f]{64}$ ]] && [ "$name" != "$lock_hash" ]; then rm -rf "$old"; fi
  done
fi
[ -f "$modules/.installed" ] || { echo "FAIL: no client library under $modules"; exit 1; }
echo "openai $(node -p "require('$modules/node_modules/openai/package.json').version") (node $(node --version))"

# The script runs beside the installed library: ES modules resolve imports from their own folder.
mkdir -p "$work/client"
cp "$here/openai_images_edit.mjs" "$here/file_global.mjs" "$work/client/"
ln -s "$modules/node_modules" "$work/client/node_modules"

# ---- The servers ----
unset FLASHPS_CACHE_DIR FLASHPS_MODEL
failures=0
port=""

start_server() {  # NAME [extra serve options...]
  local dir="$work/$1"
  shift
  mkdir -p "$dir"
  "$flashps" serve --listen 127.0.0.1:0 --port-file "$dir/port" --cache-dir "$dir/store" --access-log off --quiet \
    "$@" >"$dir/stdout" 2>"$dir/stderr" &
  server_pid=$!
  port=""
  for _ in $(seq 1 1200); do  # 120 s
    if [ -f "$dir/port" ] && IFS= read -r port <"$dir/port" && [[ "$port" =~ ^[0-9]+$ ]]; then return 0; fi
    port=""
    if ! kill -0 "$server_pid" 2>/dev/null; then
      local rc=0
      wait "$server_pid" || rc=$?
      server_pid=""
      echo "FAIL: flashps serve exited $rc before it listened; its stderr:"
      cat "$dir/stderr"
      return 1
    fi
    sleep 0.1
  done
  echo "FAIL: flashps serve wrote no port to $dir/port within 120 s; its stderr:"
  cat "$dir/stderr"
  return 1
}

stop_server() {  # NAME
  local dir="$work/$1" rc=0
  kill -TERM "$server_pid"
  for _ in $(seq 1 600); do kill -0 "$server_pid" 2>/dev/null || break; sleep 0.1; done  # 60 s
  if kill -0 "$server_pid" 2>/dev/null; then
    echo "FAIL: $1: flashps serve still runs 60 s after SIGTERM"
    kill -KILL "$server_pid" 2>/dev/null || true
  fi
  wait "$server_pid" || rc=$?
  server_pid=""
  if [ "$rc" -eq 0 ]; then
    echo "ok: $1: flashps serve exited 0 on SIGTERM"
  else
    echo "FAIL: $1: flashps serve exited $rc on SIGTERM; its stderr:"
    cat "$dir/stderr"
    return 1
  fi
}

run_client() {  # NAME, with FLASHPS_API_KEY and FLASHPS_API_KEY_REQUIRED in the environment
  echo "== $1: openai_images_edit.mjs against http://127.0.0.1:$port"
  local rc=0
  FLASHPS_URL="http://127.0.0.1:$port" FLASHPS_SAMPLES="$samples" \
    timeout 600 node "$work/client/openai_images_edit.mjs" || rc=$?
  if [ "$rc" -ne 0 ]; then
    echo "FAIL: $1: the client checks failed (exit $rc); the server's stderr:"
    cat "$work/$1/stderr"
    return 1
  fi
}

# 1. Loopback, no keys: whatever key the client sends is ignored.
if start_server plain; then
  FLASHPS_API_KEY="" FLASHPS_API_KEY_REQUIRED=0 run_client plain || failures=$((failures + 1))
  stop_server plain || failures=$((failures + 1))
else
  failures=$((failures + 1))
fi

# 2. With --api-key-file: the right key works, a wrong one gets 401.
key="$(od -An -tx1 -N16 /dev/urandom | tr -d ' \n')"  # 32 hex characters
(umask 077 && printf '# test key\n%s\n' "$key" >"$work/api-keys")
if start_server keyed --api-key-file "$work/api-keys"; then
  FLASHPS_API_KEY="$key" FLASHPS_API_KEY_REQUIRED=1 run_client keyed || failures=$((failures + 1))
  stop_server keyed || failures=$((failures + 1))
else
  failures=$((failures + 1))
fi

if [ "$failures" -ne 0 ]; then
  echo "FAIL: $failures part(s) failed"
  exit 1
fi
echo "PASS: the OpenAI Node library works against flashps serve"
