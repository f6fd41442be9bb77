#!/usr/bin/env bash
# Creates (or refreshes) the Python environment of tcplab at the repository root:
#   .venv/  with pip, maturin, the package's dependencies and pytest, and the package itself
#   built from crates/tcplab-py (release profile) and installed in development mode; the live
#   testbed's binaries (tcplab-emu, tcplab-flow: crates/tcplab-live, release) are built and
#   linked into .venv/bin, where tcplab.live finds them (a link, like the editable package:
#   a later `cargo build --release -p tcplab-live -p tcplab-py --bins` is what the venv runs).
# Idempotent: run it again after pulling; it reuses .venv and rebuilds incrementally.
# Usage: bash scripts/setup.sh        (PYTHON=/path/to/python3 to pick another interpreter)
set -euo pipefail

root="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
cd "$root"
python="${PYTHON:-python3}"
venv="$root/.venv"

log() { printf 'setup: %s\n' "$*" >&2; }

command -v "$python" >/dev/null || { log "$python not found"; exit 1; }
command -v cargo >/dev/null || { log "cargo not found: install a Rust toolchain (rustup)"; exit 1; }

# A venv whose interpreter is gone (python upgraded, copied tree) is rebuilt.
if [[ -d "$venv" ]] && ! "$venv/bin/python" -c 'import sys' >/dev/null 2>&1; then
    log "removing broken $venv"
    rm -rf "$venv"
fi

if [[ ! -x "$venv/bin/python" ]]; then
    log "creating $venv with $("$python" --version 2>&1)"
    if ! "$python" -m venv "$venv" 2>/dev/null; then
        # Bare Debian/Ubuntu ship python3 without venv/ensurepip.
        rm -rf "$venv"
        if [[ $(id -u) -eq 0 ]] && command -v apt-get >/dev/null; then
            log "python3 -m venv failed; installing python3-venv"
            apt-get update -qq
            pyver="$("$python" -c 'import sys; print(f"{sys.version_info[0]}.{sys.version_info[1]}")')"
            apt-get install -y -qq python3-venv || true
            apt-get install -y -qq "python${pyver}-venv" || true
            "$python" -m venv "$venv"
        else
            log "python3 -m venv failed: install python3-venv (as root: apt-get install -y python3-venv)"
            exit 1
        fi
    fi
fi

pip() { "$venv/bin/python" -m pip --disable-pip-version-check "$@"; }

log "upgrading pip and installing maturin"
pip install -q --upgrade pip
pip install -q "maturin>=1.9,<2"

# maturin develop installs [project.dependencies] and the extras it is given, then builds the
# extension into python/tcplab/ and links the package into the venv (editable). The extension
# uses the stable ABI (_native.abi3.so, CPython 3.11 and later); a version-specific one left
# by an older checkout would be imported before it, so it goes.
rm -f python/tcplab/_native.cpython-*.so
log "building the extension (release) and installing tcplab[test]"
VIRTUAL_ENV="$venv" PATH="$venv/bin:$PATH" \
    "$venv/bin/maturin" develop --release --extras test --manifest-path crates/tcplab-py/Cargo.toml

# The live binaries are not Python extensions: maturin builds only crates/tcplab-py, so they are
# built here and linked into the venv's bin (tcplab.live.netns.emulator_binary looks there
# after $TCPLAB_EMU). For a copy that does not depend on this checkout's target directory:
#   cargo install --path crates/tcplab-live --root .venv
# `-p tcplab-py --bins` builds no more than tcplab-live's binaries, but resolves features as
# maturin's build of the extension did (pyo3's proc-macros want more of syn), so the binaries
# link the libraries that build compiled instead of compiling tcplab-core and tcplab-sim again
# (48 s on 2 cores).
log "building the live binaries (tcplab-emu, tcplab-flow) and linking them into $venv/bin"
cargo build --release -p tcplab-live -p tcplab-py --bins
target="$(cargo metadata --format-version 1 --no-deps \
    | "$venv/bin/python" -c 'import json, sys; print(json.load(sys.stdin)["target_directory"])')"
for exe in tcplab-emu tcplab-flow; do
    ln -sf "$target/release/$exe" "$venv/bin/$exe"
done

# The package is installed editable (its sources, not a wheel), so nothing compiled its
# bytecode; where PYTHONDONTWRITEBYTECODE is set (CI images often set it) every process would
# compile every module it imports, about 0.1 s per `tcplab` command. Python reads these files
# whatever that variable says and ignores one older than its source.
log "compiling the package's bytecode"
"$venv/bin/python" -m compileall -q python/tcplab >/dev/null

"$venv/bin/python" -c 'import tcplab, tcplab._native as n; print("setup: tcplab", tcplab.__version__, "controllers:", n.controllers(), "recoveries:", n.recoveries())'
"$venv/bin/python" -c 'from tcplab.live import emulator_binary as e; print("setup: live emulator", e())'
log "done: activate with 'source .venv/bin/activate', test with '.venv/bin/pytest -q'"
