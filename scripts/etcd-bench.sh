#!/usr/bin/env bash
# Strata's replicated service against etcd, through one client loop (`strata cluster bench`).
#
#   scripts/etcd-bench.sh [SECONDS]       seconds timed per point (default 10, at most 120)
#
# Starts on 127.0.0.1 only: a 3-node Strata cluster (`strata cluster up`, ports 7301-7303,
# log appends synced), a 3-node etcd cluster (Debian's etcd-server, clients on 23791-23793,
# peers on 23801-23803, etcd's default durability: its WAL fsynced per batch) and a 1-node
# Strata (port 7311, synced appends: what replication costs). Each is filled with every key
# once, then for each operation (put, get, mixed) and client count the three are run in
# turn, so that the targets alternate in one sitting. Prints one Markdown table.
#
# Environment: STRATA (the strata binary; default target/release/strata), ETCD (etcd), CLIENTS
# ("1 16 64"), OPS ("put get mixed"), KEYS (10000), OUT (directory for the data and logs;
# default a new one under /tmp, removed at the end unless KEEP=1).
#
# Every process it starts is stopped on exit, also on Ctrl-C and on failure.
set -euo pipefail
here=$(cd "$(dirname "$0")" && pwd)
root=$(cd "$here/.." && pwd)

duration=${1:-10}
if ! [[ $duration =~ ^[0-9]+$ ]] || ((duration < 1 || duration > 120)); then
  echo "etcd-bench.sh: seconds per point must be a number in 1..120, not '$duration'" >&2
  exit 2
fi
strata=${STRATA:-$root/target/release/strata}
etcd=${ETCD:-etcd}
clients=${CLIENTS:-1 16 64}
ops=${OPS:-put get mixed}
keys=${KEYS:-10000}
if [[ ! -x $strata ]]; then
  echo "etcd-bench.sh: no strata binary at $strata (cargo build --release -p strata-tools, or set STRATA)" >&2
  exit 1
fi
if ! command -v "$etcd" >/dev/null; then
  echo "etcd-bench.sh: no etcd binary '$etcd' (apt-get install -y etcd-server, or set ETCD)" >&2
  exit 1
fi

out=${OUT:-$(mktemp -d /tmp/etcd-bench.XXXXXX)}
mkdir -p "$out"
etcd_pids=()

cleanup() {
  set +e
  for d in s3 s1; do
    [[ -f $out/$d/pids ]] && "$strata" cluster down --dir "$out/$d" >/dev/null 2>&1
  done
  for p in "${etcd_pids[@]}"; do kill -TERM "$p" 2>/dev/null; done
  for _ in $(seq 100); do
    alive=0
    for p in "${etcd_pids[@]}"; do kill -0 "$p" 2>/dev/null && alive=1; done
    ((alive)) || break
    sleep 0.1
  done
  for p in "${etcd_pids[@]}"; do kill -KILL "$p" 2>/dev/null; done
  wait 2>/dev/null
  if [[ ${KEEP:-0} != 1 && -z ${OUT:-} ]]; then rm -rf "$out"; fi
}
trap cleanup EXIT
trap 'exit 130' INT TERM

echo "# strata: $("$strata" --version 2>/dev/null || echo "$strata"); $("$etcd" --version | head -1); $(nproc) cores; data in $out" >&2

"$strata" cluster up --nodes 3 --dir "$out/s3" --base-port 7301 --cluster bench3 >"$out/s3.up" 2>&1
"$strata" cluster up --nodes 1 --dir "$out/s1" --base-port 7311 --cluster bench1 >"$out/s1.up" 2>&1

members=""
for i in 1 2 3; do members+="${members:+,}e$i=http://127.0.0.1:2380$i"; done
for i in 1 2 3; do
  "$etcd" --name "e$i" --data-dir "$out/e$i" \
    --listen-client-urls "http://127.0.0.1:2379$i" --advertise-client-urls "http://127.0.0.1:2379$i" \
    --listen-peer-urls "http://127.0.0.1:2380$i" --initial-advertise-peer-urls "http://127.0.0.1:2380$i" \
    --initial-cluster "$members" --initial-cluster-token etcd-bench --initial-cluster-state new \
    --logger zap --log-outputs stderr --log-level warn >"$out/e$i.log" 2>&1 &
  etcd_pids+=($!)
done
deadline=$((SECONDS + 30))
until curl -sf -m 1 http://127.0.0.1:23791/health | grep -q '"health":"true"'; do
  if ((SECONDS > deadline)); then
    echo "etcd-bench.sh: etcd did not become healthy in 30 s; see $out/e1.log" >&2
    KEEP=1
    exit 1
  fi
  sleep 0.2
done

s3_pids=$(paste -sd, "$out/s3/pids")
s1_pids=$(paste -sd, "$out/s1/pids")
e3_pids=$(IFS=,; echo "${etcd_pids[*]}")

# target label endpoints pids
run() {
  local target=$1 label=$2 endpoints=$3 pids=$4
  shift 4
  timeout $((duration + 60)) "$strata" cluster bench --target "$target" --label "$label" \
    --endpoints "$endpoints" --pids "$pids" --keys "$keys" --duration "$duration" "$@"
}
s3() { run strata "strata, 3 nodes" 127.0.0.1:7301,127.0.0.1:7302,127.0.0.1:7303 "$s3_pids" "$@"; }
e3() { run etcd "etcd, 3 nodes" 127.0.0.1:23791,127.0.0.1:23792,127.0.0.1:23793 "$e3_pids" "$@"; }
s1() { run strata "strata, 1 node" 127.0.0.1:7311 "$s1_pids" "$@"; }

s3 --op fill --clients 16 --header
e3 --op fill --clients 16
s1 --op fill --clients 16
for op in $ops; do
  for c in $clients; do
    s3 --op "$op" --clients "$c"
    e3 --op "$op" --clients "$c"
    s1 --op "$op" --clients "$c"
  done
done
