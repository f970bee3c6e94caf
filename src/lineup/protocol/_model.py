"""The base every wire model shares: camelCase on the wire, snake_case in Python.

Unknown fields are kept (``extra="allow"``) so a newer peer's additions survive a round trip
and can be reported, as seed 001 §10 asks: tolerate, record, do not fail.
"""

from __future__ import annotations

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
    found: list[str] = []
    for key in sorted(model.model_extra or {}):
        found.append(f"{prefix}{key}")
    for name in type(model).model_fields:
        value = getattr(model, name)
        field = type(model).model_fields[name]
        label = field.alias or name
        if isinstance(value, BaseModel):
            found.extend(unknown_fields(value, f"{prefix}{label}."))
        elif isinstance(value, list | tuple):
            for index, item in enumerate(value):
                if isinstance(item, BaseModel):
                    found.extend(unknown_fields(item, f"{prefix}{label}[{index}]."))
    return found
