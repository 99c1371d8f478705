#!/usr/bin/env bash
# Builds the Java binding and runs its JUnit tests, on a fresh machine too.
#
# Needs a Rust toolchain (cargo) and installs what else is missing: a JDK (17 or newer) and
# Maven from the distribution's packages (apt-get), Maven's plugins and JUnit from Maven
# Central (kept in ~/.m2 between runs). The native library is a debug build here: the tests
# need its checks, not its speed, and it compiles in about half the time of a release build
# (`mvn package` alone builds the release one for the jar). Cargo's output goes to the
# repository's target/java, reused between runs.
set -euo pipefail
here="$(cd "$(dirname "$0")" && pwd)"
root="$(cd "$here/../.." && pwd)"

[ -f "$HOME/.cargo/env" ] && . "$HOME/.cargo/env"
if ! command -v cargo >/dev/null 2>&1; then
  echo "the Java binding's CI needs a Rust toolchain (cargo) on PATH" >&2
  exit 1
fi

missing=()
command -v javac >/dev/null 2>&1 || missing+=(openjdk-17-jdk-headless)
command -v mvn >/dev/null 2>&1 || missing+=(maven)
if [ ${#missing[@]} -gt 0 ]; then
  echo "installing ${missing[*]}"
  export DEBIAN_FRONTEND=noninteractive
  apt-get update -qq
  apt-get install -y -qq --no-install-recommends "${missing[@]}"
fi

export CARGO_TARGET_DIR="$root/target/java"
# The Rust side must be formatted and lint-free, as the rest of the repository.
(cd "$here" && cargo fmt -- --check && cargo clippy --all-targets -- -D warnings &&
  cargo test --quiet)

# `test` runs cargo (through the pom) and then the JUnit tests; Surefire prints the counts.
cd "$here"
mvn -B --no-transfer-progress -Dnative.profile=dev -Dnative.dir=debug test "$@"
