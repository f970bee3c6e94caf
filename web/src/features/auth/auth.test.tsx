import { render, screen, waitFor } from "@testing-library/react";
import userEvent from "@testing-library/user-event";
import { afterEach, describe, expect, it, vi } from "vitest";
import { App } from "../../app/App";
import { Transport } from "../../api/client";
import { AccountSecurity } from "../settings/AccountSecurity";
import type { AuthOptions } from "./api";
import { SessionProvider } from "./session";

function json(status: number, body: unknown): Response {
  return new Response(body === undefined ? null : JSON.stringify(body), {
    status,
    headers: { "Content-Type": "application/json" },
  });
}

const ME = {
  user: { id: "user_1", email: "ana@example.test", displayName: "Ana" },
  workspaces: [{ id: "ws_1", name: "Team", role: "member" }],
};

/** A hub nobody is signed in to, with these sign-up options. */
function signedOutHub(options: AuthOptions) {
  const fetch = vi.fn(async (url: RequestInfo | URL, init?: RequestInit) => {
    const path = String(url);
    if (path === "/api/direct") return json(200, { mode: "hub" });
    if (path === "/api/auth/me") return json(401, { error: { code: "unauthenticated", message: "Sign in to continue." } });
    if (path === "/api/auth/options") return json(200, options);
    if (path === "/api/auth/signup" && init?.method === "POST") return json(201, { ...ME, workspaceId: "ws_1", csrfToken: "c" });
    return json(404, { error: { code: "not_found", message: "nothing here" } });
  });
  vi.stubGlobal("fetch", fetch);
  return fetch;
}

afterEach(() => {
  vi.unstubAllGlobals();
  window.history.replaceState(null, "", "/");
});

describe("the screens before sign-in", () => {
  it("opens a hub that has no accounts yet on Create account", async () => {
    signedOutHub({ signup: "open", hasAccounts: false });
    render(<App />);
    expect(await screen.findByRole("heading", { name: "Create your account" })).toBeVisible();
    expect(screen.getByText(/This hub is new/)).toBeVisible();
    expect(window.location.pathname).toBe("/signup");
  });

  it("opens a hub with accounts on Sign in", async () => {
    signedOutHub({ signup: "open", hasAccounts: true });
    render(<App />);
    expect(await screen.findByRole("heading", { name: "Sign in" })).toBeVisible();
    expect(screen.getByRole("link", { name: "Create an account" })).toBeVisible();
  });

  it("offers no sign-up on a closed hub", async () => {
    signedOutHub({ signup: "closed", hasAccounts: false });
    render(<App />);
    expect(await screen.findByRole("heading", { name: "Sign in" })).toBeVisible();
    expect(screen.queryByRole("link", { name: /Create/ })).toBeNull();
    expect(screen.getByText(/Ask whoever runs this hub/)).toBeVisible();
  });

  it("signs up on an invite-only hub with the code from the invitation link", async () => {
    window.history.replaceState(null, "", "/signup?invite=ABCD-EFGH-JKLM-NPQR");
    const fetch = signedOutHub({ signup: "invite", hasAccounts: true });
    const user = userEvent.setup();
    render(<App />);
    const code = await screen.findByLabelText("Invitation code");
    expect(code).toHaveValue("ABCD-EFGH-JKLM-NPQR");
    expect(screen.queryByLabelText(/Workspace name/)).toBeNull();
    await user.type(screen.getByLabelText("Display name"), "Bo");
    await user.type(screen.getByLabelText("Email"), "bo@example.test");
    await user.type(screen.getByLabelText("Password"), "correct horse battery");
    await user.click(screen.getByRole("button", { name: "Create account" }));
    await waitFor(() => expect(fetch.mock.calls.some(([url]) => url === "/api/auth/signup")).toBe(true));
    const [, init] = fetch.mock.calls.find(([url]) => url === "/api/auth/signup")!;
    expect(JSON.parse(String(init!.body))).toMatchObject({
      email: "bo@example.test",
      invitationCode: "ABCD-EFGH-JKLM-NPQR",
    });
  });
});

describe("password and sessions in Settings", () => {
  function settingsHub() {
    const fetch = vi.fn(async (url: RequestInfo | URL, init?: RequestInit) => {
      const path = String(url);
      if (path === "/api/direct") return json(200, { mode: "hub" });
      if (path === "/api/auth/me") return json(200, ME);
      if (path === "/api/auth/password") {
        const body = JSON.parse(String(init!.body));
        if (body.currentPassword !== "old secret words") {
          return json(400, { error: { code: "invalid_argument", message: "Your current password is not right." } });
        }
        return json(200, { signedOutSessions: 2 });
      }
      if (path === "/api/auth/signout-others") return json(200, { signedOutSessions: 0 });
      return json(404, { error: { code: "not_found", message: "nothing here" } });
    });
    return { fetch, transport: new Transport(fetch, () => "lineup_csrf=c") };
  }

  it("changes the password with the current one and says how many other sessions ended", async () => {
    const hub = settingsHub();
    const user = userEvent.setup();
    render(
      <SessionProvider transport={hub.transport}>
        <AccountSecurity />
      </SessionProvider>,
    );
    await user.type(screen.getByLabelText("Current password"), "wrong");
    await user.type(screen.getByLabelText("New password"), "purple tractor umbrella");
    await user.click(screen.getByRole("button", { name: "Change password" }));
    expect(await screen.findByRole("alert")).toHaveTextContent("Your current password is not right.");

    await user.clear(screen.getByLabelText("Current password"));
    await user.type(screen.getByLabelText("Current password"), "old secret words");
    await user.click(screen.getByRole("button", { name: "Change password" }));
    expect(await screen.findByText("Password changed. 2 other sessions were signed out.")).toBeVisible();
    expect(screen.getByLabelText("New password")).toHaveValue("");

    await user.click(screen.getByRole("button", { name: "End my other sessions" }));
    expect(await screen.findByText("No other session was signed in.")).toBeVisible();
  });
});
