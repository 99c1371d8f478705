#!/usr/bin/env bash
# Builds the abi3 wheel with maturin and installs it into a fresh virtual environment with no
# Rust toolchain on PATH, then imports and uses it: what `pip install strata-*.whl` does on a
# machine without cargo. Run by ci.sh after the tests; also on its own (after ci.sh made the
# build venv: it takes maturin from there).
#
# The wheel is left in target/python/wheels/ (strata-VERSION-cp39-abi3-PLATFORM.whl).
set -euo pipefail
here="$(cd "$(dirname "$0")" && pwd)"
root="$(cd "$here/../.." && pwd)"

[ -f "$HOME/.cargo/env" ] && . "$HOME/.cargo/env"
export CARGO_TARGET_DIR="$root/target/python"
build_venv="$CARGO_TARGET_DIR/venv"
wheels="$CARGO_TARGET_DIR/wheels"
fresh="$CARGO_TARGET_DIR/wheel-venv"

rm -rf "$wheels"
"$build_venv/bin/maturin" build --release --quiet --manifest-path "$here/Cargo.toml" -o "$wheels"
wheel="$(ls "$wheels"/strata-*.whl)"
case "$(basename "$wheel")" in
  *-cp39-abi3-*) ;;
  *) echo "wheel_test: $wheel is not an abi3 wheel for CPython 3.9 and newer" >&2; exit 1 ;;
esac

rm -rf "$fresh"
python3 -m venv "$fresh"
# No Rust anywhere on PATH: only the venv and the system's directories. pip must install the
# wheel as it is (--no-index: nothing fetched, nothing built).
clean_path="$fresh/bin:/usr/local/bin:/usr/bin:/bin"
if PATH="$clean_path" command -v cargo >/dev/null || PATH="$clean_path" command -v rustc >/dev/null; then
  echo "wheel_test: cargo or rustc is on $clean_path; the test would prove nothing" >&2
  exit 1
fi
env -i HOME="$HOME" PATH="$clean_path" "$fresh/bin/python" -m pip install --quiet \
  --disable-pip-version-check --no-index "$wheel"

cd "$fresh"  # not the source tree: import the installed package
env -i HOME="$HOME" PATH="$clean_path" "$fresh/bin/python" - <<'PY'
import os, sys, tempfile
import strata

assert os.path.dirname(strata.__file__).startswith(sys.prefix), strata.__file__
with tempfile.TemporaryDirectory() as d:
    def longest(key, existing, operands):
        return max(([existing] if existing else []) + operands, key=len)

    with strata.open(os.path.join(d, "db"), merge_operator=longest) as db:
        db[b"k"] = b"v"
        db.merge(b"k", b"longer")
        assert db[b"k"] == b"longer"
        with db.transaction() as txn:
            txn[b"t"] = b"1"
        assert db.statistics()["keys_written"] == 3
        db.checkpoint(os.path.join(d, "cp"))
    with strata.open(os.path.join(d, "cp")) as cp:
        assert cp[b"t"] == b"1"
print("wheel_test: imported from", os.path.dirname(strata.__file__), "and used: ok")
PY
echo "wheel_test: $(basename "$wheel") installs and works without a Rust toolchain"
