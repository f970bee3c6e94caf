// The transport of the typed hub client: fetch with the session cookie, the CSRF header on
// state changes, an Idempotency-Key on POSTs, and the hub's one error envelope as ApiError.
// The session's access token lasts minutes: a request refused as `token_expired` spends the
// refresh cookie for a new pair (one refresh at a time) and is sent once more.

export type ErrorCode =
  | "invalid_argument"
  | "unauthenticated"
  | "forbidden"
  | "not_found"
  | "conflict"
  | "rate_limited"
  | "unavailable"
  | "unknown_result"
  | "network";

/** `{"error": {"code", "message", "details"}}` from the hub, or a network failure. */
export class ApiError extends Error {
  readonly code: ErrorCode;
  readonly status: number;
  readonly details: Record<string, unknown>;

  constructor(code: ErrorCode, message: string, status: number, details?: Record<string, unknown>) {
    super(message);
    this.name = "ApiError";
    this.code = code;
    this.status = status;
    this.details = details ?? {};
  }

  /** Only these are worth retrying by themselves (DESIGN.md principle 6). */
  get retryable(): boolean {
    return this.code === "rate_limited" || this.code === "unavailable" || this.code === "network";
  }
}

export const CSRF_COOKIE = "lineup_csrf";
export const REFRESH_PATH = "/api/auth/refresh";
export const CSRF_HEADER = "X-CSRF-Token";
const SAFE = new Set(["GET", "HEAD", "OPTIONS"]);

export function readCookie(name: string, source: string = document.cookie): string | null {
  for (const part of source.split(";")) {
    const [key, ...rest] = part.trim().split("=");
    if (key === name) return decodeURIComponent(rest.join("="));
  }
  return null;
}

/** A fresh key for one logical state change; reuse it when retrying that same change. */
export function newIdempotencyKey(): string {
  const random =
    typeof crypto !== "undefined" && "randomUUID" in crypto
      ? crypto.randomUUID()
      : `${Date.now().toString(36)}-${Math.random().toString(36).slice(2)}`;
  return `web-${random}`;
}

export interface RequestOptions {
  /** Sent as JSON. */
  body?: unknown;
  /** Sent as it is, with its content type (a file: a provider package). */
  raw?: { data: Blob; contentType: string };
  /** POST/PATCH only; a key is made when none is given, so every state change carries one. */
  idempotencyKey?: string;
  signal?: AbortSignal;
  /** Answer the body as a file ({@link Download}) instead of parsing it as JSON. */
  download?: boolean;
}

/** A file the hub sent for saving: its bytes and the name its `Content-Disposition` gave. */
export interface Download {
  blob: Blob;
  filename: string | null;
}

/** The file name of a `Content-Disposition: attachment; filename="…"` header. */
export function dispositionName(header: string | null): string | null {
  const match = header ? /filename="([^"]*)"/.exec(header) : null;
  return match?.[1] || null;
}

/** The `details.reason` of an `unauthenticated` error (`token_expired`, `session_ended`…). */
export function refusalReason(error: unknown): string | null {
  if (!(error instanceof ApiError) || error.code !== "unauthenticated") return null;
  const reason = error.details.reason;
  return typeof reason === "string" ? reason : null;
}

export type Fetch = typeof fetch;

const KNOWN_CODES = new Set<string>([
  "invalid_argument",
  "unauthenticated",
  "forbidden",
  "not_found",
  "conflict",
  "rate_limited",
  "unavailable",
  "unknown_result",
]);

const CODE_BY_STATUS: Record<number, ErrorCode> = {
  400: "invalid_argument",
  401: "unauthenticated",
  403: "forbidden",
  404: "not_found",
  409: "conflict",
  422: "invalid_argument",
  429: "rate_limited",
  503: "unavailable",
};

export async function parseError(response: Response): Promise<ApiError> {
  let body: unknown = null;
  try {
    body = await response.json();
  } catch {
    body = null;
  }
  const error = (body as { error?: Record<string, unknown> } | null)?.error;
  if (error && typeof error === "object") {
    const code = String(error.code ?? "");
    return new ApiError(
      (KNOWN_CODES.has(code) ? code : "unknown_result") as ErrorCode,
      typeof error.message === "string" ? error.message : `The hub answered ${response.status}.`,
      response.status,
      (error.details as Record<string, unknown> | undefined) ?? undefined,
    );
  }
  return new ApiError(
    CODE_BY_STATUS[response.status] ?? "unknown_result",
    `The hub answered ${response.status} ${response.statusText}`.trim() + ".",
    response.status,
  );
}

