"""The campaign configuration's errors: :class:`CampaignError` (what callers catch, one
line) and :class:`FieldValueError` (what a validator raises to name a field and its value;
:func:`tcplab.campaign.config.load_campaign` turns it into the line
``path.field: value what-is-wrong``)."""

from __future__ import annotations

from typing import Any

__all__ = ["CampaignError", "FieldValueError"]


class CampaignError(ValueError):
    """An invalid campaign configuration. ``str(e)`` is one line: ``path: value what-is-wrong``."""

    def __init__(self, message: str, path: str | None = None):
        super().__init__(message)
        self.message = message
        self.path = path


class FieldValueError(ValueError):
    """Raised by a model validator: ``field`` (relative to the model) holds ``value``, which
    is wrong as ``detail`` says (``value`` None: the line names only the field)."""

    def __init__(self, field: str, value: Any, detail: str):
        super().__init__(detail)
        self.field = field
        self.value = value
        self.detail = detail
