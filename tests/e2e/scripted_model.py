"""A scripted OpenAI-compatible model for tests: ``POST /v1/chat/completions`` streamed as
server-sent events, its answers chosen by a script from the request's messages.

Stdlib only, on 127.0.0.1, so an engine under test needs no key and no network. Every request
is kept (``requests``) so a test can see what the engine sent.
"""

from __future__ import annotations

import json
import threading
from collections.abc import Callable, Iterator
from dataclasses import dataclass, field
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any


@dataclass(frozen=True)
class Reply:
    """What the model answers: text (streamed in ``pieces``), or one tool call."""

    pieces: tuple[str, ...] = ()
    tool: str | None = None
    arguments: dict[str, Any] = field(default_factory=dict)

    @classmethod
    def text(cls, *pieces: str) -> Reply:
        return cls(pieces=pieces)

    @classmethod
    def call(cls, tool: str, **arguments: Any) -> Reply:
        return cls(tool=tool, arguments=arguments)


Script = Callable[[list[dict[str, Any]]], Reply]
"""The request's ``messages`` → the reply."""


def _chunk(delta: dict[str, Any], finish: str | None = None) -> bytes:
    body = {
        "id": "chatcmpl-scripted",
        "object": "chat.completion.chunk",
        "created": 0,
        "model": "scripted-model",
        "choices": [{"index": 0, "delta": delta, "finish_reason": finish}],
    }
    return f"data: {json.dumps(body)}\n\n".encode()


def _events(reply: Reply) -> Iterator[bytes]:
    yield _chunk({"role": "assistant", "content": ""})
    if reply.tool is not None:
        call = {
            "index": 0,
            "id": f"call_{len(reply.arguments)}_{reply.tool}",
            "type": "function",
            "function": {"name": reply.tool, "arguments": json.dumps(reply.arguments)},
        }
        yield _chunk({"tool_calls": [call]})
        yield _chunk({}, "tool_calls")
    else:
        for piece in reply.pieces:
            yield _chunk({"content": piece})
        yield _chunk({}, "stop")
    usage = {"prompt_tokens": 10, "completion_tokens": 5, "total_tokens": 15}
    last = {"id": "chatcmpl-scripted", "object": "chat.completion.chunk", "created": 0}
    last |= {"model": "scripted-model", "choices": [], "usage": usage}
    yield f"data: {json.dumps(last)}\n\n".encode()
    yield b"data: [DONE]\n\n"


def _completion(reply: Reply) -> dict[str, Any]:
    """The reply as one (not streamed) chat completion."""
    message: dict[str, Any] = {"role": "assistant", "content": "".join(reply.pieces)}
    if reply.tool is not None:
        message["content"] = None
        message["tool_calls"] = [
            {
                "id": f"call_{reply.tool}",
                "type": "function",
                "function": {"name": reply.tool, "arguments": json.dumps(reply.arguments)},
            }
        ]
    finish = "tool_calls" if reply.tool is not None else "stop"
    return {
        "id": "chatcmpl-scripted",
        "object": "chat.completion",
        "created": 0,
        "model": "scripted-model",
        "choices": [{"index": 0, "message": message, "finish_reason": finish}],
        "usage": {"prompt_tokens": 10, "completion_tokens": 5, "total_tokens": 15},
    }


class ScriptedModel:
    """``with ScriptedModel(script) as model: … model.base_url …``"""

    def __init__(self, script: Script) -> None:
        self.script = script
        self.requests: list[dict[str, Any]] = []
        self.paths: list[str] = []
        owner = self

        class Handler(BaseHTTPRequestHandler):
            protocol_version = "HTTP/1.1"

            def log_message(self, *_: Any) -> None:  # quiet
                pass

            def do_GET(self) -> None:
                owner.paths.append(f"GET {self.path}")
                body = json.dumps(
                    {"object": "list", "data": [{"id": "scripted-model", "object": "model"}]}
                ).encode()
                self.send_response(200 if self.path.rstrip("/").endswith("/models") else 404)
                self.send_header("Content-Type", "application/json")
                self.send_header("Content-Length", str(len(body)))
                self.end_headers()
                self.wfile.write(body)

            def do_POST(self) -> None:
                owner.paths.append(f"POST {self.path}")
                length = int(self.headers.get("Content-Length") or 0)
                request = json.loads(self.rfile.read(length) or b"{}")
                owner.requests.append(request)
                reply = owner.script(list(request.get("messages") or []))
                if not request.get("stream"):
                    body = json.dumps(_completion(reply)).encode()
                    self.send_response(200)
                    self.send_header("Content-Type", "application/json")
                    self.send_header("Content-Length", str(len(body)))
                    self.end_headers()
                    self.wfile.write(body)
                    return
                self.send_response(200)
                self.send_header("Content-Type", "text/event-stream")
                self.send_header("Cache-Control", "no-cache")
                self.send_header("Connection", "close")
                self.end_headers()
                for event in _events(reply):
                    self.wfile.write(event)
                    self.wfile.flush()
                self.close_connection = True

        self._server = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
        self._thread = threading.Thread(target=self._server.serve_forever, daemon=True)

    @property
    def base_url(self) -> str:
        return f"http://127.0.0.1:{self._server.server_address[1]}/v1"

    def __enter__(self) -> ScriptedModel:
        self._thread.start()
        return self

    def __exit__(self, *_: object) -> None:
        self._server.shutdown()
        self._server.server_close()
