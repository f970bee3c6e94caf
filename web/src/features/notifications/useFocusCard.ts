// Opening a notification's link: bring its card into view and mark it, once it has rendered.

import { useEffect } from "react";
import { useLocation } from "../../lib/router";

export function useFocusCard(): void {
  const loc = useLocation();
  const interactionId = loc.search.get("interaction");
  useEffect(() => {
    if (!interactionId) return;
    let tries = 0;
    const timer = window.setInterval(() => {
      const cards = [...document.querySelectorAll<HTMLElement>(`[data-interaction-id="${CSS.escape(interactionId)}"]`)];
      const card = cards.find((c) => c.closest("[role=dialog], .detail")) ?? cards[0];
      if (card || ++tries > 50) window.clearInterval(timer);
      if (!card) return;
      card.scrollIntoView({ block: "center" });
      card.classList.add("is-focused");
      if (!card.hasAttribute("tabindex")) card.setAttribute("tabindex", "-1");
      card.focus({ preventScroll: true });
    }, 100);
    return () => window.clearInterval(timer);
  }, [interactionId]);
}
