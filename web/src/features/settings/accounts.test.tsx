import { render, screen, within } from "@testing-library/react";
import userEvent from "@testing-library/user-event";
import { afterEach, describe, expect, it, vi } from "vitest";
import { Transport } from "../../api/client";
import { SessionProvider } from "../auth/session";
import { Accounts } from "./Accounts";
import type { AccountBinding } from "./api";

function json(status: number, body: unknown): Response {
  return new Response(body === undefined ? null : JSON.stringify(body), {
    status,
    headers: { "Content-Type": "application/json" },
  });
}

const BASE = "/api/workspaces/ws_1/bindings";

function account(over: Partial<AccountBinding>): AccountBinding {
  return {
    providerId: "crm",
    providerName: "Acme CRM",
    instance: "acme",
    authKind: "oauth",
    status: "not_bound",
    account: null,
    expiresAt: null,
    boundAt: null,
    expiredReason: null,
    ...over,
  };
}

type Handler = (path: string, init?: RequestInit) => Response | undefined;

function hub(handle: Handler) {
  const fetch = vi.fn(async (url: RequestInfo | URL, init?: RequestInit) => {
    const path = String(url);
    if (path === "/api/direct") return json(200, { mode: "hub" });
    if (path === "/api/auth/me") return json(401, { error: { code: "unauthenticated", message: "Sign in." } });
    return handle(path, init) ?? json(404, { error: { code: "not_found", message: "nothing here" } });
  });
  return { fetch, transport: new Transport(fetch, () => "lineup_csrf=c") };
}

function calls(fetch: ReturnType<typeof vi.fn>, method: string, path: string) {
  return fetch.mock.calls.filter(([url, init]) => String(url) === path && init?.method === method);
}

function row(name: RegExp): HTMLElement {
  const list = screen.getByRole("list", { name: "Your accounts on outside systems" });
  const item = within(list)
    .getAllByRole("listitem")
    .find((li) => name.test(li.textContent ?? ""));
  if (!item) throw new Error(`no row ${name}`);
  return item;
}

afterEach(() => {
  history.replaceState(null, "", "/");
});

describe("accounts on outside systems", () => {
  it("shows bound, expired and not bound per system, and the operator's key", async () => {
    const { transport } = hub((path) =>
      path === BASE
        ? json(200, {
            accounts: [
              account({ status: "bound", account: "ana@acme", boundAt: "2026-12-01T10:00:00.000Z" }),
              account({ providerId: "erp", providerName: "Main ERP", instance: "main", authKind: "password-exchange", status: "expired" }),
              account({ providerId: "hr", providerName: "HR", instance: "hq" }),
              account({ providerId: "ledger", providerName: "ledger", instance: "books", authKind: "apikey", status: "bound" }),
            ],
          })
        : undefined,
    );
    render(
      <SessionProvider transport={transport}>
        <Accounts workspaceId="ws_1" openUrl={vi.fn()} />
      </SessionProvider>,
    );
    expect(await screen.findByText("Bound as ana@acme")).toBeVisible();
    expect(within(row(/Main ERP/)).getByText("Expired: bind again")).toBeVisible();
    expect(within(row(/Main ERP/)).getByRole("button", { name: "Bind Main ERP (main)" })).toHaveTextContent("Bind again");
    expect(within(row(/HR/)).getByText("Not bound")).toBeVisible();
    expect(within(row(/HR/)).queryByRole("button", { name: /Unbind/ })).toBeNull();
    expect(within(row(/ledger/)).getByText("Bound (operator key)")).toBeVisible();
    expect(within(row(/ledger/)).queryByRole("button")).toBeNull();
    expect(within(row(/Acme CRM/)).queryByRole("button", { name: /^Bind/ })).toBeNull();
  });

  it("sends the browser to the system's sign-in page to bind by OAuth", async () => {
    const { fetch, transport } = hub((path, init) => {
      if (path === `${BASE}/crm/acme/oauth` && init?.method === "POST") {
        return json(200, { authorizationUrl: "https://crm.example/authorize?state=s" });
      }
      if (path === BASE) return json(200, { accounts: [account({})] });
      return undefined;
    });
    const openUrl = vi.fn();
    const user = userEvent.setup();
    render(
      <SessionProvider transport={transport}>
        <Accounts workspaceId="ws_1" openUrl={openUrl} />
      </SessionProvider>,
    );
    await user.click(await screen.findByRole("button", { name: "Bind Acme CRM (acme)" }));
    expect(openUrl).toHaveBeenCalledWith("https://crm.example/authorize?state=s");
    const started = calls(fetch, "POST", `${BASE}/crm/acme/oauth`);
    expect(started).toHaveLength(1);
    expect(JSON.parse(String(started[0]![1]!.body))).toEqual({ returnTo: "/settings" });
  });

  it("says how the sign-in went when the browser comes back", async () => {
    history.replaceState(null, "", "/settings?bindError=denied&provider=crm");
    const { transport } = hub((path) => (path === BASE ? json(200, { accounts: [account({})] }) : undefined));
    render(
      <SessionProvider transport={transport}>
        <Accounts workspaceId="ws_1" openUrl={vi.fn()} />
      </SessionProvider>,
    );
    expect(await screen.findByText("The sign-in was cancelled at the system; nothing was bound.")).toBeVisible();
    expect(location.search).toBe("");
  });

  it("binds with a username and password given once, and unbinds", async () => {
    let current = account({ providerId: "erp", providerName: "Main ERP", instance: "main", authKind: "password-exchange" });
    const { fetch, transport } = hub((path, init) => {
      if (path === `${BASE}/erp/main/password` && init?.method === "POST") {
        const sent = JSON.parse(String(init.body));
        if (sent.password !== "right") {
          return json(400, {
            error: { code: "invalid_argument", message: "Main ERP did not accept that username and password.", details: {} },
          });
        }
        current = { ...current, status: "bound", account: "ana@erp" };
        return new Response(null, { status: 204 });
      }
      if (path === `${BASE}/erp/main` && init?.method === "DELETE") {
        current = { ...current, status: "not_bound", account: null };
        return new Response(null, { status: 204 });
      }
      if (path === BASE) return json(200, { accounts: [current] });
      return undefined;
    });
    const user = userEvent.setup();
    render(
      <SessionProvider transport={transport}>
        <Accounts workspaceId="ws_1" openUrl={vi.fn()} />
      </SessionProvider>,
    );
    await user.click(await screen.findByRole("button", { name: "Bind Main ERP (main)" }));
    await user.type(screen.getByLabelText("Username on Main ERP"), "ana");
    await user.type(screen.getByLabelText("Password on Main ERP"), "wrong");
    await user.click(screen.getByRole("button", { name: "Bind account" }));
    expect(await screen.findByText("Main ERP did not accept that username and password.")).toBeVisible();
    expect(screen.getByLabelText("Password on Main ERP")).toHaveValue("");

    await user.type(screen.getByLabelText("Password on Main ERP"), "right");
    await user.click(screen.getByRole("button", { name: "Bind account" }));
    expect(await screen.findByText("Bound as ana@erp")).toBeVisible();
    expect(screen.queryByLabelText("Password on Main ERP")).toBeNull();
    const [, sent] = calls(fetch, "POST", `${BASE}/erp/main/password`);
    expect(JSON.parse(String(sent![1]!.body))).toEqual({ username: "ana", password: "right" });

    await user.click(screen.getByRole("button", { name: "Unbind Main ERP (main)" }));
    expect(await screen.findByText("Not bound")).toBeVisible();
    expect(calls(fetch, "DELETE", `${BASE}/erp/main`)).toHaveLength(1);
  });
});
