"""Health, readiness and metrics: what a load balancer, an operator and Prometheus ask."""

from __future__ import annotations

from typing import Any

from fastapi import APIRouter, Depends
from fastapi.responses import JSONResponse, Response

from lineup import __version__
from lineup.hub.api import responses
from lineup.hub.api.deps import Hub, operator_only
from lineup.hub.api.openapi import answers, errors
from lineup.hub.errors import error_response
from lineup.hub.metrics import CONTENT_TYPE
from lineup.protocol.errors import Unavailable

router = APIRouter()

_READY_RESPONSES: dict[int | str, dict[str, Any]] = {
    200: {"model": responses.Ready, "description": "The database answers."},
    **errors(),
}


@router.get("/healthz", tags=["health"], **answers(responses.Health, database=False))
async def healthz() -> dict[str, str]:
    """The process is up."""
    return {"status": "ok", "version": __version__}


@router.get("/readyz", tags=["health"], response_model=None, responses=_READY_RESPONSES)
async def readyz(hub: Hub) -> dict[str, Any] | JSONResponse:
    """The database answers (and Redis, when configured: reported, not required)."""
    checks: dict[str, str] = {}
    try:
        await hub.store.last_sequence("readyz")
        checks["database"] = "ok"
    except Exception as exc:
        checks["database"] = f"unavailable: {type(exc).__name__}"
    if hub.settings.redis_url:
        checks["redis"] = await _redis_ok(hub.settings.redis_url)
    if checks["database"] != "ok":
        error = Unavailable("The hub is not ready.", details={"checks": checks})
        return error_response(error)
    # without Redis the nodes catch up from the database, so a node
    # stays ready (serving correctly, a little later) while Redis is down
    degraded = any(v != "ok" for v in checks.values())
    return {"status": "degraded" if degraded else "ok", "checks": checks}


@router.get(
    "/readyz/cluster",
    tags=["health"],
    dependencies=[Depends(operator_only)],
    **answers(responses.ClusterNode, 401, 403),
)
async def readyz_cluster(hub: Hub) -> dict[str, Any]:
    """This node's part in the cluster: its name, the leases it holds, the stream."""
    return hub.cluster.describe()


@router.get(
    "/metrics", tags=["health"], include_in_schema=False, dependencies=[Depends(operator_only)]
)
async def metrics(hub: Hub) -> Response:  # Prometheus
    return Response(hub.metrics.render(), media_type=CONTENT_TYPE)


async def _redis_ok(url: str) -> str:
    from redis.asyncio import Redis

    client = Redis.from_url(url, socket_timeout=2, socket_connect_timeout=2)
    try:
        await client.ping()
        return "ok"
    except Exception as exc:
        return f"unavailable: {type(exc).__name__}"
    finally:
        await client.aclose()
