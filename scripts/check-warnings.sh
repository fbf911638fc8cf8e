#!/bin/sh
# The project's own sources build without compiler warnings (make test runs this as its build).
#
#   sh scripts/check-warnings.sh             swift build --build-tests, then the check
#   sh scripts/check-warnings.sh --no-build  only the check, over what earlier builds left
#
# An incremental build compiles only the files that changed, so its output alone would miss
# the warnings of every other file. Two sources together see them all:
#
# 1. this build's output: each `warning:` line about a file under Sources/ or Tests/ (Swift
#    and C);
# 2. the diagnostics the Swift compiler writes for each source file it compiles, in
#    <bin>/<Module>.build/<File>.dia, rewritten whenever the file is compiled: a file that
#    this build did not recompile still has its warnings there (a build that succeeded has
#    no errors, so any diagnostic kept there is a warning).
#
# Only the project's own modules are read: warnings of dependencies (GRDB, ArgumentParser,
# under .build/checkouts) are not ours. A .dia of a source file that no longer exists is
# ignored. Exit status: 0 clean, 1 warnings, or the build's own status when it failed.
#
# Why not `swift build -Xswiftc -warnings-as-errors`: a change of flags rebuilds every
# module, dependencies included, and back again for the next plain build; it does not cover
# C targets; and only SwiftPM's native build system (Swift 6.3's default) strips it from
# remote dependencies, which it compiles with -suppress-warnings: the swiftbuild system
# passes both and the driver refuses the pair (swift-package-manager issue #10192).
set -u
cd "$(dirname "$0")/.." || exit 2
root=$(pwd)
root_re=$(printf '%s' "$root" | sed 's/[].[\*^$()+?{}|]/\\&/g')   # the path as a regular expression
SWIFT=${SWIFT:-swift}
mkdir -p .build
log=.build/check-warnings.log
found=.build/check-warnings.found
: > "$found"

if [ "${1:-}" != "--no-build" ]; then
    status_file=.build/check-warnings.status
    { "$SWIFT" build --build-tests 2>&1; echo $? > "$status_file"; } | tee "$log"
    status=$(cat "$status_file")
    [ "$status" = 0 ] || exit "$status"
    # The compiler prints each warning with its position, then again under the source line
    # (`` `- warning: ``): the positioned lines are enough. Paths are absolute or relative.
    grep -E "^($root_re/)?(Sources|Tests)/[^:]+:[0-9]+(:[0-9]+)?: warning:" "$log" | sed -E "s#^$root_re/##" >> "$found"
fi

# BIN_PATH: the build folder to read (the test suite names its own, as SwiftPM holds the lock).
bin=${BIN_PATH:-}
[ -n "$bin" ] || bin=$("$SWIFT" build --build-tests --show-bin-path 2>/dev/null) || bin=.build/debug
for module in $(ls Sources) $(ls Tests); do
    for dia in "$bin/$module.build"/*.dia; do
        [ -s "$dia" ] || continue
        # The serialized diagnostics are a bitstream whose strings (the file's path, each
        # message) are stored as plain bytes: a file without diagnostics names no path.
        text=$(LC_ALL=C tr -c '[:print:]' '\n' < "$dia" | grep -E '.{6,}')
        source=$(printf '%s\n' "$text" | grep -m1 -E "^$root_re/(Sources|Tests)/") || continue
        [ -f "$source" ] || continue
        printf '%s\n' "$text" | grep -v -E "^$root_re/" | grep -v -E '^[a-z-]+$' | while IFS= read -r message; do
            echo "${source#"$root"/}: warning: $message (compiled in an earlier build)"
        done >> "$found"
    done
done

if [ -s "$found" ]; then
    # A file compiled in this build appears in both sources: its lines from the build's
    # output (with positions) stand for it.
    awk -F': warning: ' '!/ \(compiled in an earlier build\)$/ { f = $1; sub(/:[0-9]+(:[0-9]+)?$/, "", f); built[f] = 1; if (!seen[$0]++) print; next }
        !($1 in built)' "$found" > "$found.unique"
    count=$(wc -l < "$found.unique")
    echo "check-warnings: $count compiler warning(s) in the project's own sources; fix them (make test fails on any):" >&2
    cat "$found.unique" >&2
    exit 1
fi
echo "check-warnings: no compiler warnings in the project's own sources"
