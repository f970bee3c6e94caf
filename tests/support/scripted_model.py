"""A scripted model server for engine tests: it replays fixed, streamed answers in the three
dialects the hosted engines speak, and keeps every request so a test can assert what the
model saw (a tool's output, a declined command's message, the tools offered).

Dialects, all streamed as server-sent events (and answered whole when ``stream`` is false):

- OpenAI Responses, ``POST /v1/responses`` (Codex; Pi's ``openai-responses``):
  ``response.created``, ``response.output_item.added``, ``response.output_text.delta`` /
  ``response.function_call_arguments.delta`` …, ``response.output_item.done``,
  ``response.completed`` with ``usage``.
- OpenAI Chat Completions, ``POST /v1/chat/completions`` (Pi's ``openai-completions``):
  ``chat.completion.chunk`` deltas with ``content`` or ``tool_calls``, a usage chunk,
  ``data: [DONE]``.
- Anthropic Messages, ``POST /v1/messages`` (any query string, e.g. ``?beta=true``; Claude
  Code): ``message_start``, ``content_block_start`` / ``_delta`` / ``_stop``,
  ``message_delta``, ``message_stop``.

A step can also be an error (``Step.error(429, "slow down")``): the request is answered with
that HTTP status and the dialect's error body, so a test sees how an engine reports a failing
model.

The script is a list of :class:`Step` values, one answered per model request in order,
whatever the dialect (``model.then(…)`` adds more while a test runs), or a function of the
:class:`Request` that returns the step. When the list runs out the model says
``(script exhausted)``, so a surprise extra request shows in the transcript rather than
hanging. Stdlib only, bound to 127.0.0.1 on a free port: no key, no network.

    with ScriptedModel([Step.call("ask_human", question="Colour?"), Step.text("Blue it is.")]) as m:
        … point the engine at m.base_url (ends in /v1) …
        assert m.tool_outputs() == ["blue"]
"""

from __future__ import annotations

import json
import threading
from collections.abc import Callable, Iterator, Mapping, Sequence
from dataclasses import dataclass, field
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any, Literal

SHELL_TOOLS: Mapping[str, str] = {
    "responses": "exec_command",
    "chat": "bash",
    "messages": "Bash",
}
"""The shell tool each engine offers, by dialect: Codex's, Pi's and Claude Code's."""


@dataclass(frozen=True)
class Step:
    """One model answer: text (streamed in pieces, optionally after a reasoning summary), a
    function call, a call of the engine's own shell tool, or an HTTP error."""

    kind: Literal["text", "call", "shell", "error"]
    pieces: tuple[str, ...] = ()
    reasoning: str | None = None
    name: str | None = None
    namespace: str | None = None
    """For Responses namespace tools (Codex names MCP tools ``mcp__<server>``)."""
    arguments: Mapping[str, Any] = field(default_factory=dict)
    command: str | None = None
    escalated: bool = False
    """A shell call asking to run outside the sandbox: Codex then asks for approval."""
    tool: str | None = None
    """The shell tool's name, when not the dialect's usual one (:data:`SHELL_TOOLS`)."""
    status: int = 200
    """An error step's HTTP status."""

    @classmethod
    def text(cls, *pieces: str, reasoning: str | None = None) -> Step:
        return cls(kind="text", pieces=pieces or ("",), reasoning=reasoning)

    @classmethod
    def call(cls, name: str, namespace: str | None = None, **arguments: Any) -> Step:
        return cls(kind="call", name=name, namespace=namespace, arguments=arguments)

    @classmethod
    def shell(cls, command: str, *, escalated: bool = False, tool: str | None = None) -> Step:
        return cls(kind="shell", command=command, escalated=escalated, tool=tool)

    @classmethod
    def error(cls, status: int, message: str) -> Step:
        return cls(kind="error", status=status, pieces=(message,))


