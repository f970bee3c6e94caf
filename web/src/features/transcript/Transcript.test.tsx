import { render, screen, within } from "@testing-library/react";
import userEvent from "@testing-library/user-event";
import { describe, expect, it } from "vitest";
import { Transcript } from "./Transcript";
import { buildTranscript, diffLines, type ActivityEvent } from "./transcript";

let seq = 0;
function ev(type: string, payload: Record<string, unknown>, id?: string): ActivityEvent {
  seq += 1;
  return { id: id ?? `evt_${seq}`, type, sequence: seq, occurredAt: "2026-01-02T03:04:05.000Z", payload };
}

const SESSION: ActivityEvent[] = [
  ev("activity.started", { activityId: "t", kind: "tool_call", name: "read_file", arguments: { path: "README.md" } }),
  ev("activity.finished", { activityId: "t", status: "succeeded", result: { text: "# LineUp" } }),
  ev("activity.started", { activityId: "c", kind: "command", command: "pytest -q", cwd: "/srv/app" }),
  ev("activity.output", { activityId: "c", chunk: "..F\n", offset: 0 }),
  ev("activity.output", { activityId: "c", chunk: "1 failed\n", offset: 4, stream: "stderr" }),
  ev("activity.finished", { activityId: "c", status: "failed", exitCode: 1 }),
  ev("activity.started", { activityId: "d", kind: "file_change", path: "app.py", diff: "--- a/app.py\n+++ b/app.py\n@@ -1 +1 @@\n-x = 1\n+x = 2\n" }),
  ev("activity.usage", { inputTokens: 1200, outputTokens: 340, contextWindow: 200000 }),
  ev("activity.usage", { inputTokens: 800, outputTokens: 60 }),
];

describe("Transcript", () => {
  it("shows a tool call collapsed, its arguments and result on expand", async () => {
    render(<Transcript events={SESSION} />);
    const summary = screen.getByText("Tool: read_file");
    const details = summary.closest("details")!;
    expect(details.open).toBe(false);
    await userEvent.click(summary);
    expect(details.open).toBe(true);
    expect(within(details).getByText(/"path": "README.md"/)).toBeTruthy();
    expect(within(details).getByText(/"text": "# LineUp"/)).toBeTruthy();
  });

  it("shows a command's output in order with its exit code in words", () => {
    render(<Transcript events={SESSION} />);
    const entry = screen.getByText("$ pytest -q").closest("article")!;
    expect(within(entry).getByLabelText("Command output").textContent).toBe("..F\n1 failed\n");
    expect(within(entry).getByText("Failed · exit 1")).toBeTruthy();
    expect(within(entry).getByText("in /srv/app")).toBeTruthy();
  });

  it("marks a diff's additions and removals with signs, not only colour", () => {
    render(<Transcript events={SESSION} />);
    const diff = screen.getByLabelText("Diff of app.py");
    expect(diff.textContent).toContain("− x = 1");
    expect(diff.textContent).toContain("+ x = 2");
    expect(screen.getByLabelText("1 lines added, 1 removed")).toBeTruthy();
  });

  it("adds token use up over turns", () => {
    render(<Transcript events={SESSION} />);
    expect(screen.getByTestId("token-usage").textContent).toContain("2.0k in · 400 out over 2 turns");
  });

  it("shows a resent chunk once and a running command as running", () => {
    const events = [
      ev("activity.started", { activityId: "r", kind: "command", command: "make" }),
      ev("activity.output", { activityId: "r", chunk: "a", offset: 0 }),
      ev("activity.output", { activityId: "r", chunk: "a", offset: 0 }),
      ev("activity.output", { activityId: "r", chunk: "b", offset: 1 }),
    ];
    const entry = buildTranscript(events).entries[0]!;
    expect(entry.output.map((o) => o.text).join("")).toBe("ab");
    expect(entry.status).toBe("running");
  });

  it("links the whole output when only part of it is inline", () => {
    const events = [
      ev("activity.started", { activityId: "big", kind: "command", command: "yes" }),
      ev("activity.output", { activityId: "big", chunk: "y\n", offset: 0 }),
      ev("activity.finished", { activityId: "big", status: "succeeded", exitCode: 0, outputChars: 9000, outputUrl: "/api/workspaces/ws/files/f1" }),
    ];
    render(<Transcript events={events} />);
    expect(screen.getByText(/Showing 2 of 9,000 characters/)).toBeTruthy();
    expect(screen.getByText(/Open the whole output/).closest("a")!.getAttribute("href")).toBe("/api/workspaces/ws/files/f1");
  });
});

