/**
 * The Python SDK's scenarios (tests/unit/sdk, tests/e2e/test_mvp_loop.py), run against a real
 * hub process: pairing, a task through every report, the four questions, tool calls,
 * cancels, failures, messages, the hub ending a task, rotation — and an agent process killed
 * mid-task and restarted, with nothing done twice and nothing lost.
 */

import { type ChildProcess, spawn } from "node:child_process";
import { mkdtempSync, openSync, readFileSync, statSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { after, before, describe, test } from "node:test";
import assert from "node:assert/strict";
import {
  Agent,
  type AgentConfig,
  InteractionExpired,
  InvocationOutcome,
  LineupError,
  PairingFailed,
  STATE_FILE_NAME,
  StateStore,
  type TaskContext,
  loadConfig,
  pair,
  rotateCredential,
} from "../src/index.js";
import { Hub, Person, SDK_ROOT, until } from "./support/hub.js";

const hub = new Hub();
let ana: Person;

before(async () => {
  await hub.start({ LINEUP_CANCEL_TIMEOUT: "1" });
  ana = await Person.signUp(hub.url);
});

after(async () => {
  await hub.stop();
});

function scratch(): string {
  return mkdtempSync(join(tmpdir(), "lineup-ts-agent-"));
}

async function pairedAgent(name: string): Promise<{ config: AgentConfig; dir: string }> {
  const dir = scratch();
  const config = await pair(hub.url, await ana.pairingCode(), { name, credentialsPath: join(dir, "credentials.json") });
  return { config, dir };
}

/** A confirmed agent running in this process with `handler`, until `stop`. */
async function runningAgent(name: string, handler: (ctx: TaskContext) => Promise<string | void>, setUp?: (agent: Agent) => void) {
  const { config, dir } = await pairedAgent(name);
  const agent = new Agent(config, { stateDir: dir, heartbeatIntervalMs: 200 });
  agent.task(handler);
  setUp?.(agent);
  const running = agent.run();
  await ana.confirmedOnline(config.agentId);
  return {
    agent,
    config,
    async stop() {
      agent.stop();
      await running;
    },
  };
}

async function newTask(agentId: string, title = "Migrate the orders database"): Promise<string> {
  return (await ana.send("/tasks", { title, targetAgentId: agentId }, 201)).task.id as string;
}

async function taskIn(taskId: string, ...statuses: string[]): Promise<any> {
  return until(async () => {
    const detail = await ana.read(`/tasks/${taskId}`);
    return statuses.includes(detail.task.status) ? detail : undefined;
  }, `task ${taskId} to be ${statuses.join(" or ")}`);
}

async function openInteraction(taskId: string): Promise<any> {
  return until(async () => {
    const { interactions } = await ana.read("/interactions?status=requested");
    return interactions.find((i: any) => i.taskId === taskId);
  }, `a question of task ${taskId}`);
}

function counts(timeline: { type: string }[]): Record<string, number> {
  const found: Record<string, number> = {};
  for (const event of timeline) found[event.type] = (found[event.type] ?? 0) + 1;
  return found;
}

describe("pairing", () => {
  test("pairing redeems the code and saves credentials readable only by the owner", async () => {
    const { config, dir } = await pairedAgent("ts-pairing");
    const path = join(dir, "credentials.json");
    assert.equal(statSync(path).mode & 0o777, 0o600);
    assert.deepEqual(loadConfig(path), { ...config, tlsFingerprint: null });
    assert.match(config.credential, /^lna_/);
    assert.match(config.websocketUrl, /^ws:\/\/127\.0\.0\.1:\d+\/ws\/agent$/);
  });

  test("a wrong or used code is not_found with the hub's diagnostic and next step", async () => {
    const code = await ana.pairingCode();
    await pair(hub.url, code, { name: "once", credentialsPath: join(scratch(), "c.json") });
    for (const attempt of [code, "WRNG-CODE"]) {
      await assert.rejects(pair(hub.url, attempt, { name: "twice", credentialsPath: join(scratch(), "c.json") }), (error: unknown) => {
        assert.ok(error instanceof PairingFailed);
        assert.equal(error.code, "not_found");
        assert.equal(error.diagnostic, "LNP-PAIR-INVALID");
        assert.ok(error.nextStep);
        return true;
      });
    }
  });

  test("plain http to a hub that is not this machine is refused before anything is sent", async () => {
    await assert.rejects(pair("http://hub.example", "ABCD-EFGH", { name: "x" }), { name: "InsecureConnection" });
  });
});

describe("tasks", () => {
  test("a task runs from accepted through every report to succeeded", async () => {
    const running = await runningAgent("ts-tasks", async (ctx) => {
      await ctx.progress(10, "Reading the request");
      const child = await ctx.child("Pre-flight checks");
      await ctx.childStatus(child, "succeeded", { summary: "All checks passed" });
      await ctx.progress(40, "Checks passed");
      const approval = await ctx.askApproval("Run it?", { risk: "high", why: "Checks passed.", impact: "Locks a table." });
      assert.equal(approval.approved, true);
      assert.equal(approval.byName, "Ana");
      await ctx.artifact("Run log", "https://example.test/log", { mimeType: "text/plain" });
      await ctx.uploadArtifact("Report", Buffer.from("# Report\n"), { fileName: "report.md", mimeType: "text/markdown" });
      async function* pieces() {
        yield "Done, ";
        yield "all good.";
      }
      await ctx.say(pieces());
      return "Migrated";
    });
    try {
      const taskId = await newTask(running.config.agentId);
      const question = await openInteraction(taskId);
      assert.equal(question.type, "approval");
      assert.equal(question.request.risk, "high");
      assert.equal((await taskIn(taskId, "waiting_for_human")).task.status, "waiting_for_human");
      await ana.send(`/interactions/${question.id}/respond`, { response: { optionId: "approve" } });
      const final = await taskIn(taskId, "succeeded");
      assert.equal(final.task.summary, "Migrated");
      assert.equal(final.task.progress, 100);
      assert.equal(final.children.length, 1);
      assert.equal(final.children[0].status, "succeeded");
      const seen = counts(final.timeline);
      assert.equal(seen["task.accepted"], 1);
      assert.equal(seen["artifact.created"], 2);
      const report = final.artifacts.find((a: any) => a.name === "Report");
      const opened = await ana.request("GET", report.url);
      assert.equal(opened.text, "# Report\n");
      const messages = (await ana.read(`/conversations/${final.task.conversationId}/messages`)).messages;
      assert.deepEqual(
        messages.filter((m: any) => m.author.kind === "agent").map((m: any) => m.content),
        ["Done, all good."],
      );
    } finally {
      await running.stop();
    }
  });

  test("choice, input and review answers are typed", async () => {
    const answers: unknown[] = [];
    const running = await runningAgent("ts-questions", async (ctx) => {
      const choice = await ctx.askChoice("Where?", ["staging", "production"], { recommended: "staging" });
      const input = await ctx.askInput("Which ticket?", { format: "integer" });
      const review = await ctx.askReview("Read the plan", { content: "1. migrate\n2. verify" });
      answers.push(choice.optionIds, choice.label, input.text, review.approved, review.comment);
      return "asked";
    });
    try {
      const taskId = await newTask(running.config.agentId, "Questions");
      for (const response of [{ optionId: "production" }, { text: "42" }, { optionId: "request_changes", text: "add a rollback" }]) {
        const question = await openInteraction(taskId);
        await ana.send(`/interactions/${question.id}/respond`, { response });
        await until(async () => (await ana.read(`/interactions/${question.id}`)).status !== "requested", "the answer");
      }
      await taskIn(taskId, "succeeded");
      assert.deepEqual(answers, [["production"], "production", "42", false, "add a rollback"]);
    } finally {
      await running.stop();
    }
  });

  test("an exception marks the task failed with a short message", async () => {
    const running = await runningAgent("ts-failing", async () => {
      throw new RangeError("the disk is full");
    });
    try {
      const final = await taskIn(await newTask(running.config.agentId, "Doomed"), "failed");
      assert.equal(final.task.error, "RangeError: the disk is full");
    } finally {
      await running.stop();
    }
  });

  test("cancel stops a handler waiting for a person and the agent reports cancelled", async () => {
    let heard: unknown;
    const running = await runningAgent("ts-cancel", async (ctx) => {
      try {
        await ctx.askApproval("Wait for me");
      } catch (error) {
        heard = error;
        throw error;
      }
      return "not reached";
    });
    try {
      const taskId = await newTask(running.config.agentId, "Cancel me");
      await openInteraction(taskId);
      await ana.send(`/tasks/${taskId}/cancel`, { reason: "changed my mind" });
      const final = await taskIn(taskId, "cancelled");
      assert.ok(heard instanceof LineupError && heard.name === "TaskCancelled");
      assert.equal(counts(final.timeline)["interaction.cancelled"], 1);
    } finally {
      await running.stop();
    }
  });

  test("a task the hub ended while the agent was away is stopped and its reports are dropped", async () => {
    const seen: string[] = [];
    const { config, dir } = await pairedAgent("ts-ended");
    const make = () => {
      const agent = new Agent(config, { stateDir: dir, heartbeatIntervalMs: 200 });
      agent.task(async (ctx) => {
        try {
          await ctx.askApproval("Wait");
        } catch (error) {
          seen.push((error as Error).name);
          throw error;
        }
        seen.push("answered");
        return "never";
      });
      return agent;
    };
    let agent = make();
    let running = agent.run();
    await ana.confirmedOnline(config.agentId);
    const taskId = await newTask(config.agentId, "Ended by the hub");
    await openInteraction(taskId);
    agent.stop();
    await running;
    // stopping the agent interrupts the wait (unavailable), not the task: it resumes later
    assert.deepEqual(seen, ["LineupError"]);
    await ana.send(`/tasks/${taskId}/cancel`, {});
    const ended = await taskIn(taskId, "cancelled"); // by the hub: LINEUP_CANCEL_TIMEOUT=1
    agent = make();
    running = agent.run();
    try {
      await until(() => seen.length === 2, "the resumed handler to be stopped");
      await agent.drain();
    } finally {
      agent.stop();
      await running;
    }
    const store = new StateStore(join(dir, STATE_FILE_NAME), config.agentId);
    try {
      assert.equal(store.job(taskId)?.done, true);
      assert.equal(store.outboxSize, 0);
    } finally {
      store.close();
    }
    assert.equal(seen.length, 2);
    assert.ok(["TaskCancelled", "TaskEnded", "RequestWithdrawn"].includes(seen[1] ?? ""), seen.join());
    const after = await ana.read(`/tasks/${taskId}`);
    assert.equal(after.timeline.length, ended.timeline.length); // nothing recorded after the end
  });
});

describe("waiting and replay", () => {
  test("an unanswered interaction with expiresAt rejects with InteractionExpired", async () => {
    let heard: unknown;
    const running = await runningAgent("ts-expiry", async (ctx) => {
      try {
        await ctx.askInput("Quick, a number?", { expiresAt: new Date(Date.now() + 1500) });
      } catch (error) {
        heard = error;
      }
      return "gave up";
    });
    try {
      const taskId = await newTask(running.config.agentId, "Expiring");
      await taskIn(taskId, "succeeded"); // the report came after the hub's expiry: it was taken
      assert.ok(heard instanceof InteractionExpired, String(heard));
    } finally {
      await running.stop();
    }
  });

  test("tasks assigned while the agent was offline are replayed in order and each runs once", async () => {
    const ran: string[] = [];
    const { config, dir } = await pairedAgent("ts-offline");
    const make = () => {
      const agent = new Agent(config, { stateDir: dir, heartbeatIntervalMs: 200 });
      agent.task(async (ctx) => {
        ran.push(ctx.title);
        await ctx.progress(50);
        return ctx.title;
      });
      return agent;
    };
    let agent = make();
    let running = agent.run();
    await ana.confirmedOnline(config.agentId);
    agent.stop();
    await running;
    const first = await newTask(config.agentId, "first");
    const second = await newTask(config.agentId, "second");
    agent = make();
    running = agent.run();
    try {
      await taskIn(first, "succeeded");
      await taskIn(second, "succeeded");
    } finally {
      agent.stop();
      await running;
    }
    assert.deepEqual(ran, ["first", "second"]);
    agent = make(); // started again: nothing is run a second time
    running = agent.run();
    try {
      await until(() => agent.connected, "the agent to reconnect");
      await agent.drain();
    } finally {
      agent.stop();
      await running;
    }
    assert.deepEqual(ran, ["first", "second"]);
  });

  test("a cancelled task withdraws its pending tool call", async () => {
    const running = await runningAgent("ts-tool-cancel", async (ctx) => {
      await ctx.tools.confirm("Deploy now?");
      return "not reached";
    });
    try {
      const taskId = await newTask(running.config.agentId, "Withdraw the call");
      const call = await until(async () => (await ana.read(`/tool-calls?status=pending&taskId=${taskId}`)).toolCalls[0], "the tool call");
      await ana.send(`/tasks/${taskId}/cancel`, {});
      await taskIn(taskId, "cancelled");
      const after = await ana.read(`/tool-calls/${call.id ?? call.toolCallId}`);
      assert.equal(after.status, "cancelled");
    } finally {
      await running.stop();
    }
  });
});

describe("messages and tools", () => {
  test("a message handler replies in the message's conversation, streamed", async () => {
    const running = await runningAgent("ts-messages", async () => "unused", (agent) =>
      agent.onMessage(async (msg) => {
        async function* reply() {
          yield "echo: ";
          yield msg.content;
        }
        await msg.say(reply());
      }),
    );
    try {
      const conversation = await ana.send("/conversations", { title: "Chat", agentIds: [running.config.agentId] }, 201);
      await ana.send(`/conversations/${conversation.id}/messages`, { content: "hello", targetAgentId: running.config.agentId }, 201);
      const reply = await until(async () => {
        const { messages } = await ana.read(`/conversations/${conversation.id}/messages`);
        return messages.find((m: any) => m.author.kind === "agent");
      }, "the agent's reply");
      assert.equal(reply.content, "echo: hello");
    } finally {
      await running.stop();
    }
  });

  test("tools list returns the built-in catalogue and a choice in a task returns the option", async () => {
    let listed: string[] = [];
    let picked = "";
    const running = await runningAgent("ts-tools", async (ctx) => {
      listed = (await ctx.tools.list()).map((t) => String(t["name"]));
      picked = await ctx.tools.choice("Deploy where?", ["test", "staging"]);
      return picked;
    });
    try {
      const taskId = await newTask(running.config.agentId, "Tools");
      const call = await until(async () => {
        const { toolCalls } = await ana.read(`/tool-calls?status=pending&taskId=${taskId}`);
        return toolCalls[0];
      }, "the tool call");
      await ana.send(`/tool-calls/${call.id ?? call.toolCallId}/result`, { result: { message: "staging" } });
      await taskIn(taskId, "succeeded");
      assert.ok(listed.includes("choice") && listed.includes("calculator"), listed.join(","));
      assert.equal(picked, "staging");
    } finally {
      await running.stop();
    }
  });

  test("settings declared in the hello start at their defaults and follow what a person saves", async () => {
    const heard: Record<string, unknown>[] = [];
    const { config, dir } = await pairedAgent("ts-settings");
    const agent = new Agent(config, {
      stateDir: dir,
      settingsSchema: {
        type: "object",
        properties: { retries: { type: "integer", title: "Retries", minimum: 0, maximum: 5, default: 2 } },
      },
    });
    agent.onSettingsChange((values) => heard.push(values));
    const running = agent.run();
    try {
      await ana.confirmedOnline(config.agentId);
      assert.deepEqual(agent.settings, { retries: 2 });
      const saved = await ana.request("PUT", `/agents/${config.agentId}/settings`, { values: { retries: 4 } });
      assert.equal(saved.status, 200, saved.text);
      await until(() => agent.settings["retries"] === 4, "the saved settings to reach the agent");
      assert.deepEqual(heard.at(-1), { retries: 4 });
    } finally {
      agent.stop();
      await running;
    }
  });

  test("the agent's own log lines reach the Agents screen, without its credential", async () => {
    const { config, dir } = await pairedAgent("ts-logs");
    const agent = new Agent(config, { stateDir: dir, diagnosticsIntervalMs: 100 });
    const running = agent.run();
    try {
      await ana.confirmedOnline(config.agentId);
      const lines = await until(async () => {
        const found = (await ana.read(`/agents/${config.agentId}/logs`)).lines as { message: string; logger: string }[];
        return found.some((l) => l.message.startsWith("connected to")) ? found : undefined;
      }, "the agent's diagnostic lines");
      assert.ok(lines.every((l) => l.logger === "lineup.sdk"));
      assert.ok(lines.every((l) => !l.message.includes(config.credential)));
    } finally {
      agent.stop();
      await running;
    }
  });

  test("governed capabilities: a read runs at once, a write waits for the person's approval", async () => {
    const project = (await ana.send("/projects", { name: "Plant 1", context: "Assembly" }, 201)).id;
    await ana.send("/policy/rules", { capability: "scheduling.*", effect: "allow", projectId: project, roles: ["owner", "editor"] }, 201);
    const heard: string[] = [];
    let outcome: InvocationOutcome | undefined;
    let orders: unknown;
    const running = await runningAgent("ts-capabilities", async () => "unused", (agent) =>
      agent.onMessage(async (msg) => {
        const ids = (await msg.capabilities()).map((c) => c.id);
        assert.ok(ids.includes("scheduling.schedule.publish"), ids.join());
        orders = (await msg.invoke("scheduling.orders.query", { status: "open" })).raiseForStatus().output?.["orders"];
        const trial = (await msg.invoke("scheduling.schedule.preview", { horizonDays: 14 })).raiseForStatus().output ?? {};
        outcome = await msg.invoke(
          "scheduling.schedule.publish",
          { draftId: trial["draftId"], basedOnVersion: trial["basedOnVersion"] },
          { onStatus: (status) => void heard.push(status.status) },
        );
        await msg.say(`published ${String(outcome.output?.["publishedVersion"])}`);
      }),
    );
    try {
      const conversation = await ana.send("/conversations", { title: "Plan", agentIds: [running.config.agentId], projectId: project }, 201);
      await ana.send(`/conversations/${conversation.id}/messages`, { content: "Publish this week's plan", targetAgentId: running.config.agentId }, 201);
      const card = await until(async () => (await ana.read("/approvals?view=waiting")).approvals[0], "the publish confirm card");
      assert.equal(card.capability, "scheduling.schedule.publish");
      await ana.send(`/approvals/${card.id}/decision`, { decision: "approve" });
      await until(async () => {
        const { messages } = await ana.read(`/conversations/${conversation.id}/messages`);
        return messages.some((m: any) => m.content === "published 2");
      }, "the agent to say it published");
      assert.ok(Array.isArray(orders) && orders.length > 0);
      assert.equal(outcome?.status, "succeeded");
      assert.deepEqual(heard, ["waiting_for_approval", "accepted"]); // publishing is asynchronous
    } finally {
      await running.stop();
    }
  });

  test("rotation replaces the credential: the old one is refused, the new one connects", async () => {
    const { config, dir } = await pairedAgent("ts-rotation");
    const path = join(dir, "credentials.json");
    const rotated = await rotateCredential(config, path);
    assert.notEqual(rotated.credential, config.credential);
    assert.equal(loadConfig(path).credential, rotated.credential);
    await assert.rejects(new Agent(config, { stateDir: dir }).run(), { name: "ConnectionRefusedByHub" });
    const agent = new Agent(rotated, { stateDir: dir });
    const running = agent.run();
    try {
      await until(() => agent.connected, "the rotated agent to connect");
    } finally {
      agent.stop();
      await running;
    }
  });
});

describe("crash", () => {
  const credentialsIn = (dir: string) =>
    until(() => {
      try {
        return loadConfig(join(dir, "credentials.json"));
      } catch {
        return undefined;
      }
    }, "the example to pair");

  /** The example agent as a child process; `kill()` is SIGKILL, nothing is flushed. */
  function example(dir: string, workMs: number) {
    let child: ChildProcess | undefined;
    return {
      start(code?: string) {
        const log = openSync(join(dir, "agent.log"), "a");
        const args = [join(SDK_ROOT, "build", "examples", "agent.js"), "--hub", hub.url, "--state-dir", dir, "--work-ms", String(workMs)];
        child = spawn(process.execPath, code ? [...args, "--code", code] : args, { stdio: ["ignore", log, log] });
      },
      async kill(signal: NodeJS.Signals = "SIGKILL") {
        if (!child || child.exitCode !== null || child.signalCode !== null) return;
        const exited = new Promise((r) => child?.once("exit", r));
        child.kill(signal);
        await exited;
      },
      log: () => readFileSync(join(dir, "agent.log"), "utf-8").slice(-2000),
    };
  }

  async function assertDoneOnce(taskId: string) {
    const final = await taskIn(taskId, "succeeded");
    const seen = counts(final.timeline);
    for (const type of ["task.accepted", "task.child_created", "interaction.requested", "interaction.resolved", "artifact.created"]) {
      assert.equal(seen[type], 1, `${type}: ${seen[type]}`);
    }
    const opened = await ana.request("GET", final.artifacts[0].url);
    assert.match(opened.text, /^# Migrate the orders database/);
    assert.match(opened.text, /Approved by Ana/);
    const messages = (await ana.read(`/conversations/${final.task.conversationId}/messages`)).messages;
    assert.equal(messages.filter((m: any) => m.author.kind === "agent").length, 1);
    assert.equal(final.task.progress, 100);
  }

  test("the example agent killed while waiting for a person resumes after a restart without repeating a step", async () => {
    const dir = scratch();
    const agent = example(dir, 100);
    agent.start(await ana.pairingCode());
    try {
      const config = await credentialsIn(dir);
      await ana.confirmedOnline(config.agentId);
      const taskId = await newTask(config.agentId);
      const question = await openInteraction(taskId);
      assert.equal(question.request.risk, "high");
      const waiting = await taskIn(taskId, "waiting_for_human");
      assert.equal(waiting.children.length, 1);
      await agent.kill();
      await until(async () => (await ana.read(`/agents/${config.agentId}`)).status === "offline", "the hub to see the agent gone");
      // the person answers while the agent is down: the answer must not be lost
      await ana.send(`/interactions/${question.id}/respond`, { response: { optionId: "approve" } });
      agent.start(); // saved credentials and state, no code
      await assertDoneOnce(taskId);
    } catch (error) {
      throw new Error(`${String(error)}\n--- agent log ---\n${agent.log()}`);
    } finally {
      await agent.kill("SIGTERM");
    }
  });

  test("the example agent killed while sending its last reports resends them once after a restart", async () => {
    const dir = scratch();
    const agent = example(dir, 300);
    agent.start(await ana.pairingCode());
    try {
      const config = await credentialsIn(dir);
      await ana.confirmedOnline(config.agentId);
      const taskId = await newTask(config.agentId);
      const question = await openInteraction(taskId);
      await ana.send(`/interactions/${question.id}/respond`, { response: { optionId: "approve" } });
      await until(async () => {
        const detail = await ana.read(`/tasks/${taskId}`);
        return detail.task.progress === 70;
      }, "the agent to be working after the approval");
      await agent.kill(); // in the middle of its work: the report, the upload, the reply and the end to go
      agent.start();
      await assertDoneOnce(taskId);
    } catch (error) {
      throw new Error(`${String(error)}\n--- agent log ---\n${agent.log()}`);
    } finally {
      await agent.kill("SIGTERM");
    }
  });
});
