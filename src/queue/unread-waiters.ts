// Consumers parked until a queue has unread records (or closes).

export class UnreadWaiters {
  readonly #waiters = new Set<(ready: boolean) => void>();

  /** Resolves true on notify(true), false on notify(false) or when the signal aborts. */
  wait(signal: AbortSignal): Promise<boolean> {
    if (signal.aborted) return Promise.resolve(false);
    return new Promise<boolean>((resolve) => {
      const waiters = this.#waiters;
      function onAbort(): void {
        waiters.delete(settle);
        resolve(false);
      }
      function settle(ready: boolean): void {
        signal.removeEventListener('abort', onAbort);
        resolve(ready);
      }
      waiters.add(settle);
      signal.addEventListener('abort', onAbort, { once: true });
    });
  }

  notify(ready: boolean): void {
    if (this.#waiters.size === 0) return;
    const settles = [...this.#waiters];
    this.#waiters.clear();
    for (const settle of settles) settle(ready);
  }
}
