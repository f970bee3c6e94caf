// TangSengDaoDao's HTTP API, the business side of a WuKongIM deployment: sign-in, users, the
// route to a WuKongIM node, message sync, and its file API (modules/file/api.go: POST
// /v1/file/upload?type=chat&path=… with the token, multipart `file` + `contenttype`, answering
// `{path: "file/preview/chat/…"}`; GET /v1/file/preview/… needs no token). Its refusals (`{"msg", "status"}`) become the
// app's ApiError with a code of the taxonomy, so the sign-in screen shows them like the hub's.

import { ApiError, type ErrorCode, type Fetch } from "../../api/client";
import type { Payload } from "./content";
import type { SyncedMessage } from "./tunnel";

/** WuKongIM's person channel: the one between two users. */
export const PERSON_CHANNEL = 1;

export interface TsddLogin {
  uid: string;
  token: string;
  name: string;
}

const CODE_BY_STATUS: Record<number, ErrorCode> = {
  400: "invalid_argument",
  401: "unauthenticated",
  403: "forbidden",
  404: "not_found",
  409: "conflict",
  429: "rate_limited",
  502: "unavailable",
  503: "unavailable",
  504: "unavailable",
};

export class TsddApi {
  /** `base` is the API's address, e.g. `https://im.example.com/api` (no `/v1`). */
  constructor(
    readonly base: string,
    private token: string | null = null,
    private readonly fetchImpl: Fetch = (...args) => fetch(...args),
  ) {
    this.base = base.replace(/\/+$/, "");
  }

  async login(username: string, password: string): Promise<TsddLogin> {
    const body = await this.call<Record<string, unknown>>("POST", "/v1/user/login", { username, password });
    const uid = String(body.uid ?? "");
    const token = String(body.token ?? "");
    if (!uid || !token) throw new ApiError("unknown_result", "The sign-in answer had no uid or token.", 200);
    this.token = token;
    return { uid, token, name: String(body.name ?? username) };
  }

  async user(uid: string): Promise<{ uid: string; name: string }> {
    const body = await this.call<Record<string, unknown>>("GET", `/v1/users/${encodeURIComponent(uid)}`);
    return { uid: String(body.uid ?? uid), name: String(body.name ?? uid) };
  }

  /** The WuKongIM WebSocket address to connect to (`wss_addr` when the page is https). */
  async route(uid: string, secure: boolean = typeof location !== "undefined" && location.protocol === "https:"): Promise<string> {
    const body = await this.call<Record<string, unknown>>("GET", `/v1/users/${encodeURIComponent(uid)}/route`);
    const wss = typeof body.wss_addr === "string" ? body.wss_addr : "";
    const ws = typeof body.ws_addr === "string" ? body.ws_addr : "";
    const address = secure && wss ? wss : ws || wss;
    if (!address) throw new ApiError("unavailable", "The IM server did not say where to connect (no ws_addr).", 200);
    return address;
  }

  /** Messages of the person channel with `peer` from `start` (inclusive) on, oldest first. */
  async sync(peer: string, start: number, limit = 100): Promise<SyncedMessage[]> {
    const out: SyncedMessage[] = [];
    let from = start;
    for (let page = 0; page < 50; page++) {
      const body = await this.call<{ messages?: unknown[] }>("POST", "/v1/message/channel/sync", {
        channel_id: peer,
        channel_type: PERSON_CHANNEL,
        start_message_seq: from,
        end_message_seq: 0,
        limit,
        pull_mode: 1,
      });
      const messages = (body.messages ?? []).map(toSynced).filter((m): m is SyncedMessage => m !== null);
      messages.sort((a, b) => a.messageSeq - b.messageSeq);
      const fresh = messages.filter((m) => m.messageSeq >= from);
      out.push(...fresh);
      if (messages.length < limit || fresh.length === 0) break;
      from = fresh[fresh.length - 1]!.messageSeq + 1;
    }
    return out;
  }