@dataclass(frozen=True)
class Request:
    """One request the model received, as the engine sent it."""

    number: int
    path: str
    headers: Mapping[str, str]
    """Names in lower case."""
    body: Mapping[str, Any]

    @property
    def dialect(self) -> Literal["responses", "chat", "messages", "other"]:
        route = self.path.split("?", 1)[0].rstrip("/")
        if route.endswith("/responses"):
            return "responses"
        if route.endswith("/chat/completions"):
            return "chat"
        if route.endswith("/messages"):
            return "messages"
        return "other"

    def tool_outputs(self) -> list[str]:
        """The tool results this request carries, in order, whatever the dialect."""
        found: list[str] = []
        for item in self.body.get("input") or []:  # Responses
            if isinstance(item, dict) and str(item.get("type", "")).endswith("_output"):
                found.append(_text_of(item.get("output")))
        for message in self.body.get("messages") or []:  # Chat, Messages
            if not isinstance(message, dict):
                continue
            if message.get("role") == "tool":
                found.append(_text_of(message.get("content")))
            content = message.get("content")
            if isinstance(content, list):
                for block in content:
                    if isinstance(block, dict) and block.get("type") == "tool_result":
                        found.append(_text_of(block.get("content")))
        return found

    def text(self) -> str:
        """The whole body as text, for a quick ``in`` check."""
        return json.dumps(self.body)


def _text_of(value: Any) -> str:
    if isinstance(value, str):
        return value
    if isinstance(value, list):
        return "".join(
            str(part.get("text", "")) if isinstance(part, dict) else str(part) for part in value
        )
    return json.dumps(value)


Script = Sequence[Step] | Callable[[Request], Step]

EXHAUSTED = Step.text("(script exhausted)")


class ScriptedModel:
    """``with ScriptedModel(steps) as model:`` — a model server for one test."""

    def __init__(self, script: Script = ()) -> None:
        self._steps: list[Step] = [] if callable(script) else list(script)
        self._choose: Callable[[Request], Step] | None = script if callable(script) else None
        self._lock = threading.Lock()
        self.requests: list[Request] = []
        owner = self

        class Handler(BaseHTTPRequestHandler):
            # Not `responses` or any other BaseHTTPRequestHandler attribute: a clash breaks
            # send_response, and the engine sees only a dropped stream.
            def log_message(self, *_: Any) -> None:
                pass

            def do_GET(self) -> None:
                owner._record(self.path, self._headers(), {})
                self._json(404, {"error": {"message": f"no GET {self.path}"}})

            def do_POST(self) -> None:
                length = int(self.headers.get("Content-Length") or 0)
                raw = self.rfile.read(length) if length else b"{}"
                try:
                    body = json.loads(raw or b"{}")
                except ValueError:
                    body = {"unparsed": raw.decode(errors="replace")}
                request = owner._record(self.path, self._headers(), body)
                if request.dialect == "other":
                    self._json(404, {"error": {"message": f"no POST {self.path}"}})
                    return
                step = owner._next(request)
                if step.kind == "error":
                    self._json(step.status, _error_body(request, step))
                    return
                if body.get("stream") is False or (
                    request.dialect != "responses" and not body.get("stream")
                ):
                    self._json(200, _whole(request, step))
                    return
                self.send_response(200)
                self.send_header("Content-Type", "text/event-stream")
                self.send_header("Cache-Control", "no-cache")
                self.send_header("Connection", "close")
                self.end_headers()
                for chunk in _stream(request, step):
                    self.wfile.write(chunk)
                    self.wfile.flush()
                self.close_connection = True

            def _headers(self) -> dict[str, str]:
                return {k.lower(): v for k, v in self.headers.items()}

            def _json(self, status: int, payload: Mapping[str, Any]) -> None:
                data = json.dumps(payload).encode()
                self.send_response(status)
                self.send_header("Content-Type", "application/json")
                self.send_header("Content-Length", str(len(data)))
                self.end_headers()
                self.wfile.write(data)

        self._server = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
        self._server.daemon_threads = True
        self._thread = threading.Thread(target=self._server.serve_forever, daemon=True)

    # --- the script ---------------------------------------------------------------------

    def then(self, *steps: Step) -> ScriptedModel:
        """Add steps to the end of the list (not for a function script)."""
        with self._lock:
            self._steps.extend(steps)
        return self

    def _record(self, path: str, headers: Mapping[str, str], body: Any) -> Request:
        with self._lock:
            request = Request(len(self.requests), path, headers, body)
            self.requests.append(request)
            return request

    def _next(self, request: Request) -> Step:
        if self._choose is not None:
            return self._choose(request)
        with self._lock:
            return self._steps.pop(0) if self._steps else EXHAUSTED

    # --- what the engine sent -----------------------------------------------------------

    def model_requests(self) -> list[Request]:
        return [r for r in self.requests if r.dialect != "other"]

    def tool_outputs(self) -> list[str]:
        """Every tool result the engine sent back, in the order of the requests (an output
        repeated in later requests, as the conversation grows, is listed once)."""
        seen: list[str] = []
        for request in self.model_requests():
            outputs = request.tool_outputs()
            for index, output in enumerate(outputs):
                if index >= len(seen) or seen[index] != output:
                    seen[index:] = outputs[index:]
                    break
        return seen

    # --- lifecycle ----------------------------------------------------------------------

    @property
    def port(self) -> int:
        return int(self._server.server_address[1])

    @property
    def base_url(self) -> str:
        """``http://127.0.0.1:PORT/v1`` — what OpenAI-style clients take; Anthropic clients
        take :attr:`root_url` and add ``/v1/messages`` themselves."""
        return f"{self.root_url}/v1"

    @property
    def root_url(self) -> str:
        return f"http://127.0.0.1:{self.port}"

    def start(self) -> ScriptedModel:
        self._thread.start()
        return self

    def stop(self) -> None:
        self._server.shutdown()
        self._server.server_close()

    def __enter__(self) -> ScriptedModel:
        return self.start()

    def __exit__(self, *_: object) -> None:
        self.stop()


