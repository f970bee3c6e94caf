import { act, render, screen, waitFor, within } from "@testing-library/react";
import userEvent from "@testing-library/user-event";
import { afterEach, describe, expect, it, vi } from "vitest";
import type { AvailablePackage, ProviderChange, ProviderDetail } from "../../api/types";
import { WorkspaceContextProvider, type WorkspaceContextValue } from "../../app/workspace";
import { matchPath, useLocation } from "../../lib/router";
import type { Resource } from "../../lib/useResource";
import { ManualBus, RealtimeBusProvider } from "../../realtime/RealtimeProvider";
import { asHubEvent } from "../../test/fixtures";
import { failedContract, fakeProvidersApi, makeChange, makeHealth, makePackage, makeProvider } from "../../test/providers";
import { ProvidersView } from "./ProvidersView";

function resource<T>(data: T | undefined): Resource<T> {
  return { data, error: null, loading: false, reload: () => {}, setData: () => {} };
}

/** The console as the shell routes it: /providers and /providers/<id>. */
function Routed() {
  const loc = useLocation();
  const m = matchPath("/providers/:id", loc.path);
  return <ProvidersView providerId={m?.id} />;
}

function setup(
  at: string,
  {
    role = "owner",
    providers,
    packages,
    changes,
  }: { role?: string; providers?: ProviderDetail[]; packages?: AvailablePackage[]; changes?: ProviderChange[] } = {},
) {
  history.replaceState(null, "", at);
  const fake = fakeProvidersApi({ providers, packages, changes });
  const value: WorkspaceContextValue = {
    api: fake.asWorkspaceApi,
    workspace: { id: "ws_1", name: "Studio", role } as WorkspaceContextValue["workspace"],
    user: { id: "u1", email: "ana@example.test", displayName: "Ana" } as WorkspaceContextValue["user"],
    agents: resource<WorkspaceContextValue["agents"]["data"] & object>([]),
    inbox: resource<NonNullable<WorkspaceContextValue["inbox"]["data"]>>(undefined),
    agentName: () => "planner",
    actorName: () => "Ana",
  };
  const bus = new ManualBus();
  const user = userEvent.setup();
  render(
    <RealtimeBusProvider value={bus}>
      <WorkspaceContextProvider value={value}>
        <Routed />
      </WorkspaceContextProvider>
    </RealtimeBusProvider>,
  );
  return { ...fake, bus, user };
}

/** A narrow screen: every `(min-width: …)` query is false. */
function narrow() {
  vi.stubGlobal(
    "matchMedia",
    (query: string) =>
      ({
        matches: !query.includes("min-width"),
        media: query,
        addEventListener: () => {},
        removeEventListener: () => {},
      }) as unknown as MediaQueryList,
  );
}

afterEach(() => {
  vi.unstubAllGlobals();
  history.replaceState(null, "", "/");
});

const dev = makeProvider({
  id: "ledger",
  name: "Ledger",
  version: "0.3.0-dev",
  development: true,
  signer: "dev-key-1",
  state: "disabled",
  health: [],
  pendingChange: makeChange({ id: "chg_led", providerId: "ledger", action: "enable", fromVersion: null, toVersion: null }),
});

