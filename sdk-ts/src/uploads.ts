/** Files an agent stores in the hub for its people to open (docs/protocol.md §7.14). */

import { createHash } from "node:crypto";
import type { AgentConfig } from "./config.js";
import type { UploadedFile } from "./context.js";
import { InsecureConnection, LineupError } from "./errors.js";
import { failure } from "./pairing.js";
import { hubRequest, trustFor } from "./tls.js";
import { pause } from "./waiters.js";

/** Store a file, retried while the hub is unreachable; the idempotency key makes a retry (or a
 * resumed handler's repeat) find the file already stored instead of adding another. */
export async function uploadFile(
  config: AgentConfig,
  file: { name: string; content: Buffer; mimeType: string | undefined; key: string },
  retry: { stop: AbortSignal; delay: (attempt: number) => number },
): Promise<UploadedFile> {
  const { name, content, mimeType, key } = file;
  for (let attempt = 0; ; attempt++) {
    let response: Response;
    try {
      const trust = await trustFor(config.hubUrl, config.tlsFingerprint);
      response = await hubRequest(`${config.hubUrl}/api/agent/artifacts?name=${encodeURIComponent(name)}`, {
        method: "POST",
        headers: {
          Authorization: `Bearer ${config.credential}`,
          "Content-Type": mimeType ?? guessType(name),
          "Idempotency-Key": key,
          "X-Content-SHA256": createHash("sha256").update(content).digest("hex"),
        },
        body: content,
      }, trust);
    } catch (error) {
      if (error instanceof InsecureConnection) throw error;
      await pause(retry.delay(attempt), retry.stop);
      if (retry.stop.aborted) throw new LineupError("unavailable", "The agent is stopping.");
      continue;
    }
    if (response.status === 200 || response.status === 201) {
      const data = (await response.json()) as Record<string, unknown>;
      return {
        fileId: String(data["fileId"] ?? data["id"] ?? ""),
        url: String(data["url"]),
        name: String(data["name"] ?? name),
        mimeType: String(data["mimeType"] ?? mimeType ?? guessType(name)),
        size: Number(data["size"] ?? content.length),
      };
    }
    const error = await failure(response, LineupError);
    if (!error.retryable) throw error;
    await pause(error.details["retryAfterMs"] as number | undefined ?? retry.delay(attempt), retry.stop);
  }
}

const TYPES: Record<string, string> = {
  md: "text/markdown",
  txt: "text/plain",
  json: "application/json",
  html: "text/html",
  csv: "text/csv",
  png: "image/png",
  jpg: "image/jpeg",
  pdf: "application/pdf",
};

function guessType(name: string): string {
  return TYPES[name.split(".").pop()?.toLowerCase() ?? ""] ?? "application/octet-stream";
}

