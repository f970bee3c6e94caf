"""A tiny scriptable engine, run as a real subprocess: ``python -m lineup.engines.fake_engine``.

It is what the process manager's and hosting's tests drive, and a demo for people with no
engine installed. It speaks one JSON object per line on stdio (the protocol is in
:mod:`lineup.engines.fake`) and needs no model: it answers from the message itself.

Markers in a message script what it does, in this order:

- ``[think]`` reports a reasoning summary first;
- ``[tool:NAME {json}]`` calls the host's LineUp tool NAME with those arguments;
- ``[approve:COMMAND]`` asks for an approval to run COMMAND; when allowed it runs a pretend
  command whose effect is one line appended to ``.fake-engine-effects`` in its working
  directory (so a test can count effects), streaming its output;
- ``[approve-tool:NAME {json}]`` asks for an approval to run its own tool NAME with that
  input, which the person may edit (as Claude Code asks); when allowed it appends
  ``NAME <the input it was allowed with, as JSON>`` to the effects file;
- ``[change:PATH]`` reports a change of PATH as a unified diff;
- ``[spew:N]`` runs a pretend command printing N characters (no approval, no effect);
- ``[hang]`` then waits, mid-turn, until interrupted (or killed);
- ``[crash]`` exits at once with status 3, mid-turn;
- ``[fail]`` ends the turn failed with an ``invalid_argument`` error.

Otherwise it replies ``You said: …`` streamed word by word, and ends each reply with
``(turn N)``: N counts the turns it knows of, the history it was started with included.
Messages the host steers into a running turn are acknowledged in its reply
(``steered: …``). Each turn reports its token use. It exits when its stdin closes, so it
never outlives a host that lost its pipes.
"""

from __future__ import annotations

import json
import os
import re
import sys
import threading
from typing import Any

EFFECTS_FILE = ".fake-engine-effects"
KEY_VARIABLE = "LINEUP_MODEL_API_KEY"
CONTEXT_WINDOW = 8000

_TOOL = re.compile(r"\[tool:([A-Za-z0-9_.-]+)(?:\s+(\{.*?\}))?\]")
_APPROVE = re.compile(r"\[approve:([^\]]+)\]")
_APPROVE_TOOL = re.compile(r"\[approve-tool:([A-Za-z0-9_.-]+)(?:\s+(\{.*?\}))?\]")
_CHANGE = re.compile(r"\[change:([^\]]+)\]")
_SPEW = re.compile(r"\[spew:(\d+)\]")
_PLAIN = re.compile(r"\[(?:think|hang|crash|fail)\]")
_MARKERS = (_APPROVE_TOOL, _TOOL, _APPROVE, _CHANGE, _SPEW, _PLAIN)