  /**
   * Store a file as TSDD's own apps do (type `chat`, path `/1/<peer>/<random><ext>`); answers its
   * file path, `file/preview/chat/…`, which anyone with it can read (so the path is random).
   */
  async upload(file: Blob, name: string, peer: string, random: string = randomHex()): Promise<string> {
    const ext = /\.[A-Za-z0-9]{1,10}$/.exec(name)?.[0].toLowerCase() ?? "";
    const where = `/1/${peer.replace(/[^A-Za-z0-9_-]/g, "_").slice(0, 64) || "_"}/${random}${ext}`;
    const form = new FormData();
    form.append("file", file, name);
    form.append("contenttype", file.type || "application/octet-stream");
    const query = `type=chat&path=${encodeURIComponent(where)}`;
    const body = await this.call<{ path?: unknown }>("POST", `/v1/file/upload?${query}`, form);
    if (typeof body.path !== "string" || !body.path.startsWith("file/preview/")) {
      throw new ApiError("unknown_result", "The IM server's upload answer had no file path.", 200);
    }
    return body.path;
  }

  /** The absolute address of a file path the upload answered. */
  fileUrl(path: string, filename?: string): string {
    const url = `${this.base}/v1/${path.replace(/^\/+/, "")}`;
    return filename ? `${url}?filename=${encodeURIComponent(filename)}` : url;
  }

  private async call<T>(method: string, path: string, body?: unknown): Promise<T> {
    const headers: Record<string, string> = { Accept: "application/json" };
    const form = body instanceof FormData;
    if (body !== undefined && !form) headers["Content-Type"] = "application/json";
    if (this.token) headers.token = this.token;
    let response: Response;
    try {
      response = await this.fetchImpl(this.base + path, {
        method,
        headers,
        body: body === undefined ? undefined : form ? body : JSON.stringify(body),
      });
    } catch {
      throw new ApiError("network", `Could not reach the IM server at ${this.base}. Check the address and your connection.`, 0);
    }
    const text = await response.text();
    let parsed: unknown = null;
    try {
      parsed = text ? JSON.parse(text) : null;
    } catch {
      parsed = null;
    }
    if (!response.ok) {
      const msg = (parsed as { msg?: unknown } | null)?.msg;
      const code = CODE_BY_STATUS[response.status] ?? (response.status >= 500 ? "unavailable" : "unknown_result");
      const message =
        typeof msg === "string" && msg
          ? msg
          : response.status === 401
            ? "The IM server refused the username or password."
            : `The IM server answered ${response.status}.`;
      throw new ApiError(code, message, response.status);
    }
    return (parsed ?? {}) as T;
  }
}

/** One message of TangSengDaoDao's sync: its payload as JSON, or base64 of JSON (WuKongIM's own). */
export function toSynced(raw: unknown): SyncedMessage | null {
  if (!raw || typeof raw !== "object") return null;
  const m = raw as Record<string, unknown>;
  const id = typeof m.message_idstr === "string" ? m.message_idstr : m.message_id != null ? String(m.message_id) : "";
  const seq = Number(m.message_seq ?? 0);
  let payload: unknown = m.payload;
  if (typeof payload === "string") {
    try {
      payload = JSON.parse(decodeBase64(payload));
    } catch {
      return null;
    }
  }
  if (!payload || typeof payload !== "object") return null;
  return { messageId: id, messageSeq: Number.isFinite(seq) ? seq : 0, fromUid: String(m.from_uid ?? ""), payload: payload as Payload };
}

function randomHex(): string {
  const bytes = crypto.getRandomValues(new Uint8Array(16));
  return [...bytes].map((b) => b.toString(16).padStart(2, "0")).join("");
}

function decodeBase64(text: string): string {
  const bytes = Uint8Array.from(atob(text), (c) => c.charCodeAt(0));
  return new TextDecoder().decode(bytes);
}
