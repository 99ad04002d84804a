// The listeners of one running graph, so the service can stop them together:
// stop accepting at once, then destroy what is still open when
// service.shutdown_grace is over. Components find their host's group as a
// host service (LISTENER_GROUP in core/host-services.ts).

export interface ManagedListener {
  /** Stops accepting new connections; open ones finish their requests. */
  stopAccepting(): void;
  /** Destroys every open connection now (after any last words, like a stream's error event). */
  destroy(): void;
}

export class ListenerGroup {
  readonly #listeners = new Set<ManagedListener>();
  #stopped = false;

  /** Adds a listener; the returned function removes it again. */
  add(listener: ManagedListener): () => void {
    this.#listeners.add(listener);
    if (this.#stopped) listener.stopAccepting();
    const listeners = this.#listeners;
    return function remove() {
      listeners.delete(listener);
    };
  }

  stopAccepting(): void {
    this.#stopped = true;
    for (const listener of this.#listeners) listener.stopAccepting();
  }

  destroyAll(): void {
    for (const listener of this.#listeners) listener.destroy();
  }
}
