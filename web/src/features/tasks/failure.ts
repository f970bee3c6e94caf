// What a task's error says in words: the hub's view allows an agent's error object as well as
// a sentence, and an object is shown as its JSON rather than failing to render.

import type { Task } from "../../api/types";

export function failureText(task: Task): string | null {
  const { error } = task;
  if (error === null || error === undefined || error === "") return null;
  return typeof error === "string" ? error : JSON.stringify(error);
}
