#!/bin/sh
# Submits a Sensorium cohort to Slurm: an array job of N shards (cohort.sbatch) and a
# merge job (merge.sbatch) that starts when every shard has ended. Prints the merge
# job's id.
#
#   contrib/slurm/submit.sh N PROTOCOL SHARDS RESULT [run flags...] [-- sbatch flags...]
#
# N shards of PROTOCOL write into SHARDS/shard-i; the merged tables and stdout.txt go
# to RESULT. Run flags (--participants, --days, --seed, --scenario, --recording…) are
# passed to every shard. sbatch flags after `--` (--partition, --time, --cpus-per-task,
# --account…) apply to both jobs. SENSORIUM names the executable (default: sensorium
# on PATH); it, PROTOCOL, SHARDS and RESULT must be on storage every node sees.
set -eu
[ $# -ge 4 ] || { sed -n '2,14p' "$0"; exit 2; }
n=$1; protocol=$2; shards=$3; result=$4; shift 4
run_args=""
while [ $# -gt 0 ] && [ "$1" != "--" ]; do run_args="$run_args $1"; shift; done
[ "${1:-}" = "--" ] && shift
here=$(cd "$(dirname "$0")" && pwd)
sensorium=${SENSORIUM:-$(command -v sensorium || true)}
[ -n "$sensorium" ] || { echo "submit.sh: set SENSORIUM to the sensorium executable" >&2; exit 2; }
mkdir -p "$shards"
export SENSORIUM="$sensorium" PROTOCOL="$protocol" SHARDS="$shards" RESULT="$result" RUN_ARGS="$run_args"
array=$(sbatch --parsable --array="1-$n" --chdir="$PWD" --output="$shards/slurm-%A_%a.log" "$@" "$here/cohort.sbatch")
array=${array%%;*}
merge=$(sbatch --parsable --dependency="afterany:$array" --chdir="$PWD" --output="$shards/slurm-merge-%j.log" "$@" "$here/merge.sbatch")
echo "${merge%%;*}"
