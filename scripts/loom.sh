#!/usr/bin/env bash
# Model-checks the skiplist memtable's atomics under loom: every interleaving of a few
# threads' inserts, gets and walks, up to LOOM_MAX_PREEMPTIONS preemptions (2 unless set),
# with each load free to return any store the memory model allows. See the `loom` module
# in crates/strata/src/memtable/skiplist/ for what the models check, and the loom row of
# docs/reliability.md for what they cover.
#
# Not run by CI: the models take minutes, and the build (with `--cfg loom`, in its own
# target directory, target/loom) shares nothing with the normal one. An argument names one
# model to run, e.g. `scripts/loom.sh two_writers_with_one_user_key`.
set -euo pipefail
cd "$(dirname "$0")/.."
export RUSTFLAGS="--cfg loom ${RUSTFLAGS:-}"
export CARGO_TARGET_DIR="${CARGO_TARGET_DIR:-target/loom}"
export LOOM_MAX_PREEMPTIONS="${LOOM_MAX_PREEMPTIONS:-2}"
exec cargo test -p strata --release --lib "memtable::skiplist::loom::${1:-}" -- --test-threads=1 --nocapture
