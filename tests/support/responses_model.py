"""A scripted model behind the OpenAI Responses API, for driving a real agent host (the
Codex CLI) offline: it calls one MCP tool, then says what the tool answered. Stdlib only;
every request is kept for the test to read.

What Codex 0.171 does, and the script follows: its MCP servers start while the first request
is sent (so the script waits with a shell ``sleep 1`` until they are up); MCP tools are
always deferred behind a client-side ``tool_search`` (so the script searches, and Codex
answers with the matching ``namespace`` tool, ``mcp__<server>``); the call then names the
namespace and the tool apart (a bare name is "unsupported call").
"""

from __future__ import annotations

import json
import threading
from dataclasses import dataclass, field
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any


@dataclass
class ScriptedModel:
    namespace: str
    """The namespace the host is expected to give the tool (checked by the test)."""
    tool: str
    arguments: dict[str, Any]
    requests: list[dict[str, Any]] = field(default_factory=list)
    offered: list[list[Any]] = field(default_factory=list)
    """Per tool-calling turn: the namespaces that offered the tool (as the host named them)."""
    _server: ThreadingHTTPServer | None = None

    @property
    def base_url(self) -> str:
        assert self._server is not None
        return f"http://127.0.0.1:{self._server.server_address[1]}/v1"

    def start(self) -> ScriptedModel:
        model = self

        class Handler(BaseHTTPRequestHandler):
            def do_POST(self) -> None:
                body = json.loads(self.rfile.read(int(self.headers.get("Content-Length", 0))))
                model.requests.append(body)
                events = model.answer(body)
                self.send_response(200)
                self.send_header("Content-Type", "text/event-stream")
                self.send_header("Cache-Control", "no-cache")
                self.end_headers()
                for event in events:
                    data = json.dumps(event)
                    self.wfile.write(f"event: {event['type']}\ndata: {data}\n\n".encode())
                self.wfile.flush()

            def log_message(self, *args: Any) -> None:
                pass

        self._server = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
        threading.Thread(target=self._server.serve_forever, daemon=True).start()
        return self

    def stop(self) -> None:
        if self._server is not None:
            self._server.shutdown()
            self._server.server_close()

    def _namespaces(self, tools: list[Any]) -> list[str]:
        return [
            str(t.get("name"))
            for t in tools
            if isinstance(t, dict)
            and t.get("type") == "namespace"
            and any(f.get("name") == self.tool for f in t.get("tools", []))
        ]

    def tool_outputs(self) -> list[str]:
        return [
            str(item.get("output"))
            for body in self.requests
            for item in body.get("input", [])
            if isinstance(item, dict)
            and item.get("type") == "function_call_output"
            and item.get("call_id") == f"call_{self.tool}"
        ]

    def answer(self, body: dict[str, Any]) -> list[dict[str, Any]]:
        """The next step of the script, from what the request holds: the tool's output → a
        final message; the tool offered (directly, or found by a tool search) → call it;
        a tool search offered → search for the tool; else (the host's MCP servers are still
        starting) → run ``sleep 1`` in the shell and look again."""
        number = len(self.requests)
        items = [i for i in body.get("input", []) if isinstance(i, dict)]
        outputs = [i for i in items if i.get("type") == "function_call_output"]
        found = self._namespaces(body.get("tools", [])) + [
            name
            for i in items
            if i.get("type") == "tool_search_output"
            for name in self._namespaces(i.get("tools", []))
        ]
        searchable = any(t.get("type") == "tool_search" for t in body.get("tools", []))
        searched = any(i.get("type") == "tool_search_output" for i in items)
        item: dict[str, Any]
        if outputs and outputs[-1].get("call_id") == f"call_{self.tool}":
            text = f"Done. Tool said: {outputs[-1].get('output')}"
            item = {
                "type": "message",
                "id": f"msg_{number}",
                "role": "assistant",
                "status": "completed",
                "content": [{"type": "output_text", "text": text, "annotations": []}],
            }
        elif found:
            self.offered.append(found)
            item = {
                "type": "function_call",
                "id": f"fc_{number}",
                "call_id": f"call_{self.tool}",
                "namespace": found[0],
                "name": self.tool,
                "arguments": json.dumps(self.arguments),
                "status": "completed",
            }
        elif searchable and not searched:
            item = {
                "type": "tool_search_call",
                "id": f"ts_{number}",
                "call_id": f"search_{number}",
                "execution": "client",
                "status": "completed",
                "arguments": {"query": self.tool.replace("_", " "), "limit": 8},
            }
        else:
            item = {
                "type": "function_call",
                "id": f"fc_{number}",
                "call_id": f"wait_{number}",
                "name": "exec_command",
                "arguments": json.dumps({"cmd": "sleep 1"}),
                "status": "completed",
            }
        response = {"id": f"resp_{number}", "object": "response", "output": []}
        usage = {
            "input_tokens": 10,
            "input_tokens_details": {"cached_tokens": 0},
            "output_tokens": 5,
            "output_tokens_details": {"reasoning_tokens": 0},
            "total_tokens": 15,
        }
        return [
            {"type": "response.created", "response": {**response, "status": "in_progress"}},
            {"type": "response.output_item.added", "output_index": 0, "item": item},
            {"type": "response.output_item.done", "output_index": 0, "item": item},
            {
                "type": "response.completed",
                "response": {**response, "status": "completed", "output": [item], "usage": usage},
            },
        ]
