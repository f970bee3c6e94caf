/** Promises keyed by an id: whoever waits for an answer, resolved or failed when it comes. */
export class Waiters<T> {
  private readonly waiting = new Map<string, { resolve: (value: T) => void; reject: (error: unknown) => void }[]>();

  wait(key: string, signal?: AbortSignal): Promise<T> {
    return new Promise<T>((resolve, reject) => {
      const onAbort = (): void => {
        this.remove(key, entry);
        reject(signal?.reason);
      };
      const entry = {
        resolve: (value: T): void => {
          signal?.removeEventListener("abort", onAbort);
          resolve(value);
        },
        reject: (error: unknown): void => {
          signal?.removeEventListener("abort", onAbort);
          reject(error);
        },
      };
      if (signal?.aborted) {
        reject(signal.reason);
        return;
      }
      const list = this.waiting.get(key) ?? [];
      list.push(entry);
      this.waiting.set(key, list);
      signal?.addEventListener("abort", onAbort, { once: true });
    });
  }

  resolve(key: string, value: T): void {
    const list = this.waiting.get(key);
    this.waiting.delete(key);
    for (const entry of list ?? []) entry.resolve(value);
  }

  fail(key: string, error: unknown): void {
    const list = this.waiting.get(key);
    this.waiting.delete(key);
    for (const entry of list ?? []) entry.reject(error);
  }

  failAll(error: unknown): void {
    for (const key of [...this.waiting.keys()]) this.fail(key, error);
  }

  private remove(key: string, entry: { resolve: (value: T) => void; reject: (error: unknown) => void }): void {
    const list = this.waiting.get(key)?.filter((e) => e !== entry);
    if (list && list.length > 0) this.waiting.set(key, list);
    else this.waiting.delete(key);
  }
}

/** Resolves after `ms`, or at once when the signal aborts (never rejects). */
export function pause(ms: number, signal?: AbortSignal): Promise<void> {
  return new Promise((resolve) => {
    const timer = setTimeout(done, ms);
    function done(): void {
      clearTimeout(timer);
      signal?.removeEventListener("abort", done);
      resolve();
    }
    signal?.addEventListener("abort", done, { once: true });
  });
}
