"""The scenarios tcplab ships (package data, ``tcplab/data/scenarios``; in a source tree
``scenarios/`` links to them): the papers' settings, the demo and the sweeps, with the
delivery traces they name. ``tcplab scenarios`` lists them and copies them out to edit."""

from __future__ import annotations

import shutil
import tomllib
from importlib.resources import files
from pathlib import Path

__all__ = ["shipped_dir", "shipped", "copy_shipped"]


def shipped_dir() -> Path:
    """Where the shipped scenarios are."""
    return Path(str(files("tcplab") / "data" / "scenarios"))


def shipped() -> list[tuple[str, str, Path]]:
    """(file name, description, path) of every shipped scenario, sweeps under ``sweeps/``."""
    root = shipped_dir()
    out = []
    for p in sorted(root.glob("*.toml")) + sorted((root / "sweeps").glob("*.toml")):
        try:
            doc = tomllib.loads(p.read_text(encoding="utf-8"))
        except (OSError, tomllib.TOMLDecodeError):
            doc = {}
        about = str(doc.get("description") or doc.get("name") or "")
        out.append((str(p.relative_to(root)), about, p))
    return out


def copy_shipped(dest: Path) -> Path:
    """Copies every shipped scenario, with ``sweeps/`` and ``traces/``, into `dest` (created;
    it must not exist or be empty: checked as ``--out`` is), atomically."""
    from tcplab.out_dir import building

    with building(dest) as tmp:
        shutil.copytree(shipped_dir(), tmp, dirs_exist_ok=True,
                        ignore=shutil.ignore_patterns("__pycache__", "*.pyc"))
    return dest
