"""scripts/wheel_binaries.py: the live binaries go into a wheel as its scripts, so that
installing the wheel puts them into the environment's bin (docs/live.md, "Installing the
binaries"). Checked on a small wheel made here; `scripts/build_wheel.sh` does the same to
maturin's wheel (not run by the tests: it is a release build)."""

from __future__ import annotations

import base64
import csv
import hashlib
import io
import os
import subprocess
import sys
import zipfile
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT / "scripts"))
from wheel_binaries import add_scripts, main  # noqa: E402


def _wheel(path: Path) -> Path:
    files = {
        "fakepkg/__init__.py": b"X = 1\n",
        "fakepkg-0.1.dist-info/METADATA": b"Metadata-Version: 2.1\nName: fakepkg\nVersion: 0.1\n",
        "fakepkg-0.1.dist-info/WHEEL": b"Wheel-Version: 1.0\nGenerator: test\nRoot-Is-Purelib: true\nTag: py3-none-any\n",
    }
    text = io.StringIO()
    w = csv.writer(text, lineterminator="\n")
    for name, data in files.items():
        digest = base64.urlsafe_b64encode(hashlib.sha256(data).digest()).rstrip(b"=").decode()
        w.writerow((name, f"sha256={digest}", len(data)))
    w.writerow(("fakepkg-0.1.dist-info/RECORD", "", ""))
    wheel = path / "fakepkg-0.1-py3-none-any.whl"
    with zipfile.ZipFile(wheel, "w") as z:
        for name, data in files.items():
            z.writestr(name, data)
        z.writestr("fakepkg-0.1.dist-info/RECORD", text.getvalue())
    return wheel


def _binary(path: Path, name: str) -> Path:
    b = path / name
    b.write_text(f"#!/bin/sh\necho {name} runs\n")
    b.chmod(0o755)
    return b


def test_the_binaries_are_installed_into_bin_and_run(tmp_path: Path) -> None:
    wheel = _wheel(tmp_path)
    wheel.chmod(0o644)
    mode = 0o644
    bins = [_binary(tmp_path, "tcplab-emu"), _binary(tmp_path, "tcplab-flow")]
    assert add_scripts(wheel, bins) == ["fakepkg-0.1.data/scripts/tcplab-emu",
                                        "fakepkg-0.1.data/scripts/tcplab-flow"]
    # RECORD lists every file with its hash and size, itself without.
    with zipfile.ZipFile(wheel) as z:
        rows = list(csv.reader(io.StringIO(z.read("fakepkg-0.1.dist-info/RECORD").decode())))
        names = {i.filename for i in z.infolist()}
        for name, digest, size in rows:
            assert name in names
            if name.endswith("RECORD"):
                assert (digest, size) == ("", "")
                continue
            data = z.read(name)
            want = base64.urlsafe_b64encode(hashlib.sha256(data).digest()).rstrip(b"=").decode()
            assert (digest, int(size)) == (f"sha256={want}", len(data))
        assert len(rows) == len(names)
    assert wheel.stat().st_mode & 0o777 == mode, "the wheel keeps its permissions"
    # Adding again replaces them (no duplicate entries).
    add_scripts(wheel, bins)
    with zipfile.ZipFile(wheel) as z:
        assert len([i for i in z.infolist() if i.filename.endswith("tcplab-emu")]) == 1
    prefix = tmp_path / "env"
    r = subprocess.run([sys.executable, "-m", "pip", "install", "--no-deps", "--no-index", "--quiet",
                        "--prefix", str(prefix), str(wheel)], capture_output=True, text=True)
    assert r.returncode == 0, r.stderr
    emu = prefix / "bin" / "tcplab-emu"
    assert os.access(emu, os.X_OK)
    assert subprocess.run([str(emu)], capture_output=True, text=True).stdout == "tcplab-emu runs\n"


@pytest.mark.parametrize("case", ["missing binary", "not a wheel"])
def test_bad_input_is_one_line_and_leaves_the_wheel_as_it_was(tmp_path: Path, case: str, capsys) -> None:
    wheel = _wheel(tmp_path)
    before = wheel.read_bytes()
    if case == "not a wheel":
        wheel.write_bytes(b"not a zip")
        before = wheel.read_bytes()
        args = [str(wheel), str(_binary(tmp_path, "tcplab-emu"))]
    else:
        args = [str(wheel), str(tmp_path / "tcplab-emu")]
    assert main(args) == 2
    err = capsys.readouterr().err.strip()
    assert err.startswith("error: ") and "\n" not in err
    assert wheel.read_bytes() == before
    assert [p.name for p in tmp_path.iterdir() if p.name.endswith(".partial")] == []
