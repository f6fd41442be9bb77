"""A Linux sender's segments from the emulator's log of what left the host
(``tcplab.live.tcp_sends``): which bytes each transmission carried, counted from the first
data byte across the sequence-number wrap, and how many times each had left before."""

from __future__ import annotations

from pathlib import Path

from tcplab.live import tcp_sends


def test_the_wires_segments_say_which_bytes_were_resent(tmp_path: Path) -> None:
    iss = 2**32 - 1449  # the first data byte is 2^32 - 1448: the second segment wraps
    log = tmp_path / tcp_sends.FILE
    rows = ["t_ns,src,dst,sport,dport,seq,len"]
    sent = [(1000, 0), (1000, 1448), (1000, 2896), (2000, 4344),  # four new segments
            (5000, 1448), (6000, 2896),  # two holes of a SACK recovery, not the first segment
            (9000, 1448), (9500, 5792)]  # the first hole again; new data
    for t, off in sent:
        rows.append(f"{t},10.0.0.1,10.0.0.2,40000,5401,{(iss + 1 + off) % 2**32},1448")
    rows.append("1500,10.0.0.1,10.0.0.2,40001,5400,7,100")  # another flow's segment
    log.write_text("\n".join(rows) + "\n")
    got = tcp_sends.segments(log, shift_ns=-500, flows={1: (5401, iss)})
    assert [(r["time_ns"], r["seq"], r["retransmission"]) for r in got[1]] == [
        (500, 0, 0), (500, 1448, 0), (500, 2896, 0), (1500, 4344, 0),
        (4500, 1448, 1), (5500, 2896, 1), (8500, 1448, 2), (9000, 5792, 0)]
    assert all(r["flow"] == 1 and r["len"] == 1448 for r in got[1])
    assert tcp_sends.segments(tmp_path / "none.csv", 0, {1: (5401, iss)}) == {}, "no log: no rows"
