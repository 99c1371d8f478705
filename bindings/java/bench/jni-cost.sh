#!/usr/bin/env bash
# What crossing JNI costs: the same operations on the same database, with the same keys in
# the same order, through the engine's Rust API (examples/jni_cost.rs) and through the Java
# binding (io.strata.bench.JniCost: byte arrays and direct buffers), alternated twice.
#
#   bindings/java/bench/jni-cost.sh [--no-build] DIR [KEYS] [OPS]
#
# KEYS (default 1000000) keys are written to a new database in DIR (deleted first), which
# the block cache then holds whole: the figures are CPU, not IO. DIR itself stays as written:
# each half runs its reads on a copy of it, and each write operation on a fresh copy of its
# own (DIR-work), so that every operation starts from the same database. Each operation runs OPS
# times (default 1000000) after as many untimed ones. Prints CSV: side,operation,wall and
# thread-CPU ns per operation (the CPU time leaves out the waits for a CPU on a shared machine).
# Builds first (the binding, this harness, the release example) unless --no-build, after an
# earlier run.sh (which builds the harness) and this script built them.
set -euo pipefail
here="$(cd "$(dirname "$0")" && pwd)"
root="$(cd "$here/../../.." && pwd)"
build=1
[ "${1:-}" = --no-build ] && { build=0; shift; }
dir=${1:?usage: jni-cost.sh [--no-build] DIR [KEYS] [OPS]}
keys=${2:-1000000}
ops=${3:-1000000}

export CARGO_TARGET_DIR="$root/target/java"
if [ "$build" = 1 ]; then
  [ -f "$HOME/.cargo/env" ] && . "$HOME/.cargo/env"
  "$here/run.sh" --start=1000 --max=1000 --threads=1 --seconds=0.1 --tests=read \
    --engines=strata --dir="$dir" --memory=64m >/dev/null
  (cd "$here/.." && cargo build --release --quiet --example jni_cost)
fi
rust="$CARGO_TARGET_DIR/release/examples/jni_cost"
lib=$(ls -d "$here"/target/lib-* | head -1)
java_run() { java ${JAVA_OPTS:-} -cp "$here/target/strata-bench-0.1.0-SNAPSHOT.jar:$lib/*" io.strata.bench.JniCost "$@"; }

rm -rf "$dir" "$dir-work"
java_run create "$dir" "$keys"
echo "side,operation,wall_ns_per_op,cpu_ns_per_op"
echo "# load average $(cut -d' ' -f1-3 /proc/loadavg), commit $(git -C "$root" rev-parse --short HEAD)" >&2
for _ in 1 2; do
  "$rust" "$dir" "$keys" "$ops"
  java_run measure "$dir" "$keys" "$ops"
done
echo "# load average $(cut -d' ' -f1-3 /proc/loadavg)" >&2
