"""Generated session files (docs/sessions.md) for property tests: trees with branches, text in
any script, file references, every kind of entry; each a file a reader must accept."""

from __future__ import annotations

import json
from typing import Any

from hypothesis import strategies as st

DIGEST = "sha256:" + "ab" * 32
SHA = "cd" * 32


def jsonl(*objects: Any) -> bytes:
    """Lines of a file: JSON objects (or text taken as it is), each ended by a newline."""
    return ("\n".join(o if isinstance(o, str) else json.dumps(o) for o in objects) + "\n").encode()


TEXT = st.text(
    alphabet=st.characters(blacklist_categories=("Cs",), blacklist_characters="\x00"),
    max_size=40,
)
NAME = TEXT.filter(lambda s: s.strip() != "").map(lambda s: s[:50])
IDS = st.text(
    alphabet=st.characters(blacklist_categories=("Cs", "Cc", "Zs", "Zl", "Zp")),
    min_size=1,
    max_size=10,
).filter(lambda s: not any(c.isspace() for c in s))
TIMES = st.integers(min_value=0, max_value=4_102_444_800_000)


@st.composite
def blocks(draw: st.DrawFn) -> list[dict[str, Any]]:
    out: list[dict[str, Any]] = []
    for kind in draw(st.lists(st.sampled_from(["text", "file", "rich"]), max_size=3)):
        if kind == "text":
            out.append({"type": "text", "text": draw(TEXT)})
        elif kind == "file":
            block: dict[str, Any] = {"type": "file", "name": draw(NAME), "sha256": SHA}
            if draw(st.booleans()):
                block["url"] = "/api/workspaces/ws_1/files/file_1"
                block["size"] = draw(st.integers(min_value=0, max_value=10**12))
            out.append(block)
        else:
            out.append({"type": "rich", "kind": "chart", "data": {"label": draw(TEXT)}})
    return out


@st.composite
def sessions(draw: st.DrawFn) -> bytes:
    """A file of generated entries of every type, whose parents and references are any
    entries above them: trees with branches."""
    count = draw(st.integers(min_value=0, max_value=25))
    ids = draw(st.lists(IDS, min_size=count, max_size=count, unique=True))
    made: list[dict[str, Any]] = []
    calls: list[str] = []
    for i, ident in enumerate(ids):
        earlier = ids[:i]
        parent = draw(st.none() | st.sampled_from(earlier)) if earlier else None
        when = draw(TIMES)
        kind = draw(
            st.sampled_from(
                [
                    "message",
                    "tool_call",
                    "command",
                    "tool_result",
                    "reasoning",
                    "usage",
                    "summary",
                    "label",
                    "file",
                    "interaction",
                    "approval_request",
                ]
            )
        )
        base = {"type": kind, "id": ident, "parentId": parent, "timestamp": when}
        if kind == "message":
            base |= {
                "role": draw(st.sampled_from(["user", "assistant", "system"])),
                "content": draw(blocks()),
            }
            if draw(st.booleans()):
                base["author"] = {"kind": "user", "name": draw(NAME)}
        elif kind == "tool_call":
            base |= {"name": draw(NAME), "argsDigest": DIGEST}
            calls.append(ident)
        elif kind == "command":
            base |= {"command": draw(NAME)}
            calls.append(ident)
        elif kind == "tool_result":
            base |= {
                "status": draw(st.sampled_from(["succeeded", "failed", "accepted"])),
                "summary": draw(TEXT),
                "digest": DIGEST,
            }
            if calls:
                base["callId"] = draw(st.sampled_from(calls))
            if draw(st.booleans()):
                base["ref"] = {"url": "https://example.com/out.txt", "sha256": SHA, "size": 7}
        elif kind == "reasoning":
            base |= {"text": draw(TEXT)}
        elif kind == "usage":
            base |= {"inputTokens": draw(st.integers(0, 10**9)), "outputTokens": 0}
        elif kind == "summary":
            base |= {
                "covers": draw(st.lists(st.sampled_from(earlier), max_size=4)) if earlier else [],
                "text": draw(TEXT),
            }
        elif kind == "label" and earlier:
            base |= {"targetId": draw(st.sampled_from(earlier)), "label": draw(NAME)}
        elif kind == "label":
            base |= {"type": "session_info", "name": draw(NAME)}
        elif kind == "file":
            base |= {"name": draw(NAME), "url": "/api/workspaces/ws_1/files/f2", "sha256": SHA}
        elif kind == "interaction":
            base |= {
                "interactionId": "ia",
                "kind": "choice",
                "title": draw(NAME),
                "options": [{"id": "a", "label": draw(NAME)}],
            }
        else:
            base |= {
                "approvalId": "apr",
                "capabilityId": "crm.update",
                "argsDigest": DIGEST,
                "summary": draw(TEXT),
                "impact": draw(TEXT),
            }
        made.append(base)
    header = {
        "type": "header",
        "v": 2,
        "sessionId": draw(IDS),
        "timestamp": draw(TIMES),
        "title": draw(NAME),
    }
    return jsonl(header, *made)