describe("the provider console", () => {
  it("lists each provider with its version, state, health, a waiting change and a development key", async () => {
    setup("/providers", { providers: [makeProvider(), dev] });
    const list = await screen.findByRole("list", { name: "Installed providers" });
    const [files, ledger] = within(list).getAllByRole("listitem");
    expect(files).toHaveTextContent("Project files");
    expect(files).toHaveTextContent("1.0.0");
    expect(files).toHaveTextContent("Enabled");
    expect(within(files!).getByTestId("provider-health")).toHaveTextContent("Unhealthy"); // the newest probe failed
    expect(files).not.toHaveTextContent("Change waiting");
    expect(files).not.toHaveTextContent("Development");
    expect(ledger).toHaveTextContent("0.3.0-dev");
    expect(ledger).toHaveTextContent("Disabled");
    expect(within(ledger!).getByTestId("provider-health")).toHaveTextContent("Not checked yet");
    expect(ledger).toHaveTextContent("Change waiting");
    expect(ledger).toHaveTextContent("Development");
    expect(within(files!).getByRole("link")).toHaveAttribute("href", "/providers/files");
    // nothing picked yet: the right pane says what it will show
    expect(screen.getByText("No provider selected")).toBeVisible();
  });

  it("shows the picked provider beside the list: its overview, then each tab", async () => {
    const provider = makeProvider({ previous: { version: "0.9.0", digest: "sha256:abcdef0123456789abcdef" } });
    const { user } = setup("/providers", { providers: [provider] });
    await user.click(await screen.findByRole("link", { name: /Project files/ }));
    expect(await screen.findByRole("heading", { name: "Project files", level: 2 })).toBeVisible();
    expect(screen.getByRole("link", { name: /Project files/ })).toHaveAttribute("aria-current", "page");
    const overview = screen.getByRole("tabpanel");
    expect(overview).toHaveTextContent("LineUp"); // vendor
    expect(within(overview).getByTestId("provider-digest")).toHaveTextContent("sha256:4e07408562be…");
    expect(overview).toHaveTextContent("lineup-release-2026");
    expect(overview).toHaveTextContent("Installed package");
    expect(within(overview).getByTestId("provider-previous")).toHaveTextContent("0.9.0");

    await user.click(screen.getByRole("tab", { name: "Capabilities" }));
    const caps = screen.getByRole("list", { name: "Capabilities" });
    const [list, write] = within(caps).getAllByRole("listitem");
    expect(list).toHaveTextContent("files.file.list");
    expect(list).toHaveTextContent("Read");
    expect(list).toHaveTextContent("Sync");
    expect(write).toHaveTextContent("Write");
    expect(write).toHaveTextContent("Async");
    expect(write).toHaveTextContent("Writes files.file.write");

    await user.click(screen.getByRole("tab", { name: "Health" }));
    const history = within(screen.getByRole("list", { name: "Health history" })).getAllByRole("listitem");
    expect(history[0]).toHaveTextContent("Unhealthy");
    expect(history[0]).toHaveTextContent("the directory is not readable");
    expect(history[1]).toHaveTextContent("Healthy");

    await user.click(screen.getByRole("tab", { name: "Logs" }));
    expect(screen.getByRole("list", { name: "Log lines" })).toHaveTextContent("slow listing: 2.1 s");

    await user.click(screen.getByRole("tab", { name: "Bindings" }));
    expect(screen.getByTestId("bindings-bound")).toHaveTextContent("3");
    expect(screen.getByTestId("bindings-expired")).toHaveTextContent("1");

    await user.click(screen.getByRole("tab", { name: "Changes" }));
    const changes = screen.getByRole("list", { name: "Change history" });
    expect(changes).toHaveTextContent("Install Project files 1.0.0");
    expect(changes).toHaveTextContent("Applied");
  });

  it("shows a failed contract with the failed checks first, grouped by capability", async () => {
    const { user } = setup("/providers/files", { providers: [makeProvider({ contract: failedContract })] });
    await user.click(await screen.findByRole("tab", { name: "Contract" }));
    const panel = screen.getByRole("tabpanel");
    expect(panel).toHaveTextContent("This version does not meet the contract");
    const groups = within(panel).getAllByRole("region");
    expect(groups.map((g) => g.getAttribute("aria-label"))).toEqual([
      "files.file.write",
      "files.file.list",
      "The provider as a whole",
    ]);
    expect(within(groups[0]!).getAllByRole("listitem")[0]).toHaveTextContent("Failed: Idempotent replay");
  });

  it("checks health now and shows the new result first", async () => {
    const { api, user } = setup("/providers/files?tab=health");
    await user.click(await screen.findByRole("button", { name: "Check now" }));
    expect(api.checkProviderHealth).toHaveBeenCalledWith("files");
    await waitFor(() =>
      expect(within(screen.getByRole("list", { name: "Health history" })).getAllByRole("listitem")[0]).toHaveTextContent(
        "answered in 3 ms",
      ),
    );
  });

  it("asks to disable a provider, then shows the change waiting for approval and no second action", async () => {
    const { api, user } = setup("/providers/files");
    await user.click(await screen.findByRole("button", { name: "Disable" }));
    expect(api.requestProviderChange).toHaveBeenCalledWith({ action: "disable", providerId: "files" });
    const card = await screen.findByRole("article", { name: "Disable Project files" });
    expect(card).toHaveAttribute("data-status", "pending");
    expect(within(card).getByRole("button", { name: "Approve" })).toBeEnabled();
    expect(screen.getByRole("button", { name: "Uninstall" })).toBeDisabled();
    expect(screen.getByText(/decide it before asking for another/)).toBeVisible();

    await user.click(within(card).getByRole("button", { name: "Approve" }));
    expect(api.decideProviderChange).toHaveBeenCalledWith("chg_new1", { approve: true }, expect.any(String));
    expect(await within(card).findByRole("region", { name: "Outcome" })).toHaveTextContent("the change is applied");
  });

  it("asks to enable, roll back and uninstall with the provider's id", async () => {
    const disabled = makeProvider({ state: "disabled", previous: { version: "0.9.0", digest: "sha256:00ff" } });
    const { api, user, state } = setup("/providers/files", { providers: [disabled] });
    const requests = api.requestProviderChange;
    const settle = async () => {
      // the fake hub keeps each request pending: decide it away before the next one
      const waiting = await screen.findByRole("article");
      await user.click(within(waiting).getByRole("button", { name: "Reject…" }));
      await user.type(screen.getByLabelText("Why are you rejecting it?"), "not now");
      await user.click(within(waiting).getByRole("button", { name: "Reject" }));
      await within(waiting).findByRole("region", { name: "Outcome" });
      await waitFor(() => expect(screen.getByRole("button", { name: "Uninstall" })).toBeEnabled());
    };
    await user.click(await screen.findByRole("button", { name: "Enable" }));
    expect(requests).toHaveBeenLastCalledWith({ action: "enable", providerId: "files" });
    await settle();
    await user.click(screen.getByRole("button", { name: "Roll back to 0.9.0" }));
    expect(requests).toHaveBeenLastCalledWith({ action: "rollback", providerId: "files" });
    expect(await screen.findByRole("article", { name: "Roll back Project files from 1.0.0 to 0.9.0" })).toBeVisible();
    await settle();
    await user.click(screen.getByRole("button", { name: "Uninstall" }));
    expect(requests).toHaveBeenLastCalledWith({ action: "uninstall", providerId: "files" });
    expect(state.changes.map((c) => c.action)).toEqual(["enable", "rollback", "uninstall"]);
  });

  it("upgrades only to a newer package of the same provider; a refused one cannot be chosen", async () => {
    const packages = [
      makePackage({ ref: "dir:files-1.1.0", version: "1.1.0" }),
      makePackage({
        ref: "dir:files-2.0.0",
        version: "2.0.0",
        refused: { rule: "signature.signer", message: "signed by key k9, which this hub does not trust" },
      }),
      makePackage({ ref: "dir:files-0.9.0", version: "0.9.0" }),
      makePackage({ ref: "dir:ledger-5.0.0", id: "ledger", name: "Ledger", version: "5.0.0", installedVersion: null }),
    ];
    const { api, user } = setup("/providers/files", { packages });
    await user.click(await screen.findByRole("button", { name: "Upgrade…" }));
    const form = await screen.findByRole("form", { name: "Upgrade" });
    const radios = await within(form).findAllByRole("radio");
    expect(radios.map((r) => (r as HTMLInputElement).value)).toEqual(["dir:files-2.0.0", "dir:files-1.1.0"]);
    expect(within(form).getByRole("radio", { name: /2\.0\.0/ })).toBeDisabled();
    expect(form).toHaveTextContent("signature.signer");
    expect(form).toHaveTextContent("signed by key k9, which this hub does not trust");
    expect(within(form).getByRole("radio", { name: /1\.1\.0/ })).toBeChecked();
    await user.click(within(form).getByRole("button", { name: "Request upgrade" }));
    expect(api.requestProviderChange).toHaveBeenCalledWith({ action: "upgrade", providerId: "files", package: "dir:files-1.1.0" });
    expect(await screen.findByRole("article", { name: "Upgrade Project files from 1.0.0 to 1.1.0" })).toBeVisible();
    expect(screen.queryByRole("form", { name: "Upgrade" })).not.toBeInTheDocument();
  });

  it("shows a request the hub refused with its reason", async () => {
    const { api, user } = setup("/providers/files");
    const { ApiError } = await import("../../api/client");
    api.requestProviderChange.mockRejectedValueOnce(new ApiError("forbidden", "Only workspace owners change providers.", 403, { reason: "role" }));
    await user.click(await screen.findByRole("button", { name: "Disable" }));
    expect(await screen.findByRole("alert")).toHaveTextContent("Only workspace owners change providers.");
  });

  it("reads the provider again when a provider fact arrives", async () => {
    const { api, bus, state } = setup("/providers/files");
    await screen.findByRole("heading", { name: "Project files" });
    state.providers[0]!.health = [makeHealth(true, "back to normal", "2026-07-24T12:40:00.000Z")];
    const before = api.provider.mock.calls.length;
    act(() =>
      bus.emit(
        asHubEvent({
          id: "evt_1",
          type: "provider.health_checked",
          version: "0.1",
          occurredAt: "2026-07-24T12:40:00.000Z",
          workspaceId: "ws_1",
          payload: { providerId: "files", ok: true },
        }),
      ),
    );
    await waitFor(() => expect(api.provider.mock.calls.length).toBeGreaterThan(before));
    await waitFor(() => expect(screen.getAllByTestId("provider-health")[0]).toHaveTextContent("Healthy"));
  });

  it("shows whoever is not a workspace owner everything, and no button that changes anything", async () => {
    const { user } = setup("/providers/files", { role: "editor", providers: [makeProvider({ pendingChange: makeChange() })] });
    expect(await screen.findByRole("heading", { name: "Project files" })).toBeVisible();
    expect(screen.getByText(/workspace owners install and change providers/)).toBeVisible();
    for (const name of ["Disable", "Enable", "Upgrade…", "Uninstall", "Approve", "Reject…"]) {
      expect(screen.queryByRole("button", { name })).not.toBeInTheDocument();
    }
    expect(screen.queryByRole("link", { name: /Install/ })).not.toBeInTheDocument();
    // the waiting change is there to read
    expect(screen.getByRole("article", { name: "Upgrade Project files from 1.0.0 to 1.1.0" })).toHaveTextContent(
      "workspace owners decide it",
    );
    await user.click(screen.getByRole("tab", { name: "Health" }));
    expect(screen.queryByRole("button", { name: "Check now" })).not.toBeInTheDocument();
    expect(screen.getByRole("list", { name: "Health history" })).toBeVisible();
  });

  it("on a narrow screen shows the list, then the provider alone with a way back", async () => {
    narrow();
    const { user } = setup("/providers");
    await user.click(await screen.findByRole("link", { name: /Project files/ }));
    expect(await screen.findByRole("heading", { name: "Project files", level: 1 })).toBeVisible();
    expect(screen.queryByRole("list", { name: "Installed providers" })).not.toBeInTheDocument();
    await user.click(screen.getByRole("link", { name: "Providers" }));
    expect(await screen.findByRole("list", { name: "Installed providers" })).toBeVisible();
    expect(screen.queryByRole("heading", { name: "Project files" })).not.toBeInTheDocument();
  });
});

