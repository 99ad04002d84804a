// Where API-managed drains live. The local store is one file on this
// instance; the Redis store shares them with every instance and keeps that
// file as its local copy, so an instance starts and serves while Redis is
// down. Callers never know which one they hold.

/** What a store needs to know of a drain; the rest is the exporter's. */
export interface StoredDrain {
  readonly id: string;
  readonly updatedAt: number;
}

/** Reads one stored drain back; throws an Error naming the bad field under `at` (`drains[0].delivery.url: ...`). */
export type DrainParser<D extends StoredDrain> = (value: unknown, at: readonly PropertyKey[]) => D;

/**
 * What a change to an existing drain found: `applied`; `missing`, the store
 * no longer has the drain; `changed`, it was written since it was read (its
 * `updatedAt` is no longer the one the change was made from).
 */
export type ChangeOutcome = 'applied' | 'missing' | 'changed';

export interface DrainStore<D extends StoredDrain> {
  /** The drains as this instance can best know them now (shared when reachable, else the local copy). */
  load(): Promise<D[]>;
  /**
   * Adds a new drain, unless the store already holds `limit` (false then:
   * for a shared store, every instance's drains count); rejects with
   * ClusterUnavailableError when the shared store cannot take it (so do the others).
   */
  put(drain: D, limit?: number): Promise<boolean>;
  /**
   * Replaces a drain only while the store still holds the version it was
   * made from (`previousUpdatedAt`), so a change made elsewhere in between
   * is never overwritten by one computed without it.
   */
  update(drain: D, previousUpdatedAt: number): Promise<ChangeOutcome>;
  remove(id: string): Promise<Exclude<ChangeOutcome, 'changed'>>;
  /** Called (with no data: call load()) when another instance may have changed the drains. */
  watch(onChange: () => void): void;
  close(): Promise<void>;
}
