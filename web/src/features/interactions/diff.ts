// Reading review content as a unified diff, so added and removed lines can be told apart.

export type DiffLineKind = "add" | "remove" | "hunk" | "meta" | "context";

export interface DiffLine {
  kind: DiffLineKind;
  text: string;
}

const META = /^(diff --git |index |--- |\+\+\+ |new file mode |deleted file mode |similarity index |rename (from|to) )/;

/** True when the text reads as a unified diff: a hunk header, or both file headers. */
export function looksLikeDiff(text: string): boolean {
  const lines = text.split("\n");
  if (lines.some((l) => /^@@ .* @@/.test(l))) return true;
  return lines.some((l) => l.startsWith("--- ")) && lines.some((l) => l.startsWith("+++ "));
}

export function diffLines(text: string): DiffLine[] {
  return text.split("\n").map((line) => {
    if (META.test(line)) return { kind: "meta", text: line };
    if (line.startsWith("@@")) return { kind: "hunk", text: line };
    if (line.startsWith("+")) return { kind: "add", text: line };
    if (line.startsWith("-")) return { kind: "remove", text: line };
    return { kind: "context", text: line };
  });
}
