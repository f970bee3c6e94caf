/**
 * Whom the agent trusts on `https://` and `wss://` (docs/protocol.md §2.1).
 *
 * A hub with a certificate from an authority is verified as usual (`LINEUP_TLS_CA_FILE` may
 * name other authorities). A self-signed hub is **pinned** by the SHA-256 fingerprint of its
 * certificate: a first TLS handshake that sends nothing reads the certificate the server
 * presents; a different fingerprint stops the agent (`fingerprint_mismatch`, final) before the
 * credential or a pairing code leaves the machine; the same one is then the only authority the
 * real connection trusts, whatever names it carries.
 */

import { createHash, X509Certificate } from "node:crypto";
import { readFileSync } from "node:fs";
import { request as httpsRequest } from "node:https";
import { isIP } from "node:net";
import { connect } from "node:tls";
import { InsecureConnection } from "./errors.js";

/** What `https` and `ws` take to trust the hub; undefined: the system's authorities. */
export interface Trust {
  ca: string | Buffer;
  checkServerIdentity?: () => undefined;
}

/** `F4:AD:…` (95 characters), from any of the usual spellings; throws for anything else. */
export function normalizeFingerprint(text: string): string {
  const hex = text
    .trim()
    .replace(/^(sha256:|sha256 fingerprint=)/i, "")
    .replace(/[\s:]/g, "")
    .toUpperCase();
  if (!/^[0-9A-F]{64}$/.test(hex)) throw new TypeError(`Not a SHA-256 fingerprint: ${text}`);
  return hex.match(/../g)!.join(":");
}

export function fingerprintOf(der: Buffer): string {
  return normalizeFingerprint(createHash("sha256").update(der).digest("hex"));
}

/** The certificate the server at `address` presents, read without sending anything. */
export function presentedCertificate(address: string, timeoutMs = 10_000): Promise<Buffer> {
  const url = new URL(address);
  const host = url.hostname.replace(/^\[|\]$/g, "");
  const port = Number(url.port || 443);
  return new Promise((resolve, reject) => {
    const socket = connect({ host, port, rejectUnauthorized: false, ...(isIP(host) ? {} : { servername: host }) });
    socket.setTimeout(timeoutMs, () => socket.destroy(new Error(`no TLS answer from ${url.host} in ${timeoutMs} ms`)));
    socket.once("secureConnect", () => {
      const raw = socket.getPeerCertificate(false).raw;
      socket.destroy();
      raw ? resolve(raw) : reject(new Error(`${url.host} presented no certificate`));
    });
    socket.once("error", reject);
  });
}

/** How to trust the hub at `address`: pinned to `fingerprint`, the CA file, or the system. */
export async function trustFor(address: string, fingerprint?: string | null): Promise<Trust | undefined> {
  const scheme = new URL(address).protocol;
  if (scheme !== "https:" && scheme !== "wss:") return undefined;
  const pin = fingerprint ?? process.env["LINEUP_TLS_FINGERPRINT"] ?? null;
  if (pin) {
    const wanted = normalizeFingerprint(pin);
    const der = await presentedCertificate(address);
    const presented = fingerprintOf(der);
    if (presented !== wanted) {
      throw new InsecureConnection(
        `The hub at ${new URL(address).host} presented a certificate with SHA-256 ${presented}, not the pinned ` +
          `${wanted}: its certificate changed, or something between this machine and the hub is pretending to be it.`,
        "fingerprint_mismatch",
      );
    }
    return { ca: new X509Certificate(der).toString(), checkServerIdentity: () => undefined };
  }
  const file = process.env["LINEUP_TLS_CA_FILE"];
  return file ? { ca: readFileSync(file) } : undefined;
}

/** The error for a certificate nobody vouches for, naming its fingerprint to compare and pin. */
export async function untrusted(address: string, problem: unknown): Promise<InsecureConnection> {
  let shown = "";
  try {
    shown = ` (SHA-256 ${fingerprintOf(await presentedCertificate(address))})`;
  } catch {
    shown = "";
  }
  return new InsecureConnection(
    `The hub at ${new URL(address).host} presented a certificate this machine does not trust${shown}: ` +
      `${reasonOf(problem)}. Compare the fingerprint with the one LineUp shows (Settings → This hub) and pin it ` +
      "(tlsFingerprint, LINEUP_TLS_FINGERPRINT), or give its authority (LINEUP_TLS_CA_FILE).",
    "untrusted_certificate",
  );
}

const VERIFICATION_CODES = new Set([
  "DEPTH_ZERO_SELF_SIGNED_CERT",
  "SELF_SIGNED_CERT_IN_CHAIN",
  "UNABLE_TO_VERIFY_LEAF_SIGNATURE",
  "UNABLE_TO_GET_ISSUER_CERT_LOCALLY",
  "CERT_HAS_EXPIRED",
  "ERR_TLS_CERT_ALTNAME_INVALID",
]);

/** True when `error` (or its cause) is a failed certificate verification. */
export function isVerificationFailure(error: unknown): boolean {
  for (let current: unknown = error; current; current = (current as { cause?: unknown }).cause) {
    const code = (current as { code?: unknown }).code;
    if (typeof code === "string" && VERIFICATION_CODES.has(code)) return true;
  }
  return false;
}

function reasonOf(problem: unknown): string {
  for (let current: unknown = problem; current; current = (current as { cause?: unknown }).cause) {
    const code = (current as { code?: unknown }).code;
    if (typeof code === "string" && VERIFICATION_CODES.has(code)) return code.toLowerCase().replace(/_/g, " ");
  }
  return String(problem);
}

export interface HttpRequest {
  method: string;
  headers?: Record<string, string>;
  body?: string | Buffer;
}

/** An HTTP request to the hub, trusting it as `trust` says (fetch when the system's CAs do). */
export async function hubRequest(address: string, init: HttpRequest, trust: Trust | undefined): Promise<Response> {
  if (trust === undefined) {
    try {
      return await fetch(address, { method: init.method, headers: init.headers ?? {}, body: init.body ?? null });
    } catch (error) {
      if (isVerificationFailure(error)) throw await untrusted(address, error);
      throw error;
    }
  }
  return new Promise((resolve, reject) => {
    const request = httpsRequest(address, { method: init.method, headers: init.headers ?? {}, ...trust }, (response) => {
      const chunks: Buffer[] = [];
      response.on("data", (chunk: Buffer) => chunks.push(chunk));
      response.on("end", () => {
        const headers = new Headers();
        for (const [name, value] of Object.entries(response.headers)) {
          for (const one of Array.isArray(value) ? value : value === undefined ? [] : [value]) headers.append(name, one);
        }
        const status = response.statusCode ?? 500;
        resolve(new Response(status === 204 ? null : Buffer.concat(chunks), { status, headers }));
      });
      response.on("error", reject);
    });
    request.on("error", reject);
    request.end(init.body);
  });
}
