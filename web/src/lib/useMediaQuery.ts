import { useSyncExternalStore } from "react";

export function useMediaQuery(query: string): boolean {
  return useSyncExternalStore(
    (notify) => {
      if (typeof window.matchMedia !== "function") return () => {};
      const list = window.matchMedia(query);
      list.addEventListener("change", notify);
      return () => list.removeEventListener("change", notify);
    },
    () => (typeof window.matchMedia === "function" ? window.matchMedia(query).matches : true),
    () => true,
  );
}

export const WIDE = "(min-width: 900px)";
export const PHONE = "(max-width: 639.98px)";
/** A touch screen's keyboard has no Shift+Enter: Enter there makes a new line. */
export const TOUCH = "(pointer: coarse)";
