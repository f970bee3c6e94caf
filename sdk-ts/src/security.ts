import { InsecureConnection } from "./errors.js";

/**
 * The credential travels in the first bytes an agent sends, so plain `http://` and `ws://`
 * are allowed only to this machine, unless a person allowed them (`allowInsecure`, or
 * `LINEUP_ALLOW_INSECURE=1`); checked before anything is sent (docs/protocol.md §2.1).
 */
export function checkPlainText(address: string, allowInsecure?: boolean): void {
  const url = new URL(address);
  const scheme = url.protocol.replace(/:$/, "").toLowerCase();
  if (scheme === "https" || scheme === "wss") return;
  if (scheme !== "http" && scheme !== "ws") {
    throw new InsecureConnection(`Cannot reach a hub at ${address}: use https:// (or wss://).`);
  }
  const allowed = allowInsecure ?? ["1", "true", "yes"].includes((process.env["LINEUP_ALLOW_INSECURE"] ?? "").toLowerCase());
  if (allowed || isLoopback(url.hostname)) return;
  throw new InsecureConnection(
    `Refusing to send the agent's credential in plain text to ${url.host}: use https:// for a hub ` +
      "that is not this machine, or allow it explicitly (allowInsecure, LINEUP_ALLOW_INSECURE=1).",
  );
}

export function isLoopback(host: string): boolean {
  const name = host.replace(/^\[|\]$/g, "").toLowerCase();
  if (name === "localhost" || name.endsWith(".localhost") || name === "::1") return true;
  return /^127\.\d{1,3}\.\d{1,3}\.\d{1,3}$/.test(name);
}
