// Hub file links in relay mode. The app's links to files (an artifact, an attachment, a
// transcript's whole output: `/api/workspaces/…/files/…`) point at the hub's origin, which in
// relay mode is no hub: a click on one is taken here instead. The relay host stores the file
// with TangSengDaoDao (once per content) and answers its address, which opens in a new tab.
//
// The tab is opened at the click, while the browser still counts it as the person's doing (a
// tab opened after the round trip through WuKongIM would be blocked as a pop-up), and sent to
// the file's address when it is known; if the file cannot be had, the tab says why.

import { linkKind } from "../../lib/links";
import type { FileLink } from "./tunnel";

export interface FileOpener {
  fileLink(path: string): Promise<FileLink>;
}

/** What a tab needs to be for this (a browser window, or a stand-in in tests). */
export interface TabLike {
  opener: unknown;
  location: { href: string };
  document: { title: string; body: { textContent: string | null } | null };
  close(): void;
}

export interface FileLinkOptions {
  open?: () => TabLike | null;
}

/** Take clicks on hub file links in `root`; returns the function that stops it. */
export function interceptFileLinks(root: Document, opener: FileOpener, options: FileLinkOptions = {}): () => void {
  const open = options.open ?? (() => window.open("", "_blank") as TabLike | null);
  const onClick = (event: MouseEvent) => {
    if (event.defaultPrevented || event.button !== 0) return;
    const anchor = (event.target as Element | null)?.closest?.("a[href]");
    const href = anchor?.getAttribute("href");
    if (!href || linkKind(href) !== "hub-file") return;
    event.preventDefault();
    const tab = open();
    if (tab) {
      tab.opener = null; // the file's page must not reach back into the app
      tab.document.title = "Opening the file…";
      if (tab.document.body) tab.document.body.textContent = "Opening the file through the relay…";
    }
    void openFile(opener, href, tab);
  };
  root.addEventListener("click", onClick, true);
  return () => root.removeEventListener("click", onClick, true);
}

/** Ask the agent for the file's address and send the tab there (or say why not). */
export async function openFile(opener: FileOpener, path: string, tab: TabLike | null): Promise<FileLink | null> {
  try {
    const link = await opener.fileLink(path);
    if (tab) tab.location.href = link.url;
    return link;
  } catch (error) {
    const why = error instanceof Error ? error.message : String(error);
    if (tab?.document.body) {
      tab.document.title = "The file did not open";
      tab.document.body.textContent = `The file could not be opened: ${why}`;
    }
    return null;
  }
}
