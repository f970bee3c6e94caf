/**
 * The LineUp Agent SDK for TypeScript: connect an agent to a LineUp hub, take tasks, ask people.
 *
 *     import { Agent, loadConfig, pair } from "@lineup/sdk";
 *
 *     await pair("http://127.0.0.1:8000", "ABCD-EFGH", { name: "my-agent" }); // once
 *     const agent = new Agent(loadConfig());
 *     agent.task(async (ctx) => {
 *       await ctx.progress(30, "Planning");
 *       const approval = await ctx.askApproval("Run the migration?", { risk: "high" });
 *       return approval.approved ? "Migrated" : "Skipped";
 *     });
 *     await agent.run();
 *
 * The agent connects out over one WebSocket, keeps its outbox, cursor and journal in a local
 * file, and so survives dropped connections and restarts without losing an event or doing
 * anything twice — the same behaviour as the Python SDK (`lineup.sdk`), on the same wire
 * protocol (docs/protocol.md).
 */

export { Agent, type AgentOptions, type MessageHandler, type TaskHandler } from "./agent.js";
export { type InvokeOptions, InvocationOutcome, type StatusCallback } from "./capabilities.js";
export type { Answered, Approval, Choice, InputAnswer, Review } from "./answers.js";
export { type AgentConfig, agentHome, defaultCredentialsPath, describeConfig, loadConfig, saveConfig } from "./config.js";
export {
  type CallOptions,
  MessageContext,
  type QuestionOptions,
  TaskContext,
  type ToolReply,
  Tools,
  type UploadedFile,
} from "./context.js";
export {
  ConnectionRefusedByHub,
  InsecureConnection,
  InteractionExpired,
  JournalMismatch,
  LineupError,
  PairingFailed,
  RequestWithdrawn,
  TaskCancelled,
  TaskEnded,
} from "./errors.js";
export type * from "./generated/protocol.js";
export { type PairOptions, pair, rotateCredential } from "./pairing.js";
export { STATE_FILE_NAME, StateStore } from "./state.js";
export { fingerprintOf, normalizeFingerprint } from "./tls.js";
export { SDK_VERSION } from "./version.js";
