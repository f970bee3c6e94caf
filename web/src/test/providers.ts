import { vi } from "vitest";
import { ApiError } from "../api/client";
import type { WorkspaceApi } from "../api/hub";
import type {
  AvailablePackage,
  CapabilitySpec,
  ContractReport,
  ProviderChange,
  ProviderChangeDecision,
  ProviderChangeRequest,
  ProviderDetail,
  ProviderHealth,
} from "../api/types";

export function capability(id: string, effect: "read" | "write", overrides: Partial<CapabilitySpec> = {}): CapabilitySpec {
  return {
    id,
    provider: id.split(".")[0]!,
    description: `${effect === "read" ? "Reads" : "Writes"} ${id}`,
    effect,
    mode: "sync",
    inputSchema: { type: "object" },
    idempotentReplay: effect === "write",
    preview: false,
    timeoutS: 30,
    ...overrides,
  } as CapabilitySpec;
}

export const passedContract: ContractReport = {
  passed: true,
  checks: [
    { capability: "files.file.list", rule: "schema.input", name: "Input schema", passed: true, detail: "" },
    { capability: "files.file.write", rule: "idempotent.replay", name: "Idempotent replay", passed: true, detail: "" },
    { capability: null, rule: "health", name: "Health", passed: true, detail: "answered in 4 ms" },
  ],
};

export const failedContract: ContractReport = {
  passed: false,
  checks: [
    { capability: "files.file.list", rule: "schema.input", name: "Input schema", passed: true, detail: "" },
    { capability: "files.file.write", rule: "schema.output", name: "Output schema", passed: true, detail: "" },
    {
      capability: "files.file.write",
      rule: "idempotent.replay",
      name: "Idempotent replay",
      passed: false,
      detail: "the second call with the same key wrote the file again",
    },
    { capability: null, rule: "health", name: "Health", passed: true, detail: "" },
  ],
};

export function makeHealth(ok: boolean, detail: string, checkedAt: string): ProviderHealth {
  return { ok, detail, checkedAt };
}

export function makeChange(overrides: Partial<ProviderChange> = {}): ProviderChange {
  return {
    id: "chg_1",
    providerId: "files",
    action: "upgrade",
    status: "pending",
    fromVersion: "1.0.0",
    decisionReason: null,
    toVersion: "1.1.0",
    surface: { added: ["files.file.delete"], removed: ["files.file.rename"], changed: ["files.file.write"] },
    contract: passedContract,
    requestedBy: { userId: "u1", name: "Ana" },
    requestedAt: new Date(Date.now() - 60_000).toISOString(),
    decidedBy: null,
    decidedAt: null,
    reason: null,
    blockers: [],
    ...overrides,
  };
}

export function makeProvider(overrides: Partial<ProviderDetail> = {}): ProviderDetail {
  return {
    id: "files",
    name: "Project files",
    vendor: "LineUp",
    description: "List, read and write the files of a project directory.",
    version: "1.0.0",
    digest: "sha256:4e07408562bedb8b60ce05c1decfe3ad16b72230967de01f640b7e4729b49fce",
    state: "enabled",
    source: "package",
    signer: "lineup-release-2026",
    development: false,
    auth: { kind: "none" },
    capabilities: [capability("files.file.list", "read"), capability("files.file.write", "write", { mode: "async" })],
    previous: null,
    health: [
      makeHealth(false, "the directory is not readable", "2026-07-24T12:10:00.000Z"),
      makeHealth(true, "ok", "2026-07-24T12:00:00.000Z"),
    ],
    contract: passedContract,
    pendingChange: null,
    installedAt: "2026-07-24T10:00:00.000Z",
    logs: [
      { at: "2026-07-24T12:09:00.000Z", level: "WARNING", message: "slow listing: 2.1 s" },
      { at: "2026-07-24T12:08:00.000Z", level: "INFO", message: "listed 12 files" },
    ],
    bindings: { bound: 3, expired: 1 },
    changes: [
      makeChange({
        id: "chg_0",
        action: "install",
        status: "applied",
        fromVersion: null,
        toVersion: "1.0.0",
        decidedBy: { userId: "u1", name: "Ana" },
        decidedAt: "2026-07-24T10:00:00.000Z",
      }),
    ],
    ...overrides,
  };
}

