import { describe, expect, it } from "vitest";
import { diffLines, looksLikeDiff } from "./diff";

const PATCH = [
  "diff --git a/app.py b/app.py",
  "--- a/app.py",
  "+++ b/app.py",
  "@@ -1,3 +1,3 @@",
  " import os",
  "-print('old')",
  "+print('new')",
].join("\n");

describe("review diffs", () => {
  it("recognises a unified diff and not plain prose", () => {
    expect(looksLikeDiff(PATCH)).toBe(true);
    expect(looksLikeDiff("Please check the release notes.\n- first point\n+ second")).toBe(false);
  });

  it("marks added, removed, hunk and header lines (file headers are not changes)", () => {
    expect(diffLines(PATCH).map((l) => l.kind)).toEqual(["meta", "meta", "meta", "hunk", "context", "remove", "add"]);
  });
});
