import { describe, expect, it, vi } from "vitest";
import { takeLaunchToken } from "./launchToken";

function at(href: string) {
  const history = { state: null, replaceState: vi.fn() };
  const token = takeLaunchToken({ href }, history);
  const replaced = history.replaceState.mock.calls[0]?.[2] as string | undefined;
  return { token, replaced, history };
}

describe("the launch token", () => {
  it("is read from the fragment and removed from the address", () => {
    const { token, replaced } = at("http://192.168.1.5:9527/#token=k7wq-3hxa-p2mn");
    expect(token).toBe("k7wq-3hxa-p2mn");
    expect(replaced).toBe("/");
  });

  it("is read from the query too, keeping the rest of the address", () => {
    const { token, replaced } = at("http://h:9527/tasks?task=task_1&token=s%20ecret#x=1");
    expect(token).toBe("s ecret");
    expect(replaced).toBe("/tasks?task=task_1#x=1");
  });

  it("leaves an address without a token alone", () => {
    const { token, history } = at("http://h:9527/inbox?task=task_1#top");
    expect(token).toBeNull();
    expect(history.replaceState).not.toHaveBeenCalled();
  });

  it("treats an empty token as none, but still cleans the address", () => {
    const { token, replaced } = at("http://h:9527/#token=");
    expect(token).toBeNull();
    expect(replaced).toBe("/");
  });
});
