import { act, render, screen, waitFor } from "@testing-library/react";
import { describe, expect, it, vi } from "vitest";
import type { WorkspaceApi } from "../api/hub";
import type { HubEvent } from "../api/types";
import { asHubEvent } from "../test/fixtures";
import { useResource } from "../lib/useResource";
import { FakeSocket } from "../test/fakeSocket";
import { RealtimeConnection } from "./connection";
import { RealtimeProvider, useConnectionState, useStreams } from "./RealtimeProvider";

function setup(load: () => Promise<number>) {
  const sockets: FakeSocket[] = [];
  const api = { events: vi.fn(async () => ({ events: [], latestSequence: 5 })) } as unknown as WorkspaceApi;
  const connect = (workspaceId: string, initialSequence: number) =>
    new RealtimeConnection({
      workspaceId,
      initialSequence,
      url: "ws://hub/ws/client",
      storage: null,
      backoff: () => 60_000,
      socket: (url) => {
        const s = new FakeSocket(url);
        sockets.push(s);
        return s;
      },
    });

  function View() {
    const state = useConnectionState();
    const streams = useStreams();
    const data = useResource(load, [], { refreshOn: (e) => e.type === "task.status_changed", debounceMs: 10 });
    return (
      <div>
        <p>state: {state}</p>
        <p>data: {String(data.data)}</p>
        {streams.map((s) => (
          <p key={s.messageId}>streaming: {s.text}</p>
        ))}
      </div>
    );
  }

  render(
    <RealtimeProvider workspaceId="ws_1" api={api} connect={connect}>
      <View />
    </RealtimeProvider>,
  );
  return { sockets, socket: () => sockets[sockets.length - 1]! };
}

const event = (sequence: number, type = "task.status_changed", payload: Record<string, unknown> = {}): HubEvent =>
  asHubEvent({
    id: `evt_${sequence}`,
    type,
    version: "0.1",
    occurredAt: "2026-07-24T12:00:00.000Z",
    workspaceId: "ws_1",
    sequence,
    payload,
  });

async function live(socket: () => FakeSocket, sockets: FakeSocket[]) {
  await waitFor(() => expect(sockets).toHaveLength(1));
  act(() => {
    socket().open();
    socket().ack();
    socket().push({ type: "client.caught_up", payload: { sequence: 5 } });
  });
  expect(socket().sent[0]!.payload).toEqual({ lastSequence: 5, batch: true });
  await screen.findByText("state: live");
}

describe("RealtimeProvider", () => {
  it("starts from the hub's latest sequence and refetches a view when an event touches it", async () => {
    let n = 0;
    const load = vi.fn(async () => ++n);
    const { socket, sockets } = setup(load);
    await live(socket, sockets);
    await waitFor(() => expect(load).toHaveBeenCalledTimes(2)); // first load + after caught up
    act(() => socket().push(event(6)));
    await waitFor(() => expect(load).toHaveBeenCalledTimes(3));
    expect(await screen.findByText("data: 3")).toBeInTheDocument();
  });

  it("does not lose a pending refetch when the connection drops right after the event", async () => {
    let n = 0;
    const load = vi.fn(async () => ++n);
    const { socket, sockets } = setup(load);
    await live(socket, sockets);
    await waitFor(() => expect(load).toHaveBeenCalledTimes(2));
    act(() => {
      socket().push(event(6));
      socket().drop();
    });
    expect(screen.getByText("state: offline")).toBeInTheDocument();
    await waitFor(() => expect(load).toHaveBeenCalledTimes(3));
  });

  it("shows streamed text until the recorded message replaces it", async () => {
    const { socket, sockets } = setup(async () => 1);
    await live(socket, sockets);
    act(() => {
      socket().push({ type: "message.delta", taskId: "t1", payload: { messageId: "m1", delta: "Half" } });
      socket().push({ type: "message.delta", taskId: "t1", payload: { messageId: "m1", delta: " done" } });
    });
    expect(screen.getByText("streaming: Half done")).toBeInTheDocument();
    act(() => socket().push(event(6, "message.created", { messageId: "m1", content: "Half done" })));
    expect(screen.queryByText(/streaming:/)).not.toBeInTheDocument();
  });

  it("subscribes again from its cursor when the page becomes visible", async () => {
    const { socket, sockets } = setup(async () => 1);
    await live(socket, sockets);
    act(() => socket().push(event(9, "agent.connected")));
    act(() => {
      document.dispatchEvent(new Event("visibilitychange"));
    });
    expect(socket().sent).toHaveLength(2);
    expect(socket().sent[1]!.payload).toEqual({ lastSequence: 9, batch: true });
  });
});
