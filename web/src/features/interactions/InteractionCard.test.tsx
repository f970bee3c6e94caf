import { act, render, screen, waitFor, within } from "@testing-library/react";
import userEvent from "@testing-library/user-event";
import { describe, expect, it } from "vitest";
import { ApiError } from "../../api/client";
import type { Interaction } from "../../api/types";
import { ManualBus, RealtimeBusProvider } from "../../realtime/RealtimeProvider";
import { asHubEvent, conflict, deferred, fakeApi, makeInteraction, resolved } from "../../test/fixtures";
import { InteractionCard } from "./InteractionCard";

function card(interaction: Interaction, api = fakeApi(interaction), bus = new ManualBus()) {
  const user = userEvent.setup();
  const view = render(
    <RealtimeBusProvider value={bus}>
      <InteractionCard interaction={interaction} api={api} agentName="builder" />
    </RealtimeBusProvider>,
  );
  return { user, api, bus, ...view };
}

const approval = makeInteraction({
  type: "approval",
  description: "Three reviewed migration files will run on production.",
  impact: "The orders table is locked for about a minute.",
  risk: "high",
  options: [
    { id: "approve", label: "Run it", style: "primary" },
    { id: "reject", label: "Don't run", style: "danger" },
  ],
  details: { migrationCount: 3, environment: "production" },
});

describe("an engine's approval card", () => {
  const command = makeInteraction({
    type: "approval",
    title: "Run make build?",
    content: "$ make build",
    impact: "Runs in /srv/app.",
    details: { kind: "command", command: "make build", cwd: "/srv/app" },
  });
  const tool = makeInteraction({
    type: "approval",
    title: "Let the engine use Write?",
    content: '{\n  "path": "notes.txt",\n  "text": "draft"\n}',
    editableInput: { path: "notes.txt", text: "draft" },
    options: [
      { id: "approve", label: "Allow", style: "primary" },
      { id: "reject", label: "Deny", style: "danger" },
    ],
  });

  it("shows the command it asks about above the buttons", () => {
    card(command);
    expect(screen.getByRole("region", { name: "What it will do" })).toHaveTextContent("$ make build");
    expect(screen.getByText("Runs in /srv/app.")).toBeVisible();
  });

  it("shows a diff with its lines marked", () => {
    card(makeInteraction({ type: "approval", content: "--- a/x\n+++ b/x\n@@ -1 +1 @@\n-old\n+new" }));
    const diff = screen.getByTestId("review-diff");
    expect(within(diff).getByText(/new/)).toHaveClass("diff-add");
  });

  it("allows an editable input as it is", async () => {
    const { user, api } = card(tool);
    await user.click(screen.getByRole("button", { name: "Allow" }));
    expect(api.respond).toHaveBeenCalledWith("int_1", { optionId: "approve" }, expect.any(String));
  });

  it("allows it with the input the person edited", async () => {
    const { user, api } = card(tool);
    await user.click(screen.getByRole("button", { name: "Edit input" }));
    const field = screen.getByLabelText("Input (JSON)");
    await waitFor(() => expect(field).toHaveFocus());
    await user.clear(field);
    await user.click(field);
    await user.paste('{"path": "notes.txt", "text": "final"}');
    await user.click(screen.getByRole("button", { name: "Allow with edits" }));
    expect(api.respond).toHaveBeenCalledWith(
      "int_1",
      { optionId: "approve", input: { path: "notes.txt", text: "final" } },
      expect.any(String),
    );
    expect(await screen.findByText("Allow with an edited input", { selector: ".outcome-answer" })).toBeVisible();
  });

  it("keeps an input that is not a JSON object from being sent, and says why", async () => {
    const { user, api } = card(tool);
    await user.click(screen.getByRole("button", { name: "Edit input" }));
    const field = screen.getByLabelText("Input (JSON)");
    await user.clear(field);
    await user.click(field);
    await user.paste('["not", "an object"]');
    await user.click(screen.getByRole("button", { name: "Allow with edits" }));
    expect(api.respond).not.toHaveBeenCalled();
    expect(screen.getByText("The input must be a JSON object: { … }.")).toBeVisible();
    expect(field).toHaveAttribute("aria-invalid", "true");
  });

  it("denies with a reason", async () => {
    const { user, api } = card(tool);
    await user.click(screen.getByRole("button", { name: "Add a note" }));
    await user.type(screen.getByLabelText("Note (optional)"), "Not that file");
    await user.click(screen.getByRole("button", { name: "Deny" }));
    expect(api.respond).toHaveBeenCalledWith("int_1", { optionId: "reject", text: "Not that file" }, expect.any(String));
  });
});

