import { describe, expect, it } from "vitest";
import { linkAttributes, linkKind } from "./links";

describe("agent-supplied links", () => {
  it("downloads a hub file in place, with the session", () => {
    expect(linkAttributes("/api/workspaces/ws_1/files/file_2")).toEqual({
      href: "/api/workspaces/ws_1/files/file_2",
      download: "",
    });
  });

  it("opens http(s) pages in a new tab without a referrer", () => {
    expect(linkAttributes("https://example.test/r.md")).toEqual({
      href: "https://example.test/r.md",
      target: "_blank",
      rel: "noreferrer noopener",
    });
    expect(linkKind("http://example.test")).toBe("web");
  });

  it.each([
    "javascript:alert(1)",
    " javascript:alert(1)",
    "JAVASCRIPT:alert(1)",
    "data:text/html,<script>alert(1)</script>",
    "file:///home/agent/report.md",
    "//evil.test/x",
    "/api/auth/me",
    "/api/workspaces/ws_1/files/f/../../x",
    "report.md",
  ])("never makes a link of %s", (url) => {
    expect(linkKind(url)).toBe("unsafe");
    expect(linkAttributes(url).href).toBeUndefined();
  });
});
