// The live transcript: `activity.*` facts of a task or conversation grouped into entries (a
// tool call with its result, a command with its output and exit code, a diff, a reasoning
// summary, the context a model was given, an error with its code) and token use added up. Pure;
// built from the log, so a reload or a reconnect shows the same entries. A conversation
// imported from a session file (`session.entries_imported`) shows the tool calls, commands,
// diffs, reasoning and token use of its active branch the same way, from what the file kept:
// summaries, not arguments or whole outputs.

export interface ActivityEvent {
  id: string;
  type: string;
  sequence?: number | null;
  occurredAt: string;
  payload: Record<string, unknown>;
}

export type EntryKind = "tool_call" | "command" | "file_change" | "reasoning" | "context" | "error";
export type EntryStatus = "running" | "succeeded" | "failed" | "cancelled";

export interface OutputPiece {
  offset: number;
  text: string;
  stream: "stdout" | "stderr";
}

export interface TranscriptEntry {
  activityId: string;
  kind: EntryKind;
  status: EntryStatus;
  /** Sequence of the first event of the entry, for ordering with other items. */
  sequence: number;
  startedAt: string;
  title: string | null;
  name: string | null;
  arguments: unknown;
  command: string | null;
  cwd: string | null;
  path: string | null;
  change: string | null;
  diff: string | null;
  diffUrl: string | null;
  text: string | null;
  /** A context entry's snapshot: the whole of what the model was given. */
  snapshotUrl: string | null;
  /** An error entry's code in the error taxonomy. */
  code: string | null;
  /** Inline output, in offset order, each offset once. */
  output: OutputPiece[];
  result: unknown;
  resultUrl: string | null;
  error: string | null;
  exitCode: number | null;
  outputUrl: string | null;
  outputChars: number | null;
  durationMs: number | null;
}

export interface TokenTotals {
  inputTokens: number;
  outputTokens: number;
  cachedInputTokens: number;
  turns: number;
  contextWindow: number | null;
  /** Input of the latest turn: how full the context window is now. */
  lastInputTokens: number;
}

export interface Transcript {
  entries: TranscriptEntry[];
  usage: TokenTotals | null;
}

const KINDS = new Set<EntryKind>(["tool_call", "command", "file_change", "reasoning", "context", "error"]);
/** Kinds that are complete when reported. */
const DONE_WHEN_STARTED = new Set<EntryKind>(["file_change", "reasoning", "context"]);

export function isActivityEvent(event: { type: string }): boolean {
  return event.type.startsWith("activity.");
}

export const IMPORTED = "session.entries_imported";

/** The events a transcript is built from: an agent's activity, and imported session entries. */
export function isTranscriptEvent(event: { type: string }): boolean {
  return isActivityEvent(event) || event.type === IMPORTED;
}

function str(v: unknown): string | null {
  return typeof v === "string" ? v : null;
}

function num(v: unknown): number | null {
  return typeof v === "number" && Number.isFinite(v) ? v : null;
}

function blank(activityId: string, event: ActivityEvent): TranscriptEntry {
  return {
    activityId,
    kind: "tool_call",
    status: "running",
    sequence: event.sequence ?? 0,
    startedAt: event.occurredAt,
    title: null,
    name: null,
    arguments: undefined,
    command: null,
    cwd: null,
    path: null,
    change: null,
    diff: null,
    diffUrl: null,
    text: null,
    snapshotUrl: null,
    code: null,
    output: [],
    result: undefined,
    resultUrl: null,
    error: null,
    exitCode: null,
    outputUrl: null,
    outputChars: null,
    durationMs: null,
  };
}

