"""An older hub kept push services' replies in its error texts; upgrading removes them."""

from __future__ import annotations

from typing import Any

from alembic import command
from sqlalchemy import insert, select
from sqlalchemy.engine import Connection

from lineup.store import Store
from lineup.store.migrations import alembic_config
from lineup.store.schema import notification_attempts, notifications, push_subscriptions

REPLY = "<html>internal admin panel: root password s3cr3t</html>"


async def test_upgrading_removes_push_services_replies_from_recorded_errors(
    database_url: str,
) -> None:
    store = await Store.open(database_url)
    try:

        def older_hub(conn: Connection) -> None:
            with conn.begin():
                command.upgrade(alembic_config(connection=conn), "0003_notifications")
                conn.execute(
                    insert(push_subscriptions).values(
                        id="dev_1", user_id="u", endpoint="e", endpoint_hash="h", p256dh="p",
                        auth="a", label="phone", created_at=1,
                        last_error=f"403 from the push service: {REPLY}",
                    )
                )  # fmt: skip
                conn.execute(
                    insert(notifications).values(
                        id="ntf_1", dedupe_key="k", user_id="u", workspace_id="w",
                        channel="push", target="dev_1", kind="waiting", subject_type="x",
                        subject_id="y", title="t", body="b", link="/", tag="t",
                        status="failed", attempts=8, next_attempt_at=1, created_at=1,
                        updated_at=1,
                        last_error=f"gave up after 8 attempts: 503 from the push service: {REPLY}",
                    )
                )  # fmt: skip
                conn.execute(
                    insert(notification_attempts).values(
                        id="att_1", notification_id="ntf_1", user_id="u", channel="push",
                        target="dev_1", attempt=1, at=1, outcome="failed", status_code=403,
                        error=f"403 from the push service: {REPLY}", node="n",
                    )
                )  # fmt: skip

        await store._backend.run_writer(older_hub)
        await store.migrate()

        def errors(conn: Any) -> list[str]:
            return [
                *conn.execute(select(push_subscriptions.c.last_error)).scalars(),
                *conn.execute(select(notifications.c.last_error)).scalars(),
                *conn.execute(select(notification_attempts.c.error)).scalars(),
            ]

        stored = await store.read(lambda r: errors(r.connection))
    finally:
        await store.close()
    assert stored == [
        "403 from the push service (its reply is not kept)",
        "gave up after 8 attempts: 503 from the push service (its reply is not kept)",
        "403 from the push service (its reply is not kept)",
    ]
