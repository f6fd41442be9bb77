"""Quantities of scenario fields (pydantic before-validators that turn user units into
canonical integers) and the strict base model every scenario table derives from."""

from __future__ import annotations

from typing import Annotated, Any

from pydantic import BaseModel, BeforeValidator, ConfigDict, model_validator

from tcplab.scenario.errors import FieldError, did_you_mean
from tcplab.units import UnitError, parse_duration, parse_rate, parse_size


def unit_field(parse, **kw):
    def validate(v: Any) -> int:
        try:
            return parse(v, **kw)
        except UnitError as e:
            raise FieldError(str(e)) from None

    return BeforeValidator(validate)


Duration = Annotated[int, unit_field(parse_duration)]
PosDuration = Annotated[int, unit_field(parse_duration, positive=True)]
Rate = Annotated[int, unit_field(parse_rate)]
Size = Annotated[int, unit_field(parse_size)]


def count_field(name: str, lo: int, hi: int | None = None):
    def validate(v: Any) -> int:
        if isinstance(v, bool) or not isinstance(v, int):
            if isinstance(v, float) and v.is_integer():
                v = int(v)
            else:
                raise FieldError(f"is not a whole number{' of ' + name if name else ''}")
        if v < lo or (hi is not None and v > hi):
            raise FieldError(f"must be within [{lo}, {hi}]" if hi is not None else f"must be >= {lo}")
        return v

    return BeforeValidator(validate)


#: The field names (aliases) each StrictModel class allows, in declaration order.
_ALLOWED: dict[type, list[str]] = {}


class StrictModel(BaseModel):
    model_config = ConfigDict(extra="forbid", strict=True, populate_by_name=True)

    @model_validator(mode="before")
    @classmethod
    def _known_fields(cls, data: Any) -> Any:
        if isinstance(data, dict):
            allowed = _ALLOWED.get(cls)
            if allowed is None:  # once per class (reading model_fields costs microseconds)
                allowed = _ALLOWED[cls] = [f.alias or name for name, f in cls.model_fields.items()]
            for key in data:
                if key not in allowed:
                    raise FieldError(
                        f"is not a known field ({did_you_mean(key, allowed)}allowed: {', '.join(allowed)})",
                        (key,),
                        show=False,
                    )
        return data
