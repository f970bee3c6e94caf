/**
 * A real hub for the tests: `lineup serve` on a temporary LINEUP_HOME and a free port, and a
 * person signed up on it, through the hub's HTTP API as the web app uses it. No sleeps to wait
 * for things: `until` polls a condition with a deadline.
 */

import { type ChildProcess, spawn } from "node:child_process";
import { mkdtempSync, openSync, readFileSync } from "node:fs";
import { createServer } from "node:net";
import { tmpdir } from "node:os";
import { dirname, join, resolve } from "node:path";
import { fileURLToPath } from "node:url";
import { X509Certificate } from "node:crypto";
import { type Trust, hubRequest, trustFor } from "../../src/tls.js";

export const SDK_ROOT = resolve(dirname(fileURLToPath(import.meta.url)), "..", "..", "..");
export const REPO_ROOT = resolve(SDK_ROOT, "..");
/** The hub command: `LINEUP_BIN`, else the repository's virtualenv. */
export const LINEUP = process.env["LINEUP_BIN"] ?? join(REPO_ROOT, ".venv", "bin", "lineup");

export async function until<T>(check: () => Promise<T | undefined | null | false> | T | undefined | null | false, what: string, timeoutMs = 30_000): Promise<T> {
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    const value = await check();
    if (value) return value;
    if (Date.now() > deadline) throw new Error(`timed out waiting for ${what}`);
    await new Promise((r) => setTimeout(r, 25));
  }
}

function freePort(): Promise<number> {
  return new Promise((resolvePort, reject) => {
    const server = createServer();
    server.listen(0, "127.0.0.1", () => {
      const address = server.address();
      server.close(() => (typeof address === "object" && address ? resolvePort(address.port) : reject(new Error("no port"))));
    });
  });
}

export class Hub {
  readonly home = mkdtempSync(join(tmpdir(), "lineup-ts-hub-"));
  process: ChildProcess | undefined;
  port = 0;
  /** Serve https with a self-signed certificate of the hub's own (`--tls-self-signed`). */
  readonly tls: boolean;
  /** How to trust this hub: pinned to its certificate once it made one. */
  trust: Trust | undefined;

  constructor(options: { tls?: boolean } = {}) {
    this.tls = options.tls ?? false;
  }

  get url(): string {
    return `${this.tls ? "https" : "http"}://127.0.0.1:${this.port}`;
  }

  /** The SHA-256 fingerprint of the certificate a TLS hub made. */
  fingerprint(): string {
    return new X509Certificate(readFileSync(join(this.home, "tls", "cert.pem"))).fingerprint256;
  }

  async start(env: Record<string, string> = {}): Promise<this> {
    this.port = await freePort();
    const log = openSync(join(this.home, "hub.log"), "a");
    const environment: Record<string, string | undefined> = {
      ...process.env,
      LINEUP_HOME: this.home,
      LINEUP_HEARTBEAT_INTERVAL: "0.5",
      LINEUP_GRACE_PERIOD: "120",
      LINEUP_PAIRING_ATTEMPTS_PER_IP: "1000",
      ...env,
    };
    delete environment["LINEUP_DATABASE_URL"];
    const args = ["serve", "--port", String(this.port), "--log-level", "info", ...(this.tls ? ["--tls-self-signed"] : [])];
    this.process = spawn(LINEUP, args, {
      env: environment,
      stdio: ["ignore", log, log],
    });
    await until(async () => {
      if (this.process?.exitCode !== null) throw new Error(`the hub exited: ${this.tail()}`);
      try {
        if (this.tls && this.trust === undefined) this.trust = await trustFor(this.url, this.fingerprint());
        return (await hubRequest(`${this.url}/readyz`, { method: "GET" }, this.trust)).status === 200;
      } catch {
        return false;
      }
    }, "the hub to be ready", 90_000);
    return this;
  }

  tail(): string {
    try {
      return readFileSync(join(this.home, "hub.log"), "utf-8").slice(-3000);
    } catch {
      return "";
    }
  }

  async stop(): Promise<void> {
    const child = this.process;
    if (!child || child.exitCode !== null) return;
    const exited = new Promise((r) => child.once("exit", r));
    child.kill("SIGTERM");
    await exited;
  }
}

/** A signed-in person of a workspace, with the session cookies and CSRF token. */
export class Person {
  private constructor(
    readonly hubUrl: string,
    readonly workspaceId: string,
    private readonly cookie: string,
    private readonly csrf: string,
    private readonly trust: Trust | undefined,
  ) {}

  static async signUp(hubUrl: string, email = `ana-${Date.now()}@example.test`, trust?: Trust): Promise<Person> {
    const response = await hubRequest(
      `${hubUrl}/api/auth/signup`,
      {
        method: "POST",
        headers: { "Content-Type": "application/json" },
        body: JSON.stringify({ email, password: "correct horse battery", displayName: "Ana" }),
      },
      trust,
    );
    if (response.status !== 201) throw new Error(`sign-up: ${response.status} ${await response.text()}`);
    const body = (await response.json()) as { csrfToken: string; workspaceId: string };
    const cookie = response.headers
      .getSetCookie()
      .map((c) => c.split(";")[0])
      .join("; ");
    return new Person(hubUrl, body.workspaceId, cookie, body.csrfToken, trust);
  }

  async request(method: string, path: string, body?: unknown): Promise<{ status: number; json: any; text: string }> {
    const address = path.startsWith("/api/") ? path : `/api/workspaces/${this.workspaceId}${path}`;
    const init = {
      method,
      headers: { Cookie: this.cookie, "X-CSRF-Token": this.csrf, ...(body !== undefined ? { "Content-Type": "application/json" } : {}) },
      ...(body !== undefined ? { body: JSON.stringify(body) } : {}),
    };
    const response = await hubRequest(`${this.hubUrl}${address}`, init, this.trust);
    const text = await response.text();
    let json: unknown = undefined;
    try {
      json = JSON.parse(text);
    } catch {
      json = undefined;
    }
    return { status: response.status, json, text };
  }

  async read(path: string): Promise<any> {
    const answer = await this.request("GET", path);
    if (answer.status !== 200) throw new Error(`GET ${path}: ${answer.status} ${answer.text}`);
    return answer.json;
  }

  async send(path: string, body: unknown = {}, status = 200): Promise<any> {
    const answer = await this.request("POST", path, body);
    if (answer.status !== status) throw new Error(`POST ${path}: ${answer.status} ${answer.text}`);
    return answer.json;
  }

  async pairingCode(): Promise<string> {
    return (await this.send("/pairing-codes", {}, 201)).code as string;
  }

  /** The agent once online, confirmed as its person would (the first time). */
  async confirmedOnline(agentId: string): Promise<void> {
    const agent = await until(async () => {
      const found = await this.read(`/agents/${agentId}`);
      return found.status === "online" ? found : undefined;
    }, `agent ${agentId} to come online`);
    if (!agent.confirmed) await this.send(`/agents/${agentId}/confirm`, {});
  }
}
