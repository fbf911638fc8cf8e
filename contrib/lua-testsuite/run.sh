#!/bin/sh
# Runs Lua 5.4.4's official test suite through `sensorium run`, one file at a
# time, and prints a table: file, result, first error line.
#
#   contrib/lua-testsuite/run.sh TESTES_DIR [SENSORIUM]
#
# TESTES_DIR is an extracted `testes/` folder of tag v5.4.4 of github.com/lua/lua
# (for example: git -C lua.git archive v5.4.4 testes | tar -x -C /tmp/lua-5.4.4).
# Nothing of it is kept in this repository. The files are copied to a temporary
# folder and each is run with `_soft = true` and `_port = true` set on its first
# line (the suite's own switches for a portable, lighter run), so line numbers
# stay those of the original. SENSORIUM defaults to .build/release/sensorium,
# else .build/debug/sensorium.
set -u
testes=${1:?usage: run.sh TESTES_DIR [SENSORIUM]}
here=$(cd "$(dirname "$0")/../.." && pwd)
bin=${2:-}
if [ -z "$bin" ]; then
  if [ -x "$here/.build/release/sensorium" ]; then bin="$here/.build/release/sensorium"; else bin="$here/.build/debug/sensorium"; fi
fi
case "$bin" in /*) ;; *) bin="$(pwd)/$bin" ;; esac
[ -d "$testes" ] || { echo "no such folder: $testes" >&2; exit 2; }
[ -x "$bin" ] || { echo "sensorium not built: $bin" >&2; exit 2; }

work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
cp -R "$testes"/. "$work"/

# The files all.lua runs, in its order (main.lua drives the lua executable and
# all.lua itself drives the others: both need the process and file access the
# sandbox removes).
files="gc.lua calls.lua strings.lua literals.lua tpack.lua attrib.lua gengc.lua locals.lua
constructs.lua code.lua big.lua cstack.lua nextvar.lua pm.lua utf8.lua api.lua events.lua
vararg.lua closure.lua coroutine.lua goto.lua errors.lua math.lua sort.lua bitwise.lua
verybig.lua files.lua db.lua"

printf '%-14s %-6s %s\n' "file" "result" "first error"
passed=0; failed=0
for f in $files; do
  [ -f "$work/$f" ] || continue
  { printf '_soft = true; _port = true; '; cat "$testes/$f"; } > "$work/$f"
  out=$(cd "$work" && "$bin" run --time-limit 120 --memory-limit 1024 "$f" 2>&1)
  status=$?
  if [ $status -eq 0 ]; then
    passed=$((passed + 1)); printf '%-14s %-6s\n' "$f" "ok"
  else
    failed=$((failed + 1))
    first=$(printf '%s\n' "$out" | grep -B1 -m1 'stack traceback' | head -1 | cut -c1-150)
    [ -n "$first" ] || first=$(printf '%s\n' "$out" | tail -1 | cut -c1-150)
    printf '%-14s %-6s %s\n' "$f" "FAIL" "$first"
  fi
done
echo "$passed passed, $failed failed"
[ $failed -eq 0 ]
