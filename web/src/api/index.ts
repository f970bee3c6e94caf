export { ApiError, Transport, newIdempotencyKey, readCookie, parseError } from "./client";
export type { ErrorCode, Fetch, RequestOptions } from "./client";
export { AccountApi, WorkspaceApi } from "./hub";
export type { NewMessage } from "./hub";
export * from "./types";
