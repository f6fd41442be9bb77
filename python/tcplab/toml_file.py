"""Reading TOML: the one loader of scenario, sweep and campaign files. Errors are one line
naming the file (``path: invalid TOML: ...``, ``path: no such file``)."""

from __future__ import annotations

import tomllib
from pathlib import Path
from typing import Any

__all__ = ["TomlError", "parse_toml", "read_text", "read_toml"]


class TomlError(ValueError):
    """A file that cannot be read or is not valid TOML; ``str(e)`` is one line."""


def read_text(path: str | Path) -> str:
    """The file's text (UTF-8)."""
    p = Path(path)
    try:
        return p.read_text(encoding="utf-8")
    except FileNotFoundError:
        raise TomlError(f"{p}: no such file") from None
    except OSError as e:
        raise TomlError(f"{p}: cannot read: {e.strerror or e}") from None
    except UnicodeDecodeError:
        raise TomlError(f"{p}: not a UTF-8 text file") from None


def parse_toml(text: str, where: str | Path | None = None) -> dict[str, Any]:
    """The document of TOML ``text``; ``where`` (a file name) prefixes the error."""
    try:
        return tomllib.loads(text)
    except tomllib.TOMLDecodeError as e:
        raise TomlError(f"{where}: invalid TOML: {e}" if where else f"invalid TOML: {e}") from None
    except RecursionError:
        detail = "invalid TOML: tables or arrays nested too deeply"
        raise TomlError(f"{where}: {detail}" if where else detail) from None


def read_toml(path: str | Path) -> tuple[dict[str, Any], str]:
    """(document, text) of a TOML file."""
    text = read_text(path)
    return parse_toml(text, path), text
