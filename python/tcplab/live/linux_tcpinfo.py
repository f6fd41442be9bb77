"""Linux's ``struct tcp_info`` (``getsockopt(IPPROTO_TCP, TCP_INFO)``), parsed with its
documented layout (include/uapi/linux/tcp.h). The kernel copies ``min(len, sizeof)`` bytes,
so an older kernel returns a prefix: fields past the returned length are absent (None).

Units as the kernel gives them: times in µs (``rtt``, ``rttvar``, ``rto``, ``min_rtt``,
``busy_time``...), windows in segments (``snd_cwnd``, ``snd_ssthresh``), rates in bytes/s
(``pacing_rate``, ``delivery_rate``), counters in segments or bytes as named.
"""

from __future__ import annotations

import socket
import struct

TCP_INFO = 11
#: Bytes asked for; larger than any kernel's struct so far.
BUFLEN = 512

#: ``(field, struct code)`` in declaration order; native alignment (``@``) reproduces the C
#: layout. The two bitfield bytes are read whole (``wscale``: snd << 0 | rcv << 4;
#: ``app_limited_flags``: bit 0 delivery_rate_app_limited, bits 1-2 fastopen_client_fail).
LAYOUT: tuple[tuple[str, str], ...] = (
    ("state", "B"), ("ca_state", "B"), ("retransmits", "B"), ("probes", "B"),
    ("backoff", "B"), ("options", "B"), ("wscale", "B"), ("app_limited_flags", "B"),
    ("rto", "I"), ("ato", "I"), ("snd_mss", "I"), ("rcv_mss", "I"),
    ("unacked", "I"), ("sacked", "I"), ("lost", "I"), ("retrans", "I"), ("fackets", "I"),
    ("last_data_sent", "I"), ("last_ack_sent", "I"), ("last_data_recv", "I"),
    ("last_ack_recv", "I"),
    ("pmtu", "I"), ("rcv_ssthresh", "I"), ("rtt", "I"), ("rttvar", "I"),
    ("snd_ssthresh", "I"), ("snd_cwnd", "I"), ("advmss", "I"), ("reordering", "I"),
    ("rcv_rtt", "I"), ("rcv_space", "I"), ("total_retrans", "I"),
    ("pacing_rate", "Q"), ("max_pacing_rate", "Q"), ("bytes_acked", "Q"),
    ("bytes_received", "Q"), ("segs_out", "I"), ("segs_in", "I"),
    ("notsent_bytes", "I"), ("min_rtt", "I"), ("data_segs_in", "I"), ("data_segs_out", "I"),
    ("delivery_rate", "Q"), ("busy_time", "Q"), ("rwnd_limited", "Q"), ("sndbuf_limited", "Q"),
    ("delivered", "I"), ("delivered_ce", "I"), ("bytes_sent", "Q"), ("bytes_retrans", "Q"),
    ("dsack_dups", "I"), ("reord_seen", "I"), ("rcv_ooopack", "I"), ("snd_wnd", "I"),
    # Linux 6.2+ / 6.7+.
    ("rcv_wnd", "I"), ("rehash", "I"), ("total_rto", "H"), ("total_rto_recoveries", "H"),
    ("total_rto_time", "I"),
)

#: Each field's byte offset and struct, computed once from LAYOUT.
_FIELDS: list[tuple[str, int, struct.Struct]] = []
_fmt = "@"
for _name, _code in LAYOUT:
    _off = struct.calcsize(_fmt + _code) - struct.calcsize(_code)
    _FIELDS.append((_name, _off, struct.Struct("@" + _code)))
    _fmt += _code

#: ``tcpi_ca_state`` values (enum tcp_ca_state).
CA_STATES = ("open", "disorder", "cwr", "recovery", "loss")


def read_raw(sock: socket.socket) -> bytes:
    """The socket's ``struct tcp_info`` as the kernel returns it."""
    return sock.getsockopt(socket.IPPROTO_TCP, TCP_INFO, BUFLEN)


def parse(raw: bytes) -> dict[str, int]:
    """The fields of ``raw`` that the kernel returned in full."""
    return {name: s.unpack_from(raw, off)[0] for name, off, s in _FIELDS if off + s.size <= len(raw)}
