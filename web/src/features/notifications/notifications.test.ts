import { describe, expect, it } from "vitest";
import type { HubEvent } from "../../api/types";
import { asHubEvent, type LooseEvent } from "../../test/fixtures";
import { healthText } from "./NotificationSettings";
import { deviceLabel } from "./push";
import { noticeFor } from "./useBrowserNotifications";

function event(type: string, payload: Record<string, unknown>, extra: Partial<LooseEvent> = {}): HubEvent {
  return asHubEvent({ id: "e1", type, version: "0.1", occurredAt: "2026-01-01T00:00:00Z", workspaceId: "ws_1", payload, ...extra });
}

describe("page notifications", () => {
  it("say who waits and for what kind of answer, link the card, and carry no request details", () => {
    const n = noticeFor(
      event(
        "interaction.requested",
        { interaction: { id: "int_1", type: "approval", title: "Drop the prod table", details: { secret: "hunter2" } } },
        { actor: "agent:a1", taskId: "task_1" },
      ),
      "ws_1",
      () => "builder",
    );
    expect(n).toEqual({
      kind: "waiting",
      title: "Waiting for you",
      body: "builder asks for your approval.",
      url: "/inbox?workspace=ws_1&interaction=int_1&task=task_1",
      tag: "lineup:interaction:int_1",
    });
    expect(JSON.stringify(n)).not.toMatch(/prod table|hunter2/);
  });

  it("tell of a failed task without its error text, and ignore progress", () => {
    const failed = noticeFor(event("task.status_changed", { taskId: "t1", status: "failed", error: "token abc" }, { actor: "agent:a1" }), "ws_1", () => "builder");
    expect(failed?.kind).toBe("failed");
    expect(failed?.body).toBe("A task of builder failed.");
    expect(JSON.stringify(failed)).not.toContain("token abc");
    expect(noticeFor(event("task.status_changed", { taskId: "t1", status: "running", progress: 3 }), "ws_1", () => "x")).toBeNull();
  });
});

describe("channel health", () => {
  it("shows failing before anything else, then the last delivery, else nothing yet", () => {
    const failing = healthText({ lastAttemptAt: null, lastDeliveredAt: "2026-01-01T00:00:00Z", failingSince: "2026-01-01T00:00:00Z", lastError: "503 from the push service" });
    expect(failing.tone).toBe("danger");
    expect(failing.text).toMatch(/^Failing since .* — 503 from the push service$/);
    expect(healthText({ lastAttemptAt: null, lastDeliveredAt: new Date().toISOString(), failingSince: null, lastError: null }).text).toMatch(/^Last delivered/);
    expect(healthText({ lastAttemptAt: null, lastDeliveredAt: null, failingSince: null, lastError: null }).text).toBe("Nothing sent yet");
  });

  it("names a device after its browser and system", () => {
    expect(deviceLabel("Mozilla/5.0 (Linux; Android 14) AppleWebKit/537.36 Chrome/126.0 Mobile Safari/537.36")).toBe("Chrome on Android");
    expect(deviceLabel("Mozilla/5.0 (iPhone; CPU iPhone OS 17_0 like Mac OS X) AppleWebKit/605.1.15 Version/17.0 Mobile/15E148 Safari/604.1")).toBe("Safari on iOS");
  });
});
