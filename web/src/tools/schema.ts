// A small JSON Schema checker: the subset the built-in tools' inputSchemas use (type,
// properties, required, enum, min/maxLength, pattern, minimum/maximum, items, min/maxItems,
// uniqueItems). The hub checks every call with a full draft 2020-12 validator first; the app
// checks again before it renders anything, so a tool never draws what it did not expect.

import type { JsonSchema } from "../api/types";

export interface Problem {
  /** Where, as the hub writes it: "options/1", or "" for the object itself. */
  path: string;
  problem: string;
}

function typeOf(value: unknown): string {
  if (value === null) return "null";
  if (Array.isArray(value)) return "array";
  if (typeof value === "number") return Number.isInteger(value) ? "integer" : "number";
  return typeof value;
}

function matchesType(value: unknown, type: string): boolean {
  const actual = typeOf(value);
  if (type === "number") return actual === "number" || actual === "integer";
  return actual === type;
}

function join(path: string, key: string | number): string {
  return path ? `${path}/${key}` : String(key);
}

const patterns = new Map<string, RegExp | null>();

function regex(pattern: string): RegExp | null {
  if (!patterns.has(pattern)) {
    try {
      patterns.set(pattern, new RegExp(pattern, "u"));
    } catch {
      patterns.set(pattern, null); // a pattern JavaScript cannot read: the hub checked it
    }
  }
  return patterns.get(pattern) ?? null;
}

function check(schema: JsonSchema, value: unknown, path: string, out: Problem[]): void {
  const type = schema.type;
  if (typeof type === "string" && !matchesType(value, type)) {
    out.push({ path, problem: `${JSON.stringify(value)} is not of type '${type}'` });
    return;
  }
  if (Array.isArray(schema.enum) && !schema.enum.some((v) => v === value)) {
    out.push({ path, problem: `${JSON.stringify(value)} is not one of ${JSON.stringify(schema.enum)}` });
  }
  if (typeof value === "string") {
    const length = [...value].length;
    if (typeof schema.minLength === "number" && length < schema.minLength) {
      out.push({ path, problem: `${JSON.stringify(value)} is too short` });
    }
    if (typeof schema.maxLength === "number" && length > schema.maxLength) {
      out.push({ path, problem: `the text is longer than ${schema.maxLength} characters` });
    }
    if (typeof schema.pattern === "string") {
      const re = regex(schema.pattern);
      if (re && !re.test(value)) out.push({ path, problem: `does not match '${schema.pattern}'` });
    }
  }
  if (typeof value === "number") {
    if (typeof schema.minimum === "number" && value < schema.minimum) {
      out.push({ path, problem: `${value} is less than the minimum of ${schema.minimum}` });
    }
    if (typeof schema.maximum === "number" && value > schema.maximum) {
      out.push({ path, problem: `${value} is greater than the maximum of ${schema.maximum}` });
    }
  }
  if (Array.isArray(value)) {
    if (typeof schema.minItems === "number" && value.length < schema.minItems) {
      out.push({ path, problem: `should have at least ${schema.minItems} items` });
    }
    if (typeof schema.maxItems === "number" && value.length > schema.maxItems) {
      out.push({ path, problem: `should have at most ${schema.maxItems} items` });
    }
    if (schema.uniqueItems === true) {
      const seen = new Set(value.map((v) => JSON.stringify(v)));
      if (seen.size !== value.length) out.push({ path, problem: "has repeated items" });
    }
    if (schema.items && typeof schema.items === "object") {
      value.forEach((item, i) => check(schema.items as JsonSchema, item, join(path, i), out));
    }
  }
  if (typeOf(value) === "object") {
    const object = value as Record<string, unknown>;
    const properties = (schema.properties ?? {}) as Record<string, JsonSchema>;
    for (const name of (schema.required as string[] | undefined) ?? []) {
      if (!(name in object)) out.push({ path, problem: `'${name}' is a required property` });
    }
    for (const [name, sub] of Object.entries(properties)) {
      if (name in object) check(sub, object[name], join(path, name), out);
    }
  }
}

/** Every way `value` breaks `schema` (empty when it fits). */
export function validate(schema: JsonSchema, value: unknown): Problem[] {
  const problems: Problem[] = [];
  check(schema, value, "", problems);
  return problems;
}

/** One sentence for a person, like the hub's: the first problem and where. */
export function describeProblems(problems: Problem[]): string {
  const first = problems[0];
  if (!first) return "";
  const where = first.path ? ` at '${first.path}'` : "";
  const more = problems.length > 1 ? ` (and ${problems.length - 1} more)` : "";
  return `The arguments do not match the tool's inputSchema${where}: ${first.problem}${more}`;
}
