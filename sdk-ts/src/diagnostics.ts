/**
 * The agent's own diagnostic lines (`agent.logs`, docs/protocol.md §5.1): what the SDK logged
 * about itself — connection attempts and their errors, reconnects, resumed work — kept while
 * the hub is unreachable and sent once it is, so a person sees on the Agents screen why the
 * agent was offline without a terminal on its machine.
 *
 * Lines leave the machine and every member of the workspace reads them, so each is redacted
 * before it is kept: the secrets the SDK knows (its credential), LineUp's tokens and pairing
 * codes by their shape, the token after `Bearer`/`Basic`, a URL's user information, secret-looking
 * query parameters and `name=value` pairs, and in `fields` the value of every secret-looking key.
 */

import { newId } from "./ids.js";

export type LogLevel = "debug" | "info" | "warning" | "error" | "critical";

export interface DiagnosticLine {
  id: string;
  ts: string;
  level: LogLevel;
  logger: string;
  message: string;
  fields?: Record<string, unknown>;
}

const REDACTED = "[redacted]";
const SECRET_NAME = /(password|passwd|secret|credential|api_key|apikey|private_key|authorization|cookie|session)|token$/;
const TEXT_NAME = String.raw`[A-Za-z0-9_.-]*(?:(?:pass(?:wor)?d|secret|credential|api[_-]?key|private[_-]?key|authorization|cookie|session)[A-Za-z0-9_.-]*|token)`;
const RULES: [RegExp, string][] = [
  [/(lna|lns|lut|csrf)_[A-Za-z0-9_-]{8,}/g, REDACTED],
  [/(?<![A-Z0-9])[A-HJ-NP-Z2-9]{4}-[A-HJ-NP-Z2-9]{4}(?![A-Z0-9])/g, REDACTED],
  [/[a-hj-km-np-z2-9]{4}(?:-[a-hj-km-np-z2-9]{4}){4}/g, REDACTED],
  [/(?<![a-z])(bearer|basic)(\s+)[^\s"',;]+/gi, `$1$2${REDACTED}`],
  [/(?<![A-Za-z0-9+.-])([A-Za-z][A-Za-z0-9+.-]*:\/\/)[^/\s@?#]*@/g, `$1${REDACTED}@`],
  [/([?&;][^=&#;?\s]*(?:token|secret|pass|pwd|key|auth|sig|credential|code|session)[^=&#;?\s]*=)[^&#\s]*/gi, `$1${REDACTED}`],
  [new RegExp(String.raw`(?<![A-Za-z0-9_.-])(["']?(?:${TEXT_NAME})["']?\s*[:=]\s*)("[^"]*"?|'[^']*'?|[^\s,;&]+)`, "gi"), `$1${REDACTED}`],
];

export function looksSecret(name: string): boolean {
  return SECRET_NAME.test(name.toLowerCase().replace(/[-\s]/g, "_"));
}

/** Text without the secrets it may hold. */
export function redact(text: string, secrets: readonly string[] = []): string {
  let out = text;
  for (const secret of secrets) if (secret) out = out.split(secret).join(REDACTED);
  for (const [pattern, replacement] of RULES) out = out.replace(pattern, replacement);
  return out;
}

function redactValue(value: unknown, secrets: readonly string[]): unknown {
  if (typeof value === "string") return redact(value, secrets);
  if (Array.isArray(value)) return value.map((v) => redactValue(v, secrets));
  if (value !== null && typeof value === "object") {
    return Object.fromEntries(
      Object.entries(value).map(([k, v]) => [redact(k, secrets), looksSecret(k) ? REDACTED : redactValue(v, secrets)]),
    );
  }
  return value;
}

const MAX_LINES_PER_FRAME = 100;
const MAX_LINE_BYTES = 4096;
const MAX_FRAME_BYTES = 60_000; // under the hub's 65,536 bytes of lines
const MAX_MESSAGE = 2000;

/** The lines not yet taken by the hub, oldest first (at most `keep`; the oldest go first). */
export class DiagnosticLog {
  private lines: DiagnosticLine[] = [];

  constructor(
    private readonly secrets: () => readonly string[],
    private readonly keep = 500,
  ) {}

  add(level: LogLevel, message: string, fields?: Record<string, unknown>): void {
    const secrets = this.secrets();
    const line: DiagnosticLine = {
      id: newId("log"),
      ts: new Date().toISOString(),
      level,
      logger: "lineup.sdk",
      message: redact(message, secrets).slice(0, MAX_MESSAGE),
    };
    if (fields) line.fields = redactValue(fields, secrets) as Record<string, unknown>;
    if (Buffer.byteLength(JSON.stringify(line)) > MAX_LINE_BYTES) {
      delete line.fields;
      line.message = line.message.slice(0, 1000);
    }
    this.lines.push(line);
    if (this.lines.length > this.keep) this.lines.splice(0, this.lines.length - this.keep);
  }

  /** The next batch to send: oldest first, within the protocol's limits. */
  batch(): DiagnosticLine[] {
    const out: DiagnosticLine[] = [];
    let bytes = 0;
    for (const line of this.lines) {
      const size = Buffer.byteLength(JSON.stringify(line));
      if (out.length >= MAX_LINES_PER_FRAME || bytes + size > MAX_FRAME_BYTES) break;
      out.push(line);
      bytes += size;
    }
    return out;
  }

  /** The hub took these: they are not sent again. */
  taken(sent: DiagnosticLine[]): void {
    const ids = new Set(sent.map((l) => l.id));
    this.lines = this.lines.filter((l) => !ids.has(l.id));
  }

  get size(): number {
    return this.lines.length;
  }
}
