"""Push subscriptions and the VAPID private key are sealed in the database with a key kept
outside it: a copy of the database alone does not reveal them, an older hub's plain rows are
sealed on the first start, a hub with the wrong key stops at start, and keys rotate."""

from __future__ import annotations

import asyncio
import os
import stat
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest
from sqlalchemy import insert, select
from sqlalchemy.engine import Connection

from lineup.cli import main
from lineup.hub.notify import vapid
from lineup.hub.secret_keys import KEY_FILE, SecretKeyProblem
from lineup.store import Store
from lineup.store import notifications as ns
from lineup.store.schema import provider_credentials
from lineup.store.sealed import Keyring, new_key_text, sealed_key_id
from tests.integration.hub.notify_endpoints import MailServer, PushService
from tests.integration.hub.test_notifications import (
    api,
    for_subject,
    notify_settings,
    running_hub,
    start_story,
    subscribe,
    view,
)


def on_database(database_url: str, job: Callable[[Connection], Any]) -> Any:
    async def run() -> Any:
        store = await Store.open(database_url)
        try:
            return await store.write(lambda tx: job(tx.connection))
        finally:
            await store.close()

    return asyncio.run(run())


def stored(database_url: str) -> list[str]:
    """Every secret column's value as stored: the VAPID private key, then each device's."""

    def read(conn: Connection) -> list[str]:
        values = list(conn.execute(select(ns.vapid_keys.c.private_key)).scalars())
        table = ns.push_subscriptions
        for row in conn.execute(select(table.c.endpoint, table.c.p256dh, table.c.auth)).all():
            values += list(row)
        return values

    result: list[str] = on_database(database_url, read)
    return result


def test_subscriptions_and_the_vapid_key_are_not_stored_in_plain_text(
    hub_database: str, tmp_path: Path, push_service: PushService, mail_server: MailServer
) -> None:
    phone = push_service.device("phone")
    with running_hub(notify_settings(hub_database, tmp_path, mail_server)) as hub:
        story = start_story(hub)
        subscribe(story.person, phone)
        asked = story.request()
        got = push_service.wait_for(lambda got: for_subject(got, asked), "the push")
        assert got[0].vapid_ok
        public_key = view(story.person)["vapidPublicKey"]
        story.close()
    values = stored(hub_database)
    assert len(values) == 4
    assert all(v.startswith("lus1.") for v in values)
    sub = phone.subscription()
    plain = [sub["endpoint"], sub["keys"]["p256dh"], sub["keys"]["auth"], "127.0.0.1", "/push/"]
    assert not [p for v in values for p in plain if p in v]
    key_file = tmp_path / KEY_FILE
    assert stat.S_IMODE(key_file.stat().st_mode) == 0o600
    # The key file opens the private key, and it is the public key's other half.
    ring = Keyring.from_texts([key_file.read_text().split()[-1]])
    private = ring.open(values[0], ns.VAPID_CONTEXT)
    from py_vapid import Vapid

    assert (
        vapid.b64url(
            Vapid.from_string(private_key=private).public_key.public_bytes(*_uncompressed_point())
        )
        == public_key
    )


def _uncompressed_point() -> tuple[Any, Any]:
    from cryptography.hazmat.primitives import serialization

    return serialization.Encoding.X962, serialization.PublicFormat.UncompressedPoint


def test_an_older_hubs_plain_secrets_are_sealed_at_start_and_keep_working(
    hub_database: str, tmp_path: Path, push_service: PushService, mail_server: MailServer
) -> None:
    settings = notify_settings(hub_database, tmp_path, mail_server, notify_enabled=False)
    with running_hub(settings) as hub:
        ana = hub.sign_up(name="Ana")
    # What an older hub left: its VAPID pair and a device, all in plain text.
    keys = vapid.new_keys()
    phone = push_service.device("phone")
    sub = phone.subscription()

    def older_hub(conn: Connection) -> None:
        conn.execute(ns.vapid_keys.delete())
        conn.execute(
            insert(ns.vapid_keys).values(
                id=ns.VAPID_ROW, public_key=keys.public_key, private_key=keys.private_key,
                created_at=1,
            )
        )  # fmt: skip
        conn.execute(
            insert(ns.push_subscriptions).values(
                id="dev_old", user_id=ana.user_id, endpoint=sub["endpoint"],
                endpoint_hash=ns.key_hash(sub["endpoint"]), p256dh=sub["keys"]["p256dh"],
                auth=sub["keys"]["auth"], label="old phone", created_at=1,
            )
        )  # fmt: skip

    on_database(hub_database, older_hub)
    assert not any(v.startswith("lus1.") for v in stored(hub_database))

    with running_hub(notify_settings(hub_database, tmp_path, mail_server)) as hub:
        ana.client = hub.client  # the session outlives the restart
        assert all(v.startswith("lus1.") for v in stored(hub_database))
        story = start_story(hub, ana)
        shown = view(ana)
        assert shown["vapidPublicKey"] == keys.public_key  # the same identity, not a new one
        assert [d["label"] for d in shown["devices"]] == ["old phone"]
        asked = story.request()
        got = push_service.wait_for(lambda got: for_subject(got, asked), "the push")
        assert got[0].vapid_ok and f"k={keys.public_key}" in got[0].headers["authorization"]
        story.close()