export function buildTranscript(events: readonly ActivityEvent[]): Transcript {
  const byId = new Map<string, TranscriptEntry>();
  const order: TranscriptEntry[] = [];
  let usage = null as TokenTotals | null;
  const seen = new Set<string>();
  const sorted = [...events].sort((a, b) => (a.sequence ?? 0) - (b.sequence ?? 0));
  for (const event of sorted) {
    if (!isTranscriptEvent(event) || seen.has(event.id)) continue;
    seen.add(event.id);
    const p = event.payload;
    if (event.type === IMPORTED) {
      usage = addImported(event, byId, order, usage);
      continue;
    }
    if (event.type === "activity.usage") {
      const input = num(p.inputTokens) ?? 0;
      usage = {
        inputTokens: (usage?.inputTokens ?? 0) + input,
        outputTokens: (usage?.outputTokens ?? 0) + (num(p.outputTokens) ?? 0),
        cachedInputTokens: (usage?.cachedInputTokens ?? 0) + (num(p.cachedInputTokens) ?? 0),
        turns: (usage?.turns ?? 0) + 1,
        contextWindow: num(p.contextWindow) ?? usage?.contextWindow ?? null,
        lastInputTokens: input,
      };
      continue;
    }
    const activityId = str(p.activityId);
    if (!activityId) continue;
    let entry = byId.get(activityId);
    if (!entry) {
      entry = blank(activityId, event);
      byId.set(activityId, entry);
      order.push(entry);
    }
    if (event.type === "activity.started") {
      const kind = str(p.kind) as EntryKind | null;
      entry.kind = kind && KINDS.has(kind) ? kind : "tool_call";
      entry.startedAt = event.occurredAt;
      entry.title = str(p.title);
      entry.name = str(p.name);
      entry.arguments = p.arguments;
      entry.command = str(p.command);
      entry.cwd = str(p.cwd);
      entry.path = str(p.path);
      entry.change = str(p.change);
      entry.diff = str(p.diff);
      entry.diffUrl = str(p.diffUrl);
      entry.text = str(p.text);
      entry.snapshotUrl = str(p.snapshotUrl);
      entry.code = str(p.code);
      // a diff, a reasoning summary and a context are complete when reported; an error failed
      if (entry.status === "running" && DONE_WHEN_STARTED.has(entry.kind)) entry.status = "succeeded";
      if (entry.status === "running" && entry.kind === "error") entry.status = "failed";
    } else if (event.type === "activity.output") {
      const offset = num(p.offset) ?? 0;
      const text = str(p.chunk) ?? "";
      if (!entry.output.some((o) => o.offset === offset)) {
        entry.output.push({ offset, text, stream: p.stream === "stderr" ? "stderr" : "stdout" });
        entry.output.sort((a, b) => a.offset - b.offset);
      }
    } else if (event.type === "activity.finished") {
      const status = str(p.status);
      entry.status = status === "failed" || status === "cancelled" ? status : "succeeded";
      entry.result = p.result;
      entry.resultUrl = str(p.resultUrl);
      entry.error = str(p.error);
      entry.exitCode = num(p.exitCode);
      entry.outputUrl = str(p.outputUrl);
      entry.outputChars = num(p.outputChars);
      entry.durationMs = num(p.durationMs);
    }
  }
  return { entries: order, usage };
}

const RESULT_STATUS: Record<string, EntryStatus> = {
  succeeded: "succeeded",
  accepted: "succeeded",
  failed: "failed",
  unknown_result: "failed",
  expired: "cancelled",
  cancelled: "cancelled",
};

