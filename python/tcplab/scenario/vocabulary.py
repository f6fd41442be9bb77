"""The scenario format's names (topology kinds, queue disciplines, loss models, RED modes,
routing, series, RTO modes, repeated-RTO and SACK styles, growth modes, live
stacks and framings) and the defaults the
schema fills in (a link direction's queue and loss model, RED's and Gilbert-Elliott's optional
parameters, the dumbbell's access links, what a run traces), read from the simulator
(``tcplab_sim::scenario::vocabulary``, through ``_native.scenario_vocabulary_json``): the
serde definitions are the one list; this package keeps no copy."""

from __future__ import annotations

import json
from typing import Any

from pydantic import BeforeValidator

from tcplab import _native
from tcplab.scenario.errors import FieldError, did_you_mean

__all__ = ["DEFAULTS", "default_access", "name_field", "names"]

_VOCABULARY: dict[str, Any] = json.loads(_native.scenario_vocabulary_json())

#: The simulator's defaults (canonical form): ``queue`` and ``loss`` (a link direction's when
#: the scenario gives none), ``red`` and ``gilbert_elliott`` (their optional parameters),
#: ``access`` (the dumbbell's default access links: ``min_rate``, ``rate_factor``,
#: ``buffer_packets``) and ``trace`` (what a run records when ``[trace]`` says nothing).
DEFAULTS: dict[str, dict[str, Any]] = _VOCABULARY["defaults"]


def default_access(rate: int) -> dict[str, Any]:
    """A preset's access links (canonical duplex) when the scenario gives none, for a
    bottleneck of ``rate`` bit/s (its fastest direction): the simulator's
    ``Dumbbell::default_access``, never the bottleneck."""
    return json.loads(_native.default_access_json(rate))


def names(field: str) -> tuple[str, ...]:
    """The names the simulator accepts for ``field`` ("queue", "loss_model", "topology",
    "red_mode", "routing", "series", "rto_mode", "repeated_rto", "sack_style", "growth", "stack", "framing", "receiver")."""
    return tuple(_VOCABULARY[field])


def name_field(what: str, field: str) -> Any:
    """A pydantic validator: one of :func:`names` of ``field``, else ``is not a known
    {what} (known: ...)``."""
    known = names(field)

    def validate(v: Any) -> str:
        if not isinstance(v, str) or v not in known:
            raise FieldError(f"is not a known {what} ({did_you_mean(v, known)}known: {', '.join(known)})")
        return v

    return BeforeValidator(validate)
