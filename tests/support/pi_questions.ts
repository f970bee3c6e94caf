/**
 * A Pi extension for the Pi driver's tests: a tool that asks the person through Pi's own
 * dialogs (`ctx.ui.select`, then `ctx.ui.confirm`), as an operator's extension might.
 */
export default function questions(pi: any): void {
	pi.registerTool({
		name: "pick_colour",
		label: "pick_colour",
		description: "Let the person pick a colour.",
		parameters: { type: "object", properties: {} },
		async execute(_id: string, _params: unknown, signal: AbortSignal | undefined, _onUpdate: unknown, ctx: any) {
			const colour = await ctx.ui.select("Pick a colour", ["red", "blue"], { signal });
			const sure = await ctx.ui.confirm("Sure?", `You picked ${colour}.`, { signal });
			return { content: [{ type: "text", text: `picked ${colour}, sure: ${sure}` }], details: {} };
		},
	});
}
