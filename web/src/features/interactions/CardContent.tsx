// What a card asks about, shown as it is: a unified diff with its lines marked, anything else
// (a command, a tool's input, a plan) as preformatted text.

import { diffLines, looksLikeDiff } from "./diff";

const DIFF_LABEL = { add: "added", remove: "removed" } as const;

export function CardContent({ text, label }: { text: string; label: string }) {
  return (
    <div className="review-content" tabIndex={0} role="region" aria-label={label}>
      {looksLikeDiff(text) ? <DiffView text={text} /> : <pre className="card-pre">{text}</pre>}
    </div>
  );
}

/** Each line keeps its + or − sign, so the colour is never the only cue. */
export function DiffView({ text }: { text: string }) {
  return (
    <div className="diff" data-testid="review-diff">
      {diffLines(text).map((line, i) => (
        <div key={i} className={`diff-line diff-${line.kind}`}>
          {line.kind === "add" || line.kind === "remove" ? <span className="sr-only">{DIFF_LABEL[line.kind]}: </span> : null}
          {line.text || "\u00a0"}
        </div>
      ))}
    </div>
  );
}
