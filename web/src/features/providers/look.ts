// How providers and their changes read on screen: state, health and a change's status as icon
// + words; a change in one line; which packages upgrade a provider; the contract kit's checks
// grouped the way a person reads them (what failed first); and why a change cannot be
// approved yet — the same reasons the hub would refuse it for, shown before anyone tries.

import type {
  AvailablePackage,
  ContractCheck,
  ContractReport,
  Provider,
  ProviderChange,
  ProviderChangeAction,
  ProviderChangeStatus,
  ProviderHealth,
  ProviderState,
} from "../../api/types";
import type { StatusLook } from "../governance/status";

export const STATE_LOOK: Record<ProviderState, StatusLook> = {
  enabled: { tone: "success", icon: "checkCircle", label: "Enabled" },
  disabled: { tone: "neutral", icon: "stopCircle", label: "Disabled" },
};

export function stateLook(state: string): StatusLook {
  return STATE_LOOK[state as ProviderState] ?? { tone: "neutral", icon: "circle", label: state };
}

export const CHANGE_LOOK: Record<ProviderChangeStatus, StatusLook> = {
  pending: { tone: "waiting", icon: "hand", label: "Waiting for approval" },
  applied: { tone: "success", icon: "checkCircle", label: "Applied" },
  rejected: { tone: "danger", icon: "xCircle", label: "Rejected" },
  failed: { tone: "danger", icon: "alert", label: "Failed" },
};

export function changeLook(status: string): StatusLook {
  return CHANGE_LOOK[status as ProviderChangeStatus] ?? { tone: "neutral", icon: "circle", label: status };
}

export type HealthTone = "ok" | "failing" | "unknown";

/** The newest probe in words: a dot's colour is never the only sign. */
export function healthOf(history: ProviderHealth[]): { tone: HealthTone; label: string; latest: ProviderHealth | null } {
  const latest = history[0] ?? null;
  if (!latest) return { tone: "unknown", label: "Not checked yet", latest };
  return latest.ok ? { tone: "ok", label: "Healthy", latest } : { tone: "failing", label: "Unhealthy", latest };
}

export const ACTION_WORDS: Record<ProviderChangeAction, string> = {
  install: "Install",
  upgrade: "Upgrade",
  enable: "Enable",
  disable: "Disable",
  rollback: "Roll back",
  uninstall: "Uninstall",
};

/** "Upgrade files from 1.0.0 to 1.1.0", "Disable files", "Install files 1.0.0". */
export function changeTitle(change: Pick<ProviderChange, "action" | "providerId" | "fromVersion" | "toVersion">, name?: string): string {
  const who = name || change.providerId;
  const verb = ACTION_WORDS[change.action] ?? change.action;
  const { fromVersion: from, toVersion: to } = change;
  if (from && to && from !== to) return `${verb} ${who} from ${from} to ${to}`;
  if (change.action === "install" && to) return `${verb} ${who} ${to}`;
  return `${verb} ${who}`;
}

/** Versions as the manifest writes them (`1.2.3`, `1.2.3-rc.1`): -1, 0 or 1. A pre-release
 * comes before its release; anything unreadable compares as text. */
export function compareVersions(a: string, b: string): number {
  const parse = (v: string) => {
    const m = /^(\d+)\.(\d+)\.(\d+)(?:-([0-9A-Za-z.-]+))?(?:\+.*)?$/.exec(v.trim());
    return m ? { core: [Number(m[1]), Number(m[2]), Number(m[3])], pre: m[4] ?? null } : null;
  };
  const x = parse(a);
  const y = parse(b);
  if (!x || !y) return a < b ? -1 : a > b ? 1 : 0;
  for (let i = 0; i < 3; i++) {
    if (x.core[i]! !== y.core[i]!) return x.core[i]! < y.core[i]! ? -1 : 1;
  }
  if (x.pre === y.pre) return 0;
  if (x.pre === null) return 1;
  if (y.pre === null) return -1;
  const p = x.pre.split(".");
  const q = y.pre.split(".");
  for (let i = 0; i < Math.max(p.length, q.length); i++) {
    const s = p[i];
    const t = q[i];
    if (s === undefined) return -1;
    if (t === undefined) return 1;
    if (s === t) continue;
    const sn = /^\d+$/.test(s);
    const tn = /^\d+$/.test(t);
    if (sn && tn) return Number(s) < Number(t) ? -1 : 1;
    if (sn !== tn) return sn ? -1 : 1;
    return s < t ? -1 : 1;
  }
  return 0;
}

/** Packages of the same provider with a higher version, highest first (refused ones too:
 * the form shows why they cannot be chosen). */
export function upgradesFor(provider: Pick<Provider, "id" | "version">, packages: AvailablePackage[]): AvailablePackage[] {
  return packages
    .filter((p) => p.id === provider.id && compareVersions(p.version ?? "", provider.version) > 0)
    .sort((a, b) => compareVersions(b.version ?? "", a.version ?? ""));
}

export interface CheckGroup {
  /** A capability id, or null for the checks of the provider as a whole. */
  capability: string | null;
  failed: number;
  checks: ContractCheck[];
}

/** The checks by capability: groups with failures first, and failed checks first in each. */
export function groupChecks(report: ContractReport): CheckGroup[] {
  const groups = new Map<string | null, ContractCheck[]>();
  for (const check of report.checks) {
    const capability = check.capability ?? null;
    const list = groups.get(capability) ?? [];
    list.push(check);
    groups.set(capability, list);
  }
  const out: CheckGroup[] = [...groups].map(([capability, checks]) => ({
    capability,
    failed: checks.filter((c) => !c.passed).length,
    checks: [...checks].sort((a, b) => Number(a.passed) - Number(b.passed)),
  }));
  // stable: groups keep the kit's order among equals
  return out.sort((a, b) => Number(a.failed === 0) - Number(b.failed === 0));
}

export function failedChecks(report: ContractReport | null | undefined): number {
  return report ? report.checks.filter((c) => !c.passed).length : 0;
}

/** Why approving cannot work now, in the words the card shows; empty when it can. */
export function approvalHolds(change: Pick<ProviderChange, "blockers" | "contract">): string[] {
  const holds = [...change.blockers];
  if (change.contract && !change.contract.passed) {
    const n = failedChecks(change.contract);
    holds.push(
      n > 0
        ? `The contract kit failed ${n} check${n === 1 ? "" : "s"}: the package is not fit to run.`
        : "The contract kit did not pass: the package is not fit to run.",
    );
  }
  return holds;
}

export const AUTH_WORDS: Record<string, string> = {
  oauth: "OAuth (each person signs in)",
  "password-exchange": "Password exchange (each person, once)",
  apikey: "API key (the operator’s)",
  none: "None",
};
