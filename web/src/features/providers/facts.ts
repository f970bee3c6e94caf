// The recorded facts that make a provider screen stale: a change asked for or decided, a state
// switched, a health probe — the console reads its views again rather than patch them.

import type { HubEvent } from "../../api/types";

export function touchesProviders(event: HubEvent): boolean {
  return event.type.startsWith("provider.");
}
