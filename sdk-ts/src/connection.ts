import WebSocket from "ws";
import { LineupError } from "./errors.js";
import type { AckFrame, Envelope, ErrorFrame } from "./generated/protocol.js";

/** The hub's answer to one frame the agent sent. */
export type Answer = AckFrame | ErrorFrame;

/** One open connection: frames in, answers by id, closes reported once. */
export class Connection {
  private readonly answers = new Map<string, { resolve: (a: Answer) => void; reject: (e: unknown) => void }>();
  readonly closed: Promise<{ code: number; reason: string }>;
  private isClosed = false;

  constructor(
    readonly socket: WebSocket,
    onFrame: (frame: Record<string, unknown>) => void,
  ) {
    this.closed = new Promise((resolve) => {
      socket.on("close", (code, reason) => {
        this.isClosed = true;
        const gone = new LineupError("unavailable", "The connection to the hub closed.");
        for (const waiting of this.answers.values()) waiting.reject(gone);
        this.answers.clear();
        resolve({ code, reason: reason.toString() });
      });
    });
    socket.on("message", (data, binary) => {
      if (binary) return;
      let frame: unknown;
      try {
        frame = JSON.parse(data.toString());
      } catch {
        return;
      }
      if (frame === null || typeof frame !== "object") return;
      const record = frame as Record<string, unknown>;
      if ((record["type"] === "ack" || record["type"] === "error") && typeof record["id"] === "string") {
        const waiting = this.answers.get(record["id"]);
        if (waiting) {
          this.answers.delete(record["id"]);
          waiting.resolve(record as unknown as Answer);
          return;
        }
      }
      onFrame(record);
    });
    socket.on("error", () => undefined); // the close that follows says it
  }

  get open(): boolean {
    return !this.isClosed && this.socket.readyState === WebSocket.OPEN;
  }

  /** Send a frame and wait for its ack or error (rejects when the connection ends or times out). */
  request(frame: Envelope, timeoutMs: number): Promise<Answer> {
    return new Promise<Answer>((resolve, reject) => {
      if (!this.open) {
        reject(new LineupError("unavailable", "Not connected."));
        return;
      }
      const timer = setTimeout(() => {
        this.answers.delete(frame.id);
        reject(new LineupError("unavailable", `The hub did not answer ${frame.id} in ${timeoutMs} ms.`));
        this.socket.terminate();
      }, timeoutMs);
      this.answers.set(frame.id, {
        resolve: (answer) => {
          clearTimeout(timer);
          resolve(answer);
        },
        reject: (error) => {
          clearTimeout(timer);
          reject(error);
        },
      });
      this.socket.send(JSON.stringify(frame));
    });
  }

  sendRaw(text: string): boolean {
    if (!this.open) return false;
    this.socket.send(text);
    return true;
  }
}
