// When a stopping graph must be done: the service starts the clock as it
// begins to stop a graph (SIGTERM, SIGINT or a reload), with
// service.shutdown_grace from that moment. Exporters read what is left of it
// for their final flush, so a destination that never answers cannot hold the
// process past the grace: what is not delivered by then stays in the durable
// queue for the next start.
export class ShutdownDeadline {
  #at: number | undefined;

  /** The graph starts stopping now and must be done within `graceMs`. Later calls keep the first deadline. */
  begin(graceMs: number): void {
    this.#at ??= Date.now() + graceMs;
  }

  /** What is left of the grace (ms, never below 0); undefined when no stop has begun (a component stopped on its own). */
  remainingMs(): number | undefined {
    return this.#at === undefined ? undefined : Math.max(0, this.#at - Date.now());
  }
}