# --- rendering a step -----------------------------------------------------------------------

USAGE = {"input": 10, "output": 5, "cached": 0}


def _call_of(request: Request, step: Step) -> tuple[str, str | None, dict[str, Any]]:
    """The function a call or shell step names: (name, namespace, arguments)."""
    if step.kind == "call":
        assert step.name is not None
        return step.name, step.namespace, dict(step.arguments)
    dialect = request.dialect
    name = step.tool or SHELL_TOOLS.get(dialect, "bash")
    arguments: dict[str, Any]
    if dialect == "responses":
        arguments = {"cmd": step.command}
        if step.escalated:
            arguments |= {
                "sandbox_permissions": "require_escalated",
                "justification": "the script asks to run this outside the sandbox",
            }
    else:
        arguments = {"command": step.command}
    return name, None, arguments


ANTHROPIC_ERROR_TYPES: Mapping[int, str] = {
    400: "invalid_request_error",
    401: "authentication_error",
    403: "permission_error",
    404: "not_found_error",
    413: "request_too_large",
    429: "rate_limit_error",
    529: "overloaded_error",
}


def _error_body(request: Request, step: Step) -> Mapping[str, Any]:
    message = "".join(step.pieces)
    if request.dialect == "messages":
        kind = ANTHROPIC_ERROR_TYPES.get(step.status, "api_error")
        return {"type": "error", "error": {"type": kind, "message": message}}
    return {"error": {"message": message, "type": "error", "code": str(step.status)}}


def _sse(event: str | None, payload: Mapping[str, Any]) -> bytes:
    head = f"event: {event}\n" if event else ""
    return f"{head}data: {json.dumps(payload)}\n\n".encode()


def _stream(request: Request, step: Step) -> Iterator[bytes]:
    if request.dialect == "responses":
        for event in _responses_events(request, step):
            yield _sse(str(event["type"]), event)
    elif request.dialect == "chat":
        for chunk in _chat_chunks(request, step):
            yield _sse(None, chunk)
        yield b"data: [DONE]\n\n"
    else:
        for event in _messages_events(request, step):
            yield _sse(str(event["type"]), event)


