"""Adds the live binaries (`tcplab-emu`, `tcplab-flow`) to a wheel built by maturin.

maturin packs only the Python extension (`crates/tcplab-py`); the emulator and the
endpoints are separate Rust programs (`crates/tcplab-live`). A wheel installs whatever it
holds under ``<name>-<version>.data/scripts/`` into the environment's executables directory
(a venv's ``bin``), which is where `tcplab.live.emulator_binary()` looks after
``$TCPLAB_EMU``. This script copies the wheel, adds the binaries there (mode 0755) and
writes the new RECORD (sha256 and size of every file), replacing the wheel in place.

    python scripts/wheel_binaries.py dist/tcplab-*.whl target/release/tcplab-emu target/release/tcplab-flow

`scripts/build_wheel.sh` builds the binaries and the wheel and runs this.
"""

from __future__ import annotations

import base64
import csv
import hashlib
import io
import os
import sys
import tempfile
import zipfile
from pathlib import Path


def _digest(data: bytes) -> str:
    return "sha256=" + base64.urlsafe_b64encode(hashlib.sha256(data).digest()).rstrip(b"=").decode()


def add_scripts(wheel: Path, binaries: list[Path]) -> list[str]:
    """Adds ``binaries`` to ``wheel`` as scripts; returns the names added. A binary already
    there is replaced. Raises ValueError naming what is wrong (no .dist-info, a missing
    binary)."""
    with zipfile.ZipFile(wheel) as z:
        infos = z.infolist()
        record_name = next((i.filename for i in infos if i.filename.endswith(".dist-info/RECORD")), None)
        if record_name is None:
            raise ValueError(f"{wheel}: no .dist-info/RECORD: not a wheel")
        dist = record_name.split("/")[0][: -len(".dist-info")]
        scripts = f"{dist}.data/scripts/"
        added = {scripts + b.name: b for b in binaries}
        for b in added.values():
            if not b.is_file():
                raise ValueError(f"{b}: no such binary (build it: cargo build --release -p tcplab-live)")
        rows = []
        fd, tmp = tempfile.mkstemp(dir=wheel.parent, suffix=".whl.partial")
        os.close(fd)
        try:
            with zipfile.ZipFile(tmp, "w", zipfile.ZIP_DEFLATED) as out:
                for i in infos:
                    if i.filename == record_name or i.filename in added:
                        continue
                    data = z.read(i)
                    out.writestr(i, data)
                    rows.append((i.filename, _digest(data), str(len(data))))
                for name, b in added.items():
                    data = b.read_bytes()
                    info = zipfile.ZipInfo(name, date_time=(2020, 1, 1, 0, 0, 0))
                    info.external_attr = (0o100755 & 0xFFFF) << 16
                    info.compress_type = zipfile.ZIP_DEFLATED
                    out.writestr(info, data)
                    rows.append((name, _digest(data), str(len(data))))
                text = io.StringIO()
                w = csv.writer(text, lineterminator="\n")
                w.writerows(rows)
                w.writerow((record_name, "", ""))
                out.writestr(record_name, text.getvalue())
            os.chmod(tmp, wheel.stat().st_mode & 0o777)
            os.replace(tmp, wheel)
        finally:
            if os.path.exists(tmp):
                os.unlink(tmp)
    return sorted(added)


def main(argv: list[str]) -> int:
    if len(argv) < 2:
        print("usage: wheel_binaries.py WHEEL BINARY...", file=sys.stderr)
        return 2
    try:
        for name in add_scripts(Path(argv[0]), [Path(b) for b in argv[1:]]):
            print(f"added {name}")
    except (ValueError, zipfile.BadZipFile, OSError) as e:
        print(f"error: {e}", file=sys.stderr)
        return 2
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