describe("an imported session's transcript", () => {
  const at = "2026-01-02T03:04:05.000Z";
  const imported = ev("session.entries_imported", {
    conversationId: "conv_1",
    formatVersion: 2,
    first: 1,
    entries: [
      { entry: { type: "tool_call", id: "c1", parentId: null, timestamp: at, name: "bash", argsDigest: "sha256:aa" }, shown: true },
      { entry: { type: "tool_result", id: "r1", parentId: "c1", timestamp: at, callId: "c1", status: "failed", summary: "boom" }, shown: true },
      { entry: { type: "command", id: "k1", parentId: "r1", timestamp: at, command: "ls" }, shown: true },
      { entry: { type: "tool_result", id: "k2", parentId: "k1", timestamp: at, callId: "k1", status: "succeeded", summary: "a.py\n", exitCode: 0 }, shown: true },
      { entry: { type: "reasoning", id: "off", parentId: null, timestamp: at, text: "another branch" } },
      { entry: { type: "usage", id: "u1", parentId: "k2", timestamp: at, inputTokens: 10, outputTokens: 5 }, shown: true },
    ],
  });

  it("shows the active branch's tool calls and commands with their summaries, not other branches", () => {
    const { entries, usage } = buildTranscript([imported]);
    expect(entries.map((e) => [e.kind, e.status])).toEqual([
      ["tool_call", "failed"],
      ["command", "succeeded"],
    ]);
    expect(entries[0]!.result).toBe("boom");
    expect(entries[1]!.output.map((o) => o.text).join("")).toBe("a.py\n");
    expect(usage?.inputTokens).toBe(10);
    render(<Transcript events={[imported]} />);
    expect(screen.getByText("Tool: bash")).toBeTruthy();
    expect(screen.queryByText("another branch")).toBeNull();
  });
});

describe("diffLines", () => {
  it("drops file headers and keeps hunks", () => {
    expect(diffLines("--- a/x\n+++ b/x\n@@ -1 +1 @@\n ctx\n-a\n+b\n").map((l) => l.sign)).toEqual(["@", " ", "−", "+"]);
  });

  it("shows the context a model was given with its snapshot, and an error with its code", () => {
    const events = [
      ev("activity.started", {
        activityId: "ctx",
        kind: "context",
        text: "The engine started with 3 recent turns: about 1,200 of 24,000 tokens.",
        snapshotUrl: "/api/workspaces/ws/files/snap",
        replyTo: "msg_1",
      }),
      ev("activity.started", { activityId: "err", kind: "error", code: "unavailable", text: "The engine stopped." }),
    ];
    render(<Transcript events={events} />);
    const context = screen.getByText("Context given to the model").closest("article")!;
    expect(context.getAttribute("data-status")).toBe("succeeded");
    expect(within(context).getByText(/3 recent turns/)).toBeTruthy();
    expect(within(context).getByText(/Open the snapshot/).closest("a")!.getAttribute("href")).toBe("/api/workspaces/ws/files/snap");
    const error = screen.getByText("Error (unavailable)").closest("article")!;
    expect(error.getAttribute("data-status")).toBe("failed");
    expect(within(error).getByText("The engine stopped.")).toBeTruthy();
  });
});
