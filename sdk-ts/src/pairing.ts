import { type AgentConfig, defaultCredentialsPath, saveConfig } from "./config.js";
import { LineupError, PairingFailed } from "./errors.js";
import { checkPlainText } from "./security.js";
import { InsecureConnection } from "./errors.js";
import { hubRequest, normalizeFingerprint, trustFor } from "./tls.js";
import { SDK_VERSION } from "./version.js";

export interface PairOptions {
  /** How the agent appears to people (they may confirm it under another name). */
  name: string;
  runtime?: string;
  agentVersion?: string;
  capabilities?: string[];
  /** Where to save the credentials (default `$LINEUP_AGENT_HOME/credentials.json`). */
  credentialsPath?: string;
  allowInsecure?: boolean;
  /** Pin a self-signed hub's certificate by its SHA-256 fingerprint (`AB:CD:…`, as LineUp
   * shows it; default `LINEUP_TLS_FINGERPRINT`). Saved with the credentials. */
  tlsFingerprint?: string;
}

const STATUS_CODES: Record<number, string> = {
  400: "invalid_argument",
  401: "unauthenticated",
  403: "forbidden",
  404: "not_found",
  409: "conflict",
  413: "invalid_argument",
  429: "rate_limited",
  503: "unavailable",
};

/**
 * Exchange a one-time pairing code (10 minutes, single use) for this agent's credential and
 * save it with mode 0600. A wrong, used or expired code is `PairingFailed` `not_found` with
 * the hub's `diagnostic` and `nextStep`; too many attempts `rate_limited` (`retryAfterMs`);
 * an unreachable hub `unavailable`. A person then confirms the agent in the app; it may
 * connect meanwhile and gets work once confirmed.
 */
export async function pair(hubUrl: string, code: string, options: PairOptions): Promise<AgentConfig> {
  const base = hubUrl.replace(/\/+$/, "");
  checkPlainText(base, options.allowInsecure);
  const body: Record<string, unknown> = {
    code: code.trim(),
    name: options.name,
    runtime: options.runtime ?? "node",
    agentVersion: options.agentVersion ?? SDK_VERSION,
  };
  if (options.capabilities) body["capabilities"] = options.capabilities;
  const pin = options.tlsFingerprint ?? process.env["LINEUP_TLS_FINGERPRINT"];
  let response: Response;
  try {
    const trust = await trustFor(base, pin); // a wrong pin stops here, before the code is sent
    response = await hubRequest(
      `${base}/api/pairing/redeem`,
      { method: "POST", headers: { "Content-Type": "application/json" }, body: JSON.stringify(body) },
      trust,
    );
  } catch (error) {
    if (error instanceof InsecureConnection) throw error;
    throw new PairingFailed("unavailable", `Could not reach the hub at ${base}: ${String(error)}`, {
      diagnostic: "LNP-PAIR-UNREACHABLE",
      nextStep: "Check the hub address and that this machine can reach it, then retry.",
    });
  }
  if (response.status !== 200) throw await failure(response, PairingFailed);
  const data = (await response.json()) as Record<string, unknown>;
  const field = (key: string): string => {
    const value = data[key];
    if (typeof value !== "string" || !value) {
      throw new PairingFailed("unknown_result", `The hub accepted the code but its answer lacks ${key}; the code is now used.`, {
        diagnostic: "LNP-PAIR-BAD-ANSWER",
        nextStep: "Create a new pairing code and try again; report this if it repeats.",
      });
    }
    return value;
  };
  const config: AgentConfig = {
    hubUrl: base,
    websocketUrl: new URL(field("websocketUrl"), `${base}/`).toString().replace(/^http/, "ws"),
    agentId: field("agentId"),
    workspaceId: field("workspaceId"),
    credential: field("credential"),
    tlsFingerprint: pin
      ? normalizeFingerprint(pin)
      : base.startsWith("https:") && typeof data["tlsFingerprint"] === "string"
        ? data["tlsFingerprint"]
        : null,
  };
  saveConfig(config, options.credentialsPath ?? defaultCredentialsPath());
  return config;
}

/**
 * Replace this agent's credential by a new one (same agent, same history): the hub answers
 * the new one once, the old one stops working at once. The new one is saved before it is
 * returned, so a crash cannot leave the agent holding only the dead one.
 */
export async function rotateCredential(
  config: AgentConfig,
  credentialsPath: string = defaultCredentialsPath(),
): Promise<AgentConfig> {
  checkPlainText(config.hubUrl);
  let response: Response;
  try {
    const trust = await trustFor(config.hubUrl, config.tlsFingerprint);
    response = await hubRequest(
      `${config.hubUrl}/api/agent/credential/rotate`,
      { method: "POST", headers: { Authorization: `Bearer ${config.credential}` } },
      trust,
    );
  } catch (error) {
    if (error instanceof InsecureConnection) throw error;
    throw new LineupError("unavailable", `Could not reach the hub at ${config.hubUrl}: ${String(error)}`);
  }
  if (response.status !== 200) throw await failure(response, LineupError);
  const data = (await response.json()) as Record<string, unknown>;
  const credential = data["credential"];
  if (typeof credential !== "string" || !credential) {
    throw new LineupError("unknown_result", "The hub's answer to the rotation lacks the credential.");
  }
  const rotated = { ...config, credential };
  saveConfig(rotated, credentialsPath);
  return rotated;
}

/** The HTTP error envelope as the taxonomy's error; a body without one still gets a code. */
export async function failure<E extends LineupError>(
  response: Response,
  kind: new (code: string, message: string, details?: Record<string, unknown>) => E,
): Promise<E> {
  let envelope: unknown;
  try {
    envelope = await response.json();
  } catch {
    envelope = undefined;
  }
  const error = (envelope as { error?: { code?: unknown; message?: unknown; details?: unknown } } | undefined)?.error;
  const code = typeof error?.code === "string" ? error.code : (STATUS_CODES[response.status] ?? "unknown_result");
  const message = typeof error?.message === "string" ? error.message : `The hub answered HTTP ${response.status}.`;
  const details =
    error?.details && typeof error.details === "object" ? { ...(error.details as Record<string, unknown>) } : {};
  const retryAfter = response.headers.get("retry-after");
  if (details["retryAfterMs"] === undefined && retryAfter && /^\d+$/.test(retryAfter)) {
    details["retryAfterMs"] = Number(retryAfter) * 1000;
  }
  return new kind(code, message, details);
}
