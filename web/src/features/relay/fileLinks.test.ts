import { afterEach, describe, expect, it } from "vitest";
import { interceptFileLinks, type TabLike } from "./fileLinks";
import type { FileLink } from "./tunnel";

function fakeTab(): TabLike {
  return { opener: "the app", location: { href: "about:blank" }, document: { title: "", body: { textContent: "" } }, close() {} };
}

const link: FileLink = {
  url: "https://im.example/api/v1/file/preview/chat/1/ana/x.md?filename=report.md",
  path: "file/preview/chat/1/ana/x.md",
  name: "report.md",
  mimeType: "text/markdown",
  size: 3,
  sha256: "b".repeat(64),
};

let stop: (() => void) | null = null;
afterEach(() => {
  stop?.();
  document.body.innerHTML = "";
});

function anchor(href: string): HTMLAnchorElement {
  const a = document.createElement("a");
  a.setAttribute("href", href);
  a.textContent = "open";
  document.body.append(a);
  return a;
}

describe("hub file links in relay mode", () => {
  it("opens a tab at the click and sends it to the address the agent answers", async () => {
    const asked: string[] = [];
    const tab = fakeTab();
    stop = interceptFileLinks(document, { fileLink: async (path) => (asked.push(path), link) }, { open: () => tab });
    const a = anchor("/api/workspaces/ws_1/files/file_2");
    const click = new MouseEvent("click", { bubbles: true, cancelable: true, button: 0 });
    a.dispatchEvent(click);
    expect(click.defaultPrevented).toBe(true); // the page does not go to its own origin's path
    expect(asked).toEqual(["/api/workspaces/ws_1/files/file_2"]);
    expect(tab.opener).toBeNull();
    await expect.poll(() => tab.location.href).toBe(link.url);
  });

  it("leaves other links alone", () => {
    let opened = 0;
    stop = interceptFileLinks(document, { fileLink: async () => link }, { open: () => (opened++, fakeTab()) });
    for (const href of ["https://example.org/report", "/api/workspaces/ws_1/tasks", "#task=1"]) {
      const click = new MouseEvent("click", { bubbles: true, cancelable: true, button: 0 });
      anchor(href).dispatchEvent(click);
      expect(click.defaultPrevented).toBe(false);
    }
    expect(opened).toBe(0);
  });

  it("says in the tab why a file did not open", async () => {
    const tab = fakeTab();
    stop = interceptFileLinks(document, { fileLink: async () => Promise.reject(new Error("There is no such file in this workspace.")) }, { open: () => tab });
    anchor("/api/workspaces/ws_1/files/gone").dispatchEvent(new MouseEvent("click", { bubbles: true, cancelable: true, button: 0 }));
    await expect.poll(() => tab.document.body?.textContent).toContain("There is no such file in this workspace.");
    expect(tab.location.href).toBe("about:blank");
  });
});