describe("installing a provider", () => {
  const refused = makePackage({
    ref: "dir:crm-1.0.0",
    id: "crm",
    name: "CRM",
    version: "1.0.0",
    installedVersion: null,
    signer: null,
    refused: { rule: "signature.missing", message: "the package is not signed and no development key is allowed" },
  });
  const fresh = makePackage({ ref: "dir:tickets-1.0.0", id: "tickets", name: "Tickets", version: "1.0.0", installedVersion: null });

  it("lists the available packages; a refused one shows its rule and reason and cannot be installed", async () => {
    setup("/providers?install=1", { packages: [refused, fresh] });
    const list = await screen.findByRole("list", { name: "Available packages" });
    const crm = within(list).getByRole("listitem", { name: "CRM 1.0.0" });
    expect(within(crm).getByTestId("package-refused")).toHaveTextContent(
      "Cannot be installed — signature.missing: the package is not signed and no development key is allowed",
    );
    expect(within(crm).queryByRole("button")).not.toBeInTheDocument();
    const tickets = within(list).getByRole("listitem", { name: "Tickets 1.0.0" });
    expect(within(tickets).getByRole("button", { name: "Install" })).toBeEnabled();
  });

  it("asks to install a package and opens its approval card; approving leads to the provider", async () => {
    const { api, user, state } = setup("/providers?install=1", { packages: [fresh] });
    await user.click(await screen.findByRole("button", { name: "Install" }));
    expect(api.requestProviderChange).toHaveBeenCalledWith({ action: "install", package: "dir:tickets-1.0.0" });
    const card = await screen.findByRole("article", { name: "Install tickets 1.0.0" });
    expect(location.search).toBe("?change=chg_new1");
    expect(within(card).getByTestId("contract-summary")).toHaveTextContent("Passed all 3 checks");
    // the waiting install is in the list too
    expect(await screen.findByRole("list", { name: "Waiting installs" })).toHaveTextContent("Install tickets 1.0.0");
    state.providers.push(makeProvider({ id: "tickets", name: "Tickets" }));
    await user.click(within(card).getByRole("button", { name: "Approve" }));
    await within(card).findByRole("region", { name: "Outcome" });
    await user.click(await screen.findByRole("link", { name: /Open tickets/ }));
    expect(await screen.findByRole("heading", { name: "Tickets", level: 2 })).toBeVisible();
  });

  it("uploads a package file as it is and lists what the hub made of it", async () => {
    const { api, user } = setup("/providers?install=1", { packages: [] });
    const file = new File([new Uint8Array([0x1f, 0x8b, 0x08, 0x00])], "files-2.0.0.lineup-provider");
    await user.upload(await screen.findByLabelText(/Upload a package/), file);
    expect(api.uploadPackage).toHaveBeenCalledWith(file);
    expect(await screen.findByText("Project files 2.0.0 is checked and listed below.")).toBeVisible();
    const row = within(screen.getByRole("list", { name: "Available packages" })).getByRole("listitem", {
      name: "Project files 2.0.0",
    });
    expect(within(row).getByRole("button", { name: "Upgrade to 2.0.0" })).toBeEnabled();
  });

  it("offers no install or upload to whoever is not a workspace owner", async () => {
    setup("/providers?install=1", { role: "viewer", packages: [fresh] });
    expect(await screen.findByRole("list", { name: "Available packages" })).toBeVisible();
    expect(screen.queryByRole("button", { name: "Install" })).not.toBeInTheDocument();
    expect(screen.queryByLabelText(/Upload a package/)).not.toBeInTheDocument();
  });
});
