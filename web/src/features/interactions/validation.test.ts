import { describe, expect, it } from "vitest";
import { describeResponse, editedInput, validateInput } from "./validation";
import { makeInteraction } from "../../test/fixtures";

describe("input validation", () => {
  it.each([
    ["email", "a@b.co", null],
    ["email", "a@b", "Enter an email address, like name@example.com."],
    ["url", "http://x.test/a?b", null],
    ["url", "ftp://x.test", "Enter a web address starting with http:// or https://."],
    ["url", "https://has space.test", "Enter a web address starting with http:// or https://."],
    ["number", "-3.5e2", null],
    ["number", "abc", "Enter a number, like 3 or 2.5."],
    ["integer", "-7", null],
    ["integer", "7.0", "Enter a whole number, like 3."],
    ["text", "anything", null],
  ] as const)("%s %j → %j", (format, value, expected) => {
    expect(validateInput({ format }, value)).toBe(expected);
  });

  it("matches the pattern against the whole text", () => {
    expect(validateInput({ pattern: "v\\d+" }, "v12")).toBeNull();
    expect(validateInput({ pattern: "v\\d+" }, "xv12")).toMatch(/expected form/);
  });
});

describe("answers in words", () => {
  it("names options by their labels, other answers and notes", () => {
    const choice = makeInteraction({
      type: "choice",
      options: [
        { id: "a", label: "Alpha" },
        { id: "b", label: "Beta" },
      ],
      allowOther: true,
      multiple: true,
    });
    expect(describeResponse({ request: choice.request, response: { optionIds: ["a", "other"], text: "Gamma" } })).toBe(
      "Alpha, Other: “Gamma”",
    );
    const approval = makeInteraction({ type: "approval" });
    expect(describeResponse({ request: approval.request, response: { optionId: "reject", text: "Too risky" } })).toBe(
      "Reject — note: “Too risky”",
    );
    const input = makeInteraction({ type: "input" });
    expect(describeResponse({ request: input.request, response: { text: "https://x.test" } })).toBe("https://x.test");
  });
});

describe("an approval's edited input", () => {
  const proposed = { path: "notes.txt", text: "draft" };

  it("is the edited object, or nothing when it says the same as the proposed one", () => {
    expect(editedInput('{"path": "notes.txt", "text": "final"}', proposed)).toEqual({
      input: { path: "notes.txt", text: "final" },
      error: null,
    });
    expect(editedInput('{\n  "text": "draft",\n  "path": "notes.txt"\n}', proposed)).toEqual({ input: null, error: null });
  });

  it("must be valid JSON, and an object", () => {
    expect(editedInput('{"path": ', proposed).error).toMatch(/^The input is not valid JSON/);
    expect(editedInput("[1, 2]", proposed).error).toBe("The input must be a JSON object: { … }.");
    expect(editedInput("null", proposed).error).toBe("The input must be a JSON object: { … }.");
  });

  it("must fit the hub's limit", () => {
    const big = JSON.stringify({ text: "x".repeat(70_000) });
    expect(editedInput(big, proposed).error).toMatch(/at most 65,536 are taken/);
  });

  it("reads back in words as an allowance with an edited input", () => {
    const approval = makeInteraction({ type: "approval", editableInput: proposed });
    expect(describeResponse({ request: approval.request, response: { optionId: "approve", input: { text: "final" } } })).toBe(
      "Approve with an edited input",
    );
  });
});