describe("approval card", () => {
  it("reads why you → impact → what you can do → details, with risk as text", () => {
    const { container } = card(approval);
    const sections = [...container.querySelectorAll("section[aria-label], details")].map(
      (el) => el.getAttribute("aria-label") ?? "details",
    );
    expect(sections).toEqual(["Why you", "Impact", "What you can do", "details"]);
    expect(screen.getByText("High risk")).toBeVisible();
    expect(screen.getByText("Three reviewed migration files will run on production.")).toBeVisible();
    // Details are collapsed until asked for.
    const details = container.querySelector("details")!;
    expect(details.open).toBe(false);
    expect(within(details).getByText("environment")).toBeInTheDocument();
  });

  it("answers with the keyboard: Tab to the button and press Enter", async () => {
    const { user, api } = card(approval);
    await user.tab();
    expect(screen.getByRole("button", { name: "Run it" })).toHaveFocus();
    await user.keyboard("{Enter}");
    expect(api.respond).toHaveBeenCalledWith("int_1", { optionId: "approve" }, expect.stringMatching(/^web-/));
    expect(await screen.findByText(/answered/)).toBeVisible();
    expect(screen.getByText("Run it", { selector: ".outcome-answer" })).toBeVisible();
    expect(screen.queryByRole("button", { name: "Run it" })).not.toBeInTheDocument();
  });

  it("answers with the keyboard: Space works on the reject button too", async () => {
    const { user, api } = card(approval);
    await user.tab();
    await user.tab();
    expect(screen.getByRole("button", { name: "Don't run" })).toHaveFocus();
    await user.keyboard(" ");
    expect(api.respond).toHaveBeenCalledWith("int_1", { optionId: "reject" }, expect.any(String));
    expect(await screen.findByText("Don't run", { selector: ".outcome-answer" })).toBeVisible();
  });

  it("sends an optional note with the decision", async () => {
    const { user, api } = card(approval);
    await user.click(screen.getByRole("button", { name: "Add a note" }));
    await user.type(screen.getByLabelText("Note (optional)"), "Run after 18:00");
    await user.click(screen.getByRole("button", { name: "Run it" }));
    expect(api.respond).toHaveBeenCalledWith("int_1", { optionId: "approve", text: "Run after 18:00" }, expect.any(String));
  });

  it("shows Submitting… while the answer travels, then the read-only result with who and when", async () => {
    const api = fakeApi(approval);
    const pending = deferred<Interaction>();
    api.respond.mockReturnValueOnce(pending.promise);
    const { user } = card(approval, api);
    await user.click(screen.getByRole("button", { name: "Run it" }));
    expect(screen.getByText("Submitting your answer…")).toBeVisible();
    expect(screen.getByRole("button", { name: /Don't run/ })).toBeDisabled();
    await act(async () => pending.resolve(resolved(approval, { optionId: "approve" }, "Ana")));
    const outcome = screen.getByRole("region", { name: "Outcome" });
    expect(outcome).toHaveTextContent("Ana answered");
    expect(outcome).toHaveTextContent("Run it");
    expect(outcome.querySelector("time")).toHaveAttribute("dateTime", "2026-07-24T12:05:00.000Z");
    expect(outcome).toHaveFocus();
  });

  it("on failure shows the error and a Retry that resends the same answer with the same key", async () => {
    const api = fakeApi(approval);
    api.respond.mockRejectedValueOnce(new ApiError("unavailable", "The hub is restarting; try again.", 503));
    const { user } = card(approval, api);
    await user.click(screen.getByRole("button", { name: "Run it" }));
    expect(await screen.findByText("The hub is restarting; try again.")).toBeVisible();
    expect(screen.getByText("Your answer was not sent")).toBeVisible();
    const firstKey = api.respond.mock.calls[0]![2];
    await user.click(screen.getByRole("button", { name: "Retry" }));
    expect(api.respond).toHaveBeenCalledTimes(2);
    expect(api.respond.mock.calls[1]).toEqual(["int_1", { optionId: "approve" }, firstKey]);
    expect(await screen.findByRole("region", { name: "Outcome" })).toHaveTextContent("Ana answered");
  });

  it("on a conflict turns read-only and shows who answered first, when, and what", async () => {
    const api = fakeApi(approval);
    api.respond.mockRejectedValueOnce(conflict());
    api.interaction.mockResolvedValueOnce(resolved(approval, { optionId: "reject", text: "Not today" }, "Bo"));
    const { user } = card(approval, api);
    await user.click(screen.getByRole("button", { name: "Run it" }));
    const outcome = await screen.findByRole("region", { name: "Outcome" });
    expect(outcome).toHaveTextContent("Bo answered");
    expect(outcome).toHaveTextContent("Don't run — note: “Not today”");
    expect(outcome).toHaveTextContent("already answered");
    expect(outcome.querySelector("time")).toHaveAttribute("dateTime", "2026-07-24T12:05:00.000Z");
    expect(screen.queryByRole("button", { name: "Run it" })).not.toBeInTheDocument();
  });

  it("turns read-only when the answer arrives over the socket from someone else", () => {
    const bus = new ManualBus();
    card(approval, fakeApi(approval), bus);
    act(() =>
      bus.emit(asHubEvent({
        id: "evt_9",
        type: "interaction.resolved",
        version: "0.1",
        occurredAt: "2026-07-24T12:06:00.000Z",
        workspaceId: "ws_1",
        sequence: 12,
        actor: "user:u2",
        payload: {
          interactionId: "int_1",
          response: { optionId: "approve" },
          respondedBy: "user:u2",
          respondedByName: "Bo",
          respondedAt: Date.parse("2026-07-24T12:06:00.000Z"),
        },
      })),
    );
    const outcome = screen.getByRole("region", { name: "Outcome" });
    expect(outcome).toHaveTextContent("Bo answered");
    expect(outcome).toHaveTextContent("Run it");
    expect(screen.queryByRole("button", { name: "Don't run" })).not.toBeInTheDocument();
  });

  it("says so when the request expired or was withdrawn", () => {
    const bus = new ManualBus();
    card(approval, fakeApi(approval), bus);
    act(() =>
      bus.emit(asHubEvent({
        id: "evt_10",
        type: "interaction.cancelled",
        version: "0.1",
        occurredAt: "2026-07-24T12:06:00.000Z",
        workspaceId: "ws_1",
        sequence: 13,
        payload: { interactionId: "int_1" },
      })),
    );
    expect(screen.getByText(/withdrew this request/)).toBeVisible();
  });

  it("says an answer waits for an offline agent, and when it reached the agent", () => {
    const answered = resolved(approval, { optionId: "approve" });
    const offline = {
      id: "agent_1", name: "builder", runtime: null, version: null, status: "offline" as const, online: false,
      capabilities: [], tools: [], lastHeartbeatAt: null, revokedAt: null, createdAt: null,
      connectedAt: "2026-07-24T11:00:00.000Z", offlineAt: "2026-07-24T12:01:00.000Z",
      confirmed: true, confirmedAt: null, settingsSchema: null, settings: {},
    };
    const { rerender } = render(<InteractionCard interaction={answered} api={fakeApi(answered)} agent={offline} />);
    expect(screen.getByText("Queued — delivered when builder reconnects")).toBeVisible();
    const back = { ...offline, status: "online" as const, online: true, connectedAt: "2026-07-24T12:10:00.000Z" };
    rerender(<InteractionCard interaction={answered} api={fakeApi(answered)} agent={back} />);
    expect(screen.getByText("Delivered to builder")).toBeVisible();
  });

  it("says the request was withdrawn because its task was cancelled", () => {
    const bus = new ManualBus();
    card(approval, fakeApi(approval), bus);
    act(() =>
      bus.emit(asHubEvent({
        id: "evt_11",
        type: "interaction.cancelled",
        version: "0.1",
        occurredAt: "2026-07-24T12:06:00.000Z",
        workspaceId: "ws_1",
        sequence: 14,
        payload: { interactionId: "int_1", reason: "The task was cancelled." },
      })),
    );
    expect(screen.getByText("Withdrawn because the task was cancelled; nothing to answer.")).toBeVisible();
    expect(screen.queryByRole("button", { name: "Run it" })).not.toBeInTheDocument();
  });

  it("turns read-only as withdrawn when a late answer is refused because the task was cancelled", async () => {
    const api = fakeApi(approval);
    const refusal = new ApiError("conflict", "This request was withdrawn because its task was cancelled; your answer was not recorded and did not reach the agent.", 409, { reason: "cancelled" });
    api.respond.mockRejectedValueOnce(refusal);
    api.interaction.mockResolvedValueOnce({ ...approval, status: "cancelled", cancelReason: "The task was cancelled." });
    const { user } = card(approval, api);
    await user.click(screen.getByRole("button", { name: "Run it" }));
    const outcome = await screen.findByRole("region", { name: "Outcome" });
    expect(outcome).toHaveTextContent("Your answer was not recorded: This request was withdrawn because its task was cancelled");
    expect(outcome).toHaveTextContent("Withdrawn because the task was cancelled; nothing to answer.");
  });

  it("uses Approve / Reject when the agent sent no options", () => {
    card(makeInteraction({ type: "approval" }));
    expect(screen.getByRole("button", { name: "Approve" })).toBeVisible();
    expect(screen.getByRole("button", { name: "Reject" })).toBeVisible();
  });
});

describe("choice card", () => {
  const choice = makeInteraction({
    type: "choice",
    title: "Which region should we deploy to?",
    options: [
      { id: "eu", label: "Frankfurt", recommended: true, description: "Closest to most users" },
      { id: "us", label: "Virginia" },
      { id: "ap", label: "Singapore" },
    ],
    allowOther: true,
  });

  it("marks the recommended option and answers with one press", async () => {
    const { user, api } = card(choice);
    const frankfurt = screen.getByRole("button", { name: /Frankfurt/ });
    expect(within(frankfurt).getByText("Recommended")).toBeVisible();
    // Marked, not pre-selected: it looks like the other options until someone presses it.
    const virginia = screen.getByRole("button", { name: /Virginia/ });
    expect(frankfurt).not.toHaveClass("btn-primary");
    expect(frankfurt.className.replace(" is-recommended", "")).toBe(virginia.className);
    await user.tab();
    expect(frankfurt).toHaveFocus();
    await user.tab();
    await user.keyboard(" ");
    expect(api.respond).toHaveBeenCalledWith("int_1", { optionId: "us" }, expect.any(String));
  });

  it("takes an Other answer as text, and will not send an empty one", async () => {
    const { user, api } = card(choice);
    await user.click(screen.getByRole("button", { name: "Other…" }));
    await user.click(screen.getByRole("button", { name: "Send “Other”" }));
    expect(screen.getByRole("alert")).toHaveTextContent("Say what your answer is");
    expect(api.respond).not.toHaveBeenCalled();
    await user.type(screen.getByLabelText("Other answer"), "Stockholm{Enter}");
    expect(api.respond).toHaveBeenCalledWith("int_1", { optionId: "other", text: "Stockholm" }, expect.any(String));
    expect(await screen.findByText("Other: “Stockholm”", { selector: ".outcome-answer" })).toBeVisible();
  });

  it("with `multiple` uses checkboxes and sends the picked ids in option order", async () => {
    const multi = makeInteraction({ ...choice.request, type: "choice", multiple: true, allowOther: false });
    const { user, api } = card(multi);
    await user.click(screen.getByRole("button", { name: "Send answer" }));
    expect(screen.getByRole("alert")).toHaveTextContent("Pick at least one option.");
    await user.click(screen.getByRole("checkbox", { name: /Singapore/ }));
    await user.click(screen.getByRole("checkbox", { name: /Frankfurt/ }));
    await user.click(screen.getByRole("button", { name: "Send answer" }));
    expect(api.respond).toHaveBeenCalledWith("int_1", { optionIds: ["eu", "ap"] }, expect.any(String));
  });
});

describe("input card", () => {
  const cases: Array<[string, string, string, string]> = [
    ["email", "not-an-email", "Enter an email address, like name@example.com.", "ops@example.com"],
    ["url", "staging.example.com", "Enter a web address starting with http:// or https://.", "https://staging.example.com"],
    ["number", "2,5", "Enter a number, like 3 or 2.5.", "2.5"],
    ["integer", "2.5", "Enter a whole number, like 3.", "42"],
  ];

  it.each(cases)("checks the %s format before sending", async (format, bad, message, good) => {
    const input = makeInteraction({ type: "input", title: "Test environment?", format: format as "email" });
    const { user, api } = card(input);
    const field = screen.getByLabelText("Your answer");
    await user.type(field, `${bad}{Enter}`);
    expect(screen.getByRole("alert")).toHaveTextContent(message);
    expect(field).toHaveAttribute("aria-invalid", "true");
    expect(field).toHaveFocus();
    expect(api.respond).not.toHaveBeenCalled();
    await user.clear(field);
    await user.type(field, good);
    await user.keyboard("{Enter}");
    expect(api.respond).toHaveBeenCalledWith("int_1", { text: good }, expect.any(String));
  });

  it("checks the pattern against the whole answer", async () => {
    const input = makeInteraction({ type: "input", title: "Ticket?", pattern: "[A-Z]+-\\d+" });
    const { user, api } = card(input);
    await user.type(screen.getByLabelText("Your answer"), "ops-12x");
    await user.click(screen.getByRole("button", { name: "Send answer" }));
    expect(screen.getByRole("alert")).toHaveTextContent("does not have the expected form");
    await user.clear(screen.getByLabelText("Your answer"));
    await user.type(screen.getByLabelText("Your answer"), "OPS-12");
    await user.click(screen.getByRole("button", { name: "Send answer" }));
    expect(api.respond).toHaveBeenCalledWith("int_1", { text: "OPS-12" }, expect.any(String));
  });

  it("refuses an empty answer", async () => {
    const { user, api } = card(makeInteraction({ type: "input" }));
    await user.click(screen.getByRole("button", { name: "Send answer" }));
    expect(screen.getByRole("alert")).toHaveTextContent("An answer is required.");
    expect(api.respond).not.toHaveBeenCalled();
  });
});

describe("review card", () => {
  const review = makeInteraction({
    type: "review",
    title: "Check the migration plan",
    content: "1. Add column\n2. Backfill\n3. Drop old column",
    attachments: [{ name: "plan.md", url: "https://example.test/plan.md" }],
  });

  it("shows the content and its attachments as links", () => {
    card(review);
    expect(screen.getByRole("region", { name: "Content to review" })).toHaveTextContent("2. Backfill");
    expect(screen.getByRole("link", { name: "plan.md" })).toHaveAttribute("href", "https://example.test/plan.md");
  });

  it("colours a diff's added and removed lines and names them for screen readers", () => {
    card(makeInteraction({ ...review.request, type: "review", content: "@@ -1 +1 @@\n-old line\n+new line" }));
    const diff = screen.getByTestId("review-diff");
    expect(within(diff).getByText(/new line/)).toHaveClass("diff-add");
    expect(within(diff).getByText(/old line/)).toHaveClass("diff-remove");
    expect(within(diff).getByText(/new line/)).toHaveTextContent("added: +new line");
  });

  it("needs a comment to request changes", async () => {
    const { user, api } = card(review);
    await user.click(screen.getByRole("button", { name: "Request changes" }));
    expect(screen.getByRole("alert")).toHaveTextContent("requesting changes needs a comment");
    expect(screen.getByLabelText(/Comment/)).toHaveFocus();
    expect(api.respond).not.toHaveBeenCalled();
    await user.type(screen.getByLabelText(/Comment/), "Backfill in batches");
    await user.click(screen.getByRole("button", { name: "Request changes" }));
    expect(api.respond).toHaveBeenCalledWith(
      "int_1",
      { optionId: "request_changes", text: "Backfill in batches" },
      expect.any(String),
    );
  });

  it("approves without a comment", async () => {
    const { user, api } = card(review);
    screen.getByRole("button", { name: "Approve" }).focus();
    await user.keyboard("{Enter}");
    expect(api.respond).toHaveBeenCalledWith("int_1", { optionId: "approve" }, expect.any(String));
  });
});
