#!/usr/bin/env bash
# Builds the Python package into a virtual environment and runs its tests; then, for a whole
# run, builds the abi3 wheel and checks that it installs and works without Rust
# (wheel_test.sh). Arguments go to pytest (`ci.sh -k NAME` runs only matching tests and skips
# the wheel).
#
# Idempotent: the venv (target/python/venv) and cargo's build directory (target/python) are
# reused between runs, so a second run only rebuilds what changed. Needs python3 (3.9 or
# newer, with the venv module) and a Rust toolchain; maturin and pytest come from PyPI at the
# versions pinned below.
set -euo pipefail
here="$(cd "$(dirname "$0")" && pwd)"
root="$(cd "$here/../.." && pwd)"

MATURIN_VERSION=1.16.0
PYTEST_VERSION=9.2.0

[ -f "$HOME/.cargo/env" ] && . "$HOME/.cargo/env"
export CARGO_TARGET_DIR="$root/target/python"
venv="$CARGO_TARGET_DIR/venv"

if [ ! -x "$venv/bin/python" ]; then
  python3 -m venv "$venv"
fi
# pip is quiet when the pinned versions are already there.
"$venv/bin/python" -m pip install --quiet --disable-pip-version-check \
  "maturin==$MATURIN_VERSION" "pytest==$PYTEST_VERSION"

# The Rust side must be formatted and lint-free, as the rest of the repository. Clippy gets a
# target dir of its own: maturin builds PyO3 with other environment variables, and sharing
# one directory would rebuild PyO3 on every switch.
(cd "$here" && cargo fmt -- --check &&
  CARGO_TARGET_DIR="$CARGO_TARGET_DIR/clippy" cargo clippy --release -- -D warnings)

# `maturin develop` installs into the venv named by VIRTUAL_ENV, as an editable package.
VIRTUAL_ENV="$venv" PATH="$venv/bin:$PATH" \
  "$venv/bin/maturin" develop --release --manifest-path "$here/Cargo.toml"

cd "$here"
"$venv/bin/python" -m pytest -q tests "$@"

# The wheel as users get it: built by maturin (reusing the release build above), installed
# into a fresh venv with no Rust toolchain on PATH, imported and used. Skipped when pytest
# was given a selection (-k NAME ...), to keep a focused run quick.
if [ "$#" -eq 0 ]; then
  bash "$here/wheel_test.sh"
fi
