/**
 * LineUp's bridge inside Pi, loaded with `pi --mode rpc -e <this file>` by LineUp's Pi driver
 * (`lineup.engines.pi`). It talks to LineUp over the RPC pipe Pi already has, through Pi's
 * extension UI protocol: a question is an `input` dialog titled `lineup.bridge` whose
 * placeholder is a JSON request and whose answer is a JSON reply; a one-way report is a
 * `notify` whose message starts with `lineup.bridge `. Every question passes Pi's abort
 * signal, so an interrupted turn never waits for an answer.
 *
 * What it does, from the JSON file named by `LINEUP_PI_BRIDGE`:
 * - registers LineUp's tools (`tools`) as Pi tools; a call is answered by LineUp's host;
 * - asks the person before Pi runs a tool named in `ask_before` (bash, edit, write by
 *   default); a denial blocks the call and tells the model why, and a call allowed with an
 *   input the person edited runs with that input (Pi runs what `event.input` holds once the
 *   hook returns; a path changed by the person is checked again);
 * - refuses edit and write outside the working directory (`confine_writes`);
 * - reports each file edit or write that succeeded with the file's content before and after,
 *   so LineUp can show it as a diff.
 *
 * It imports nothing but Node's own modules: Pi loads it from LineUp's package directory,
 * where no node_modules are.
 */
import { existsSync, readFileSync, realpathSync, statSync } from "node:fs";
import { dirname, resolve, sep } from "node:path";

const BRIDGE = "lineup.bridge";
/** Files larger than this are reported without their content. */
const MAX_CONTENT = 256 * 1024;

interface ToolSpec {
	name: string;
	description: string;
	input_schema: Record<string, unknown>;
}

interface BridgeConfig {
	tools: ToolSpec[];
	ask_before: string[];
	confine_writes: boolean;
}

interface FileState {
	exists: boolean;
	text: string | null;
	size: number;
}

function loadConfig(): BridgeConfig {
	const path = process.env.LINEUP_PI_BRIDGE;
	const empty: BridgeConfig = { tools: [], ask_before: [], confine_writes: true };
	if (!path) return empty;
	return { ...empty, ...JSON.parse(readFileSync(path, "utf8")) };
}

async function ask(ctx: any, request: Record<string, unknown>, signal: AbortSignal | undefined): Promise<any> {
	const answer = await ctx.ui.input(BRIDGE, JSON.stringify(request), { signal });
	if (answer === undefined || answer === null) return undefined;
	return JSON.parse(answer);
}

function isObject(value: unknown): value is Record<string, unknown> {
	return typeof value === "object" && value !== null && !Array.isArray(value);
}

function tell(ctx: any, report: Record<string, unknown>): void {
	ctx.ui.notify(`${BRIDGE} ${JSON.stringify(report)}`, "info");
}

function target(cwd: string, path: string): string {
	return resolve(cwd, path.startsWith("@") ? path.slice(1) : path);
}

/** The path with its deepest existing ancestor's symlinks resolved. */
function realTarget(path: string): string {
	let existing = path;
	const rest: string[] = [];
	while (!existsSync(existing)) {
		const parent = dirname(existing);
		if (parent === existing) break;
		rest.unshift(existing.slice(parent.length).replace(/^[\\/]+/, ""));
		existing = parent;
	}
	let real = existing;
	try {
		real = realpathSync(existing);
	} catch {
		// unreadable: judged as written
	}
	return rest.length > 0 ? resolve(real, ...rest) : real;
}

function inside(root: string, path: string): boolean {
	const base = realTarget(root);
	return path === base || path.startsWith(base.endsWith(sep) ? base : base + sep);
}

function fileState(path: string): FileState {
	try {
		const stat = statSync(path);
		if (!stat.isFile()) return { exists: true, text: null, size: stat.size };
		if (stat.size > MAX_CONTENT) return { exists: true, text: null, size: stat.size };
		return { exists: true, text: readFileSync(path, "utf8"), size: stat.size };
	} catch {
		return { exists: false, text: null, size: 0 };
	}
}

export default function lineup(pi: any): void {
	const config = loadConfig();
	const changes = new Map<string, { path: string; before: FileState }>();

	for (const tool of config.tools) {
		pi.registerTool({
			name: tool.name,
			label: tool.name,
			description: tool.description,
			promptSnippet: tool.description.split("\n")[0],
			parameters: tool.input_schema,
			async execute(toolCallId: string, params: unknown, signal: AbortSignal | undefined, _onUpdate: unknown, ctx: any) {
				const answer = await ask(ctx, { op: "tool", call_id: toolCallId, name: tool.name, arguments: params }, signal);
				if (answer === undefined) {
					throw new Error(`${tool.name} was cancelled: the turn was interrupted before it answered.`);
				}
				if (!answer.ok) throw new Error(String(answer.text || `${tool.name} failed`));
				return { content: [{ type: "text", text: String(answer.text ?? "") }], details: {} };
			},
		});
	}

	pi.on("tool_call", async (event: any, ctx: any) => {
		const name: string = event.toolName;
		const input = event.input ?? {};
		let change: { path: string; before: FileState } | undefined;
		if (name === "edit" || name === "write") {
			const path = realTarget(target(ctx.cwd, String(input.path ?? "")));
			if (config.confine_writes && !inside(ctx.cwd, path)) {
				return {
					block: true,
					reason: `LineUp confines this session to ${ctx.cwd}; ${String(input.path)} is outside it, so it was not changed.`,
				};
			}
			change = { path, before: fileState(path) };
		}
		if (config.ask_before.includes(name)) {
			const answer = await ask(
				ctx,
				{ op: "approve", call_id: event.toolCallId, tool: name, input, cwd: ctx.cwd, change: change ?? null },
				ctx.signal,
			);
			if (answer === undefined) {
				return { block: true, reason: "The turn was interrupted before the person answered, so this did not run." };
			}
			if (!answer.allow) {
				const why = answer.reason ? `: ${answer.reason}` : ".";
				return { block: true, reason: `The person declined this${why}` };
			}
			if (isObject(answer.input) && isObject(event.input)) {
				// allowed as the person edited it: Pi runs the call with event.input as it is now
				for (const key of Object.keys(event.input)) delete event.input[key];
				Object.assign(event.input, answer.input);
				if (change) {
					const path = realTarget(target(ctx.cwd, String(event.input.path ?? "")));
					if (config.confine_writes && !inside(ctx.cwd, path)) {
						return {
							block: true,
							reason: `LineUp confines this session to ${ctx.cwd}; ${String(event.input.path)} is outside it, so it was not changed.`,
						};
					}
					change = { path, before: fileState(path) };
				}
			}
		}
		if (change) changes.set(event.toolCallId, change);
		return undefined;
	});

	pi.on("tool_result", async (event: any, ctx: any) => {
		const change = changes.get(event.toolCallId);
		if (!change) return undefined;
		changes.delete(event.toolCallId);
		if (!event.isError) {
			tell(ctx, {
				op: "file_change",
				call_id: event.toolCallId,
				tool: event.toolName,
				path: change.path,
				before: change.before,
				after: fileState(change.path),
			});
		}
		return undefined;
	});
}
