#!/usr/bin/env bash
# Builds `strata` with the other engines of `strata bench --engine` (RocksDB and LMDB) into
# target/engines/release/strata, apart from the normal build so that neither rebuilds the
# other. RocksDB's C++ compiles from source: about 25-40 minutes on 2 cores.
#
# RocksDB is built as a release build should be: with SSE4.2 and PCLMUL, which its CRC32C
# needs for the hardware path (without them every block checksum takes the slow table path;
# the rocksdb crate passes them only when rustc's own target features include them), and
# without debug information, which only slows the compile.
#
# It also allocates with jemalloc (the `jemalloc` feature, see crates/strata-tools/src/main.rs),
# as the block cache's allocations want; RocksDB's C++ code keeps the C library's malloc, and
# LMDB reads through its memory map.
set -euo pipefail
cd "$(dirname "$0")/.."

if ! ls /usr/lib/llvm-*/lib/libclang.so >/dev/null 2>&1 \
    && ! ls /usr/lib/x86_64-linux-gnu/libclang*.so >/dev/null 2>&1; then
    echo "installing libclang-dev (bindgen needs it for the rocksdb crate)" >&2
    apt-get update -qq && apt-get install -y -qq libclang-dev
fi

export CXXFLAGS="${CXXFLAGS:-} -msse4.2 -mpclmul -g0"
export CARGO_TARGET_DIR="$PWD/target/engines"
cargo build --release -p strata-tools --features "${FEATURES:-rocksdb,lmdb,jemalloc}"
echo "built: $CARGO_TARGET_DIR/release/strata"
