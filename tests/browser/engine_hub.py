"""The hub as ``lineup serve`` runs it, composed with an engine host whose engines are fixed
for the browser tests, whatever engines this LineUp or this machine has: the fake engine
(a real subprocess, no model needed) and Codex as a driver whose program is not installed.

``python -m tests.browser.engine_hub --port N [--log-level L]``, with ``LINEUP_HOME`` and
``LINEUP_ENGINE_ROOTS`` in the environment.
"""

from __future__ import annotations

import argparse

import uvicorn

from lineup.engines.codex import CodexRuntime
from lineup.engines.fake import FakeRuntime
from lineup.engines.hosting import EngineHosting
from lineup.hub import Settings, create_app
from lineup.sdk import Backoff


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--port", type=int, required=True)
    parser.add_argument("--log-level", default="warning")
    args = parser.parse_args()
    settings = Settings.from_env(host="127.0.0.1", port=args.port)
    hosting = EngineHosting(
        f"http://127.0.0.1:{args.port}",
        settings.home / "engines",
        engine_roots=settings.engine_roots,
        engines={
            "fake": FakeRuntime(),
            "codex": CodexRuntime(binary=str(settings.home / "no-codex-here")),
        },
        backoff=Backoff(initial=0.05, maximum=0.5),
    )
    uvicorn.run(
        create_app(settings, engine_host=hosting),
        host="127.0.0.1",
        port=args.port,
        log_level=args.log_level,
    )


if __name__ == "__main__":
    main()
