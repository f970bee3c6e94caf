"""The base every wire model shares: camelCase on the wire, snake_case in Python.

Unknown fields are kept (``extra="allow"``) so a newer peer's additions survive a round trip
and can be reported, as seed 001 §10 asks: tolerate, record, do not fail.
"""

from __future__ import annotations

from datetime import datetime
from typing import Any

from pydantic import BaseModel, ConfigDict
from pydantic.alias_generators import to_camel


class WireModel(BaseModel):
    model_config = ConfigDict(
        alias_generator=to_camel,
        populate_by_name=True,
        extra="allow",
        frozen=True,
        ser_json_inf_nan="null",
    )

    def wire(self) -> dict[str, Any]:
        """The JSON-ready dict a peer sees: camelCase keys, no unset optional fields."""
        return self.model_dump(mode="json", by_alias=True, exclude_none=True)


def unknown_fields(model: BaseModel, prefix: str = "") -> list[str]:
    """Dotted paths of the fields a model did not declare, searched through nested models."""
    extra = model.__pydantic_extra__
    found = [f"{prefix}{key}" for key in sorted(extra)] if extra else []
    # Declared fields live in the instance's __dict__ (extras do not). This runs for every
    # inbound event, so plain values are passed over before the (slow, ABC) model check.
    for name, value in model.__dict__.items():
        kind = type(value)
        if kind in _PLAIN:
            continue
        if kind is list or kind is tuple:
            for index, item in enumerate(value):
                if isinstance(item, BaseModel):
                    label = _label(model, name)
                    found.extend(unknown_fields(item, f"{prefix}{label}[{index}]."))
        elif isinstance(value, BaseModel):
            found.extend(unknown_fields(value, f"{prefix}{_label(model, name)}."))
    return found


_PLAIN = frozenset({str, int, float, bool, type(None), dict, datetime})


def _label(model: BaseModel, name: str) -> str:
    field = type(model).model_fields.get(name)
    return (field.alias if field is not None else None) or name
