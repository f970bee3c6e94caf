import { useEffect, useRef, useState } from "react";
import { Button } from "./Button";

/** Copy text: the Clipboard API, else a hidden textarea and execCommand, else say how. */
export async function copyText(text: string): Promise<boolean> {
  try {
    if (navigator.clipboard && window.isSecureContext) {
      await navigator.clipboard.writeText(text);
      return true;
    }
  } catch {
    /* fall through to the old way */
  }
  const area = document.createElement("textarea");
  area.value = text;
  area.setAttribute("readonly", "");
  area.style.position = "fixed";
  area.style.opacity = "0";
  document.body.appendChild(area);
  area.select();
  let ok = false;
  try {
    ok = document.execCommand("copy");
  } catch {
    ok = false;
  }
  area.remove();
  return ok;
}

export function CopyButton({ text, label = "Copy", what }: { text: string; label?: string; what: string }) {
  const [state, setState] = useState<"idle" | "copied" | "failed">("idle");
  const timer = useRef<ReturnType<typeof setTimeout> | null>(null);
  useEffect(() => () => {
    if (timer.current) clearTimeout(timer.current);
  }, []);
  async function copy() {
    const ok = await copyText(text);
    setState(ok ? "copied" : "failed");
    if (timer.current) clearTimeout(timer.current);
    timer.current = setTimeout(() => setState("idle"), 2500);
  }
  return (
    <span className="copy">
      <Button size="sm" icon={state === "copied" ? "check" : "copy"} onClick={copy} aria-label={`${label} ${what}`}>
        {state === "copied" ? "Copied" : label}
      </Button>
      <span className="sr-only" role="status">
        {state === "copied" ? `${what} copied` : state === "failed" ? "" : ""}
      </span>
      {state === "failed" ? (
        <span className="copy-hint">Select the text and press Ctrl+C (⌘C on a Mac).</span>
      ) : null}
    </span>
  );
}