export function makePackage(overrides: Partial<AvailablePackage> = {}): AvailablePackage {
  return {
    ref: "dir:files-1.1.0",
    file: "files-1.1.0.lineup-provider",
    id: "files",
    version: "1.1.0",
    vendor: "LineUp",
    name: "Project files",
    description: "List, read and write the files of a project directory.",
    capabilities: ["files.file.list", "files.file.write"],
    auth: { kind: "none" },
    signer: "lineup-release-2026",
    development: false,
    refused: null,
    installedVersion: "1.0.0",
    ...overrides,
  };
}

/** A hub holding these providers, packages and changes; each call is a spy. Requests make a
 * pending change; decisions settle it (approve → applied). */
export function fakeProvidersApi({
  providers = [makeProvider()],
  packages = [makePackage()],
  changes = [],
}: { providers?: ProviderDetail[]; packages?: AvailablePackage[]; changes?: ProviderChange[] } = {}) {
  const state = { providers: [...providers], packages: [...packages], changes: [...changes] };
  let next = 1;
  const api = {
    providers: vi.fn(async () => ({ providers: state.providers.map(({ logs: _l, bindings: _b, changes: _c, ...p }) => p) })),
    provider: vi.fn(async (id: string) => {
      const found = state.providers.find((p) => p.id === id);
      if (!found) throw new ApiError("not_found", `No provider ${id}.`, 404);
      return found;
    }),
    availablePackages: vi.fn(async () => ({ packages: state.packages })),
    uploadPackage: vi.fn(async (_archive: Blob, _key?: string) =>
      makePackage({ ref: "upload:files-2.0.0", version: "2.0.0" }),
    ),
    requestProviderChange: vi.fn(async (request: ProviderChangeRequest, _key?: string) => {
      const pkg = state.packages.find((p) => p.ref === request.package);
      const provider = state.providers.find((p) => p.id === (request.providerId ?? pkg?.id));
      const change = makeChange({
        id: `chg_new${next++}`,
        providerId: request.providerId ?? pkg?.id ?? "files",
        action: request.action,
        fromVersion: provider?.version ?? null,
        toVersion: pkg?.version ?? (request.action === "rollback" ? (provider?.previous?.version ?? null) : (provider?.version ?? null)),
        surface: { added: [], removed: [], changed: [] },
        contract: request.action === "install" || request.action === "upgrade" ? passedContract : null,
      });
      state.changes.push(change);
      if (provider) provider.pendingChange = change;
      return change;
    }),
    providerChanges: vi.fn(async (status: "pending" | "all" = "pending") => ({
      changes: state.changes.filter((c) => status === "all" || c.status === "pending"),
    })),
    decideProviderChange: vi.fn(async (id: string, decision: ProviderChangeDecision, _key?: string) => {
      const change = state.changes.find((c) => c.id === id)!;
      const decided: ProviderChange = {
        ...change,
        status: decision.approve ? "applied" : "rejected",
        decidedBy: { userId: "u1", name: "Ana" },
        decidedAt: "2026-07-24T12:20:00.000Z",
        reason: decision.reason ?? null,
      };
      state.changes = state.changes.map((c) => (c.id === id ? decided : c));
      for (const p of state.providers) if (p.pendingChange?.id === id) p.pendingChange = null;
      return decided;
    }),
    checkProviderHealth: vi.fn(async (id: string) => {
      const health = makeHealth(true, "answered in 3 ms", "2026-07-24T12:30:00.000Z");
      const provider = state.providers.find((p) => p.id === id)!;
      provider.health = [health, ...provider.health];
      return health;
    }),
  };
  return { api, state, asWorkspaceApi: api as unknown as WorkspaceApi };
}
