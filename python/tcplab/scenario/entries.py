"""Individual ``[[flows]]`` entries validated once per shape: entries alike but for their
name, endpoints, start, stop and size (the fields that usually differ from flow to flow)
share one pydantic validation; each of the others is a copy of that flow with its own values
of those fields, checked by the same parsers pydantic's validators call. Anything else (an
entry whose values are not plain TOML values, a value that fails, a name that is not ASCII)
is left to pydantic as given: its errors are pydantic's, in the same place and words."""

from __future__ import annotations

from typing import Any

from pydantic import BaseModel

from tcplab.scenario.checks import NoKey, value_key
from tcplab.scenario.flows import Flow
from tcplab.units import parse_duration, parse_size

#: The fields that make no difference to an entry's shape: (field, parser; None: a string).
_OWN = {"name": None, "src": None, "dst": None, "start": parse_duration, "stop": parse_duration, "bytes": parse_size}

_SCALARS = frozenset({str, int, bool, type(None)})

_set = object.__setattr__
_new = object.__new__


class _Unusual(Exception):
    """An entry pydantic validates on its own."""


def _fresh(value: Any) -> Any:
    """A copy of a validated field's value that shares nothing that can be changed in place
    (dicts, lists, models), so that changing one flow's table after validation changes no
    other flow."""
    t = type(value)
    if t in _SCALARS or t is float:
        return value
    if t is dict:
        return {k: _fresh(v) for k, v in value.items()}
    if t is list:
        return [_fresh(v) for v in value]
    if isinstance(value, BaseModel):
        out = object.__new__(t)
        _set(out, "__dict__", {k: _fresh(v) for k, v in value.__dict__.items()})
        _set(out, "__pydantic_fields_set__", set(value.__pydantic_fields_set__))
        _set(out, "__pydantic_extra__", _fresh(value.__pydantic_extra__))
        _set(out, "__pydantic_private__", _fresh(value.__pydantic_private__))
        return out
    raise _Unusual


def _flat(value: Any) -> bool:
    return type(value) is dict and all(type(v) in _SCALARS or type(v) is float for v in value.values())


def _copier(value: Any) -> Any:
    """A function that makes :func:`_fresh` of ``value`` (quicker for a controller or
    recovery: a name and a table of parameters)."""
    if _flat(value):
        return dict
    if type(value) is dict and all(_flat(v) or type(v) in _SCALARS or type(v) is float for v in value.values()):
        nested = tuple(k for k, v in value.items() if type(v) is dict)

        def copy(v: dict[str, Any]) -> dict[str, Any]:
            out = dict(v)
            for k in nested:
                out[k] = dict(out[k])
            return out

        return copy
    return _fresh


class _Template:
    """A validated flow of one shape: the values of its shared fields and which of them
    hold something that changes in place (copied for each flow)."""

    __slots__ = ("values", "nested", "fields_set", "strings", "parsed")

    def __init__(self, flow: Flow, entry: dict[str, Any]) -> None:
        if flow.__pydantic_extra__ is not None or flow.__pydantic_private__ is not None:
            raise _Unusual
        self.values = _fresh(flow.__dict__)
        self.nested = tuple(
            (k, _copier(v)) for k, v in self.values.items() if type(v) not in _SCALARS and type(v) is not float
        )
        self.fields_set = frozenset(flow.__pydantic_fields_set__)
        # the entry's own fields (every entry of the shape has these)
        self.strings = tuple(k for k, parse in _OWN.items() if k in entry and parse is None)
        self.parsed = tuple((k, parse) for k, parse in _OWN.items() if k in entry and parse is not None)

    def make(self, entry: dict[str, Any]) -> Flow:
        values = self.values.copy()
        for k, copy in self.nested:
            values[k] = copy(values[k])
        for k in self.strings:
            v = entry[k]
            if type(v) is not str or not v.isascii():
                raise _Unusual
            values[k] = v
        for k, parse in self.parsed:
            v = entry[k]
            if type(v) is not str and type(v) is not int and type(v) is not float:
                raise _Unusual
            values[k] = parse(v)  # UnitError: pydantic words it
        flow = _new(Flow)
        _set(flow, "__dict__", values)
        _set(flow, "__pydantic_fields_set__", set(self.fields_set))
        _set(flow, "__pydantic_extra__", None)
        _set(flow, "__pydantic_private__", None)
        return flow


class _Keys:
    """What an entry's shape is made of, per set of keys in order: the keys of the fields
    that are not its own."""

    __slots__ = ("shared", "strings")

    def __init__(self, keys: tuple[str, ...]) -> None:
        self.shared = tuple(k for k in keys if k not in _OWN)
        self.strings = (str,) * len(self.shared)


def validate_entries(entries: Any) -> Any:
    """``entries`` (the ``[[flows]]`` list, groups expanded) with each entry that validates
    as a :class:`Flow` replaced by it, entries of one shape validated by pydantic once (see
    the module's doc); the others as given. ``entries`` itself when it is not a list."""
    if type(entries) is not list:
        return entries
    templates: dict[Any, _Template | None] = {}
    plans: dict[tuple[str, ...], _Keys] = {}
    out: list[Any] = []
    append = out.append
    for entry in entries:
        if type(entry) is not dict:
            append(entry)
            continue
        keys = tuple(entry)
        plan = plans.get(keys)
        if plan is None:
            plan = plans[keys] = _Keys(keys)
        values = tuple(map(entry.__getitem__, plan.shared))
        if tuple(map(type, values)) != plan.strings:  # strings are themselves, others typed
            try:
                values = tuple(value_key(v, True) for v in values)  # types, and tables' key order
            except NoKey:
                append(entry)
                continue
        shape = (keys, values)
        template = templates.get(shape)
        if template is not None:
            try:
                append(template.make(entry))
            except Exception:  # pydantic validates it, and words what fails
                append(entry)
            continue
        try:
            flow = Flow.model_validate(entry)
        except Exception:
            append(entry)  # pydantic's error, in its place
            continue
        append(flow)
        if shape not in templates:
            try:
                templates[shape] = _Template(flow, entry)
            except _Unusual:
                templates[shape] = None
    return out
