#!/usr/bin/env bash
# libflashps.so exports exactly the C API: every symbol it defines starts with flashps_ (besides
# the few the linker itself adds), and every function the public headers declare FLASHPS_EXPORT
# is among them. Usage: exports_test.sh LIBFLASHPS_SO PUBLIC_HEADER_DIR
set -euo pipefail
library="$1"
header_dir="$2"

defined=$(nm -D --defined-only "$library" | awk '{print $NF}' | sed 's/@.*//' | sort -u)
if [ -z "$defined" ]; then
  echo "FAIL: nm -D --defined-only $library listed no symbols"
  exit 1
fi
# Symbols GNU ld defines in every shared object.
linker_symbols='^(_init|_fini|_edata|_end|__bss_start)$'
unexpected=$(grep -Ev '^flashps_' <<<"$defined" | grep -Ev "$linker_symbols" || true)
if [ -n "$unexpected" ]; then
  echo "FAIL: $library exports $(wc -l <<<"$unexpected") symbol(s) outside the C API, e.g.:"
  head -20 <<<"$unexpected" | c++filt
  exit 1
fi

declared=$(grep -hoE 'FLASHPS_EXPORT[^;(]*\bflashps_[a-z0-9_]+\(' "$header_dir"/*.h |
           grep -oE 'flashps_[a-z0-9_]+\($' | tr -d '(' | sort -u)
missing=$(comm -23 <(echo "$declared") <(echo "$defined"))
if [ -n "$missing" ]; then
  echo "FAIL: declared FLASHPS_EXPORT in $header_dir but not exported by $library:"
  echo "$missing"
  exit 1
fi
echo "packaging.exports: $(wc -l <<<"$defined") symbols, all flashps_* or linker-defined;" \
     "all $(wc -l <<<"$declared") declared functions exported"