export class Transport {
  /** Called once per 401, so the app can return to the sign-in screen. */
  onUnauthenticated: (() => void) | null = null;
  /** The cookie holding the CSRF token; `GET /api/direct` names it (direct mode has its own). */
  csrfCookie: string = CSRF_COOKIE;

  constructor(
    private readonly fetchImpl: Fetch = (...args) => fetch(...args),
    private readonly cookies: () => string = () => document.cookie,
  ) {}

  private refreshing: Promise<boolean> | null = null;

  async request<T>(method: string, path: string, options: RequestOptions = {}): Promise<T> {
    // one key for the request and its one resend after a refresh
    const key =
      method === "POST" || method === "PATCH" ? (options.idempotencyKey ?? newIdempotencyKey()) : undefined;
    try {
      return await this.send<T>(method, path, options, key);
    } catch (error) {
      if (refusalReason(error) !== "token_expired" || path === REFRESH_PATH) {
        if (error instanceof ApiError && error.code === "unauthenticated") this.onUnauthenticated?.();
        throw error;
      }
    }
    if (!(await this.refresh())) {
      this.onUnauthenticated?.();
      throw new ApiError("unauthenticated", "Your session has ended; sign in again.", 401, {
        reason: "session_ended",
      });
    }
    try {
      return await this.send<T>(method, path, options, key);
    } catch (error) {
      if (error instanceof ApiError && error.code === "unauthenticated") this.onUnauthenticated?.();
      throw error;
    }
  }

  /**
   * Spend the refresh cookie for a new access token and refresh token; true when the session
   * goes on. Concurrent callers share one refresh; a sibling tab's refresh that won the race
   * (`refresh_superseded`) counts as done, its new cookies being the browser's already.
   */
  refresh(): Promise<boolean> {
    if (this.refreshing === null) {
      this.refreshing = this.send<unknown>("POST", REFRESH_PATH, {}, undefined).then(
        () => true,
        (error: unknown) => refusalReason(error) === "refresh_superseded",
      );
      void this.refreshing.finally(() => {
        this.refreshing = null;
      });
    }
    return this.refreshing;
  }

  private async send<T>(
    method: string,
    path: string,
    options: RequestOptions,
    idempotencyKey: string | undefined,
  ): Promise<T> {
    const headers: Record<string, string> = { Accept: "application/json" };
    if (options.raw) headers["Content-Type"] = options.raw.contentType;
    else if (options.body !== undefined) headers["Content-Type"] = "application/json";
    if (!SAFE.has(method)) {
      const csrf = readCookie(this.csrfCookie, this.cookies());
      if (csrf) headers[CSRF_HEADER] = csrf;
      if (idempotencyKey) headers["Idempotency-Key"] = idempotencyKey;
    }
    let response: Response;
    try {
      response = await this.fetchImpl(path, {
        method,
        headers,
        credentials: "same-origin",
        body: options.raw ? options.raw.data : options.body === undefined ? undefined : JSON.stringify(options.body),
        signal: options.signal,
      });
    } catch (cause) {
      if ((cause as Error)?.name === "AbortError") throw cause;
      throw new ApiError(
        "network",
        "Could not reach the hub. Check your connection and try again.",
        0,
      );
    }
    if (!response.ok) throw await parseError(response);
    if (options.download) {
      const file: Download = {
        blob: await response.blob(),
        filename: dispositionName(response.headers.get("Content-Disposition")),
      };
      return file as T;
    }
    if (response.status === 204) return undefined as T;
    const text = await response.text();
    return (text ? JSON.parse(text) : undefined) as T;
  }

  get<T>(path: string, signal?: AbortSignal): Promise<T> {
    return this.request<T>("GET", path, { signal });
  }

  post<T>(path: string, body: unknown = {}, idempotencyKey?: string): Promise<T> {
    return this.request<T>("POST", path, { body, idempotencyKey });
  }

  patch<T>(path: string, body: unknown, idempotencyKey?: string): Promise<T> {
    return this.request<T>("PATCH", path, { body, idempotencyKey });
  }

  put<T>(path: string, body: unknown, idempotencyKey?: string): Promise<T> {
    return this.request<T>("PUT", path, { body, idempotencyKey });
  }

  /** GET a file to save (a session file). */
  download(path: string): Promise<Download> {
    return this.request<Download>("GET", path, { download: true });
  }

  /** POST a file's bytes as they are. */
  upload<T>(path: string, data: Blob, contentType: string, idempotencyKey?: string): Promise<T> {
    return this.request<T>("POST", path, { raw: { data, contentType }, idempotencyKey });
  }
}
