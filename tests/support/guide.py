"""The steps of docs/connect-an-agent.md, read from the page itself so a test follows the guide
exactly as a reader would.

A step is a fenced code block announced by a comment the page renders as nothing:
``<!-- guide:PATH:run -->`` (shell commands to run now), ``<!-- guide:PATH:file NAME -->`` (a
file to save under ``NAME``) and ``<!-- guide:PATH:start -->`` (a command that keeps running:
the agent). ``PATH`` names the guide's section (``python``, ``typescript``, …).
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from pathlib import Path
from typing import Literal

GUIDE = Path(__file__).resolve().parents[2] / "docs" / "connect-an-agent.md"

_STEP = re.compile(
    r"<!-- guide:(?P<path>[a-z-]+):(?P<kind>run|file|start)(?: (?P<name>\S+))? -->\n"
    r"(?P<indent> *)```[a-z]*\n(?P<body>.*?)\n(?P=indent)```",
    re.DOTALL,
)
"""A step may sit in a list item: its block is then indented, and the body is dedented."""

Kind = Literal["run", "file", "start"]


@dataclass(frozen=True)
class Step:
    kind: Kind
    body: str
    name: str | None = None
    """The file's path, for a ``file`` step."""


def steps(path: str, text: str | None = None) -> list[Step]:
    """The steps of one path through the guide, in page order."""
    page = GUIDE.read_text() if text is None else text
    found: list[Step] = []
    for match in _STEP.finditer(page):
        if match["path"] != path:
            continue
        kind: Kind = match["kind"]  # type: ignore[assignment]
        if kind == "file" and not match["name"]:
            raise ValueError("a guide file step names its file")
        indent = len(match["indent"])
        body = "\n".join(line[indent:] for line in match["body"].split("\n"))
        found.append(Step(kind, body + "\n", match["name"]))
    return found
