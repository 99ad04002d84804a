// Decisions remembered per trace id, so spans that arrive after their trace
// was decided (in a later batch, or after a wait expired) follow it. Bounded
// by entries (oldest evicted first) and by age.
import type { Decision } from './rules.js';

export const DECISION_CACHE_ENTRIES = 200_000;
export const DECISION_TTL_MS = 10 * 60_000;

interface Entry {
  readonly decision: Decision;
  readonly expiresAtMs: number;
}

export class DecisionCache {
  readonly #entries = new Map<string, Entry>();
  readonly #maxEntries: number;
  readonly #ttlMs: number;
  readonly #now: () => number;

  constructor(options: { maxEntries?: number; ttlMs?: number; now?: () => number } = {}) {
    this.#maxEntries = options.maxEntries ?? DECISION_CACHE_ENTRIES;
    this.#ttlMs = options.ttlMs ?? DECISION_TTL_MS;
    this.#now = options.now ?? Date.now;
  }

  get(key: string): Decision | undefined {
    const entry = this.#entries.get(key);
    if (entry === undefined) return undefined;
    if (entry.expiresAtMs <= this.#now()) {
      this.#entries.delete(key);
      return undefined;
    }
    return entry.decision;
  }

  set(key: string, decision: Decision): void {
    this.#entries.delete(key);
    this.#entries.set(key, { decision, expiresAtMs: this.#now() + this.#ttlMs });
    if (this.#entries.size > this.#maxEntries) {
      const oldest = this.#entries.keys().next();
      if (oldest.done !== true) this.#entries.delete(oldest.value);
    }
  }

  get size(): number {
    return this.#entries.size;
  }
}