/** The shown entries of one `session.entries_imported` event into the transcript's entries. */
function addImported(
  event: ActivityEvent,
  byId: Map<string, TranscriptEntry>,
  order: TranscriptEntry[],
  usage: TokenTotals | null,
): TokenTotals | null {
  const items = Array.isArray(event.payload.entries) ? (event.payload.entries as unknown[]) : [];
  for (const item of items) {
    const { entry, shown } = (item ?? {}) as { entry?: Record<string, unknown>; shown?: unknown };
    if (!entry || shown !== true) continue;
    const id = str(entry.id);
    if (!id) continue;
    const type = str(entry.type);
    if (type === "usage") {
      const input = num(entry.inputTokens) ?? 0;
      usage = {
        inputTokens: (usage?.inputTokens ?? 0) + input,
        outputTokens: (usage?.outputTokens ?? 0) + (num(entry.outputTokens) ?? 0),
        cachedInputTokens: (usage?.cachedInputTokens ?? 0) + (num(entry.cachedInputTokens) ?? 0),
        turns: (usage?.turns ?? 0) + 1,
        contextWindow: num(entry.contextWindow) ?? usage?.contextWindow ?? null,
        lastInputTokens: input,
      };
      continue;
    }
    if (type === "tool_result") {
      const call = byId.get(`session:${str(entry.callId) ?? ""}`);
      if (!call) continue;
      call.status = RESULT_STATUS[str(entry.status) ?? ""] ?? "succeeded";
      call.error = str(entry.error);
      call.exitCode = num(entry.exitCode);
      call.outputChars = num(entry.outputChars);
      call.durationMs = num(entry.durationMs);
      const summary = str(entry.summary);
      if (call.kind === "command") {
        if (summary) call.output = [{ offset: 0, text: summary, stream: "stdout" }];
      } else {
        call.result = summary ?? undefined;
      }
      continue;
    }
    const kind: EntryKind | null =
      type === "tool_call" ? "tool_call" : type === "command" ? "command" : type === "file_change" ? "file_change" : type === "reasoning" ? "reasoning" : null;
    if (!kind) continue;
    const made = blank(`session:${id}`, event);
    made.kind = kind;
    made.startedAt = str(entry.timestamp) ?? event.occurredAt;
    made.title = str(entry.title);
    made.name = str(entry.name);
    made.command = str(entry.command);
    made.cwd = str(entry.cwd);
    made.path = str(entry.path);
    made.change = str(entry.change);
    made.diff = kind === "file_change" ? str(entry.summary) : null;
    made.text = str(entry.text);
    if (kind === "file_change" || kind === "reasoning") made.status = "succeeded";
    byId.set(made.activityId, made);
    order.push(made);
  }
  return usage;
}

export interface DiffLine {
  sign: "+" | "−" | " " | "@";
  text: string;
}

/** A unified diff's lines, marked: additions `+`, removals `−`, hunk headers `@`. */
export function diffLines(diff: string): DiffLine[] {
  const out: DiffLine[] = [];
  for (const line of diff.replace(/\n$/, "").split("\n")) {
    if (line.startsWith("+++") || line.startsWith("---") || line.startsWith("diff ") || line.startsWith("index ")) {
      continue; // file headers: the entry names the file
    }
    if (line.startsWith("@@")) out.push({ sign: "@", text: line });
    else if (line.startsWith("+")) out.push({ sign: "+", text: line.slice(1) });
    else if (line.startsWith("-")) out.push({ sign: "−", text: line.slice(1) });
    else out.push({ sign: " ", text: line.startsWith(" ") ? line.slice(1) : line });
  }
  return out;
}

export function diffStats(diff: string): { added: number; removed: number } {
  let added = 0;
  let removed = 0;
  for (const l of diffLines(diff)) {
    if (l.sign === "+") added++;
    else if (l.sign === "−") removed++;
  }
  return { added, removed };
}

/** One line saying what an entry is. */
export function entryLabel(entry: TranscriptEntry): string {
  if (entry.title) return entry.title;
  switch (entry.kind) {
    case "tool_call":
      return `Tool: ${entry.name ?? "unknown"}`;
    case "command":
      return `$ ${entry.command ?? ""}`;
    case "file_change": {
      const verb = entry.change === "add" ? "Added" : entry.change === "delete" ? "Deleted" : "Changed";
      return `${verb} ${entry.path ?? "a file"}`;
    }
    case "reasoning":
      return "Reasoning";
    case "context":
      return "Context given to the model";
    case "error":
      return `Error${entry.code ? ` (${entry.code})` : ""}`;
  }
}

export function formatTokens(n: number): string {
  if (n >= 1_000_000) return `${(n / 1_000_000).toFixed(1)}M`;
  if (n >= 10_000) return `${Math.round(n / 1000)}k`;
  if (n >= 1000) return `${(n / 1000).toFixed(1)}k`;
  return String(n);
}
