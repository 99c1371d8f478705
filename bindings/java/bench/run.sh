#!/usr/bin/env bash
# Runs the three-engine benchmark (Strata through the Java binding, RocksJava, TuplDB).
#
#   bindings/java/bench/run.sh [--rocksdb=11.8.1] [--tupl=1.3.11] [--no-build] [Bench arguments...]
#
# Installs the binding (a release build of the native library) into the local Maven
# repository, builds this harness with the chosen RocksJava and TuplDB versions, and runs
# io.strata.bench.Bench with the other arguments (see Bench.java: --engines, --dir, --start,
# --max, --growth, --threads, --seconds, --interval, --memory, --tests, --caches,
# --bloom-bits, --wal). By default RocksJava 11.8.1, the newest Maven Central serves (the published
# comparison's was 8.8.1: --rocksdb=8.8.1), and TuplDB 1.3.11, the newest Maven Central serves
# (the comparison's 1.8.0 is not there). --no-build runs what an earlier build of the same
# versions left (so that a timed run holds no lock while building). JAVA_OPTS reaches the JVM
# (e.g. -Xmx256m, so that the heap stays small beside the caches under a memory cap). A tiny run to check that it works:
#
#   bindings/java/bench/run.sh --start=2000 --max=4000 --threads=1 --seconds=1 --memory=64m
#
# The CSV it prints (stdout; the Markdown summary follows it) becomes charts and a table with
# bench/chart.py.
set -euo pipefail
here="$(cd "$(dirname "$0")" && pwd)"

rocksdb=11.8.1
tupl=1.3.11
build=1
args=()
for arg in "$@"; do
  case "$arg" in
    --rocksdb=*) rocksdb="${arg#--rocksdb=}" ;;
    --tupl=*) tupl="${arg#--tupl=}" ;;
    --no-build) build=0 ;;
    *) args+=("$arg") ;;
  esac
done

# One directory of dependencies per pair of versions: two RocksJava jars on one class path
# would leave which one loads to chance.
lib="$here/target/lib-rocksdb-$rocksdb-tupl-$tupl"
if [ "$build" = 1 ]; then
  [ -f "$HOME/.cargo/env" ] && . "$HOME/.cargo/env"
  mvn_quiet=(-B -q --no-transfer-progress)
  (cd "$here/.." && mvn "${mvn_quiet[@]}" install -DskipTests)
  (cd "$here" && mvn "${mvn_quiet[@]}" package -Drocksdb.version="$rocksdb" \
    -Dtupl.version="$tupl" -Dlib.dir="$lib")
fi
[ -d "$lib" ] || { echo "run.sh: no build for rocksdbjni $rocksdb, tupl $tupl (run without --no-build)" >&2; exit 2; }

echo "# rocksdbjni $rocksdb, tupl $tupl, JAVA_OPTS ${JAVA_OPTS:-}" >&2
# shellcheck disable=SC2086 # JAVA_OPTS is a list of options
exec java ${JAVA_OPTS:-} -cp "$here/target/strata-bench-0.1.0-SNAPSHOT.jar:$lib/*" \
  io.strata.bench.Bench "${args[@]}"
