# Sourced by the CLI tests. expect_error DESCRIPTION EXPECTED_TEXT -- ARGS...: runs "$flashps" ARGS
# and expects exit code 1 with exactly one error line on stderr containing EXPECTED_TEXT;
# counts a failure in $failures otherwise.
expect_error() {
  local description="$1" expected="$2"
  shift 3
  local output status
  output=$("$flashps" "$@" 2>&1 >/dev/null)
  status=$?
  if [ $status -ne 1 ] || ! grep -q -- "$expected" <<<"$output"; then
    echo "FAIL: $description: exit $status, output: $output"
    failures=$((failures + 1))
  elif [ "$(grep -c 'error' <<<"$output")" -ne 1 ]; then
    echo "FAIL: $description: expected one error line, got: $output"
    failures=$((failures + 1))
  else
    echo "ok: $description"
  fi
}
