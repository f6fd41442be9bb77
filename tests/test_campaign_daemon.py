"""tcplab.campaign.daemon (docs/campaign.md "Live mode: the daemon"): a daemon serves signed
jobs; a wrong key, a replayed job, an expired job, a malformed request, a peer outside its
list and a probe that hangs are each refused with one line (and logged), and the daemon
keeps serving; plaintext only on loopback; TLS between machines (a self-signed certificate
here)."""

from __future__ import annotations

import logging
import os
import shutil
import ssl
import subprocess
import threading
import time
from pathlib import Path
from typing import Any

import pytest
from pydantic import ValidationError

from tcplab.campaign.auth import sign
from tcplab.campaign.daemon import MAX_REQUEST, Daemon, DaemonConfig, request

KEY = b"0123456789abcdef" * 4


def _key(tmp: Path) -> Path:
    p = tmp / "key"
    p.write_bytes(KEY)
    p.chmod(0o600)
    return p


def _runner(job: dict[str, Any], stop: threading.Event) -> dict[str, Any]:
    if job.get("hang"):
        stop.wait(30)
        return {"stopped": stop.is_set()}
    if job.get("fail"):
        raise RuntimeError("sink h1 refused the connection\nsecond line")
    return {"bytes": job["bytes"], "peer": job["peer"]}


@pytest.fixture
def daemon(tmp_path: Path):
    cfg = DaemonConfig(name="h0", listen="127.0.0.1", port=1, key_file=_key(tmp_path),
                       peers=["h1", "h2"], plaintext=True, probe_timeout_s=0.5)
    cfg.port = 0  # any free port (the model requires >= 1 in files)
    d = Daemon(cfg, _runner).start()
    yield d
    d.stop()


def test_jobs_run_and_every_refusal_is_one_line_while_the_daemon_keeps_serving(daemon: Daemon, caplog) -> None:
    addr = daemon.address
    caplog.set_level(logging.WARNING, logger="tcplab.daemon")
    assert request(addr, KEY, {"kind": "ping"}) == {"ok": True, "result": {"name": "h0"}}
    probe = {"kind": "probe", "peer": "h1", "bytes": 1000}
    assert request(addr, KEY, probe)["result"] == {"bytes": 1000, "peer": "h1"}
    env = sign(KEY, probe, time.time()).model_dump_json().encode() + b"\n"
    refusals = {
        "wrong key": request(addr, b"x" * 64, probe),
        "replay": (request(addr, KEY, {}, raw=env), request(addr, KEY, {}, raw=env))[1],
        "expired": request(addr, KEY, probe, now=time.time() - 120, ttl_s=60),
        "malformed": request(addr, KEY, {}, raw=b"{not json\n"),
        "too long": request(addr, KEY, {}, raw=b"x" * (MAX_REQUEST + 10) + b"\n"),
        "peer": request(addr, KEY, {**probe, "peer": "elsewhere"}),
        "kind": request(addr, KEY, {"kind": "shell", "cmd": "rm -rf /"}),
        "hang": request(addr, KEY, {**probe, "hang": True}),
        "fail": request(addr, KEY, {**probe, "fail": True}),
    }
    want = {
        "wrong key": "bad signature", "replay": "replayed request", "expired": "expired",
        "malformed": "malformed request", "too long": "malformed request", "peer": "not one of this daemon's peers",
        "kind": "unknown job kind", "hang": "probe timed out after 0.5 s",
        "fail": "probe failed: sink h1 refused the connection",
    }
    for case, reply in refusals.items():
        assert reply["ok"] is False, (case, reply)
        assert want[case] in reply["error"] and "\n" not in reply["error"], (case, reply)
    # Each refusal was logged, and the daemon still serves.
    assert len([r for r in caplog.records if "refused" in r.getMessage()]) == len(refusals)
    assert request(addr, KEY, {"kind": "ping"})["ok"] is True


def test_plaintext_only_on_loopback_and_tls_otherwise(tmp_path: Path) -> None:
    base = {"name": "h0", "port": 7000, "key_file": _key(tmp_path), "peers": ["h1"]}
    with pytest.raises(ValidationError, match="only on a loopback address"):
        DaemonConfig(**base, listen="10.0.0.1", plaintext=True)
    with pytest.raises(ValidationError, match="tls_cert and tls_key: required"):
        DaemonConfig(**base, listen="10.0.0.1")


