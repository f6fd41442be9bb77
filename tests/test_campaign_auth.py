"""tcplab.campaign.auth: the live campaign's job signatures (docs/campaign.md "Live mode:
authentication"): a right job passes once; a wrong key, an altered job, a replay, an
expired or far-future job and malformed requests are refused with a one-line reason, and
the verifier keeps working after each; the key file must be its owner's alone."""

from __future__ import annotations

import json
import os
from pathlib import Path

import pytest

from tcplab.campaign.auth import MIN_KEY_BYTES, AuthError, Verifier, load_key, sign

KEY = b"k" * 32
NOW = 1_800_000_000.0
JOB = {"probe": 17, "protocol": "reno", "src": "h0", "dst": "h1", "bytes": 1_000_000}


def _refused(v: Verifier, raw, now: float = NOW) -> str:
    with pytest.raises(AuthError) as e:
        v.verify(raw, now)
    msg = str(e.value)
    assert "\n" not in msg
    return msg


def test_a_signed_job_passes_once_and_its_replay_is_refused() -> None:
    v = Verifier(KEY)
    env = sign(KEY, JOB, NOW)
    assert v.verify(env.model_dump_json(), NOW + 1) == JOB
    assert "replayed request" in _refused(v, env.model_dump_json(), NOW + 2)
    # The verifier keeps serving: a fresh job passes.
    assert v.verify(sign(KEY, JOB, NOW).model_dump(), NOW + 3) == JOB


def test_a_wrong_key_or_an_altered_job_is_refused() -> None:
    v = Verifier(KEY)
    assert "bad signature" in _refused(v, sign(b"x" * 32, JOB, NOW).model_dump_json())
    env = sign(KEY, JOB, NOW).model_dump()
    env["job"] = {**JOB, "dst": "evil"}
    assert "bad signature" in _refused(v, env)
    env = sign(KEY, JOB, NOW).model_dump()
    env["expires"] = env["expires"] + 3600  # extending its life breaks the MAC
    assert "bad signature" in _refused(v, env)


def test_expired_and_far_future_jobs_are_refused() -> None:
    v = Verifier(KEY, max_ttl_s=300, max_skew_s=30)
    assert "expired" in _refused(v, sign(KEY, JOB, NOW, ttl_s=60).model_dump(), NOW + 61)
    assert "ahead" in _refused(v, sign(KEY, JOB, NOW, ttl_s=1000).model_dump(), NOW)
    assert v.verify(sign(KEY, JOB, NOW, ttl_s=60).model_dump(), NOW + 59) == JOB


@pytest.mark.parametrize("raw", [
    "not json",
    b"\xff\xfe",
    "[]",
    json.dumps({"job": JOB}),
    json.dumps({"job": JOB, "nonce": "zz", "expires": NOW + 10, "mac": "0" * 64}),
    json.dumps({"job": "x", "nonce": "0" * 32, "expires": NOW + 10, "mac": "0" * 64}),
    json.dumps({"job": JOB, "nonce": "0" * 32, "expires": "soon", "mac": "0" * 64}),
    json.dumps({"job": JOB, "nonce": "0" * 32, "expires": NOW + 10, "mac": "0" * 64, "x": 1}),
])
def test_malformed_requests_are_refused_in_one_line(raw) -> None:
    v = Verifier(KEY)
    msg = _refused(v, raw)
    assert msg.startswith("malformed request:") or msg.startswith("bad signature"), msg
    assert v.verify(sign(KEY, JOB, NOW).model_dump(), NOW) == JOB


def test_the_nonce_cache_keeps_only_unexpired_nonces() -> None:
    v = Verifier(KEY)
    for k in range(100):
        v.verify(sign(KEY, {"probe": k}, NOW + k, ttl_s=10).model_dump(), NOW + k)
    # At NOW + 99 only the jobs signed in the last 10 s are unexpired.
    assert len(v.seen) == 10


def test_the_key_file_must_be_the_owners_alone(tmp_path: Path) -> None:
    p = tmp_path / "key"
    p.write_bytes(os.urandom(16).hex().encode() * 2)
    p.chmod(0o600)
    assert len(load_key(p)) == 64
    p.chmod(0o640)
    with pytest.raises(AuthError, match=r"mode 0640 lets others read or write it: chmod 600"):
        load_key(p)
    p.chmod(0o600)
    p.write_bytes(b"short")
    with pytest.raises(AuthError, match=rf"5 bytes: a key needs at least {MIN_KEY_BYTES}"):
        load_key(p)
    with pytest.raises(AuthError, match="No such file"):
        load_key(tmp_path / "missing")
    (tmp_path / "link").symlink_to(p)
    with pytest.raises(AuthError):
        load_key(tmp_path / "link")
