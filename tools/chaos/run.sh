#!/usr/bin/env bash
# The chaos run of the replicated service: a 3-node cluster on loopback (`strata cluster
# up`), clients doing puts, linearizable gets and compare-and-sets while nodes are SIGKILLed
# and restarted and SIGSTOPped and resumed, then the history checked for linearizability.
#
#   tools/chaos/run.sh [SECONDS]          default 60, at most 1800
#
# Environment: STRATA (the strata binary; default target/release/strata, else
# target/debug/strata), CLIENTS (5), KEYS (3), SEED (from the clock), BASE_PORT (7101),
# OUT (a directory for the cluster, logs and history; default a new one under /tmp),
# LOCAL_READS=1 (read with ?consistency=local: stale reads, which the checker should fail).
#
# Exit status: that of `chaos check` (0 linearizable, 1 not, 2 bad history, 3 checker gave
# up), or 1 when the run itself failed.
set -euo pipefail
here=$(cd "$(dirname "$0")" && pwd)
root=$(cd "$here/../.." && pwd)

duration=${1:-60}
if ! [[ $duration =~ ^[0-9]+$ ]] || ((duration < 1 || duration > 1800)); then
  echo "run.sh: the duration is a number of seconds in 1..1800 (the run is bounded), not '$duration'" >&2
  exit 2
fi
clients=${CLIENTS:-5}
keys=${KEYS:-3}
seed=${SEED:-$(date +%s%N)}
base_port=${BASE_PORT:-7101}

strata=${STRATA:-}
if [[ -z $strata ]]; then
  for b in "$root/target/release/strata" "$root/target/debug/strata"; do
    if [[ -x $b ]]; then strata=$b; break; fi
  done
fi
if [[ -z $strata || ! -x $strata ]]; then
  echo "run.sh: no strata binary (build it: cargo build --release -p strata-tools, or set STRATA)" >&2
  exit 1
fi
if ! "$strata" cluster --help >/dev/null 2>&1; then
  echo "run.sh: $strata has no 'cluster' command: this build predates the replicated server (strata server, strata cluster up/down)" >&2
  exit 1
fi
command -v go >/dev/null || { echo "run.sh: needs Go (1.26) to build the driver and checker" >&2; exit 1; }

out=${OUT:-$(mktemp -d /tmp/strata-chaos.XXXXXX)}
mkdir -p "$out"
cluster="$out/cluster"
history="$out/history.jsonl"
chaos="$out/chaos"
(cd "$here" && go build -o "$chaos" .)

driver_pid=
cluster_started=
cleanup() {
  local rc=$?
  trap - EXIT INT TERM
  # The driver stops what its nemesis started and resumes what it paused when signalled.
  if [[ -n $driver_pid ]] && kill -0 "$driver_pid" 2>/dev/null; then
    kill -TERM "$driver_pid" 2>/dev/null || true
    wait "$driver_pid" 2>/dev/null || true
  fi
  if [[ -n $cluster_started ]]; then
    # A node left paused would ignore the SIGTERM of `cluster down` until resumed.
    if [[ -f $cluster/pids ]]; then
      for p in $(cat "$cluster/pids"); do kill -CONT "$p" 2>/dev/null || true; done
    fi
    "$strata" cluster down --dir "$cluster" >/dev/null 2>&1 || true
    echo "chaos: stopped early (exit $rc); cluster stopped; what was recorded is in $out" >&2
  fi
  exit "$rc"
}
trap cleanup EXIT
trap 'exit 130' INT TERM

echo "chaos: ${duration}s, $clients clients, $keys keys, seed $seed, in $out"
# Set first: a `cluster up` failing half-way may have started some nodes.
cluster_started=1
"$strata" cluster up --nodes 3 --dir "$cluster" --base-port "$base_port" | tee "$out/cluster-up.txt"

local_flag=()
[[ ${LOCAL_READS:-0} == 1 ]] && local_flag=(-local-reads)
# A killed node is restarted from its directory with the arguments `cluster up` gave it; the
# driver stops these restarted nodes itself at the end (`cluster down` knows only the first
# pids).
restart="exec '$strata' server --id {id} --addr {addr} --dir {dir} >>{dir}.log 2>&1"
set +e
"$chaos" run -cluster-dir "$cluster" -out "$history" -duration "${duration}s" \
  -clients "$clients" -keys "$keys" -seed "$seed" -restart "$restart" "${local_flag[@]}" \
  >"$out/run.log" 2>&1 &
driver_pid=$!
wait "$driver_pid"
run_rc=$?
driver_pid=
set -e
"$strata" cluster down --dir "$cluster" >/dev/null 2>&1 || true
cluster_started=

grep '^nemesis' "$out/run.log" | tail -n 20 || true
summary=$(grep '^summary:' "$out/run.log" || true)
if [[ -z $summary ]]; then
  echo "chaos: the driver failed (exit $run_rc):" >&2
  tail -n 20 "$out/run.log" >&2
  exit 1
fi
set +e
"$chaos" check "$history" | tee "$out/check.txt"
check_rc=${PIPESTATUS[0]}
set -e
field() { sed -n "s/.* $1=\([^ ]*\).*/\1/p" <<<"$summary"; }
echo
echo "kills: $(field kills) (restarts: $(field restarts))"
echo "pauses: $(field pauses)"
echo "operations: $(field operations) (ok $(field ok), unknown $(field unknown), failed $(field failed))"
echo "final reads: $(field final_reads)"
echo "verdict: $(sed -n 's/^verdict: //p' "$out/check.txt")"
echo "seed $seed; history $history; logs $cluster/n*.log"
if ((run_rc != 0 && check_rc == 0)); then
  echo "chaos: the history is linearizable but the run failed (exit $run_rc): see $out/run.log" >&2
  exit 1
fi
exit "$check_rc"