class Engine:
    def __init__(self) -> None:
        self.session_id = f"fake-{os.getpid()}"
        self.turns = 0
        self.counter = 0
        self.interrupted = threading.Event()
        self.busy = threading.Event()
        self.pending: dict[str, dict[str, Any]] = {}
        self.answers = threading.Condition()
        self.steered: list[str] = []
        self.write_lock = threading.Lock()

    # --- the pipes ------------------------------------------------------------------------

    def send(self, **message: Any) -> None:
        with self.write_lock:
            sys.stdout.write(json.dumps(message) + "\n")
            sys.stdout.flush()

    def log(self, text: str) -> None:
        sys.stderr.write(f"fake-engine[{os.getpid()}]: {text}\n")
        sys.stderr.flush()

    def next_id(self, prefix: str) -> str:
        self.counter += 1
        return f"{prefix}_{self.counter}"

    def wait_answer(self, request_id: str) -> dict[str, Any] | None:
        """The host's answer to one of our requests; None when the turn was interrupted."""
        with self.answers:
            while request_id not in self.pending:
                if self.interrupted.is_set():
                    return None
                self.answers.wait(0.05)
            return self.pending.pop(request_id)

    # --- a turn ---------------------------------------------------------------------------

    def turn(self, text: str) -> None:
        self.turns += 1
        turn_id = self.next_id("turn")
        self.interrupted.clear()
        self.send(type="turn_started", turn=turn_id)
        status = "completed"
        parts: list[str] = []
        try:
            if "[think]" in text:
                self.send(type="reasoning", item=self.next_id("rs"), text="Reading the message.")
            for match in _TOOL.finditer(text):
                arguments = json.loads(match.group(2)) if match.group(2) else {}
                call_id = self.next_id("call")
                self.send(type="tool_call", id=call_id, name=match.group(1), arguments=arguments)
                answer = self.wait_answer(call_id)
                if answer is None:
                    raise _Interrupted
                self.send(
                    type="tool_finished",
                    id=call_id,
                    ok=bool(answer.get("ok", True)),
                    text=str(answer.get("text", "")),
                )
                parts.append(f"{match.group(1)} said: {answer.get('text', '')}")
            for match in _APPROVE.finditer(text):
                parts.append(self.approve_command(match.group(1).strip()))
            for match in _APPROVE_TOOL.finditer(text):
                arguments = json.loads(match.group(2)) if match.group(2) else {}
                parts.append(self.approve_tool(match.group(1), arguments))
            for match in _CHANGE.finditer(text):
                path = match.group(1).strip()
                diff = f"--- a/{path}\n+++ b/{path}\n@@ -1 +1 @@\n-old line\n+new line\n"
                self.send(type="file_change", item=self.next_id("fc"), path=path, diff=diff)
                parts.append(f"changed {path}")
            for match in _SPEW.finditer(text):
                self.spew(int(match.group(1)))
            if "[crash]" in text:
                self.log("crashing as asked")
                os._exit(3)
            if "[hang]" in text:
                self.log("hanging as asked")
                self.interrupted.wait()
                raise _Interrupted
            if "[fail]" in text:
                self.send(type="error", code="invalid_argument", message="Asked to fail.")
                status = "failed"
            else:
                self.say(self.reply(text, parts))
        except _Interrupted:
            status = "interrupted"
        self.send(
            type="usage", input=len(text) // 4 + 1, output=len(text) // 8 + 1, window=CONTEXT_WINDOW
        )
        self.steered = []
        self.busy.clear()  # before the host hears of the end: its next turn may come at once
        self.send(type="turn_finished", turn=turn_id, status=status, session=self.session_id)

    def reply(self, text: str, parts: list[str]) -> str:
        for marker in _MARKERS:
            text = marker.sub("", text)
        spoken = " ".join(text.split())
        reply = f"You said: {spoken}" if spoken else "You said nothing."
        if self.steered:
            parts = [*parts, "steered: " + "; ".join(self.steered)]
        if parts:
            reply += " (" + "; ".join(parts) + ")"
        return reply + f" (turn {self.turns})"

    def approve_command(self, command: str) -> str:
        request_id = self.next_id("approval")
        self.send(type="approval_request", id=request_id, command=command, cwd=os.getcwd())
        answer = self.wait_answer(request_id)
        if answer is None:
            raise _Interrupted
        if not answer.get("allow"):
            return f"did not run {command} ({answer.get('reason') or 'no reason given'})"
        self.run_command(command)
        return f"ran {command}"

    def approve_tool(self, name: str, arguments: dict[str, Any]) -> str:
        request_id = self.next_id("approval")
        self.send(type="approval_request", id=request_id, tool=name, input=arguments)
        answer = self.wait_answer(request_id)
        if answer is None:
            raise _Interrupted
        if not answer.get("allow"):
            return f"did not run {name} ({answer.get('reason') or 'no reason given'})"
        used = answer.get("updated_input")
        used = used if isinstance(used, dict) else arguments
        with open(EFFECTS_FILE, "a", encoding="utf-8") as effects:
            effects.write(f"{name} {json.dumps(used, sort_keys=True)}\n")
        return f"ran {name} with {json.dumps(used, sort_keys=True)}"

    def say(self, reply: str) -> None:
        item = self.next_id("msg")
        words = reply.split(" ")
        for index, word in enumerate(words):
            self.send(type="delta", item=item, text=word if index == 0 else " " + word)
        self.send(type="message", item=item, text=reply)

    def run_command(self, command: str) -> None:
        item = self.next_id("cmd")
        self.send(type="command_started", item=item, command=command, cwd=os.getcwd())
        with open(EFFECTS_FILE, "a", encoding="utf-8") as effects:
            effects.write(command + "\n")
        self.send(type="command_output", item=item, chunk=f"pretend: {command}\n")
        self.send(type="command_finished", item=item, exit_code=0)

    def spew(self, count: int) -> None:
        item = self.next_id("cmd")
        self.send(type="command_started", item=item, command=f"spew {count}", cwd=os.getcwd())
        line = "y" * 99 + "\n"
        left = count
        while left > 0:
            chunk = (line * 100)[: min(left, 10_000)]
            self.send(type="command_output", item=item, chunk=chunk)
            left -= len(chunk)
        self.send(type="command_finished", item=item, exit_code=0)

    # --- the main loop ----------------------------------------------------------------------

    def serve(self) -> int:
        for line in sys.stdin:
            try:
                message = json.loads(line)
            except ValueError:
                self.log("a line that is not JSON was ignored")
                continue
            kind = message.get("type")
            if kind == "init":
                history = message.get("history") or []
                self.turns = len(history)
                resumed = message.get("resume") == self.session_id
                self.log(
                    f"started in {os.getcwd()} with {len(history)} earlier turns; "
                    f"model {message.get('model')!r}; api key "
                    f"{'set' if os.environ.get(KEY_VARIABLE) else 'not set'}; "
                    f"{len(message.get('tools') or [])} tools"
                )
                self.send(
                    type="ready", session=self.session_id, remembered=len(history), resumed=resumed
                )
            elif kind == "turn":
                if self.busy.is_set():
                    self.log("a turn while another runs was refused")
                    continue
                self.busy.set()
                worker = threading.Thread(target=self.turn, args=(str(message.get("text")),))
                worker.daemon = True
                worker.start()
            elif kind in ("approval", "tool_result"):
                with self.answers:
                    self.pending[str(message.get("id"))] = message
                    self.answers.notify_all()
            elif kind == "steer":
                self.steered.append(str(message.get("text")))
            elif kind == "interrupt":
                self.interrupted.set()
        self.log("stdin closed; exiting")
        return 0


class _Interrupted(Exception):
    pass


def main() -> int:
    return Engine().serve()


if __name__ == "__main__":
    raise SystemExit(main())