@pytest.mark.skipif(shutil.which("openssl") is None, reason="openssl is needed to make a test certificate")
def test_a_daemon_serves_over_tls(tmp_path: Path) -> None:
    cert, key = tmp_path / "cert.pem", tmp_path / "key.pem"
    subprocess.run(["openssl", "req", "-x509", "-newkey", "rsa:2048", "-nodes", "-days", "1", "-subj", "/CN=h0",
                    "-addext", "subjectAltName=IP:127.0.0.1", "-keyout", str(key), "-out", str(cert)],
                   check=True, capture_output=True)
    os.chmod(key, 0o600)
    cfg = DaemonConfig(name="h0", port=1, key_file=_key(tmp_path), peers=["h1"], tls_cert=cert, tls_key=key)
    cfg.port = 0
    d = Daemon(cfg, _runner).start()
    try:
        ctx = ssl.create_default_context(cafile=str(cert))
        assert request(d.address, KEY, {"kind": "ping"}, tls=ctx) == {"ok": True, "result": {"name": "h0"}}
        # A client that does not trust the certificate does not get through.
        with pytest.raises(ssl.SSLError):
            request(d.address, KEY, {"kind": "ping"}, tls=ssl.create_default_context())
        # Nor does a plaintext client; the daemon keeps serving.
        with pytest.raises((ConnectionError, ValueError, OSError)):
            request(d.address, KEY, {"kind": "ping"}, timeout=5)
        assert request(d.address, KEY, {"kind": "ping"}, tls=ctx)["ok"] is True
    finally:
        d.stop()


def test_a_job_asked_again_is_answered_from_its_first_run(tmp_path: Path) -> None:
    # a controller that resumes asks again for the probes it had not recorded: the daemon
    # answers from the run it already made (running or ended), never runs it twice
    calls: list[str] = []
    release = threading.Event()

    def runner(job: dict[str, Any], stop: threading.Event) -> dict[str, Any]:
        calls.append(job["job_id"])
        release.wait(10)
        return {"n": len(calls)}

    cfg = DaemonConfig(name="h0", listen="127.0.0.1", port=1, key_file=_key(tmp_path), peers=["h1"],
                       plaintext=True, probe_timeout_s=20)
    cfg.port = 0
    d = Daemon(cfg, runner).start()
    try:
        job = {"kind": "probe", "peer": "h1", "job_id": "c/7/1", "role": "source"}
        answers: list[dict[str, Any]] = []
        first = threading.Thread(target=lambda: answers.append(request(d.address, KEY, job)))
        first.start()
        while not calls:
            time.sleep(0.01)
        second = threading.Thread(target=lambda: answers.append(request(d.address, KEY, job)))  # while it runs
        second.start()
        time.sleep(0.2)
        release.set()
        first.join(10)
        second.join(10)
        answers.append(request(d.address, KEY, job))  # after it ended
        assert calls == ["c/7/1"]
        assert answers == [{"ok": True, "result": {"n": 1}}] * 3
        # another role or attempt is another job
        assert request(d.address, KEY, {**job, "role": "sink"})["result"] == {"n": 2}
        assert request(d.address, KEY, {**job, "job_id": "c/7/2"})["result"] == {"n": 3}
        # the same id with other content (another campaign's probe of the same name) too
        assert request(d.address, KEY, {**job, "protocol": "other"})["result"] == {"n": 4}
        assert request(d.address, KEY, job)["result"] == {"n": 1}
    finally:
        d.stop()


def _fresh_daemon(tmp_path: Path) -> Daemon:
    cfg = DaemonConfig(name="h0", listen="127.0.0.1", port=1, key_file=_key(tmp_path), peers=["h1"], plaintext=True)
    cfg.port = 0
    return Daemon(cfg, _runner).start()


def test_a_client_that_trickles_its_request_is_dropped_at_the_deadline(tmp_path: Path, monkeypatch) -> None:
    # the deadline is for the whole request: a byte now and then does not restart it
    import socket

    from tcplab.campaign import daemon as mod

    monkeypatch.setattr(mod, "REQUEST_DEADLINE_S", 1.0, raising=False)
    d = _fresh_daemon(tmp_path)
    try:
        s = socket.create_connection(d.address)
        start, closed = time.monotonic(), False
        s.settimeout(0.05)
        while time.monotonic() - start < 6 and not closed:
            try:
                s.sendall(b"x")
                closed = s.recv(1) == b""
            except TimeoutError:
                pass
            except OSError:  # reset by the daemon
                closed = True
            time.sleep(0.25)
        s.close()
        assert closed and time.monotonic() - start < 4, "the trickling client was held"
        assert request(d.address, KEY, {"kind": "ping"})["result"] == {"name": "h0"}
    finally:
        d.stop()


def test_idle_connections_beyond_the_limit_are_answered_busy_and_the_daemon_keeps_serving(
        tmp_path: Path, monkeypatch) -> None:
    import socket

    from tcplab.campaign import daemon as mod

    monkeypatch.setattr(mod, "MAX_CONNECTIONS", 4, raising=False)
    d = _fresh_daemon(tmp_path)
    idle = [socket.create_connection(d.address) for _ in range(4)]
    try:
        time.sleep(0.3)  # all four are being served (waiting for a request)
        with pytest.raises(Exception, match="busy: 4 connections open"):
            reply = request(d.address, KEY, {"kind": "ping"}, timeout=5)
            raise RuntimeError(reply.get("error", "served"))
        for s in idle:
            s.close()
        deadline = time.monotonic() + 5
        while True:  # the slots come back as the handlers see their clients gone
            reply = request(d.address, KEY, {"kind": "ping"}, timeout=5)
            if reply.get("ok") or time.monotonic() > deadline:
                break
            time.sleep(0.05)
        assert reply == {"ok": True, "result": {"name": "h0"}}
    finally:
        for s in idle:
            s.close()
        d.stop()
