import { describe, expect, it } from "vitest";
import { actionSchema, builtinDefinition, BUILTIN_DEFINITIONS } from "./definitions";
import { checkCall } from "./registry";
import { describeProblems, validate } from "./schema";

const schemaOf = (name: string, action: string | null = null) => actionSchema(builtinDefinition(name), action)!;

describe("the JSON Schema subset", () => {
  it("knows the five built-ins in seed 000's three types", () => {
    expect(BUILTIN_DEFINITIONS.map((d) => [d.name, d.type])).toEqual([
      ["choice", "action"],
      ["confirm", "action"],
      ["input", "action"],
      ["calculator", "toolset"],
      ["canvas", "app"],
    ]);
  });

  it("accepts arguments that fit and lists every problem of those that do not", () => {
    expect(validate(schemaOf("choice"), { question: "Where?", options: ["a", "b"] })).toEqual([]);
    const problems = validate(schemaOf("choice"), { question: "", options: ["a", "a", 3] });
    expect(problems.map((p) => p.path)).toEqual(["question", "options", "options/2"]);
    expect(validate(schemaOf("choice"), { options: ["a", "b"] })).toEqual([
      { path: "", problem: "'question' is a required property" },
    ]);
  });

  it("tells numbers from integers and refuses booleans and strings for numbers", () => {
    expect(validate(schemaOf("calculator", "add"), { a: 1.5, b: 2 })).toEqual([]);
    expect(validate(schemaOf("calculator", "add"), { a: "1", b: true }).map((p) => p.path)).toEqual(["a", "b"]);
    expect(validate(schemaOf("canvas", "open"), { width: 1.5, height: 10 }).map((p) => p.path)).toEqual(["width"]);
    expect(validate(schemaOf("canvas", "open"), { width: 5000, height: 0 }).map((p) => p.path)).toEqual(["width", "height"]);
  });

  it("checks enums, lengths and patterns as the hub does", () => {
    expect(validate(schemaOf("input"), { question: "?", format: "date" })[0]?.path).toBe("format");
    const draw = schemaOf("canvas", "draw");
    expect(validate(draw, { instance_id: "i", path: "M10 10 L50 50", color: "#f00", width: 3 })).toEqual([]);
    expect(validate(draw, { instance_id: "i", path: "<svg onload=x>" })[0]?.path).toBe("path");
    expect(validate(draw, { instance_id: "i", path: "M0 0", color: "url(#x)" })[0]?.path).toBe("color");
    expect(validate(draw, { instance_id: "i", path: "M0 0" + " L1 1".repeat(3000) })[0]?.problem).toMatch(/longer than 10000/);
  });

  it("says the first problem in one sentence", () => {
    const problems = validate(schemaOf("calculator", "divide"), { a: "x" });
    expect(describeProblems(problems)).toBe(
      "The arguments do not match the tool's inputSchema: 'b' is a required property (and 1 more)",
    );
    expect(describeProblems([])).toBe("");
  });

  it("finds the action's schema; an unknown tool or action cannot be rendered", () => {
    expect(checkCall({ name: "choice", action: "select", arguments: { question: "?", options: ["a", "b"] } }).problems).toEqual([]);
    expect(checkCall({ name: "calculator", action: "power", arguments: {} }).message).toMatch(/no action "power"/);
    expect(checkCall({ name: "fax", action: null, arguments: {} }).message).toMatch(/no tool called fax/);
  });
});
