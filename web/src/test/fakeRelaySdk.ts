// A stand-in for the official WuKongIM SDK in tests: the same surface the tunnel drives
// (content registry, chat and connect managers), with a hand-driven "server". Contents go
// through the SDK's real MessageContent encode/decode, and a type nobody registered reaches the
// listeners as the SDK's UnknownContent (type 0), as the real SDK does.

import { MessageContent, UnknownContent } from "wukongimjssdk/lib/model";
import type { Channel } from "wukongimjssdk/lib/model";
import type { Payload } from "../features/relay/content";
import type { RelaySdk, SdkMessage, SdkPacket, SdkSendack, SdkSendPacket } from "../features/relay/tunnel";

export interface WirePacket extends SdkSendPacket {
  channelID: string;
  payload: Payload;
}

type MessageListener = (message: SdkMessage) => void;
type AckListener = (ack: SdkSendack) => void;
type StatusListener = (status: number, reasonCode?: number) => void;

export class FakeSdk implements RelaySdk {
  config: { uid?: string; token?: string; addr: string } = { uid: "person", token: "t", addr: "ws://im" };
  readonly handlers = new Map<number, (contentType?: number) => MessageContent>();
  /** Packets that reached "the server", in order. */
  readonly wire: WirePacket[] = [];
  online = false;
  connects = 0;
  disconnects = 0;
  private clientSeq = 0;
  private readonly messageListeners: MessageListener[] = [];
  private readonly ackListeners: AckListener[] = [];
  private readonly statusListeners: StatusListener[] = [];

  register(contentType: number, handler: (contentType?: number) => MessageContent): void {
    this.handlers.set(contentType, handler);
  }

  connect(): void {
    this.connects += 1;
  }

  disconnect(): void {
    this.disconnects += 1;
    this.online = false;
  }

  chatManager = {
    sendingQueues: new Map<number, SdkSendPacket>(),
    getSendPacket: (content: MessageContent, channel: Channel): SdkSendPacket => {
      const bytes = content.encode();
      const packet: WirePacket = {
        noPersist: false,
        clientSeq: ++this.clientSeq,
        channelID: channel.channelID,
        payload: JSON.parse(new TextDecoder().decode(bytes)) as Payload,
      };
      return packet;
    },
    addMessageListener: (l: MessageListener) => void this.messageListeners.push(l),
    removeMessageListener: (l: MessageListener) => remove(this.messageListeners, l),
    addMessageStatusListener: (l: AckListener) => void this.ackListeners.push(l),
    removeMessageStatusListener: (l: AckListener) => remove(this.ackListeners, l),
  };

  connectManager = {
    sendPacket: (packet: SdkPacket): void => {
      if (this.online) this.wire.push({ ...(packet as WirePacket) });
    },
    addConnectStatusListener: (l: StatusListener) => void this.statusListeners.push(l),
    removeConnectStatusListener: (l: StatusListener) => remove(this.statusListeners, l),
  };

  // --- the "server" ----------------------------------------------------------------------

  /** CONNACK: the SDK flushes its unacknowledged SENDs, then tells its listeners. */
  connected(): void {
    this.online = true;
    for (const packet of [...this.chatManager.sendingQueues.values()].sort((a, b) => a.clientSeq - b.clientSeq)) {
      this.connectManager.sendPacket(packet);
    }
    for (const l of [...this.statusListeners]) l(1, 1);
  }

  dropped(status = 0): void {
    this.online = false;
    for (const l of [...this.statusListeners]) l(status, 0);
  }

  /** SENDACK for a packet sent. */
  ack(clientSeq: number, messageSeq: number, reasonCode = 1): void {
    this.chatManager.sendingQueues.delete(clientSeq);
    for (const l of [...this.ackListeners]) l({ clientSeq, messageSeq, reasonCode });
  }

  /** RECV from `fromUID`, decoded through the registered content types. */
  deliver(payload: Payload, meta: { messageID: string; messageSeq?: number; fromUID?: string }): void {
    const bytes = new TextEncoder().encode(JSON.stringify(payload));
    const type = typeof payload.type === "number" ? payload.type : 0;
    const content = this.handlers.get(type)?.(type) ?? new UnknownContent();
    content.decode(bytes);
    const message: SdkMessage = {
      messageID: meta.messageID,
      messageSeq: meta.messageSeq ?? 0,
      fromUID: meta.fromUID ?? "agent",
      content,
    };
    for (const l of [...this.messageListeners]) l(message);
  }

  /** What was sent of one content type, payloads only. */
  sent(type: number): Payload[] {
    return this.wire.filter((p) => p.payload.type === type).map((p) => p.payload);
  }

  packets(type: number): WirePacket[] {
    return this.wire.filter((p) => p.payload.type === type);
  }
}

function remove<T>(list: T[], item: T): void {
  const at = list.indexOf(item);
  if (at >= 0) list.splice(at, 1);
}
