"""Starting an engine process safely: confined to an allowed working directory, killed with
its parent, its secrets kept out of its arguments and out of the logs it writes.

- **Confinement.** :func:`confine` resolves a working directory (symlinks included) and
  refuses one outside the configured roots (``LINEUP_ENGINE_ROOTS``, separated by ``:``).
- **Watchdog.** The child asks the kernel for ``SIGKILL`` when its parent dies
  (``prctl(PR_SET_PDEATHSIG)``, set between fork and exec), so an engine never outlives a hub
  that was killed without a chance to stop it; its pipes closing is a second signal the
  engines notice.
- **Secrets.** Keys reach the engine through its environment, built here from a short allow
  list rather than the hub's own (which holds the hub's secrets); the argument vector, which
  every user of the machine can read in ``/proc``, never carries one.
- **Logs.** What the engine writes on stderr goes to a per-session file, size-capped and
  rotated (:class:`RotatingLog`), with every secret replaced by ``[redacted]``.
"""

from __future__ import annotations

import asyncio
import contextlib
import ctypes
import os
import re
import signal
import subprocess
from collections.abc import Mapping, Sequence
from pathlib import Path

from lineup.engines.process_tree import end_tree
from lineup.protocol.errors import Forbidden, InvalidArgument

ROOTS_VARIABLE = "LINEUP_ENGINE_ROOTS"
PASSED_THROUGH = (
    "PATH",
    "USER",
    "LOGNAME",
    "LANG",
    "LC_ALL",
    "LC_CTYPE",
    "TZ",
    "TMPDIR",
    "SHELL",
    "TERM",
    "PYTHONPATH",
)
"""What an engine inherits from the hub's environment; everything else is given explicitly."""

_PR_SET_PDEATHSIG = 1
REDACTED = "[redacted]"


# --- where an engine may work ---------------------------------------------------------------


def engine_roots(environ: Mapping[str, str] = os.environ) -> tuple[Path, ...]:
    """The allowed roots from ``LINEUP_ENGINE_ROOTS`` (default: the home directory)."""
    text = environ.get(ROOTS_VARIABLE, "")
    roots = [Path(p).expanduser() for p in text.split(os.pathsep) if p.strip()]
    return tuple(roots) if roots else (Path.home(),)


def confine(cwd: str, roots: Sequence[Path]) -> str:
    """``cwd`` resolved (symlinks followed), when it is an existing directory inside one of
    ``roots``; ``invalid_argument`` for a missing one, ``forbidden`` for one outside."""
    if not cwd or not os.path.isabs(cwd):
        raise InvalidArgument(
            "The working directory must be an absolute path.", details={"field": "cwd"}
        )
    real = Path(os.path.realpath(cwd))
    if not real.is_dir():
        raise InvalidArgument(
            f"The working directory {cwd!r} does not exist or is not a directory.",
            details={"field": "cwd"},
        )
    for root in roots:
        base = Path(os.path.realpath(root))
        if real == base or base in real.parents:
            return str(real)
    raise Forbidden(
        f"The working directory {cwd!r} is outside the directories engines may use; the hub's "
        f"operator allows them in {ROOTS_VARIABLE}.",
        details={"field": "cwd"},
    )


# --- the engine's environment ----------------------------------------------------------------


def engine_environment(
    home: str, extra: Mapping[str, str], inherit: Mapping[str, str] = os.environ
) -> dict[str, str]:
    """A minimal environment: a few harmless variables of the hub's, the engine's own home,
    then ``extra`` (its config and key)."""
    env = {name: inherit[name] for name in PASSED_THROUGH if name in inherit}
    env["HOME"] = home
    env.update(extra)
    return env


def die_with_parent() -> None:  # pragma: no cover - runs in the child, between fork and exec
    try:
        libc = ctypes.CDLL(None, use_errno=True)
        libc.prctl(_PR_SET_PDEATHSIG, signal.SIGKILL, 0, 0, 0)
    except (OSError, AttributeError):
        return
    if os.getppid() == 1:  # the parent died before the request was made
        os._exit(1)


# --- the engine's log -------------------------------------------------------------------------


