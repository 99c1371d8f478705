#!/usr/bin/env bash
# Model-checks the engine's lock-free and lock-ordering code under loom: the skiplist
# memtable's atomics (every interleaving of a few threads' inserts, gets and walks) and
# group commit's handoff (writers queuing, the lead passed on, a memtable switch beside a
# group inserting), up to LOOM_MAX_PREEMPTIONS preemptions (2 unless set), with each load
# free to return any store the memory model allows. See the `loom` modules in
# crates/strata/src/memtable/skiplist/ and crates/strata/src/db/write/handoff/ for what
# the models check, and the loom row of docs/reliability.md for what they cover.
#
# First runs clippy on the library and its tests as built with `--cfg loom` (the models
# and the shims' loom halves are compiled nowhere else), then the models.
#
# Not run by CI: the models take minutes, and the build (with `--cfg loom`, in its own
# target directory, target/loom) shares nothing with the normal one. An argument picks the
# models to run by name or path, e.g. `scripts/loom.sh two_writers_with_one_user_key` or
# `scripts/loom.sh db::write::handoff::loom::`; without one, every loom model runs.
set -euo pipefail
cd "$(dirname "$0")/.."
export RUSTFLAGS="--cfg loom ${RUSTFLAGS:-}"
export CARGO_TARGET_DIR="${CARGO_TARGET_DIR:-target/loom}"
export LOOM_MAX_PREEMPTIONS="${LOOM_MAX_PREEMPTIONS:-2}"
cargo clippy -p strata --lib --tests -- -D warnings
exec cargo test -p strata --release --lib "${1:-::loom::}" -- --test-threads=1 --nocapture