def _whole(request: Request, step: Step) -> Mapping[str, Any]:
    if request.dialect == "responses":
        return next(
            e["response"]
            for e in _responses_events(request, step)
            if e["type"] == "response.completed"
        )
    if request.dialect == "chat":
        message: dict[str, Any] = {"role": "assistant", "content": "".join(step.pieces)}
        finish = "stop"
        if step.kind != "text":
            name, _, arguments = _call_of(request, step)
            message["content"] = None
            message["tool_calls"] = [
                {
                    "id": f"call_{request.number}",
                    "type": "function",
                    "function": {"name": name, "arguments": json.dumps(arguments)},
                }
            ]
            finish = "tool_calls"
        return {
            "id": f"chatcmpl-{request.number}",
            "object": "chat.completion",
            "created": 0,
            "model": "scripted-model",
            "choices": [{"index": 0, "message": message, "finish_reason": finish}],
            "usage": _chat_usage(),
        }
    content: list[dict[str, Any]] = []
    if step.kind == "text":
        content.append({"type": "text", "text": "".join(step.pieces)})
    else:
        name, _, arguments = _call_of(request, step)
        content.append(
            {"type": "tool_use", "id": f"toolu_{request.number}", "name": name, "input": arguments}
        )
    return {
        "id": f"msg_{request.number}",
        "type": "message",
        "role": "assistant",
        "model": request.body.get("model", "scripted-model"),
        "content": content,
        "stop_reason": "end_turn" if step.kind == "text" else "tool_use",
        "stop_sequence": None,
        "usage": {"input_tokens": USAGE["input"], "output_tokens": USAGE["output"]},
    }


def _responses_events(request: Request, step: Step) -> Iterator[dict[str, Any]]:
    n = request.number
    response = {"id": f"resp_{n}", "object": "response", "model": "scripted-model", "output": []}
    yield {"type": "response.created", "response": {**response, "status": "in_progress"}}
    output: list[dict[str, Any]] = []
    index = 0
    if step.reasoning is not None:
        item = {"type": "reasoning", "id": f"rs_{n}", "summary": []}
        yield {"type": "response.output_item.added", "output_index": index, "item": item}
        part = {"type": "summary_text", "text": step.reasoning}
        yield {
            "type": "response.reasoning_summary_part.added",
            "item_id": item["id"],
            "output_index": index,
            "summary_index": 0,
            "part": {"type": "summary_text", "text": ""},
        }
        yield {
            "type": "response.reasoning_summary_text.delta",
            "item_id": item["id"],
            "output_index": index,
            "summary_index": 0,
            "delta": step.reasoning,
        }
        yield {
            "type": "response.reasoning_summary_text.done",
            "item_id": item["id"],
            "output_index": index,
            "summary_index": 0,
            "text": step.reasoning,
        }
        done = {**item, "summary": [part]}
        yield {"type": "response.output_item.done", "output_index": index, "item": done}
        output.append(done)
        index += 1
    if step.kind == "text":
        text = "".join(step.pieces)
        item = {
            "type": "message",
            "id": f"msg_{n}",
            "role": "assistant",
            "status": "in_progress",
            "content": [],
        }
        yield {"type": "response.output_item.added", "output_index": index, "item": item}
        where = {"item_id": item["id"], "output_index": index, "content_index": 0}
        yield {
            "type": "response.content_part.added",
            **where,
            "part": {"type": "output_text", "text": "", "annotations": []},
        }
        for piece in step.pieces:
            yield {"type": "response.output_text.delta", **where, "delta": piece}
        yield {"type": "response.output_text.done", **where, "text": text}
        part = {"type": "output_text", "text": text, "annotations": []}
        yield {"type": "response.content_part.done", **where, "part": part}
        done = {**item, "status": "completed", "content": [part]}
    else:
        name, namespace, arguments = _call_of(request, step)
        encoded = json.dumps(arguments)
        item = {
            "type": "function_call",
            "id": f"fc_{n}",
            "call_id": f"call_{n}",
            "name": name,
            "arguments": "",
            "status": "in_progress",
        }
        if namespace is not None:
            item["namespace"] = namespace
        yield {"type": "response.output_item.added", "output_index": index, "item": item}
        where = {"item_id": item["id"], "output_index": index}
        yield {"type": "response.function_call_arguments.delta", **where, "delta": encoded}
        yield {"type": "response.function_call_arguments.done", **where, "arguments": encoded}
        done = {**item, "arguments": encoded, "status": "completed"}
    yield {"type": "response.output_item.done", "output_index": index, "item": done}
    output.append(done)
    usage = {
        "input_tokens": USAGE["input"],
        "input_tokens_details": {"cached_tokens": USAGE["cached"]},
        "output_tokens": USAGE["output"],
        "output_tokens_details": {"reasoning_tokens": 0},
        "total_tokens": USAGE["input"] + USAGE["output"],
    }
    completed = {**response, "status": "completed", "output": output, "usage": usage}
    yield {"type": "response.completed", "response": completed}