class RotatingLog:
    """A log file capped at ``max_bytes``, with ``backups`` older files (``.1``, ``.2``, …);
    each line has the given secrets replaced before it is written."""

    def __init__(
        self,
        path: Path,
        *,
        max_bytes: int = 1_000_000,
        backups: int = 2,
        secrets: Sequence[str] = (),
    ) -> None:
        self.path = path
        self.max_bytes = max_bytes
        self.backups = backups
        self.secrets = tuple(s for s in secrets if s)
        path.parent.mkdir(parents=True, exist_ok=True)

    def redact(self, text: str) -> str:
        for secret in self.secrets:
            text = text.replace(secret, REDACTED)
        return text

    def write(self, line: str) -> None:
        data = self.redact(line.rstrip("\n")) + "\n"
        encoded = data.encode("utf-8", "replace")
        try:
            size = self.path.stat().st_size
        except FileNotFoundError:
            size = 0
        if size and size + len(encoded) > self.max_bytes:
            self._rotate()
        with self.path.open("ab") as file:
            file.write(encoded[: self.max_bytes])

    def _rotate(self) -> None:
        for index in range(self.backups, 0, -1):
            older = self.path.with_name(f"{self.path.name}.{index}")
            newer = (
                self.path if index == 1 else self.path.with_name(f"{self.path.name}.{index - 1}")
            )
            if newer.exists():
                if index == self.backups and older.exists():
                    older.unlink()
                newer.replace(older)
        if self.backups == 0:
            self.path.unlink(missing_ok=True)


# --- a running engine -------------------------------------------------------------------------


class EngineProcess:
    """One engine subprocess with line-based stdio; stderr is pumped into its log."""

    TAIL = 20

    def __init__(self, process: asyncio.subprocess.Process, log: RotatingLog) -> None:
        self.process = process
        self.log = log
        self.tail: list[str] = []
        """The last lines of stderr, redacted: what a driver tells a person when it exits."""
        self._stderr = asyncio.create_task(self._pump_stderr(), name=f"engine-log:{process.pid}")

    @property
    def pid(self) -> int:
        return self.process.pid

    @property
    def exited(self) -> bool:
        return self.process.returncode is not None

    async def _pump_stderr(self) -> None:
        stream = self.process.stderr
        assert stream is not None
        while line := await stream.readline():
            text = line.decode("utf-8", "replace")
            self.log.write(text)
            if text.strip():
                self.tail = [*self.tail[-(self.TAIL - 1) :], self.log.redact(text.strip())[:500]]

    async def send_line(self, text: str) -> None:
        stdin = self.process.stdin
        if stdin is None or stdin.is_closing():
            raise BrokenPipeError("the engine's stdin is closed")
        stdin.write(text.encode("utf-8") + b"\n")
        await stdin.drain()

    async def read_line(self) -> str | None:
        """The next line from stdout, None at its end (the engine exited)."""
        stdout = self.process.stdout
        assert stdout is not None
        line = await stdout.readline()
        return line.decode("utf-8", "replace") if line else None

    async def stop(self, grace: float = 2.0) -> None:
        """Close stdin, terminate it and what it started, kill after ``grace`` seconds."""
        if self.process.returncode is None and self.process.stdin is not None:
            with contextlib.suppress(Exception):
                self.process.stdin.close()
        await end_tree(self.process, grace)
        with contextlib.suppress(Exception):
            await asyncio.wait_for(self._stderr, grace)
        self.log.write(f"engine process {self.pid} exited with {self.process.returncode}")


async def spawn(
    argv: Sequence[str],
    *,
    cwd: str,
    env: Mapping[str, str],
    log: RotatingLog,
    limit: int = 4 * 1024 * 1024,
) -> EngineProcess:
    """Start ``argv`` in ``cwd`` with exactly ``env``; refuses an argument holding a secret.
    ``limit`` is the longest line read from its stdout."""
    for argument in argv:
        if any(secret in argument for secret in log.secrets):
            raise InvalidArgument("An engine's arguments must not carry a secret.")
    process = await asyncio.create_subprocess_exec(
        *argv,
        cwd=cwd,
        env=dict(env),
        stdin=asyncio.subprocess.PIPE,
        stdout=asyncio.subprocess.PIPE,
        stderr=asyncio.subprocess.PIPE,
        preexec_fn=die_with_parent,
        start_new_session=True,  # a Ctrl-C at the hub's terminal is the hub's to handle
        limit=limit,
    )
    log.write(f"engine process {process.pid} started: {' '.join(argv)} (in {cwd})")
    return EngineProcess(process, log)


def program_version(command: Sequence[str], env: Mapping[str, str] | None = None) -> str | None:
    """The version ``command --version`` prints (its first ``x.y.z``); ``None`` when it does
    not run or prints none, which is how an installed but broken engine is told apart."""
    try:
        out = subprocess.run(  # noqa: S603 - a configured engine program, no shell
            [*command, "--version"],
            capture_output=True,
            text=True,
            timeout=20,
            check=False,
            env=env,
        ).stdout
    except (OSError, subprocess.SubprocessError):
        return None
    match = re.search(r"(\d+\.\d+\.\d+\S*)", out)
    return match.group(1) if match else None
