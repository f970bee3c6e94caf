/**
 * An example adapter: pairs with a code (first run), takes tasks, reports progress and a
 * child task, asks its person for approval, writes a report as an artifact and streams a
 * reply; answers people's messages with a streamed reply too.
 *
 *     node build/examples/agent.js --hub http://127.0.0.1:8000 --code ABCD-EFGH   # first run
 *     node build/examples/agent.js --hub http://127.0.0.1:8000                    # later runs
 *
 * In your own project import from "@lineup/sdk" instead of "../src/index.js".
 */

import { join } from "node:path";
import { parseArgs } from "node:util";
import { Agent, type AgentConfig, agentHome, loadConfig, pair } from "../src/index.js";

const { values } = parseArgs({
  options: {
    hub: { type: "string", default: "http://127.0.0.1:8000" },
    code: { type: "string" },
    name: { type: "string", default: "ts-example-agent" },
    "state-dir": { type: "string" },
    "work-ms": { type: "string", default: "200" },
  },
});

const stateDir = values["state-dir"] ?? join(agentHome(), "ts-example");
const credentials = join(stateDir, "credentials.json");
const workMs = Number(values["work-ms"]);

let config: AgentConfig;
if (values.code) {
  config = await pair(values.hub, values.code, { name: values.name, credentialsPath: credentials });
  console.log(`paired as ${config.agentId}; a person now confirms it in LineUp`);
} else {
  config = loadConfig(credentials);
}

const agent = new Agent(config, { stateDir, log: (level, message) => console.log(`${level}: ${message}`) });
const work = (): Promise<void> => new Promise((resolve) => setTimeout(resolve, workMs));

agent.task(async (ctx) => {
  await ctx.progress(10, "Reading the request");
  await work();
  const checks = await ctx.child("Pre-flight checks");
  await ctx.childStatus(checks, "succeeded", { summary: "All checks passed" });
  await ctx.progress(40, "Pre-flight checks passed");
  const approval = await ctx.askApproval(`Go ahead with “${ctx.title}”?`, {
    why: "The checks passed; the next step changes things.",
    impact: "Runs the task for real.",
    risk: "high",
    details: { task: ctx.title },
  });
  const who = approval.byName ?? approval.by;
  if (!approval.approved) {
    await ctx.say(`Stopped: ${who} declined. Nothing was changed.`);
    return "Declined";
  }
  await ctx.progress(70, "Working");
  await work();
  const report = await ctx.step("write report", () => `# ${ctx.title}\n\n${ctx.description ?? ""}\n\nApproved by ${who}; done.\n`);
  await ctx.uploadArtifact("Report", Buffer.from(report), { fileName: "report.md", mimeType: "text/markdown", summary: "What was done" });
  await ctx.say(`Done: ${who} approved, the report is attached.`);
  return "Done";
});

agent.onMessage(async (msg) => {
  async function* reply(): AsyncGenerator<string> {
    yield "You said: ";
    for (const word of msg.content.split(" ")) yield `${word} `;
  }
  await msg.say(reply());
});

const stop = (): void => agent.stop();
process.on("SIGTERM", stop);
process.on("SIGINT", stop);
await agent.run();
