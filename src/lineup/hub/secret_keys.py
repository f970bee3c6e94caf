"""Where the hub's secret keys come from: ``LINEUP_SECRET_KEY`` (required when several nodes
share a database, since each needs the same keys), else the key file ``$LINEUP_HOME/secret.key``,
made with a fresh key (mode 0600) on first start.

Both list the current key first and older keys after it (comma-separated in the variable, one
per line in the file): older keys still open what they sealed, until ``lineup secrets rotate``
(or the next start) has sealed everything again under the current key.
"""

from __future__ import annotations

import contextlib
import logging
import os
import stat
from pathlib import Path

from lineup.hub.config import Settings
from lineup.store import Store, bindings, governance, hosted
from lineup.store.notifications import reseal_secrets
from lineup.store.sealed import Keyring, UnreadableSecret, new_key_text

log = logging.getLogger("lineup.hub.secrets")

KEY_FILE = "secret.key"


class SecretKeyProblem(RuntimeError):
    """The configured keys are missing, malformed or do not open the stored secrets."""


def key_file(settings: Settings) -> Path:
    return settings.home / KEY_FILE


def cannot_open(settings: Settings, why: Exception) -> SecretKeyProblem:
    """The error for a database sealed with keys this hub was not given."""
    return SecretKeyProblem(
        f"The stored secrets do not open with this hub's secret key ({why}). Start it with "
        "the key the database was sealed with: LINEUP_SECRET_KEY, or the key file "
        f"{key_file(settings)} (every node of a cluster needs the same LINEUP_SECRET_KEY)."
    )


def load_keyring(settings: Settings) -> Keyring:
    if settings.secret_keys:
        try:
            return Keyring.from_texts(settings.secret_keys)
        except ValueError as exc:
            raise SecretKeyProblem(f"LINEUP_SECRET_KEY: {exc}") from None
    path = key_file(settings)
    if not path.exists():
        _create_key_file(path)
    return _read_key_file(path)


async def reseal_stored(settings: Settings, store: Store) -> tuple[Keyring, int]:
    """The hub's keys, checked against every stored secret: what is plain text (an older
    hub's database) or sealed with an older key is sealed again with the current one. Returns
    the keyring and how many values changed; nothing changes if any value opens with no key."""
    keyring = load_keyring(settings)
    try:
        changed = await store.write(
            lambda tx: (
                reseal_secrets(tx.connection, keyring)
                + governance.reseal_credentials(tx.connection, keyring)
                + bindings.reseal(tx.connection, keyring)
                + hosted.reseal(tx.connection, keyring)
            )
        )
    except UnreadableSecret as exc:
        raise cannot_open(settings, exc) from None
    return keyring, changed


def parse_key_list(text: str) -> tuple[str, ...]:
    """Keys from ``LINEUP_SECRET_KEY`` or the key file: separated by commas, spaces or lines;
    ``#`` starts a comment."""
    keys: list[str] = []
    for line in text.splitlines():
        line = line.split("#", 1)[0]
        keys += [k for k in line.replace(",", " ").split() if k]
    return tuple(keys)


def _read_key_file(path: Path) -> Keyring:
    mode = stat.S_IMODE(path.stat().st_mode)
    if mode & 0o077:
        log.warning("%s can be read by other users (mode %o): chmod 600 it", path, mode)
    texts = parse_key_list(path.read_text(encoding="utf-8"))
    if not texts:
        raise SecretKeyProblem(f"{path} holds no key")
    try:
        return Keyring.from_texts(texts)
    except ValueError as exc:
        raise SecretKeyProblem(f"{path}: {exc}") from None


def _create_key_file(path: Path) -> None:
    """Written whole to a private temporary file, then linked into place: a second process
    starting at the same moment either finds the complete file or loses the race and reads
    the winner's."""
    path.parent.mkdir(parents=True, exist_ok=True)
    temporary = path.with_name(f".{path.name}.{os.getpid()}.tmp")
    descriptor = os.open(temporary, os.O_WRONLY | os.O_CREAT | os.O_EXCL, 0o600)
    try:
        with os.fdopen(descriptor, "w", encoding="utf-8") as handle:
            handle.write(
                "# LineUp's secret key: seals push subscriptions and the VAPID key in the\n"
                "# database. Back it up with the database; without it they cannot be read.\n"
                "# The first key seals; keys after it only open (see docs/deploy.md).\n"
                f"{new_key_text()}\n"
            )
            handle.flush()
            os.fsync(handle.fileno())
        with contextlib.suppress(FileExistsError):
            os.link(temporary, path)
            log.info("made a new secret key in %s", path)
    finally:
        temporary.unlink(missing_ok=True)
