/** The committed wire types are what the generator makes of the protocol's schemas. */

import { readFileSync } from "node:fs";
import { join } from "node:path";
import { test } from "node:test";
import assert from "node:assert/strict";
import { SDK_ROOT } from "./support/hub.js";

test("the generated protocol types match docs/spec/schemas (run `npm run gen:types`)", async () => {
  const script = (await import(join(SDK_ROOT, "scripts", "generate-types.mjs"))) as { generate(): Promise<string>; OUTPUT: string };
  const committed = readFileSync(join(SDK_ROOT, script.OUTPUT), "utf-8");
  assert.equal(committed, await script.generate());
});
