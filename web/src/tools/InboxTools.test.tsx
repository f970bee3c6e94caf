import { render, screen } from "@testing-library/react";
import { describe, expect, it } from "vitest";
import { ToolCallCard, applyToolEvent } from "./ToolCallCard";
import { countToolCards, inboxEntries } from "./InboxTools";
import { fakeToolApi, makeCall } from "./testing";
import { asHubEvent } from "../test/fixtures";

describe("tool cards in the inbox", () => {
  it("groups a canvas's calls into one card and keeps other calls one card each", () => {
    const calls = [
      makeCall("canvas", "draw", { instance_id: "inst_1", path: "M0 0" }, { id: "tc_d", sequence: 5, instanceId: "inst_1" }),
      makeCall("choice", null, { question: "?", options: ["a", "b"] }, { id: "tc_c", sequence: 3 }),
      makeCall("canvas", "open", { width: 10, height: 10 }, { id: "tc_o", sequence: 2, instanceId: "inst_1" }),
      makeCall("canvas", "undo", { instance_id: "inst_1" }, { id: "tc_u", sequence: 6, instanceId: "inst_1" }),
    ];
    const entries = inboxEntries(calls);
    expect(entries.map((e) => e.key)).toEqual(["canvas:inst_1", "tc_c"]);
    expect(entries[0]).toMatchObject({ kind: "canvas", pending: 3, openCall: { id: "tc_o" } });
    expect(countToolCards(calls)).toBe(2);
  });

  it("does not render a call whose arguments break the tool's schema, and says why", () => {
    const bad = makeCall("choice", null, { question: "Pick", options: ["only one"] });
    render(<ToolCallCard call={bad} api={fakeToolApi(bad)} />);
    expect(screen.getByText("This app cannot show this call")).toBeVisible();
    expect(screen.getByText(/should have at least 2 items/)).toBeVisible();
    expect(screen.queryByRole("button", { name: "only one" })).not.toBeInTheDocument();
  });

  it("reads a timeout and a withdrawal from the recorded events", () => {
    const call = makeCall("confirm", null, { message: "?" });
    const event = (type: string, payload: Record<string, unknown>) =>
      asHubEvent({
        id: "e",
        type,
        version: "0.1",
        occurredAt: "2026-07-24T12:10:00.000Z",
        workspaceId: "ws",
        payload: { toolCallId: call.id, ...payload },
      });
    expect(applyToolEvent(call, event("tool.completed", { expired: true, error: { code: "unavailable", message: "x" } }))?.status).toBe("expired");
    expect(applyToolEvent(call, event("tool.cancelled", { reason: "moot" }))).toMatchObject({ status: "cancelled", cancelReason: "moot" });
    expect(applyToolEvent(call, event("tool.called", {}))).toBeNull();
    const withdrawn = applyToolEvent(call, event("tool.cancelled", { reason: "moot" }))!;
    render(<ToolCallCard call={withdrawn} api={fakeToolApi(call)} />);
    expect(screen.getByText("Withdrawn")).toBeVisible();
    expect(screen.getByText(/The agent withdrew this call: moot/)).toBeVisible();
  });
});
