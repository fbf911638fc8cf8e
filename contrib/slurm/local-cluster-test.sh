#!/bin/sh
# Runs a Sensorium cohort on a real one-node Slurm cluster started on this machine
# (slurmctld + slurmd on localhost, munge for authentication, everything in a temporary
# folder) and checks that the merged result is byte for byte what one process writes.
# Needs root (the daemons run as root) and Debian's slurm-wlm and munge (`make slurm-test`
# installs them).
#
#   contrib/slurm/local-cluster-test.sh SENSORIUM PROTOCOL SHARDS [run flags...]
#
# Exits 0 when the merged tables and stdout equal the single-process run's; otherwise
# prints what differed (or which step failed, with the daemons' log tails) and exits 1.
# The daemons are stopped and the folder removed in every case.
set -u
[ $# -ge 3 ] || { sed -n '2,12p' "$0"; exit 2; }
sensorium=$(cd "$(dirname "$1")" && pwd)/$(basename "$1"); protocol=$2; shards=$3; shift 3
here=$(cd "$(dirname "$0")" && pwd)
timeout=${SLURM_TEST_TIMEOUT:-600}
D=$(mktemp -d /tmp/sensorium-slurm.XXXXXX)
export SLURM_CONF="$D/slurm.conf"
status=1

fail() {
  echo "slurm test: $*" >&2
  for log in munged slurmctld slurmd; do
    [ -f "$D/$log.log" ] && { echo "--- last lines of $log.log:" >&2; tail -n 15 "$D/$log.log" >&2; }
  done
  for log in "$D"/shards/*.log; do [ -f "$log" ] && { echo "--- $log:" >&2; tail -n 15 "$log" >&2; }; done
  exit 1
}

stop() {
  [ -n "${merge:-}" ] && scancel "$merge" 2>/dev/null
  [ -n "${array:-}" ] && scancel "$array" 2>/dev/null
  for daemon in slurmd slurmctld munged; do
    if [ -f "$D/$daemon.pid" ]; then
      pid=$(cat "$D/$daemon.pid")
      kill "$pid" 2>/dev/null
      i=0; while kill -0 "$pid" 2>/dev/null && [ $i -lt 50 ]; do sleep 0.2; i=$((i + 1)); done
      kill -9 "$pid" 2>/dev/null
    fi
  done
  rm -rf "$D"
}
trap 'stop; exit $status' EXIT
trap 'exit 1' INT TERM

[ "$(id -u)" = 0 ] || fail "needs root (the Slurm daemons run as root)"
for tool in munged slurmctld slurmd sbatch scontrol sinfo; do
  command -v "$tool" >/dev/null || fail "$tool not found (install Debian's slurm-wlm and munge: make slurm-test)"
done

# munge: a fresh key and its own socket.
mkdir -p "$D/state" "$D/spool" "$D/shards"
dd if=/dev/urandom of="$D/munge.key" bs=1024 count=1 2>/dev/null
chmod 400 "$D/munge.key"
munged --force --key-file="$D/munge.key" --socket="$D/munge.sock" --pid-file="$D/munged.pid" \
  --log-file="$D/munged.log" --seed-file="$D/munge.seed" || fail "munged did not start"

cpus=$(nproc)
cat > "$D/slurm.conf" <<CONF
ClusterName=sensorium-test
SlurmctldHost=localhost
SlurmctldPort=16817
SlurmdPort=16818
SlurmUser=root
SlurmdUser=root
AuthType=auth/munge
AuthInfo=socket=$D/munge.sock
CredType=cred/munge
StateSaveLocation=$D/state
SlurmdSpoolDir=$D/spool
SlurmctldPidFile=$D/slurmctld.pid
SlurmdPidFile=$D/slurmd.pid
SlurmctldLogFile=$D/slurmctld.log
SlurmdLogFile=$D/slurmd.log
ProctrackType=proctrack/linuxproc
TaskPlugin=task/none
JobAcctGatherType=jobacct_gather/none
AccountingStorageType=accounting_storage/none
SelectType=select/cons_tres
SelectTypeParameters=CR_CPU
SchedulerType=sched/backfill
MpiDefault=none
ReturnToService=2
NodeName=localhost NodeAddr=127.0.0.1 CPUs=$cpus State=UNKNOWN
PartitionName=test Nodes=localhost Default=YES MaxTime=INFINITE State=UP
CONF
slurmctld -f "$D/slurm.conf" || fail "slurmctld did not start"
slurmd -f "$D/slurm.conf" -N localhost || fail "slurmd did not start"

i=0
until sinfo -h -o %T 2>/dev/null | grep -q '^idle'; do
  i=$((i + 1)); [ $i -le 120 ] || fail "the node did not become idle within 60 s ($(sinfo -h -o %T 2>&1))"
  sleep 0.5
done

# The reference: one process, the whole cohort.
mkdir -p "$D/single"
"$sensorium" run "$protocol" "$@" --out "$D/single" --quiet > "$D/single.stdout"
single=$?
[ $single -le 1 ] || fail "the single-process run failed (exit $single)"
mv "$D/single.stdout" "$D/single/stdout.txt"

merge=$(SENSORIUM="$sensorium" "$here/submit.sh" "$shards" "$protocol" "$D/shards" "$D/result" "$@" -- --cpus-per-task=1) \
  || fail "sbatch failed"
array=$(scontrol show job "$merge" 2>/dev/null | sed -n 's/.*Dependency=afterany:\([0-9]*\).*/\1/p')
echo "slurm test: array job ${array:-?} ($shards shards), merge job $merge"

state=""
start=$(date +%s)
while :; do
  state=$(scontrol show job "$merge" 2>/dev/null | sed -n 's/.*JobState=\([A-Z_]*\).*/\1/p')
  case "$state" in
    COMPLETED) break ;;
    FAILED|CANCELLED|TIMEOUT|NODE_FAIL|OUT_OF_MEMORY|BOOT_FAIL|DEADLINE) fail "the merge job ended $state" ;;
  esac
  [ $(( $(date +%s) - start )) -le "$timeout" ] || fail "the jobs did not finish within $timeout s (merge job: ${state:-unknown})"
  sleep 1
done

if ! diff -r "$D/single" "$D/result" > "$D/diff.txt"; then
  head -n 40 "$D/diff.txt" >&2
  fail "the merged result differs from the single-process run"
fi
echo "slurm test: ok, $shards shards merged into $(ls "$D/result" | wc -l) files identical to one process's output"
status=0
