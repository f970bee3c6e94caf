"""Loaded by a Python process under test (``PYTHONPATH`` holds this directory): refuses and
records every connection or name lookup that is not for this machine, so a test can assert
that the process reached nothing beyond loopback. The record goes to ``$LOOPBACK_ONLY_LOG``."""

import os
import sys

_LOG = os.environ.get("LOOPBACK_ONLY_LOG")
_LOCAL = {"127.0.0.1", "::1", "localhost", "0.0.0.0", "", None}


def _refuse(what: str) -> None:
    if _LOG:
        with open(_LOG, "a") as log:
            log.write(what + "\n")
    raise OSError(f"loopback only: refused {what}")


def _audit(event: str, args: tuple) -> None:
    if event == "socket.getaddrinfo":
        host = args[0]
        if isinstance(host, bytes):
            host = host.decode(errors="replace")
        if host not in _LOCAL and not str(host).startswith("127."):
            _refuse(f"lookup {host}")
    elif event == "socket.connect":
        address = args[1]
        if isinstance(address, tuple) and address:
            host = str(address[0])
            if host not in _LOCAL and not host.startswith("127."):
                _refuse(f"connect {address!r}")


if _LOG:
    sys.addaudithook(_audit)
