/** What the diagnostic lines take out before they leave the machine. */

import { test } from "node:test";
import assert from "node:assert/strict";
import { DiagnosticLog, redact } from "../src/diagnostics.js";

test("secrets the agent knows and LineUp's tokens are taken out of a line", () => {
  const line = redact("hello lna_abcdefghijklmnop and mine-is-here, code ABCD-EFGH", ["mine-is-here"]);
  assert.equal(line, "hello [redacted] and [redacted], code [redacted]");
});

test("bearer tokens, a URL's password, secret query parameters and name=value pairs are taken out", () => {
  assert.ok(!redact("Authorization: Bearer xyz.abc").includes("xyz"));
  assert.equal(redact("sent Bearer xyz.abc"), "sent Bearer [redacted]");
  assert.equal(redact("https://ana:pw@hub.example/x?token=1&page=2"), "https://[redacted]@hub.example/x?token=[redacted]&page=2");
  assert.equal(redact('password=hunter2 "apiKey": "k-1"'), 'password=[redacted] "apiKey": [redacted]');
});

test("the values of secret-looking fields are taken out, and batches keep the protocol's limits", () => {
  const log = new DiagnosticLog(() => []);
  for (let i = 0; i < 150; i++) log.add("info", `line ${i}`, { attempt: i, apiToken: "t0ps3cret" });
  const batch = log.batch();
  assert.equal(batch.length, 100);
  assert.deepEqual(batch[0]?.fields, { attempt: 0, apiToken: "[redacted]" });
  log.taken(batch);
  assert.equal(log.size, 50);
  assert.equal(log.batch()[0]?.message, "line 100");
});
