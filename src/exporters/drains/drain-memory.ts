// What a drain keeps across config reloads, which replace the drains exporter:
// its delivery counters (the past hour behind `errored`, last error, last
// success) and, for a config drain, when it first ran and last changed. The
// service holds one for the process's life and offers it to each host;
// without one (an exporter run on its own), the exporter keeps its own.
import { ServiceKey } from '../../core/host-services.js';
import { DeliveryStats } from './delivery-stats.js';
import { sameDefinition, type DrainDefinition } from './definition.js';

export class DrainMemory {
  readonly #stats = new Map<string, DeliveryStats>();
  readonly #configDrains = new Map<string, DrainDefinition>();

  /** The drain's counters, made on first use. */
  stats(id: string): DeliveryStats {
    let stats = this.#stats.get(id);
    if (stats === undefined) {
      stats = new DeliveryStats();
      this.#stats.set(id, stats);
    }
    return stats;
  }

  /**
   * A config drain as loaded now, with the times it had when last loaded:
   * `createdAt` from its first load, `updatedAt` kept unless the drain changed.
   */
  configDrain(loaded: DrainDefinition): DrainDefinition {
    const previous = this.#configDrains.get(loaded.id);
    let definition = loaded;
    if (previous !== undefined) {
      const unchanged = sameDefinition({ ...previous, createdAt: 0, updatedAt: 0 }, { ...loaded, createdAt: 0, updatedAt: 0 });
      definition = { ...loaded, createdAt: previous.createdAt, updatedAt: unchanged ? previous.updatedAt : loaded.updatedAt };
    }
    this.#configDrains.set(loaded.id, definition);
    return definition;
  }

  /** Forgets every drain but these (deleted, or gone from the config); returns the ids it forgot. */
  retain(ids: ReadonlySet<string>): string[] {
    const forgotten = new Set<string>();
    for (const known of [this.#stats, this.#configDrains]) {
      for (const id of known.keys()) {
        if (ids.has(id)) continue;
        known.delete(id);
        forgotten.add(id);
      }
    }
    return [...forgotten];
  }

  forget(id: string): void {
    this.#stats.delete(id);
    this.#configDrains.delete(id);
  }
}

export const DRAIN_MEMORY = new ServiceKey<DrainMemory>('drain-memory');