def test_a_hub_with_another_key_does_not_start_and_changes_nothing(
    hub_database: str, tmp_path: Path, push_service: PushService, mail_server: MailServer
) -> None:
    with running_hub(notify_settings(hub_database, tmp_path, mail_server)) as hub:
        ana = hub.sign_up(name="Ana")
        subscribe(ana, push_service.device("phone"))
    before = stored(hub_database)
    # Another node of a cluster with its own key file, or a lost key file.
    other_home = tmp_path / "other-node"
    other = notify_settings(hub_database, other_home, mail_server)
    refused = pytest.raises(SecretKeyProblem, match="do not open with this hub's secret key")
    with refused, running_hub(other):
        pass
    wrong = notify_settings(hub_database, tmp_path, mail_server, secret_keys=(new_key_text(),))
    with pytest.raises(SecretKeyProblem, match="LINEUP_SECRET_KEY"), running_hub(wrong):
        pass
    assert stored(hub_database) == before


def test_keys_rotate_with_the_new_key_first_and_the_old_one_can_then_go(
    hub_database: str,
    tmp_path: Path,
    push_service: PushService,
    mail_server: MailServer,
    monkeypatch: pytest.MonkeyPatch,
    capsys: pytest.CaptureFixture[str],
) -> None:
    old_key, new_key = new_key_text(), new_key_text()
    phone = push_service.device("phone")
    first = notify_settings(hub_database, tmp_path, mail_server, secret_keys=(old_key,))
    with running_hub(first) as hub:
        ana = hub.sign_up(name="Ana")
        subscribe(ana, phone)
    old_id, new_id = (
        Keyring.from_texts([old_key]).current_id,
        Keyring.from_texts([new_key]).current_id,
    )
    assert {sealed_key_id(v) for v in stored(hub_database)} == {old_id}

    monkeypatch.setenv("LINEUP_HOME", str(tmp_path))
    monkeypatch.setenv("LINEUP_DATABASE_URL", hub_database)
    monkeypatch.setenv("LINEUP_SECRET_KEY", new_key)  # the old key forgotten too soon
    assert main(["secrets", "rotate"]) == 1
    assert "do not open with this hub's secret key" in capsys.readouterr().err
    monkeypatch.setenv("LINEUP_SECRET_KEY", f"{new_key},{old_key}")
    assert main(["secrets", "rotate"]) == 0
    # the VAPID key, the device's endpoint and its two keys, and the scheduling system's API key
    assert f"5 stored secrets sealed again; all now under key {new_id}" in capsys.readouterr().out
    assert {sealed_key_id(v) for v in stored(hub_database)} == {new_id}
    (credential,) = on_database(
        hub_database,
        lambda conn: list(conn.execute(select(provider_credentials.c.sealed)).scalars()),
    )
    assert sealed_key_id(credential) == new_id

    last = notify_settings(hub_database, tmp_path, mail_server, secret_keys=(new_key,))
    with running_hub(last) as hub:
        ana.client = hub.client
        story = start_story(hub, ana)
        asked = story.request()
        assert push_service.wait_for(lambda got: for_subject(got, asked), "the push")[0].vapid_ok
        story.close()


def test_a_key_file_is_made_once_privately_and_the_variable_wins(tmp_path: Path) -> None:
    from lineup.hub import Settings
    from lineup.hub.secret_keys import load_keyring

    settings = Settings(database_url="sqlite://", home=tmp_path / "home")
    made = load_keyring(settings)
    assert load_keyring(settings).current_id == made.current_id
    path = tmp_path / "home" / KEY_FILE
    assert stat.S_IMODE(path.stat().st_mode) == 0o600
    assert [p.name for p in path.parent.iterdir()] == [KEY_FILE]
    key = new_key_text()
    chosen = Settings(database_url="sqlite://", home=tmp_path / "home", secret_keys=(key,))
    assert load_keyring(chosen).current_id == Keyring.from_texts([key]).current_id
    assert "secret_keys" not in repr(chosen) and key not in repr(chosen)
    path.write_text(f"{new_key_text()}\n{key}\n")
    os.chmod(path, 0o600)
    assert set(load_keyring(settings).key_ids) >= {Keyring.from_texts([key]).current_id}


def test_subscription_keys_with_stray_characters_are_refused_not_stored(
    hub_database: str, tmp_path: Path, push_service: PushService, mail_server: MailServer
) -> None:
    """A decoder that skips what is not base64 would let a 255-character value through; sealed,
    it would no longer fit its column."""
    with running_hub(notify_settings(hub_database, tmp_path, mail_server)) as hub:
        ana = hub.sign_up(name="Ana")
        sub = push_service.device("phone").subscription()
        sub["keys"]["p256dh"] = sub["keys"]["p256dh"] + "!" * 160
        response = api(ana, "POST", "/devices", sub)
        assert response.status_code == 400, response.text
        assert response.json()["error"]["details"] == {"field": "keys.p256dh"}
        assert view(ana)["devices"] == []
