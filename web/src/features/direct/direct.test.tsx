import { render, screen, waitFor } from "@testing-library/react";
import userEvent from "@testing-library/user-event";
import { afterEach, describe, expect, it, vi } from "vitest";
import { Transport } from "../../api/client";
import { SessionProvider, useSession } from "../auth/session";
import { TokenScreen } from "./TokenScreen";

const ME = {
  user: { id: "user_1", email: "direct-mode@lineup.invalid", displayName: "ana" },
  workspaces: [{ id: "ws_1", name: "builder", role: "owner" }],
};

function json(status: number, body: unknown): Response {
  return new Response(JSON.stringify(body), { status, headers: { "Content-Type": "application/json" } });
}

const unauthenticated = (message: string) => json(401, { error: { code: "unauthenticated", message } });

/** A hub in direct mode (or a plain hub) behind a fake fetch. */
function fakeHub({ mode = "direct", token = "right-token" }: { mode?: "direct" | "hub"; token?: string } = {}) {
  let signedIn = false;
  const fetch = vi.fn(async (url: RequestInfo | URL, init?: RequestInit) => {
    const path = String(url);
    if (path === "/api/direct") return json(200, mode === "direct" ? { mode, agentName: "builder" } : { mode });
    if (path === "/api/auth/me") return signedIn ? json(200, ME) : unauthenticated("Sign in to continue.");
    if (path === "/api/direct/session") {
      const sent = JSON.parse(String(init?.body)).token;
      if (sent !== token) return unauthenticated("That token is not right. Use the token printed where the agent runs.");
      signedIn = true;
      return json(200, { ...ME, workspaceId: "ws_1", csrfToken: "csrf_1" });
    }
    return json(404, { error: { code: "not_found", message: "nothing here" } });
  });
  return { fetch, transport: new Transport(fetch, () => "") };
}

function Probe() {
  const session = useSession();
  const { state } = session;
  if (state.status === "signedOut" && session.direct) {
    return <TokenScreen agentName={session.direct.agentName} onToken={session.signInWithToken} launchError={state.launchError} />;
  }
  if (state.status === "signedIn") return <p>signed in to {state.workspaceId}</p>;
  return <p>status: {state.status}</p>;
}

function open(transport: Transport) {
  const user = userEvent.setup();
  render(
    <SessionProvider transport={transport}>
      <Probe />
    </SessionProvider>,
  );
  return user;
}

afterEach(() => {
  window.history.replaceState(null, "", "/");
});

describe("direct mode in the web app", () => {
  it("asks for the token instead of a password, says when it is wrong, and signs in with the right one", async () => {
    const hub = fakeHub();
    const user = open(hub.transport);
    const field = await screen.findByLabelText("Token");
    expect(screen.getByRole("heading", { name: "Open builder" })).toBeVisible();
    expect(screen.getByTestId("direct-limits")).toHaveTextContent("no history beyond it, one agent, one person, no notifications");

    await user.type(field, "wrong-token");
    await user.click(screen.getByRole("button", { name: "Open" }));
    expect(await screen.findByRole("alert")).toHaveTextContent("That token is not right");

    await user.clear(field);
    await user.type(field, "  right-token ");
    await user.click(screen.getByRole("button", { name: "Open" }));
    expect(await screen.findByText("signed in to ws_1")).toBeVisible();
    const session = hub.fetch.mock.calls.filter(([url]) => url === "/api/direct/session");
    expect(session.map(([, init]) => JSON.parse(String(init?.body)).token)).toEqual(["wrong-token", "right-token"]);
  });

  it("an empty token is refused without asking the agent", async () => {
    const hub = fakeHub();
    const user = open(hub.transport);
    await screen.findByLabelText("Token");
    await user.click(screen.getByRole("button", { name: "Open" }));
    expect(await screen.findByRole("alert")).toHaveTextContent("Enter the token");
    expect(hub.fetch.mock.calls.some(([url]) => url === "/api/direct/session")).toBe(false);
  });

  it("uses the token in the opened address once and removes it from the address bar", async () => {
    window.history.replaceState(null, "", "/inbox#token=right-token");
    const hub = fakeHub();
    open(hub.transport);
    expect(await screen.findByText("signed in to ws_1")).toBeVisible();
    expect(window.location.hash).toBe("");
    expect(window.location.pathname).toBe("/inbox");
  });

  it("a wrong token in the address shows the token screen with the reason", async () => {
    window.history.replaceState(null, "", "/?token=stale-token");
    const hub = fakeHub();
    open(hub.transport);
    expect(await screen.findByRole("alert")).toHaveTextContent("That token is not right");
    expect(screen.getByLabelText("Token")).toBeVisible();
    expect(window.location.search).toBe("");
  });

  it("a hub shows no token screen (people sign in there)", async () => {
    const hub = fakeHub({ mode: "hub" });
    open(hub.transport);
    expect(await screen.findByText("status: signedOut")).toBeVisible();
    expect(screen.queryByLabelText("Token")).not.toBeInTheDocument();
  });

  it("sends the CSRF token of the cookie this LineUp names, not a hub's on the same host", async () => {
    const fetch = vi.fn(async (url: RequestInfo | URL, _init?: RequestInit) =>
      String(url) === "/api/direct"
        ? json(200, { mode: "direct", agentName: "builder", csrfCookie: "lineup_direct_8765_csrf" })
        : unauthenticated("Sign in to continue."),
    );
    const transport = new Transport(fetch, () => "lineup_csrf=the-hubs; lineup_direct_8765_csrf=mine");
    open(transport);
    await waitFor(() => expect(transport.csrfCookie).toBe("lineup_direct_8765_csrf"));
    await transport.post("/api/anything", {}).catch(() => null);
    const init = fetch.mock.calls.at(-1)?.[1] as RequestInit | undefined;
    expect((init?.headers as Record<string, string>)["X-CSRF-Token"]).toBe("mine");
  });
});
