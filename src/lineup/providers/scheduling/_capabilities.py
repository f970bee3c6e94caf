"""The scheduling provider's catalogue: four capabilities and their JSON Schemas."""

from __future__ import annotations

from typing import Any

from lineup.protocol.capabilities import CapabilitySpec, Effect, Mode

PROVIDER_ID = "scheduling"

ORDERS_QUERY = "scheduling.orders.query"
RESOURCES_LOAD = "scheduling.resources.load"
SCHEDULE_PREVIEW = "scheduling.schedule.preview"
SCHEDULE_PUBLISH = "scheduling.schedule.publish"

ORDER_STATUSES = ["open", "in_progress", "done"]

_DATE: dict[str, Any] = {"type": "string", "pattern": r"^\d{4}-\d{2}-\d{2}$"}

_ORDER: dict[str, Any] = {
    "type": "object",
    "required": ["id", "product", "quantity", "dueDate", "priority", "status"],
    "properties": {
        "id": {"type": "string"},
        "product": {"type": "string"},
        "quantity": {"type": "integer", "minimum": 1},
        "dueDate": _DATE,
        "priority": {"type": "integer"},
        "status": {"enum": ORDER_STATUSES},
    },
}

_ASSIGNMENT: dict[str, Any] = {
    "type": "object",
    "required": ["operationId", "orderId", "sequence", "resourceId", "date", "start", "end"],
    "properties": {
        "operationId": {"type": "string"},
        "orderId": {"type": "string"},
        "sequence": {"type": "integer"},
        "resourceId": {"type": "string"},
        "date": _DATE,
        "start": {"type": "string", "pattern": r"^\d{2}:\d{2}$"},
        "end": {"type": "string", "pattern": r"^\d{2}:\d{2}$"},
        "minutes": {"type": "integer", "minimum": 1},
    },
}

_LATE: dict[str, Any] = {
    "type": "object",
    "required": ["orderId", "dueDate", "finishDate", "daysLate"],
    "properties": {
        "orderId": {"type": "string"},
        "dueDate": _DATE,
        "finishDate": {"anyOf": [_DATE, {"type": "null"}]},
        "daysLate": {"type": ["integer", "null"]},
    },
}

_LOAD: dict[str, Any] = {
    "type": "object",
    "required": ["resourceId", "date", "availableMinutes", "plannedMinutes", "loadPercent"],
    "properties": {
        "resourceId": {"type": "string"},
        "date": _DATE,
        "availableMinutes": {"type": "integer", "minimum": 0},
        "plannedMinutes": {"type": "integer", "minimum": 0},
        "loadPercent": {"type": "number", "minimum": 0},
    },
}

_VERSION: dict[str, Any] = {"type": "integer", "minimum": 0}


def _spec(**fields: Any) -> CapabilitySpec:
    return CapabilitySpec.model_validate({"provider": PROVIDER_ID, **fields})


def catalogue(instances: list[str]) -> list[CapabilitySpec]:
    return [
        _spec(
            id=ORDERS_QUERY,
            effect=Effect.READ,
            mode=Mode.SYNC,
            description=(
                "Production orders of the plant, by due date: filter by status, by due date"
                " (strictly before a day), at most `limit` of them."
            ),
            input_schema={
                "type": "object",
                "additionalProperties": False,
                "properties": {
                    "status": {"enum": ORDER_STATUSES},
                    "dueBefore": _DATE,
                    "limit": {"type": "integer", "minimum": 1, "maximum": 500, "default": 100},
                },
            },
            output_schema={
                "type": "object",
                "required": ["orders"],
                "properties": {"orders": {"type": "array", "items": _ORDER}},
            },
            timeout_s=10,
            instances=instances,
        ),
        _spec(
            id=RESOURCES_LOAD,
            effect=Effect.READ,
            mode=Mode.SYNC,
            description=(
                "How loaded each machine or line is, day by day, under the published schedule:"
                " available and planned minutes and the load in percent, from `from` to `to`"
                " (inclusive; the whole calendar when left out)."
            ),
            input_schema={
                "type": "object",
                "additionalProperties": False,
                "properties": {"from": _DATE, "to": _DATE},
            },
            output_schema={
                "type": "object",
                "required": ["scheduleVersion", "resources", "load"],
                "properties": {
                    "scheduleVersion": _VERSION,
                    "resources": {
                        "type": "array",
                        "items": {
                            "type": "object",
                            "required": ["id", "name"],
                            "properties": {"id": {"type": "string"}, "name": {"type": "string"}},
                        },
                    },
                    "load": {"type": "array", "items": _LOAD},
                },
            },
            timeout_s=10,
            instances=instances,
        ),
        _spec(
            id=SCHEDULE_PREVIEW,
            effect=Effect.READ,
            mode=Mode.SYNC,
            description=(
                "A trial schedule: plans the open orders (or only `orderIds`) over the next"
                " `horizonDays` days of the calendar, by priority then due date, and keeps it"
                " as a draft that `scheduling.schedule.publish` can publish. Changes nothing"
                " that is published."
            ),
            input_schema={
                "type": "object",
                "additionalProperties": False,
                "properties": {
                    "horizonDays": {"type": "integer", "minimum": 1, "maximum": 60},
                    "orderIds": {
                        "type": "array",
                        "items": {"type": "string", "minLength": 1},
                        "minItems": 1,
                        "maxItems": 200,
                        "uniqueItems": True,
                    },
                },
            },
            output_schema={
                "type": "object",
                "required": ["draftId", "basedOnVersion", "assignments", "lateOrders", "load"],
                "properties": {
                    "draftId": {"type": "string"},
                    "basedOnVersion": _VERSION,
                    "assignments": {"type": "array", "items": _ASSIGNMENT},
                    "lateOrders": {"type": "array", "items": _LATE},
                    "load": {"type": "array", "items": _LOAD},
                },
            },
            timeout_s=30,
            instances=instances,
        ),
        _spec(
            id=SCHEDULE_PUBLISH,
            effect=Effect.WRITE,
            mode=Mode.ASYNC,
            description=(
                "Publish a trial schedule as the plant's next schedule version. Refused as"
                " stale (conflict) when another version was published after the draft was made."
            ),
            input_schema={
                "type": "object",
                "additionalProperties": False,
                "required": ["draftId", "basedOnVersion"],
                "properties": {
                    "draftId": {"type": "string", "minLength": 1, "maxLength": 100},
                    "basedOnVersion": _VERSION,
                },
            },
            output_schema={
                "type": "object",
                "required": ["publishedVersion", "draftId", "publishedAt"],
                "properties": {
                    "publishedVersion": {"type": "integer", "minimum": 1},
                    "draftId": {"type": "string"},
                    "publishedAt": {"type": "string"},
                },
            },
            preview=True,
            idempotent_replay=True,
            timeout_s=30,
            instances=instances,
        ),
    ]
