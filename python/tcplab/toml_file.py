"""Reading TOML: the one loader of scenario, sweep and campaign files. Errors are one line
naming the file (``path: invalid TOML: ...``, ``path: no such file``). Every text file tcplab
reads (these and time traces) goes through :func:`read_limited`: at most
:data:`MAX_TEXT_BYTES`, so that ``/dev/zero`` or a huge file is one error, not a process
that grows until it dies."""

from __future__ import annotations

import errno
import tomllib
from pathlib import Path
from typing import Any

__all__ = ["MAX_TEXT_BYTES", "TomlError", "parse_toml", "read_limited", "read_text", "read_toml"]

#: The most tcplab reads from one text file (scenario, sweep, campaign, time trace).
MAX_TEXT_BYTES = 64 << 20


class TomlError(ValueError):
    """A file that cannot be read or is not valid TOML; ``str(e)`` is one line."""


def read_limited(path: str | Path, limit: int = MAX_TEXT_BYTES) -> str:
    """The UTF-8 text of ``path``, reading at most ``limit`` bytes: OSError when it cannot be
    read, is longer (``strerror``: "larger than 64 MB, the most tcplab reads from a text
    file") or is not UTF-8 (``strerror``: "not a UTF-8 text file")."""
    with open(path, "rb") as f:
        data = f.read(limit + 1)
    if len(data) > limit:
        raise OSError(errno.EFBIG, f"larger than {limit / 2**20:g} MB, the most tcplab reads from a text file")
    try:
        return data.decode("utf-8")
    except UnicodeDecodeError:
        raise OSError(errno.EILSEQ, "not a UTF-8 text file") from None


def read_text(path: str | Path) -> str:
    """The file's text (UTF-8, at most :data:`MAX_TEXT_BYTES`)."""
    p = Path(path)
    try:
        return read_limited(p)
    except FileNotFoundError:
        raise TomlError(f"{p}: no such file") from None
    except OSError as e:
        if e.errno in (errno.EFBIG, errno.EILSEQ):
            raise TomlError(f"{p}: {e.strerror}") from None
        raise TomlError(f"{p}: cannot read: {e.strerror or e}") from None


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
