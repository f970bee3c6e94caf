// The app's tools (seed 000 §4): registry, cards, the runner that answers automatic tools.

export { TOOL_MODULES, toolModule, checkCall, registeredDefinitions } from "./registry";
export { BUILTIN_DEFINITIONS, actionSchema } from "./definitions";
export { ToolCallCard, applyToolEvent, toolStatus, type ToolCardApi } from "./ToolCallCard";
export { InboxTools, countToolCards, inboxEntries } from "./InboxTools";
export { CanvasCard } from "./canvas/CanvasCard";
export { CanvasView } from "./canvas/CanvasView";
export { useToolRunner, answerAutomatically, automaticAnswer, type ToolRunnerApi } from "./runner";
export { validate, describeProblems } from "./schema";
export type { ToolModule, ToolOutcome, ToolRenderProps } from "./types";
