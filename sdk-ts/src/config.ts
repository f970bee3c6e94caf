import { closeSync, fsyncSync, mkdirSync, openSync, readFileSync, renameSync, writeSync } from "node:fs";
import { homedir } from "node:os";
import { dirname, join } from "node:path";

/**
 * What an agent needs to connect: the answer of pairing, saved in `credentials.json` (the
 * same file, with the same camelCase keys, as the Python SDK writes).
 */
export interface AgentConfig {
  hubUrl: string;
  websocketUrl: string;
  agentId: string;
  workspaceId: string;
  credential: string;
  /** The pinned fingerprint of a self-signed hub's certificate (docs/protocol.md §2.1). */
  tlsFingerprint?: string | null;
}

/** `$LINEUP_AGENT_HOME`, by default `~/.lineup-agent`: credentials and state live here. */
export function agentHome(): string {
  return process.env["LINEUP_AGENT_HOME"] || join(homedir(), ".lineup-agent");
}

export function defaultCredentialsPath(): string {
  return join(agentHome(), "credentials.json");
}

const REQUIRED = ["hubUrl", "websocketUrl", "agentId", "workspaceId", "credential"] as const;

/** Read saved credentials; a missing or incomplete file says to pair first. */
export function loadConfig(path: string = defaultCredentialsPath()): AgentConfig {
  let text: string;
  try {
    text = readFileSync(path, "utf-8");
  } catch {
    throw new Error(`No credentials at ${path}; pair this agent first (pair(hubUrl, code, …)).`);
  }
  const data: unknown = JSON.parse(text);
  if (data === null || typeof data !== "object" || Array.isArray(data)) {
    throw new Error(`${path} must hold a JSON object.`);
  }
  const record = data as Record<string, unknown>;
  const missing = REQUIRED.filter((key) => typeof record[key] !== "string" || record[key] === "");
  if (missing.length > 0) throw new Error(`${path} lacks ${missing.join(", ")}; pair the agent again.`);
  const fingerprint = record["tlsFingerprint"];
  return {
    hubUrl: record["hubUrl"] as string,
    websocketUrl: record["websocketUrl"] as string,
    agentId: record["agentId"] as string,
    workspaceId: record["workspaceId"] as string,
    credential: record["credential"] as string,
    tlsFingerprint: typeof fingerprint === "string" ? fingerprint : null,
  };
}

/** Write the credentials with mode 0600, atomically (a crash leaves the old file or the new). */
export function saveConfig(config: AgentConfig, path: string = defaultCredentialsPath()): string {
  const text = `${JSON.stringify(
    {
      hubUrl: config.hubUrl,
      websocketUrl: config.websocketUrl,
      agentId: config.agentId,
      workspaceId: config.workspaceId,
      credential: config.credential,
      ...(config.tlsFingerprint ? { tlsFingerprint: config.tlsFingerprint } : {}),
    },
    null,
    2,
  )}\n`;
  writePrivateFile(path, text);
  return path;
}

export function writePrivateFile(path: string, text: string): void {
  mkdirSync(dirname(path), { recursive: true, mode: 0o700 });
  const temporary = `${path}.${process.pid}.tmp`;
  const fd = openSync(temporary, "w", 0o600);
  try {
    writeSync(fd, text);
    fsyncSync(fd);
  } finally {
    closeSync(fd);
  }
  renameSync(temporary, path);
}

/** The credential never shows in logs or inspection output. */
export function describeConfig(config: AgentConfig): string {
  return `AgentConfig(agentId=${config.agentId}, workspaceId=${config.workspaceId}, hubUrl=${config.hubUrl})`;
}
