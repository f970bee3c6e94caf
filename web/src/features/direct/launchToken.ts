// The token in the address `lineup direct` prints (`/#token=…`, or `?token=…`): read once, then
// removed from the address bar and the history so it is not bookmarked or shared by accident.
// A fragment is never sent to the server, so it stays out of its logs; the query form works too.

export interface UrlPlace {
  href: string;
}

export interface HistoryLike {
  replaceState(data: unknown, unused: string, url?: string | URL | null): void;
  readonly state: unknown;
}

/** The launch token, or null; strips it from the current address when found. */
export function takeLaunchToken(
  place: UrlPlace = window.location,
  history: HistoryLike = window.history,
): string | null {
  const url = new URL(place.href);
  const fragment = new URLSearchParams(url.hash.replace(/^#/, ""));
  const token = (fragment.get("token") ?? url.searchParams.get("token") ?? "").trim();
  if (!fragment.has("token") && !url.searchParams.has("token")) return null;
  fragment.delete("token");
  url.searchParams.delete("token");
  const hash = fragment.toString();
  url.hash = hash ? `#${hash}` : "";
  history.replaceState(history.state, "", url.pathname + url.search + url.hash);
  return token || null;
}
