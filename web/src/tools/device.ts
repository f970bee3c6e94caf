// This browser as a device that offers tools (seed 000 §4.6): a stable id in localStorage,
// and one registration of the built-in tools per workspace and page load.

import type { ToolDefinition } from "../api/types";

const KEY = "lineup.deviceId";

function randomId(): string {
  const random =
    typeof crypto !== "undefined" && "randomUUID" in crypto
      ? crypto.randomUUID()
      : `${Date.now().toString(36)}${Math.random().toString(36).slice(2)}`;
  return `web-${random}`.slice(0, 64);
}

export function deviceId(storage: Pick<Storage, "getItem" | "setItem"> | null = safeLocalStorage()): string {
  const known = storage?.getItem(KEY);
  if (known && /^[A-Za-z0-9_.:-]{1,64}$/.test(known)) return known;
  const made = randomId();
  try {
    storage?.setItem(KEY, made);
  } catch {
    /* private mode: an id for this page is enough */
  }
  return made;
}

export interface RegisterApi {
  workspaceId: string;
  registerTools(deviceId: string, tools: ToolDefinition[], name?: string): Promise<unknown>;
}

const registered = new Map<string, Promise<unknown>>();

/** Register this device's tools once per workspace per page load; a failure is retried on
 * the next call (the hub records nothing when the list is unchanged). */
export function registerDevice(api: RegisterApi, tools: ToolDefinition[]): Promise<unknown> {
  const key = api.workspaceId;
  let pending = registered.get(key);
  if (!pending) {
    pending = api.registerTools(deviceId(), tools, deviceName()).catch((err: unknown) => {
      registered.delete(key);
      throw err;
    });
    registered.set(key, pending);
  }
  return pending;
}

/** For tests: forget what was registered. */
export function resetRegistrations(): void {
  registered.clear();
}

function deviceName(): string {
  if (typeof navigator === "undefined") return "Browser";
  const ua = navigator.userAgent;
  const browser = /Firefox\//.test(ua) ? "Firefox" : /Edg\//.test(ua) ? "Edge" : /Chrom(e|ium)\//.test(ua) ? "Chrome" : /Safari\//.test(ua) ? "Safari" : "Browser";
  const os = /Android/.test(ua) ? "Android" : /iPhone|iPad/.test(ua) ? "iOS" : /Mac OS X/.test(ua) ? "macOS" : /Windows/.test(ua) ? "Windows" : /Linux/.test(ua) ? "Linux" : "";
  return os ? `${browser} on ${os}` : browser;
}

function safeLocalStorage(): Pick<Storage, "getItem" | "setItem"> | null {
  try {
    return typeof localStorage === "undefined" ? null : localStorage;
  } catch {
    return null;
  }
}
