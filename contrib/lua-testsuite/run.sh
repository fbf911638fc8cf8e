#!/bin/sh
# Runs Lua 5.4.4's official test suite through `sensorium run`, one file at a
# time, and prints a table: file, result, blocks removed, why, first error.
#
#   contrib/lua-testsuite/run.sh TESTES_DIR [SENSORIUM]
#
# TESTES_DIR is an extracted `testes/` folder of Lua 5.4.4 (fetch-testes.sh takes it
# from the sdist of lupa==2.0 on PyPI; the same files as tag v5.4.4 of github.com/lua/lua).
# Nothing of it is kept in this repository. The files are copied to a temporary
# folder; the blocks listed in removals.txt (next to this script) are blanked
# out line by line in the copy, each for a documented sandbox removal; and each
# file is run with `_soft = true; _port = true` put in front of its first line
# (the suite's own switches for a portable, lighter run), so line numbers stay
# those of the original. SENSORIUM defaults to .build/release/sensorium, else
# .build/debug/sensorium. Exit status 0 when every file passes.
set -u
testes=${1:?usage: run.sh TESTES_DIR [SENSORIUM]}
here=$(cd "$(dirname "$0")/../.." && pwd)
removals="$here/contrib/lua-testsuite/removals.txt"
bin=${2:-}
if [ -z "$bin" ]; then
  if [ -x "$here/.build/release/sensorium" ]; then bin="$here/.build/release/sensorium"; else bin="$here/.build/debug/sensorium"; fi
fi
case "$bin" in /*) ;; *) bin="$(pwd)/$bin" ;; esac
[ -d "$testes" ] || { echo "no such folder: $testes" >&2; exit 2; }
[ -x "$bin" ] || { echo "sensorium not built: $bin" >&2; exit 2; }
[ -f "$testes/strings.lua" ] || { echo "$testes does not look like Lua's testes/ folder" >&2; exit 2; }

work=$(mktemp -d)
# KEEP=1 keeps the prepared copy (its path is printed) to rerun a file by hand.
if [ -n "${KEEP:-}" ]; then echo "prepared copy: $work"; else trap 'rm -rf "$work"' EXIT; fi
cp -R "$testes"/. "$work"/

# apply_cuts FILE: blanks the lines removals.txt lists for FILE in the copy (a range
# "all" removes the whole file's code). Prints the number of blocks and their
# reasons (distinct, comma-separated).
apply_cuts() {
  awk -v file="$1" -v out="$work/$1.cut" -v src="$testes/$1" '
    /^[ \t]*(#|$)/ { next }
    $1 == file {
      n++
      if ($2 == "all") { all = 1 } else { split($2, r, "-"); from[n] = r[1]; to[n] = (r[2] == "" ? r[1] : r[2]) }
      if (!seen[$3]++) why = why (why == "" ? "" : ",") $3
    }
    END {
      line = 0
      while ((getline text < src) > 0) {
        line++
        drop = all
        for (i = 1; i <= n; i++) if (line >= from[i] && line <= to[i]) drop = 1
        print (drop ? "" : text) > out
      }
      printf "%d %s\n", n, (why == "" ? "-" : why)
    }' "$removals"
}

# The files all.lua runs, in its order (main.lua drives the lua executable and
# all.lua itself drives the others with dofile: both need the process and file
# access the sandbox removes).
# ONLY="a.lua b.lua" runs just those.
files=${ONLY:-"gc.lua calls.lua strings.lua literals.lua tpack.lua attrib.lua gengc.lua locals.lua
constructs.lua code.lua big.lua cstack.lua nextvar.lua pm.lua utf8.lua api.lua events.lua
vararg.lua closure.lua coroutine.lua goto.lua errors.lua math.lua sort.lua bitwise.lua
verybig.lua files.lua db.lua"}


printf '%-14s %-6s %-7s %-40s %s\n' "file" "result" "removed" "why" "first error"
passed=0; failed=0
for f in $files; do
  [ -f "$testes/$f" ] || { echo "missing: $testes/$f" >&2; failed=$((failed + 1)); continue; }
  info=$(apply_cuts "$f")
  { printf '_soft = true; _port = true; '; cat "$work/$f.cut"; } > "$work/$f"
  out=$(cd "$work" && "$bin" run --time-limit 120 --memory-limit 1024 "$f" 2>&1)
  status=$?
  set -- $info
  if [ $status -eq 0 ]; then
    passed=$((passed + 1)); printf '%-14s %-6s %-7s %-40s\n' "$f" "ok" "$1" "$2"
  else
    failed=$((failed + 1))
    first=$(printf '%s\n' "$out" | grep -B1 -m1 'stack traceback' | head -1 | cut -c1-150)
    [ -n "$first" ] || first=$(printf '%s\n' "$out" | tail -1 | cut -c1-150)
    printf '%-14s %-6s %-7s %-40s %s\n' "$f" "FAIL" "$1" "$2" "$first"
  fi
done
echo "$passed passed, $failed failed"
[ $failed -eq 0 ]
