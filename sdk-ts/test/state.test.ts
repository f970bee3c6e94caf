/** The journal file: what survives a crash, and what is refused. */

import { appendFileSync, mkdtempSync, statSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { test } from "node:test";
import assert from "node:assert/strict";
import { STATE_FILE_NAME, StateStore } from "../src/state.js";

function path(): string {
  return join(mkdtempSync(join(tmpdir(), "lineup-ts-state-")), STATE_FILE_NAME);
}

test("what was committed is there after reopening, in the outbox's order", () => {
  const file = path();
  const store = new StateStore(file, "agent_1");
  store.rememberJob(3, "task_1", "task", "{}");
  store.recordStep("task_1", 0, "task.accepted", "accept", null, "evt_a", '{"id":"evt_a"}');
  store.recordStep("task_1", 1, "task.status_changed", "progress", null, "evt_b", '{"id":"evt_b"}');
  store.settle(store.firstUnsent()!, { sequence: 7 });
  store.close();
  const again = new StateStore(file, "agent_1");
  assert.equal(again.cursor, 3);
  assert.equal(again.firstUnsent()?.envelopeId, "evt_b");
  assert.equal(again.step("task_1", 0)?.status, "acked");
  assert.equal(again.pendingJobs().length, 1);
  again.close();
});

test("a change torn by a crash is skipped and everything before it is kept", () => {
  const file = path();
  const store = new StateStore(file, "agent_1");
  store.rememberAnswer(5, "int_1", '{"response":{}}');
  store.close();
  appendFileSync(file, '[{"op":"answer","key":"int_2","val');
  const again = new StateStore(file, "agent_1");
  assert.equal(again.answer("int_1"), '{"response":{}}');
  assert.equal(again.answer("int_2"), undefined);
  assert.equal(again.cursor, 5);
  again.close();
});

test("the state of one agent is refused to another", () => {
  const file = path();
  new StateStore(file, "agent_1").close();
  assert.throws(() => new StateStore(file, "agent_2"), /belongs to agent agent_1/);
});

test("the state file is private to its owner", () => {
  const file = path();
  new StateStore(file, "agent_1").close();
  assert.equal(statSync(file).mode & 0o777, 0o600);
});

test("the cursor only moves forward, except on resync", () => {
  const store = new StateStore(path(), "agent_1");
  store.advance(10);
  store.advance(4);
  assert.equal(store.cursor, 10);
  store.resetCursor(4);
  assert.equal(store.cursor, 4);
  store.close();
});

test("a finished job keeps no journal and queues its final report", () => {
  const store = new StateStore(path(), "agent_1");
  store.rememberJob(1, "task_1", "task", "{}");
  store.recordStep("task_1", 0, "interaction.requested", "approval", { interactionId: "int_1" }, null, null);
  store.rememberAnswer(2, "int_1", "{}");
  store.finishJob("task_1", "succeeded", "evt_end", '{"id":"evt_end"}');
  assert.equal(store.step("task_1", 0), undefined);
  assert.equal(store.answer("int_1"), undefined);
  assert.equal(store.job("task_1")?.done, true);
  assert.equal(store.firstUnsent()?.envelopeId, "evt_end");
  store.close();
});
