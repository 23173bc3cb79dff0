#!/usr/bin/env bash
# The distributed-directory benchmark table (issue 8): creates, stats and removes per second in one
# shared directory for servers x clients, comparing
#   distributed  all N partitions active from the start (the seed's recommendation for big dirs)
#   giga         one partition at first, GIGA+ splits above $SPLIT entries per partition
#   vanilla      one partition that never splits: one server holds the directory
#   posix        the same workload on a directory of the local file system (no per-op fsync)
#   window       distributed, each client keeping $WINDOW operations in flight
# Every dirsvc figure is durable: a create is acknowledged only after its group's journal fsync.
#
# Usage: bench/dirsvc/run.sh            (env: SERVERS CLIENTS FILES ITER SPLIT WINDOW POSIX_DIR)
# Writes bench/out/dirsvc/<run>/*.json and table.md. Not a test: takes ~10-20 minutes.
set -euo pipefail
cd "$(dirname "$0")/../.."

SERVERS=${SERVERS:-"1 2 4"}
CLIENTS=${CLIENTS:-"1 2 4 8 16"}
FILES=${FILES:-1000}
ITER=${ITER:-3}
SPLIT=${SPLIT:-500}
WINDOW=${WINDOW:-8}

cargo build --release --quiet -p canopy-cli
canopy=$PWD/target/release/canopy
run=bench/out/dirsvc/$(date +%Y%m%d-%H%M%S)
mkdir -p "$run"
posix_dir=${POSIX_DIR:-$PWD/$run/posix}
mkdir -p "$posix_dir"
data=$(mktemp -d "${TMPDIR:-/tmp}/canopy-dirsvc-bench.XXXXXX")
trap '"$canopy" dirsvc stop --data "$data/cluster" >/dev/null 2>&1 || true; rm -rf "$data"' EXIT

{
  echo "date: $(date -Is)"
  echo "host: $(nproc) cores, $(uname -r)"
  echo "load before: $(cut -d' ' -f1-3 /proc/loadavg)"
  echo "files per client: $FILES, iterations: $ITER, split threshold: $SPLIT, window: $WINDOW"
} > "$run/conditions.txt"

bench() { # name, then bench arguments
  local name=$1; shift
  echo "== $name" >&2
  "$canopy" dirsvc bench --files "$FILES" --iterations "$ITER" --json "$@" > "$run/$name.json"
}

for s in $SERVERS; do
  rm -rf "$data/cluster"
  "$canopy" dirsvc start --servers "$s" --data "$data/cluster" > /dev/null
  for p in $CLIENTS; do
    bench "s$s-p$p-distributed" --cluster "$data/cluster" --clients "$p" --partitions 0 --split-threshold 0
    bench "s$s-p$p-giga" --cluster "$data/cluster" --clients "$p" --partitions 1 --split-threshold "$SPLIT"
    bench "s$s-p$p-vanilla" --cluster "$data/cluster" --clients "$p" --partitions 1 --split-threshold 0
  done
  p=${CLIENTS##* }
  bench "s$s-p$p-window" --cluster "$data/cluster" --clients "$p" --partitions 0 --split-threshold 0 --window "$WINDOW"
  "$canopy" dirsvc stop --data "$data/cluster" > /dev/null
done
for p in $CLIENTS; do
  bench "p$p-posix" --posix "$posix_dir" --posix-only --clients "$p"
done
echo "load after: $(cut -d' ' -f1-3 /proc/loadavg)" >> "$run/conditions.txt"

python3 bench/dirsvc/table.py "$run" | tee "$run/table.md"
