import { act, render, screen } from "@testing-library/react";
import userEvent from "@testing-library/user-event";
import { describe, expect, it, vi } from "vitest";
import { ApiError } from "../api/client";
import type { HubEvent } from "../api/types";
import { ManualBus, RealtimeBusProvider } from "../realtime/RealtimeProvider";
import { asHubEvent } from "../test/fixtures";
import { useAnswerOnce } from "./useAnswerOnce";

interface Question {
  id: string;
  status: "open" | "answered" | "gone";
  by: string | null;
}

const question: Question = { id: "q1", status: "open", by: null };

function applyEvent(current: Question, event: HubEvent): Question | null {
  if (event.type !== "interaction.resolved" || event.payload.interactionId !== current.id) return null;
  return { ...current, status: "answered", by: event.payload.respondedByName ?? null };
}

interface Api {
  answer: (answer: string, key: string) => Promise<Question>;
  reload: () => Promise<Question>;
}

function Card({ api }: { api: Api }) {
  const { current, open, busy, phase, conflict, submit, retry } = useAnswerOnce<Question, string>({
    item: question,
    isOpen: (q) => q.status === "open",
    applyEvent,
    answer: api.answer,
    reload: api.reload,
    afterConflict: (q) => ({ ...q, status: "gone" }),
  });
  return (
    <div>
      <p>status: {current.status}</p>
      {current.by ? <p>answered by {current.by}</p> : null}
      {conflict ? <p>not recorded: {conflict}</p> : null}
      {open ? (
        <button disabled={busy} onClick={() => submit("yes")}>
          Yes
        </button>
      ) : null}
      {phase.kind === "failed" ? <button onClick={retry}>Retry</button> : null}
    </div>
  );
}

function setup(api: Api) {
  const bus = new ManualBus();
  render(
    <RealtimeBusProvider value={bus}>
      <Card api={api} />
    </RealtimeBusProvider>,
  );
  return { bus, user: userEvent.setup() };
}

describe("answering a pending request once", () => {
  it("retries a failed answer under the same idempotency key", async () => {
    const answer = vi
      .fn<Api["answer"]>()
      .mockRejectedValueOnce(new ApiError("unavailable", "The hub is restarting.", 503))
      .mockResolvedValueOnce({ ...question, status: "answered", by: "You" });
    const { user } = setup({ answer, reload: vi.fn<Api["reload"]>() });
    await user.click(screen.getByRole("button", { name: "Yes" }));
    await user.click(await screen.findByRole("button", { name: "Retry" }));
    expect(await screen.findByText("status: answered")).toBeVisible();
    expect(answer).toHaveBeenCalledTimes(2);
    expect(answer.mock.calls[1]).toEqual(answer.mock.calls[0]);
  });

  it("on a conflict shows why and what the hub says now, or ends the request when it cannot read it", async () => {
    const answer = vi.fn<Api["answer"]>().mockRejectedValue(new ApiError("conflict", "Bo answered first.", 409));
    const reload = vi.fn<Api["reload"]>().mockRejectedValue(new ApiError("unavailable", "down", 503));
    const { user } = setup({ answer, reload });
    await user.click(screen.getByRole("button", { name: "Yes" }));
    expect(await screen.findByText("not recorded: Bo answered first.")).toBeVisible();
    expect(screen.getByText("status: gone")).toBeVisible();
    expect(screen.queryByRole("button", { name: "Yes" })).not.toBeInTheDocument();
  });

  it("ends when the answer arrives over the socket from elsewhere", () => {
    const { bus } = setup({ answer: vi.fn<Api["answer"]>(), reload: vi.fn<Api["reload"]>() });
    act(() =>
      bus.emit(
        asHubEvent({
          id: "e1",
          type: "interaction.resolved",
          version: "0.1",
          occurredAt: "2026-07-24T12:05:00.000Z",
          workspaceId: "ws",
          payload: { interactionId: "q1", respondedByName: "Bo" },
        }),
      ),
    );
    expect(screen.getByText("answered by Bo")).toBeVisible();
    expect(screen.queryByRole("button", { name: "Yes" })).not.toBeInTheDocument();
  });
});
