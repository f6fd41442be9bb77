"""Scenario errors: :class:`ScenarioError` (what callers see, one line naming the field path,
the bad value and what is allowed), :class:`FieldError` (raised inside validators) and the
formatting of pydantic's errors into that one line."""

from __future__ import annotations

from typing import Any

from pydantic import BaseModel, ValidationError


class ScenarioError(ValueError):
    """An invalid scenario. ``str(e)`` is one line: ``path: value what-is-wrong``."""

    def __init__(self, message: str, path: str | None = None):
        super().__init__(message)
        self.message = message
        self.path = path


NO_VALUE: Any = object()


class FieldError(ValueError):
    """Raised inside validators: ``detail`` about ``value`` at ``sub`` below the current path.

    The message reads ``path.sub: value detail``. Without ``value`` the value pydantic was
    validating is shown; with ``show=False`` no value is (``path.sub: detail``).
    """

    def __init__(
        self,
        detail: str,
        sub: tuple[str | int, ...] = (),
        value: Any = NO_VALUE,
        *,
        show: bool = True,
    ):
        super().__init__(detail)
        self.detail = detail
        self.sub = sub
        self.value = value
        self.show = show


def did_you_mean(value: Any, known: Any) -> str:
    """``"did you mean 'cubic'? "`` when `value` (a string) is close to one of `known`, case
    aside (difflib's ratio at least 0.6, the closest), else ``""``: the start of a
    "(... known: ...)" parenthesis."""
    import difflib

    if not isinstance(value, str):
        return ""
    by_lower = {str(k).lower(): str(k) for k in known}
    close = difflib.get_close_matches(value.lower(), list(by_lower), n=1, cutoff=0.6)
    return f"did you mean {by_lower[close[0]]!r}? " if close else ""


def field_path(loc: tuple[str | int, ...]) -> str:
    out = ""
    for part in loc:
        if isinstance(part, int):
            out += f"[{part}]"
        else:
            out += ("." if out else "") + str(part)
    return out


class RawText(str):
    """Text shown as is in an error message (a value already in user units)."""


def show_value(value: Any) -> str:
    """A value as the user wrote it (TOML-ish), shortened."""
    if isinstance(value, RawText):
        text = str(value)
    elif isinstance(value, bool):
        text = "true" if value else "false"
    elif isinstance(value, str):
        text = repr(value)
    elif isinstance(value, dict):
        inner = ", ".join(f"{k} = {show_value(v)}" for k, v in value.items())
        text = "{" + inner + "}"
    elif isinstance(value, list):
        text = "[" + ", ".join(show_value(v) for v in value) + "]"
    else:
        text = repr(value)
    return text if len(text) <= 80 else text[:77] + "..."


_TYPE_WORDS = {
    "int_type": "is not an integer",
    "int_parsing": "is not an integer",
    "int_from_float": "is not a whole number",
    "float_type": "is not a number",
    "float_parsing": "is not a number",
    "bool_type": "is not a boolean (expected true or false)",
    "bool_parsing": "is not a boolean (expected true or false)",
    "string_type": "is not a string",
    "list_type": "is not a list (expected an array [...] or [[...]] tables)",
    "model_type": "is not a table (expected {key = value, ...} or a [section])",
    "model_attributes_type": "is not a table (expected {key = value, ...} or a [section])",
    "dict_type": "is not a table (expected {key = value, ...} or a [section])",
    "string_too_short": "must not be empty",
}


def describe_error(err: dict[str, Any]) -> tuple[tuple[str | int, ...], str]:
    """(location, "value what-is-wrong") of one pydantic error."""
    loc = tuple(err["loc"])
    kind = err["type"]
    value = err.get("input")
    ctx = err.get("ctx") or {}
    if kind == "value_error" and isinstance(ctx.get("error"), FieldError):
        fe: FieldError = ctx["error"]
        loc = loc + fe.sub
        if not fe.show:
            return loc, fe.detail
        shown = value if fe.value is NO_VALUE else fe.value
        return loc, f"{show_value(shown)} {fe.detail}"
    if kind in ("value_error", "assertion_error"):
        detail = str(ctx.get("error", err["msg"]))
        return loc, f"{show_value(value)} {detail}"
    if kind == "missing":
        return loc, "is required but missing"
    if kind == "extra_forbidden":
        return loc, "is not a known field"
    if kind in _TYPE_WORDS:
        return loc, f"{show_value(value)} {_TYPE_WORDS[kind]}"
    if kind == "literal_error":
        return loc, f"{show_value(value)} is not allowed (expected {ctx.get('expected')})"
    bounds = {
        "greater_than": ("must be >", "gt"),
        "greater_than_equal": ("must be >=", "ge"),
        "less_than": ("must be <", "lt"),
        "less_than_equal": ("must be <=", "le"),
    }
    if kind in bounds:
        words, key = bounds[kind]
        return loc, f"{show_value(value)} {words} {ctx.get(key)}"
    return loc, f"{show_value(value)}: {err['msg']}"


def to_scenario_error(e: ValidationError, prefix: tuple[str | int, ...] = ()) -> ScenarioError:
    loc, detail = describe_error(e.errors()[0])
    path = field_path(prefix + loc)
    return ScenarioError(f"{path}: {detail}" if path else detail, path or None)


def validate_nested(model: type[BaseModel], value: Any, sub: tuple[str | int, ...]) -> BaseModel:
    """Validates ``value`` as ``model``; errors keep their full path below ``sub``."""
    if isinstance(value, model):
        return value
    try:
        return model.model_validate(value)
    except ValidationError as e:
        loc, detail = describe_error(e.errors()[0])
        raise FieldError(detail, sub + loc, show=False) from None

