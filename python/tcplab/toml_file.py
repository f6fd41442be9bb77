"""Reading TOML: the one loader of scenario, sweep and campaign files. Errors are one line
naming the file (``path: invalid TOML: ...``, ``path: no such file``). Every text file tcplab
reads (these and time traces) goes through :func:`read_limited`: at most
:data:`MAX_TEXT_BYTES`, so that ``/dev/zero`` or a huge file is one error, not a process
that grows until it dies."""

from __future__ import annotations

import errno
import gc
import re
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
    if _HEADER in text:  # many [[flows]] entries: see _parse_with_flows
        pause = gc.isenabled()  # what is read stays: a collection finds nothing
        gc.disable()
        try:
            doc = _parse_with_flows(text)
        except Exception:  # whatever it is, tomllib reads the whole text below
            doc = None  # tomllib's error, read from the whole text
        finally:
            if pause:
                gc.enable()
        if doc is not None:
            return doc
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


# ---- many [[flows]] entries ------------------------------------------------------------------
#
# A scenario of 450,000 individual [[flows]] entries is 2.7 million short lines that tomllib
# reads at about 40 us an entry. Runs of entries whose lines are all plain (``key = "string"``,
# a decimal number, true/false, blank or a comment) are read here instead; everything else,
# and the document with each run replaced by one ``[[flows]]`` header, is tomllib's. What
# comes out is what tomllib gives for the whole text, and anything tomllib refuses is refused
# by tomllib reading the whole text (the same error line):
#
# * tomllib reads the rest with a header in place of each run and must find exactly one
#   table of ``flows`` per run and per entry left to it, the runs' tables empty: each header
#   read here is then a real array-of-tables header (one inside a multi-line string would be
#   missing from the count, one inside an array is an error), and another spelling of the
#   array (``[[ "flows" ]]``, ``[flows.x]``) sends the whole text to tomllib;
# * a plain line is a complete key/value pair of its table: dropping it changes nothing
#   tomllib reads after it, and its value is what tomllib makes of it (``str``, ``int(text,
#   0)`` of a decimal, ``float(text)``); a key given twice in an entry sends the text to
#   tomllib.

_HEADER = "[[flows]]"
#: The header of an entry, alone on its line.
_HEADER_LINE = re.compile(r"^\[\[flows\]\][ \t]*$", re.M)
#: Other lines that begin with "[": tables, other arrays' entries (or an array's
#: continuation line, or a line of a multi-line string).
_OTHER_BRACKET_LINE = re.compile(r"^(?!\[\[flows\]\][ \t]*$)[ \t]*\[[^\n]*", re.M)
_COMMENT = r"#[^\x00-\x08\x0a-\x1f\x7f]*"
_VALUE = (
    r'(?:"([^"\\\x00-\x1f\x7f]*+)"'  # a basic string without escapes
    r"|([+-]?(?:0|[1-9][0-9]{0,29})(?:\.[0-9]{1,30})?(?:[eE][+-]?[0-9]{1,3})?)"  # a decimal number
    r"|(true|false))"
)
#: One plain line of a run, its newline included: a pair (key, string, number, boolean),
#: the header, or nothing (blank, a comment).
_PLAIN_LINE = re.compile(
    rf"^[ \t]*+(?:([A-Za-z0-9_-]++)[ \t]*+=[ \t]*+{_VALUE}|(\[\[flows\]\]))?[ \t]*+(?:{_COMMENT})?\n", re.M
)
#: The same as it is usually written (``key = value``, no blanks or comments around): a
#: third quicker, tried first.
_PLAIN_LINE_AS_USUAL = re.compile(rf"^(?:([A-Za-z0-9_-]++) = {_VALUE}|(\[\[flows\]\])|)\n", re.M)


class _NotPlain(Exception):
    """Text the fast path does not read (tomllib reads it)."""


def _plain_entries(text: str) -> list[dict[str, Any]]:
    """The tables of a run of plain ``[[flows]]`` entries (``text`` ends with a newline)."""
    count = text.count("\n")
    lines = _PLAIN_LINE_AS_USUAL.findall(text)
    if len(lines) != count:
        lines = _PLAIN_LINE.findall(text)
        if len(lines) != count:  # a line that is not plain
            raise _NotPlain
    out: list[dict[str, Any]] = []
    table: dict[str, Any] = {}
    # One string object per distinct key, and per distinct value among the first ones (a
    # controller's name, repeated in every entry): less memory, less to free.
    same: dict[str, str] = {}
    for key, string, number, boolean, header in lines:
        if header:
            table = {}
            out.append(table)
        elif key:
            key = same.setdefault(key, key)
            if key in table:
                raise _NotPlain  # tomllib's error
            if number:
                table[key] = float(number) if "." in number or "e" in number or "E" in number else int(number, 0)
            elif boolean:
                table[key] = boolean == "true"
            elif len(same) < 4096:
                table[key] = same.setdefault(string, string)
            else:
                table[key] = same.get(string, string)
    return out


def _parse_with_flows(text: str) -> dict[str, Any] | None:
    """:func:`tomllib.loads` of ``text`` with its runs of plain ``[[flows]]`` entries read
    here (see above); None when tomllib must read the whole text."""
    # The entries: a header and the lines after it, up to the next line beginning with "[".
    # Between two other lines that begin with "[" (found first: there are few), the entries
    # from the first header on are a group, read as one run when every line is plain, else
    # one by one: a plain entry joins the run before it, another is tomllib's own.
    others = [0]
    for m in _OTHER_BRACKET_LINE.finditer(text):
        line = m.group()
        if "flows" in line or "\\" in line:
            return None  # another spelling of the array, or a quoted key that may be it
        others.append(m.start())
    others.append(len(text))
    groups: list[tuple[int, int]] = []
    for begin, end in zip(others, others[1:]):
        first = _HEADER_LINE.search(text, begin, end)
        if first is not None:
            groups.append((first.start(), end))
    if not groups:
        return None
    rest: list[str] = []  # the text tomllib reads
    tables: list[list[dict[str, Any]] | None] = []  # per table of flows it reads: a run read here, or None
    done = 0  # text[:done] is placed in rest
    for start, stop in groups:
        try:
            read: list[tuple[int, int, list[dict[str, Any]] | None]] = [
                (start, stop, _plain_entries(_line_ended(text[start:stop])))
            ]
        except _NotPlain:
            read = []
            heads = [m.start() for m in _HEADER_LINE.finditer(text, start, stop)] + [stop]
            for pos, end in zip(heads, heads[1:]):
                try:
                    one: list[dict[str, Any]] | None = _plain_entries(_line_ended(text[pos:end]))
                except _NotPlain:
                    one = None
                if one is not None and read and read[-1][2] is not None:
                    read[-1] = (read[-1][0], end, read[-1][2] + one)  # the run goes on
                else:
                    read.append((pos, end, one))
        for pos, end, run in read:
            tables.append(run)
            if run is not None:
                rest.append(text[done:pos])
                rest.append(_HEADER + "\n")
                done = end
    if all(run is None for run in tables):
        return None
    rest.append(text[done:])
    doc = tomllib.loads("".join(rest))
    found = doc.get("flows")
    if type(found) is not list or len(found) != len(tables):
        return None
    flows: list[Any] = []
    for table, run in zip(found, tables):
        if run is None:
            flows.append(table)
        elif type(table) is not dict or table:
            return None
        else:
            flows.extend(run)
    doc["flows"] = flows
    return doc


def _line_ended(text: str) -> str:
    return text if text.endswith("\n") else text + "\n"
