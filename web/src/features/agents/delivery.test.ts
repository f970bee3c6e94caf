import { describe, expect, it } from "vitest";
import { deliveryOf, deliveryText } from "./delivery";

const at = "2026-12-01T11:00:00.000Z";

describe("whether an answer or a message reached the agent", () => {
  it("is delivered when the agent's connection was open then", () => {
    expect(deliveryOf(at, { status: "online", connectedAt: "2026-12-01T10:00:00.000Z", offlineAt: null })).toBe("delivered");
    // offline now, but its connection ended after the answer
    expect(
      deliveryOf(at, { status: "offline", connectedAt: "2026-12-01T10:00:00.000Z", offlineAt: "2026-12-01T11:30:00.000Z" }),
    ).toBe("delivered");
  });

  it("is queued while the agent has not connected since", () => {
    const offline = { status: "offline" as const, connectedAt: "2026-12-01T10:00:00.000Z", offlineAt: "2026-12-01T10:30:00.000Z" };
    expect(deliveryOf(at, offline)).toBe("queued");
    expect(deliveryText("queued", "builder")).toBe("Queued — delivered when builder reconnects");
    expect(deliveryOf(at, { status: "never_connected" as const, connectedAt: null, offlineAt: null })).toBe("queued");
  });

  it("is delivered once the agent connected again after it", () => {
    expect(
      deliveryOf(at, { status: "online", connectedAt: "2026-12-01T11:05:00.000Z", offlineAt: "2026-12-01T10:30:00.000Z" }),
    ).toBe("delivered");
    expect(deliveryText("delivered", "builder")).toBe("Delivered to builder");
  });

  it("says nothing without a time or an agent, and never delivers to a revoked agent", () => {
    expect(deliveryOf(null, { status: "online", connectedAt: at, offlineAt: null })).toBeNull();
    expect(deliveryOf(at, undefined)).toBeNull();
    expect(deliveryOf(at, { status: "revoked", connectedAt: "2026-12-01T10:00:00.000Z", offlineAt: "2026-12-01T10:10:00.000Z" })).toBe("revoked");
  });
});
