"""Writes the example delivery traces of this directory (Mahimahi's format: one delivery
opportunity of 1500 bytes per line, in ms since the link started; the trace repeats with
its last timestamp as period). Run: python3 scenarios/traces/generate.py

- const-12mbps.trace: one opportunity every millisecond, 1..1000 ms: exactly 12 Mb/s.
- steps-12mbps.trace: a 2 s period of eight 250 ms steps at 12, 24, 6, 2, 18, 8, 24, 2 Mb/s
  (mean 12 Mb/s). Millisecond u (1..2000) at rate r_u Mb/s carries r_u / 12 opportunities;
  with A(m) = r_1 + ... + r_m, ms m gets floor(A(m) / 12) - floor(A(m - 1) / 12) lines
  (integer arithmetic: no rounding drift; A(2000) = 24000 so the last line is 2000).
"""

from pathlib import Path

HERE = Path(__file__).resolve().parent
STEPS_MBPS = [12, 24, 6, 2, 18, 8, 24, 2]
STEP_MS = 250


def steps() -> list[int]:
    out, acc = [], 0
    for m in range(1, STEP_MS * len(STEPS_MBPS) + 1):
        before = acc // 12
        acc += STEPS_MBPS[(m - 1) // STEP_MS]
        out += [m] * (acc // 12 - before)
    return out


def write(name: str, ms: list[int]) -> None:
    (HERE / name).write_text("".join(f"{m}\n" for m in ms))


if __name__ == "__main__":
    write("const-12mbps.trace", list(range(1, 1001)))
    write("steps-12mbps.trace", steps())
