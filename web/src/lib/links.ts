// Where an agent's link may take a person: an http(s) page in a new tab, or a file stored in
// the hub (downloaded with the session cookie, same origin). Anything else — javascript:,
// data:, file: — is shown as text, never as a link, even if an older hub stored it.

const HUB_FILE = /^\/api\/workspaces\/[A-Za-z0-9_-]{1,128}\/files\/[A-Za-z0-9_-]{1,128}$/;
const FORBIDDEN = /[\u0000-\u0020\u007f\\]/;

export type LinkKind = "hub-file" | "web" | "unsafe";

export function linkKind(url: string): LinkKind {
  if (FORBIDDEN.test(url)) return "unsafe";
  if (url.startsWith("/")) return HUB_FILE.test(url) ? "hub-file" : "unsafe";
  let parsed: URL;
  try {
    parsed = new URL(url);
  } catch {
    return "unsafe";
  }
  const web = (parsed.protocol === "http:" || parsed.protocol === "https:") && parsed.hostname !== "";
  return web ? "web" : "unsafe";
}

export interface LinkAttributes {
  href?: string;
  target?: string;
  rel?: string;
  download?: string;
}

/** The anchor attributes for an agent-supplied URL; none (no href) when it is unsafe. */
export function linkAttributes(url: string): LinkAttributes {
  switch (linkKind(url)) {
    case "hub-file":
      return { href: url, download: "" };
    case "web":
      return { href: url, target: "_blank", rel: "noreferrer noopener" };
    default:
      return {};
  }
}