def _chat_usage() -> dict[str, int]:
    return {
        "prompt_tokens": USAGE["input"],
        "completion_tokens": USAGE["output"],
        "total_tokens": USAGE["input"] + USAGE["output"],
    }


def _chat_chunks(request: Request, step: Step) -> Iterator[dict[str, Any]]:
    base = {
        "id": f"chatcmpl-{request.number}",
        "object": "chat.completion.chunk",
        "created": 0,
        "model": "scripted-model",
    }

    def chunk(delta: dict[str, Any], finish: str | None = None) -> dict[str, Any]:
        return {**base, "choices": [{"index": 0, "delta": delta, "finish_reason": finish}]}

    yield chunk({"role": "assistant", "content": ""})
    if step.kind == "text":
        for piece in step.pieces:
            yield chunk({"content": piece})
        yield chunk({}, "stop")
    else:
        name, _, arguments = _call_of(request, step)
        head = {
            "index": 0,
            "id": f"call_{request.number}",
            "type": "function",
            "function": {"name": name, "arguments": ""},
        }
        yield chunk({"tool_calls": [head]})
        yield chunk(
            {"tool_calls": [{"index": 0, "function": {"arguments": json.dumps(arguments)}}]}
        )
        yield chunk({}, "tool_calls")
    yield {**base, "choices": [], "usage": _chat_usage()}


def _messages_events(request: Request, step: Step) -> Iterator[dict[str, Any]]:
    n = request.number
    message = {
        "id": f"msg_{n}",
        "type": "message",
        "role": "assistant",
        "model": request.body.get("model", "scripted-model"),
        "content": [],
        "stop_reason": None,
        "stop_sequence": None,
        "usage": {"input_tokens": USAGE["input"], "output_tokens": 1},
    }
    yield {"type": "message_start", "message": message}
    index = 0
    if step.reasoning is not None:
        yield {
            "type": "content_block_start",
            "index": index,
            "content_block": {"type": "thinking", "thinking": "", "signature": ""},
        }
        yield {
            "type": "content_block_delta",
            "index": index,
            "delta": {"type": "thinking_delta", "thinking": step.reasoning},
        }
        yield {
            "type": "content_block_delta",
            "index": index,
            "delta": {"type": "signature_delta", "signature": "scripted"},
        }
        yield {"type": "content_block_stop", "index": index}
        index += 1
    if step.kind == "text":
        yield {
            "type": "content_block_start",
            "index": index,
            "content_block": {"type": "text", "text": ""},
        }
        for piece in step.pieces:
            yield {
                "type": "content_block_delta",
                "index": index,
                "delta": {"type": "text_delta", "text": piece},
            }
        stop = "end_turn"
    else:
        name, _, arguments = _call_of(request, step)
        block = {"type": "tool_use", "id": f"toolu_{n}", "name": name, "input": {}}
        yield {"type": "content_block_start", "index": index, "content_block": block}
        yield {
            "type": "content_block_delta",
            "index": index,
            "delta": {"type": "input_json_delta", "partial_json": json.dumps(arguments)},
        }
        stop = "tool_use"
    yield {"type": "content_block_stop", "index": index}
    yield {
        "type": "message_delta",
        "delta": {"stop_reason": stop, "stop_sequence": None},
        "usage": {"output_tokens": USAGE["output"]},
    }
    yield {"type": "message_stop"}
