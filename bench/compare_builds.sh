#!/usr/bin/env bash
# Checks that a change to the simulator leaves results bit-identical: runs every shipped
# scenario (scenarios/*.toml and bench/scenarios/*.toml, full duration) with the simulator of
# git revision BASE and with the working tree, and compares everything the run returns
# (`tcplab-profile --dump`: the Debug form of `Results`, every summary, series and log; the
# engine's own counters, events and peak pending events, at the end).
#
# Usage: bash bench/compare_builds.sh [BASE]        (BASE: a git revision, default main)
# Needs .venv (bash scripts/setup.sh) for `tcplab validate --json`. Builds two release
# binaries of bench/profile (a few minutes the first time); work files in
# ${TMPDIR:-/tmp}/tcplab-compare. Exit status 1 when any scenario differs; a scenario that
# uses settings the base lacks is reported "not comparable" (the base runs it without them).
set -euo pipefail

root="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
base="${1:-main}"
work="${TMPDIR:-/tmp}/tcplab-compare"
mkdir -p "$work/json" "$work/base-out" "$work/new-out"

# The base revision's sources, with today's profile binary (it uses only the public API:
# Scenario, Simulation, Results), so that old revisions can be dumped too.
rm -rf "$work/base-src"
mkdir "$work/base-src"
git -C "$root" archive "$base" | tar -x -C "$work/base-src"
mkdir -p "$work/base-src/bench/profile/src"
cp "$root/bench/profile/Cargo.toml" "$work/base-src/bench/profile/Cargo.toml"
cp "$root/bench/profile/src/main.rs" "$work/base-src/bench/profile/src/main.rs"
echo "building $base ..." >&2
CARGO_TARGET_DIR="$work/base-target" cargo build -q --release \
    --manifest-path "$work/base-src/bench/profile/Cargo.toml"
echo "building the working tree ..." >&2
cargo build -q --release --manifest-path "$root/bench/profile/Cargo.toml"
base_bin="$work/base-target/release/tcplab-profile"
new_bin="$root/bench/profile/target/release/tcplab-profile"

status=0
for toml in "$root"/scenarios/*.toml "$root"/bench/scenarios/*.toml; do
    name="$(basename "$toml" .toml)"
    json="$work/json/$name.json"
    "$root/.venv/bin/tcplab" validate --json "$toml" > "$json"
    # Settings the base revision does not know yet (fields added since) are dropped from
    # the base's copy of the scenario, one at a time as the base names them; the scenario is
    # then marked, since the base runs it without them.
    base_json="$work/json/$name.base.json"
    cp "$json" "$base_json"
    dropped=""
    for _ in $(seq 1 20); do
        if err="$("$base_bin" "$base_json" --dump "$work/base-out/$name.txt" 2>&1 >/dev/null)"; then
            break
        fi
        field="$(printf '%s' "$err" | sed -n 's/.*unknown field `\([a-z_0-9]*\)`.*/\1/p' | head -1)"
        [[ -n "$field" ]] || { echo "$name: the base cannot run it: $err" >&2; status=1; continue 2; }
        python3 - "$base_json" "$field" <<'PY'
import json, sys
path, field = sys.argv[1], sys.argv[2]
doc = json.load(open(path))
def drop(x):
    if isinstance(x, dict):
        x.pop(field, None)
        for v in x.values():
            drop(v)
    elif isinstance(x, list):
        for v in x:
            drop(v)
drop(doc)
json.dump(doc, open(path, "w"))
PY
        dropped="$dropped $field"
    done
    [[ -z "$dropped" ]] || echo "$name: the base ran it without:$dropped"
    "$new_bin" "$json" --dump "$work/new-out/$name.txt" > /dev/null
    if cmp -s "$work/base-out/$name.txt" "$work/new-out/$name.txt"; then
        echo "$name: identical"
    elif changes=$(diff "$work/base-out/$name.txt" "$work/new-out/$name.txt" || true)
        # (not `diff | grep -q`: under pipefail grep's early exit kills diff with SIGPIPE and
        # the failed pipeline read as "no changed line")
        ! grep -E '^[0-9,]+[cd][0-9,]+$' <<<"$changes" >/dev/null; then
        # Only lines added (fields the base revision does not have): nothing it had moved.
        echo "$name: identical (plus fields added since the base)"
    elif [[ -n "$dropped" ]]; then
        # The base ran a different scenario (without settings it lacks): nothing to compare.
        echo "$name: not comparable (the base lacks:$dropped)"
    else
        echo "$name: DIFFERS"
        diff "$work/base-out/$name.txt" "$work/new-out/$name.txt" | head -20 || true
        status=1
    fi
done
exit $status
