"""A minimal Chrome DevTools Protocol client over ``--remote-debugging-pipe``: opens a page in
headless Chromium and reports console errors, uncaught exceptions and image load status."""

from __future__ import annotations

import json
import os
import select
import shutil
import subprocess
import tempfile
import time
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

CANDIDATES = ("chromium", "chromium-browser", "google-chrome", "chrome")


def find_chromium() -> str | None:
    for name in CANDIDATES:
        path = shutil.which(name)
        if path:
            return path
    return None


@dataclass
class PageCheck:
    """What the browser saw: console errors (console.error, uncaught exceptions, log entries
    of level error), every image (src prefix, complete, naturalWidth), the title and the
    length of the rendered text."""

    errors: list[str] = field(default_factory=list)
    images: list[dict[str, Any]] = field(default_factory=list)
    title: str = ""
    text_length: int = 0
    #: The page's laid-out width (document scrollWidth) and the viewport's, CSS pixels: wider
    #: than the viewport means the page scrolls sideways.
    scroll_width: int = 0
    viewport_width: int = 0


class _Pipe:
    def __init__(self, proc: subprocess.Popen, write_fd: int, read_fd: int, timeout: float):
        self.proc, self.wfd, self.rfd, self.timeout = proc, write_fd, read_fd, timeout
        self.buf = b""
        self.next_id = 0
        self.events: list[dict[str, Any]] = []

    def send(self, method: str, params: dict | None = None, session: str | None = None) -> dict:
        self.next_id += 1
        msg: dict[str, Any] = {"id": self.next_id, "method": method, "params": params or {}}
        if session:
            msg["sessionId"] = session
        os.write(self.wfd, json.dumps(msg).encode() + b"\0")
        while True:
            m = self._read()
            if m.get("id") == self.next_id:
                if "error" in m:
                    raise RuntimeError(f"{method}: {m['error']}")
                return m.get("result", {})
            self.events.append(m)

    def wait_event(self, method: str) -> dict:
        for i, e in enumerate(self.events):
            if e.get("method") == method:
                return self.events.pop(i)
        while True:
            m = self._read()
            if m.get("method") == method:
                return m
            self.events.append(m)

    def _read(self) -> dict:
        deadline = time.monotonic() + self.timeout
        while b"\0" not in self.buf:
            left = deadline - time.monotonic()
            if left <= 0:
                raise TimeoutError("no answer from chromium")
            r, _, _ = select.select([self.rfd], [], [], left)
            if r:
                chunk = os.read(self.rfd, 1 << 16)
                if not chunk:
                    raise RuntimeError(f"chromium closed the pipe (exit {self.proc.poll()})")
                self.buf += chunk
        msg, self.buf = self.buf.split(b"\0", 1)
        return json.loads(msg)


def check_page(path: str | Path, chromium: str, timeout: float = 60.0, width: int = 1400) -> PageCheck:
    """Loads ``path`` (a local HTML file) in headless Chromium, in a window ``width`` CSS
    pixels wide, and returns what it saw."""
    cmd_r, cmd_w = os.pipe()  # we write commands, chromium reads fd 3
    res_r, res_w = os.pipe()  # chromium writes fd 4, we read
    profile = tempfile.mkdtemp(prefix="tcplab-chromium-")

    def child_fds() -> None:
        # Chromium reads commands on fd 3 and writes on fd 4. Copy first (a pipe end may
        # already be 3 or 4), then place them; pass_fds keeps 3 and 4 open.
        a, b = os.dup(cmd_r), os.dup(res_w)
        os.dup2(a, 3)
        os.dup2(b, 4)

    proc = subprocess.Popen(
        [
            chromium,
            "--headless=new",
            "--no-sandbox",
            "--disable-gpu",
            "--disable-dev-shm-usage",
            "--no-first-run",
            "--no-default-browser-check",
            "--disable-extensions",
            f"--user-data-dir={profile}",
            "--remote-debugging-pipe",
            "about:blank",
        ],
        stdin=subprocess.DEVNULL,
        stdout=subprocess.DEVNULL,
        stderr=subprocess.DEVNULL,
        preexec_fn=child_fds,
        pass_fds=(3, 4),
    )
    os.close(cmd_r)
    os.close(res_w)
    pipe = _Pipe(proc, cmd_w, res_r, timeout)
    out = PageCheck()
    try:
        target = pipe.send("Target.createTarget", {"url": "about:blank"})["targetId"]
        session = pipe.send("Target.attachToTarget", {"targetId": target, "flatten": True})["sessionId"]
        for domain in ("Runtime", "Log", "Page"):
            pipe.send(f"{domain}.enable", session=session)
        metrics = {"width": width, "height": 900, "deviceScaleFactor": 1, "mobile": False}
        pipe.send("Emulation.setDeviceMetricsOverride", metrics, session=session)
        pipe.send("Page.navigate", {"url": Path(path).resolve().as_uri()}, session=session)
        pipe.wait_event("Page.loadEventFired")
        expr = (
            "JSON.stringify({title: document.title, text: document.body.innerText.length,"
            " scroll: document.documentElement.scrollWidth, viewport: window.innerWidth,"
            " images: Array.from(document.images).map(i => ({src: i.src.slice(0, 40), alt: i.alt,"
            " complete: i.complete, naturalWidth: i.naturalWidth, naturalHeight: i.naturalHeight,"
            " width: i.getBoundingClientRect().width}))})"
        )
        r = pipe.send("Runtime.evaluate", {"expression": expr, "returnByValue": True}, session=session)
        page = json.loads(r["result"]["value"])
        out.title, out.text_length, out.images = page["title"], page["text"], page["images"]
        out.scroll_width, out.viewport_width = page["scroll"], page["viewport"]
        for e in pipe.events:
            m, p = e.get("method"), e.get("params", {})
            if m == "Runtime.consoleAPICalled" and p.get("type") in ("error", "assert"):
                out.errors.append("console: " + " ".join(str(a.get("value", a.get("description"))) for a in p.get("args", [])))
            elif m == "Runtime.exceptionThrown":
                out.errors.append("exception: " + str(p.get("exceptionDetails", {}).get("text")))
            elif m == "Log.entryAdded" and p.get("entry", {}).get("level") == "error":
                out.errors.append("log: " + str(p["entry"].get("text")))
        try:
            pipe.send("Browser.close")
        except (RuntimeError, TimeoutError):
            pass
    finally:
        try:
            proc.wait(timeout=10)
        except subprocess.TimeoutExpired:
            proc.kill()
            proc.wait()
        os.close(cmd_w)
        os.close(res_r)
        shutil.rmtree(profile, ignore_errors=True)
    return out
