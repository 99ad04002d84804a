// Consumers parked until a queue has unread records (or closes).
import { onAbort } from '../shared/abort-callbacks.js';
import { LinkedSet } from '../shared/linked-set.js';

export class UnreadWaiters {
  /** Not a Set: see LinkedSet (a consumer parks here once per batch). */
  readonly #waiters = new LinkedSet<(ready: boolean) => void>();

  /** Resolves true on notify(true), false on notify(false) or when the signal aborts. */
  wait(signal: AbortSignal): Promise<boolean> {
    if (signal.aborted) return Promise.resolve(false);
    return new Promise<boolean>((resolve) => {
      const waiters = this.#waiters;
      const link = waiters.add(settle);
      const stopListening = onAbort(signal, function aborted() {
        waiters.delete(link);
        resolve(false);
      });
      function settle(ready: boolean): void {
        stopListening();
        resolve(ready);
      }
    });
  }

  notify(ready: boolean): void {
    if (this.#waiters.size === 0) return;
    const settles = [...this.#waiters];
    this.#waiters.clear();
    for (const settle of settles) settle(ready);
  }
}
