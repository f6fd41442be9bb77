"""The scenario format's names (topology kinds, queue disciplines, loss models, RED modes,
routing, series, RTO modes, repeated-RTO and SACK styles, growth modes, live stacks
and framings) and a link
direction's default queue and loss model, read from the simulator
(``tcplab_sim::scenario::vocabulary``, through ``_native.scenario_vocabulary_json``): the
serde definitions are the one list; this package keeps no copy."""

from __future__ import annotations

import json
from typing import Any

from pydantic import BeforeValidator

from tcplab import _native
from tcplab.scenario.errors import FieldError

__all__ = ["DEFAULTS", "name_field", "names"]

_VOCABULARY: dict[str, Any] = json.loads(_native.scenario_vocabulary_json())

#: A link direction's queue and loss model when the scenario gives none (canonical form).
DEFAULTS: dict[str, dict[str, Any]] = _VOCABULARY["defaults"]


def names(field: str) -> tuple[str, ...]:
    """The names the simulator accepts for ``field`` ("queue", "loss_model", "topology",
    "red_mode", "routing", "series", "rto_mode", "repeated_rto", "sack_style", "growth", "stack", "framing")."""
    return tuple(_VOCABULARY[field])


def name_field(what: str, field: str) -> Any:
    """A pydantic validator: one of :func:`names` of ``field``, else ``is not a known
    {what} (known: ...)``."""
    known = names(field)

    def validate(v: Any) -> str:
        if not isinstance(v, str) or v not in known:
            raise FieldError(f"is not a known {what} (known: {', '.join(known)})")
        return v

    return BeforeValidator(validate)
