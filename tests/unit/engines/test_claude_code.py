"""The Claude Code driver without Claude Code: how it finds the program behind an npm install,
and what it refuses before starting one."""

from __future__ import annotations

from pathlib import Path

import pytest

from lineup.engines.claude_code import ClaudeCodeRuntime, find_claude
from lineup.engines.runtime import (
    ApprovalDecision,
    ApprovalRequest,
    ModelEndpoint,
    SessionSpec,
    ToolInvocation,
    ToolOutcome,
)
from lineup.protocol.errors import ErrorCode, InvalidArgument, Unavailable

ELF = b"\x7fELF\x02\x01\x01"


class NoHost:
    async def approve(self, request: ApprovalRequest) -> ApprovalDecision:
        raise AssertionError("not asked")

    async def call_tool(self, call: ToolInvocation) -> ToolOutcome:
        raise AssertionError("not asked")


def executable(path: Path, content: bytes) -> Path:
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_bytes(content)
    path.chmod(0o755)
    return path


def npm_install(root: Path, *, postinstall_ran: bool) -> Path:
    """An npm prefix as ``npm install -g @anthropic-ai/claude-code`` leaves it."""
    scope = root / "lib" / "node_modules" / "@anthropic-ai"
    package = scope / "claude-code"
    (package / "package.json").parent.mkdir(parents=True)
    (package / "package.json").write_text('{"name": "@anthropic-ai/claude-code"}')
    native = executable(scope / "claude-code-linux-x64" / "claude", ELF)
    placeholder = ELF if postinstall_ran else b"#!/bin/sh\necho 'run the postinstall step'\n"
    executable(package / "bin" / "claude.exe", placeholder)
    link = root / "bin" / "claude"
    link.parent.mkdir(parents=True)
    link.symlink_to(package / "bin" / "claude.exe")
    return native


def spec(tmp_path: Path, api: str) -> SessionSpec:
    return SessionSpec(
        cwd=str(tmp_path),
        model=ModelEndpoint(api=api, base_url="http://127.0.0.1:9/v1", model="m"),  # type: ignore[arg-type]
        state_dir=str(tmp_path / "state"),
    )


def test_the_program_on_path_is_followed_to_the_native_binary_npm_put_in_place(
    tmp_path: Path,
) -> None:
    npm_install(tmp_path, postinstall_ran=True)
    found = find_claude(str(tmp_path / "bin" / "claude"))
    assert (
        found == (tmp_path / "lib/node_modules/@anthropic-ai/claude-code/bin/claude.exe").resolve()
    )


def test_without_the_postinstall_step_the_platform_packages_binary_is_run(
    tmp_path: Path,
) -> None:
    native = npm_install(tmp_path, postinstall_ran=False)
    assert find_claude(str(tmp_path / "bin" / "claude")) == native.resolve()


def test_the_binary_comes_from_the_variable_when_none_is_given(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    native = executable(tmp_path / "claude", ELF)
    monkeypatch.setenv("LINEUP_CLAUDE_BIN", str(native))
    assert find_claude() == native
    monkeypatch.setenv("LINEUP_CLAUDE_BIN", str(tmp_path / "missing"))
    assert find_claude() is None


async def test_an_endpoint_of_another_api_is_refused_before_anything_starts(
    tmp_path: Path,
) -> None:
    runtime = ClaudeCodeRuntime(str(tmp_path / "missing"))
    for api in ("openai-responses", "openai-chat"):
        with pytest.raises(InvalidArgument) as refused:
            await runtime.start(spec(tmp_path, api), NoHost())
        assert refused.value.code == ErrorCode.INVALID_ARGUMENT
        assert "Anthropic Messages API" in refused.value.message
    assert not (tmp_path / "state").exists()


async def test_a_missing_program_is_unavailable_with_the_command_that_installs_it(
    tmp_path: Path,
) -> None:
    runtime = ClaudeCodeRuntime(str(tmp_path / "missing"))
    with pytest.raises(Unavailable) as missing:
        await runtime.start(spec(tmp_path, "anthropic-messages"), NoHost())
    assert "npm install -g @anthropic-ai/claude-code@2.1.332" in missing.value.message
    status = runtime.status()
    assert not status.installed and status.path is None
    assert status.install_hint == "npm install -g @anthropic-ai/claude-code@2.1.332"
