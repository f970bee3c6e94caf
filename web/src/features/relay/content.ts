// LineUp's WuKongIM content types (docs/relay-mode.md): the tunnel's request, response, socket
// and tools messages, JSON like every WuKongIM content. The JS SDK hands a content type it has
// not been told about to its listeners as "unknown" (type 0, fields dropped), so each of these
// is registered with `WKSDK.shared().register` before the first message can arrive.

import { MessageContent } from "wukongimjssdk/lib/model";

export const REQUEST = 3101;
export const RESPONSE = 3102;
export const SOCKET = 3103;
export const TOOLS = 3104;
export const LINEUP_TYPES = [REQUEST, RESPONSE, SOCKET, TOOLS] as const;

export type Payload = Record<string, unknown>;

/** One LineUp message: its JSON fields as they are, `type` included. */
export class LineUpContent extends MessageContent {
  data: Payload = {};

  constructor(contentType: number, data?: Payload) {
    super();
    this.contentType = contentType;
    if (data) this.data = { ...data, type: contentType };
  }

  override encodeJSON(): Payload {
    return { ...this.data };
  }

  override decodeJSON(content: Payload): void {
    this.data = content ?? {};
  }

  override get conversationDigest(): string {
    return "[LineUp]";
  }
}

/** The part of the SDK that knows content types (WKSDK.shared() is one). */
export interface ContentRegistry {
  register(contentType: number, handler: (contentType?: number) => MessageContent): void;
}

export function registerContentTypes(sdk: ContentRegistry): void {
  for (const type of LINEUP_TYPES) sdk.register(type, () => new LineUpContent(type));
}
