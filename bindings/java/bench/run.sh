#!/usr/bin/env bash
# Runs the three-engine benchmark (Strata through the Java binding, RocksJava, TuplDB).
#
#   bindings/java/bench/run.sh [--rocksdb=8.8.1] [--tupl=1.3.11] [Bench arguments...]
#
# Installs the binding (a release build of the native library) into the local Maven
# repository, builds this harness with the chosen RocksJava and TuplDB versions (by default
# RocksJava 8.8.1, the published comparison's, and TuplDB 1.3.11, the newest Maven Central serves: the
# comparison's 1.8.0 is not there), and runs io.strata.bench.Bench with the other arguments (see Bench.java:
# --engines, --dir, --start, --max, --growth, --threads, --seconds, --interval, --memory,
# --tests). A tiny run to check that it works:
#
#   bindings/java/bench/run.sh --start=2000 --max=4000 --threads=1 --seconds=1 --memory=64m
set -euo pipefail
here="$(cd "$(dirname "$0")" && pwd)"

rocksdb=8.8.1
tupl=1.3.11
args=()
for arg in "$@"; do
  case "$arg" in
    --rocksdb=*) rocksdb="${arg#--rocksdb=}" ;;
    --tupl=*) tupl="${arg#--tupl=}" ;;
    *) args+=("$arg") ;;
  esac
done

[ -f "$HOME/.cargo/env" ] && . "$HOME/.cargo/env"
mvn_quiet=(-B -q --no-transfer-progress)
(cd "$here/.." && mvn "${mvn_quiet[@]}" install -DskipTests)
(cd "$here" && mvn "${mvn_quiet[@]}" package -Drocksdb.version="$rocksdb" -Dtupl.version="$tupl")

echo "# rocksdbjni $rocksdb, tupl $tupl" >&2
exec java -cp "$here/target/strata-bench-0.1.0-SNAPSHOT.jar:$here/target/lib/*" \
  io.strata.bench.Bench "${args[@]}"
