"""Authentication of the live campaign's jobs (docs/campaign.md "Live mode:
authentication"): a controller proves a secret it shares with every daemon.

- **The key** is a file readable only by its owner (:func:`load_key` refuses one that its
  group or others can read or write, in one line naming the file and its mode) holding at
  least 32 bytes (a hex or base64 text, or raw bytes: the file's bytes are the key).
- **A job** travels in an :class:`Envelope`: the job itself (a JSON object), a random
  128-bit nonce, an expiry (UNIX seconds; daemons and controller need clocks within
  ``max_skew_s`` of each other, see the deployment notes) and an HMAC-SHA256 over the
  canonical JSON of the other three (:func:`sign`).
- **A daemon** checks every envelope with a :class:`Verifier`: well formed, the MAC right
  (compared in constant time), not expired, not too far in the future, and its nonce not
  seen before. Each failure is an :class:`AuthError` with a one-line reason; the caller
  answers with a refusal, logs it and keeps serving. The nonces seen are kept until their
  expiry passes, so the cache is bounded by the rate of valid jobs times their lifetime,
  and an expired envelope is refused by its expiry before its nonce is looked at.

Time is passed in (``now``, UNIX seconds): nothing here reads a clock.
"""

from __future__ import annotations

import hashlib
import hmac
import json
import os
import secrets
import stat
from pathlib import Path
from typing import Any

from pydantic import BaseModel, ConfigDict, Field, ValidationError

__all__ = ["MIN_KEY_BYTES", "AuthError", "Envelope", "Verifier", "load_key", "sign"]

#: Shortest key accepted (bytes).
MIN_KEY_BYTES = 32


class AuthError(ValueError):
    """An envelope (or key) refused; the message is one line saying why."""


class Envelope(BaseModel):
    """A signed job as it travels (JSON)."""

    model_config = ConfigDict(extra="forbid", strict=True)

    job: dict[str, Any]
    nonce: str = Field(pattern=r"^[0-9a-f]{32}$")
    expires: float
    mac: str = Field(pattern=r"^[0-9a-f]{64}$")


def _mac(key: bytes, job: dict[str, Any], nonce: str, expires: float) -> str:
    text = json.dumps({"job": job, "nonce": nonce, "expires": expires},
                      sort_keys=True, separators=(",", ":"), allow_nan=False)
    return hmac.new(key, text.encode(), hashlib.sha256).hexdigest()


def load_key(path: str | Path) -> bytes:
    """The shared secret in ``path``. Refused (AuthError, one line): a file its group or
    others may read or write, a missing file, fewer than :data:`MIN_KEY_BYTES` bytes."""
    p = Path(path)
    try:
        fd = os.open(p, os.O_RDONLY | os.O_NOFOLLOW)
    except OSError as e:
        raise AuthError(f"key file {p}: {e.strerror}") from None
    try:
        st = os.fstat(fd)
        if not stat.S_ISREG(st.st_mode):
            raise AuthError(f"key file {p}: not a regular file")
        mode = stat.S_IMODE(st.st_mode)
        if mode & 0o077:
            raise AuthError(f"key file {p}: mode {mode:04o} lets others read or write it: "
                            f"chmod 600 {p}")
        data = os.read(fd, 1 << 16).strip()
    finally:
        os.close(fd)
    if len(data) < MIN_KEY_BYTES:
        raise AuthError(f"key file {p}: {len(data)} bytes: a key needs at least {MIN_KEY_BYTES}")
    return data


def sign(key: bytes, job: dict[str, Any], now: float, ttl_s: float = 60.0,
         nonce: str | None = None) -> Envelope:
    """``job`` signed with ``key``, valid until ``now + ttl_s`` (UNIX seconds)."""
    n = nonce or secrets.token_hex(16)
    expires = float(now + ttl_s)
    return Envelope(job=job, nonce=n, expires=expires, mac=_mac(key, job, n, expires))


class Verifier:
    """A daemon's check of the envelopes it receives (module docstring). ``max_skew_s``:
    how far in the future an expiry may lie beyond ``max_ttl_s`` (clocks differ)."""

    def __init__(self, key: bytes, max_ttl_s: float = 300.0, max_skew_s: float = 30.0):
        self.key = key
        self.max_ahead = max_ttl_s + max_skew_s
        #: nonce -> its envelope's expiry
        self.seen: dict[str, float] = {}

    def verify(self, raw: str | bytes | dict[str, Any], now: float) -> dict[str, Any]:
        """The job of envelope ``raw`` (its JSON text or object) if it passes every check;
        AuthError naming the first that fails."""
        try:
            obj = json.loads(raw) if isinstance(raw, (str, bytes)) else raw
            env = Envelope.model_validate(obj)
        except (ValueError, ValidationError) as e:
            first = e.errors()[0] if isinstance(e, ValidationError) else {"loc": (), "msg": str(e)}
            where = ".".join(str(x) for x in first["loc"]) or "envelope"
            raise AuthError(f"malformed request: {where}: {first['msg']}".splitlines()[0]) from None
        try:
            want = _mac(self.key, env.job, env.nonce, env.expires)
        except ValueError:  # NaN or infinity in the job
            raise AuthError("malformed request: job: not representable as JSON") from None
        if not hmac.compare_digest(want, env.mac):
            raise AuthError("bad signature: wrong key or altered request")
        if env.expires <= now:
            raise AuthError(f"expired {now - env.expires:.1f} s ago")
        if env.expires > now + self.max_ahead:
            raise AuthError(f"expiry {env.expires - now:.0f} s ahead: more than {self.max_ahead:.0f} s")
        self._forget(now)
        if env.nonce in self.seen:
            raise AuthError(f"replayed request: nonce {env.nonce} was used before")
        self.seen[env.nonce] = env.expires
        return env.job

    def _forget(self, now: float) -> None:
        """Drops the nonces whose envelopes have expired (they would be refused anyway)."""
        if self.seen:
            self.seen = {n: t for n, t in self.seen.items() if t > now}
