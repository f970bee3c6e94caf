// The committed generated types must be what the hub's documents make today: after changing
// docs/spec/, run `npm run gen:types` and commit the result.

import { readFileSync } from "node:fs";
import { join } from "node:path";
import { describe, expect, it } from "vitest";
import { generate } from "../../../scripts/generate-types.mjs";

const WEB = join(__dirname, "..", "..", "..");

describe("the generated types", () => {
  it("match docs/spec/ (run `npm run gen:types` when they do not)", async () => {
    const files = await generate();
    for (const [relative, text] of Object.entries(files)) {
      expect(readFileSync(join(WEB, relative), "utf-8"), `${relative} is stale`).toBe(text);
    }
  }, 60_000);
});
