#!/usr/bin/env bash
# Builds a wheel of tcplab that carries the live binaries (tcplab-emu, tcplab-flow) besides
# the Python package and its extension: maturin builds the wheel into dist/, cargo the
# binaries, scripts/wheel_binaries.py adds them as the wheel's scripts (installed into the
# environment's bin, where tcplab.live.emulator_binary() looks).
#
# Usage: bash scripts/build_wheel.sh     (needs the venv of scripts/setup.sh; prints the wheel)
set -euo pipefail
cd "$(dirname "$0")/.."
venv=.venv
target="${CARGO_TARGET_DIR:-target}"
rm -rf dist
cargo build --release -p tcplab-live
"$venv/bin/maturin" build --release --out dist >&2
wheel=$(ls dist/*.whl)
"$venv/bin/python" scripts/wheel_binaries.py "$wheel" "$target/release/tcplab-emu" "$target/release/tcplab-flow" >&2
echo "$wheel"
