#!/bin/sh
# Runs, on a lent many-core machine, the figures issues 21 and 26 ask of one: the cohort
# curve (`bench cohort --curve --processes`: --jobs 1, 2, 4, … N and N shard processes),
# the compressed imports (`bench store`) and the natural protocol (`bench study`). The
# binary runs through the loader packed beside it (contrib/device/pack.sh).
# usage: sh curve.sh [PARTICIPANTS] [DAYS]   (default 256 participants × 14 days)
set -eu
here=$(cd "$(dirname "$0")" && pwd)
run() { "$here/lib/ld-linux-x86-64.so.2" --library-path "$here/lib" "$here/sensorium" "$@"; }
cd "$here"
echo "== machine: $(nproc) cores, $(grep -m1 'model name' /proc/cpuinfo | cut -d: -f2)"
run bench cohort protocols/data_quality --participants "${1:-256}" --days "${2:-14}" --curve --processes
run bench store
run bench study --protocol-folder bench/study
