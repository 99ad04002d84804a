// Whether the client is still there. Cheaper than an AbortController per
// request (EventTarget listeners are slow in Node), and one listener is all
// the gateway needs: the attempt in flight.
export class ClientLink {
  #closed = false;
  #listener: (() => void) | undefined;

  get closed(): boolean {
    return this.#closed;
  }

  close(): void {
    if (this.#closed) return;
    this.#closed = true;
    const listener = this.#listener;
    this.#listener = undefined;
    listener?.();
  }

  /** Sets (or with undefined, clears) the one close listener. */
  onClose(listener: (() => void) | undefined): void {
    this.#listener = listener;
  }
}
