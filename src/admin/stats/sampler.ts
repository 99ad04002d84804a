// Samples the metrics /v1/stats reports into an in-memory ring, so the stats
// can answer "over the last 15 minutes" and draw spans per second without a
// time-series database. Nothing is written to disk: a restart starts afresh.
import type { Registry } from 'prom-client';
import { Ring } from './ring.js';
import { type Snapshot, takeSnapshot, WINDOWED_METRICS } from './snapshot.js';

export const STATS_WINDOW_MS = 15 * 60_000;
export const SAMPLE_INTERVAL_MS = 2_000;

export interface StatsSamplerOptions {
  readonly registry: Registry;
  readonly intervalMs?: number;
  readonly windowMs?: number;
  readonly now?: () => number;
}

export class StatsSampler {
  readonly intervalMs: number;
  readonly windowMs: number;
  readonly #registry: Registry;
  readonly #now: () => number;
  readonly #ring: Ring<Snapshot>;
  #timer: NodeJS.Timeout | undefined;
  #sampling: Promise<void> = Promise.resolve();

  constructor(options: StatsSamplerOptions) {
    this.intervalMs = options.intervalMs ?? SAMPLE_INTERVAL_MS;
    this.windowMs = options.windowMs ?? STATS_WINDOW_MS;
    this.#registry = options.registry;
    this.#now = options.now ?? Date.now;
    // One more than the window holds, so the oldest point is a full window back.
    this.#ring = new Ring(Math.ceil(this.windowMs / this.intervalMs) + 1);
  }

  /** Takes a first sample now and one every interval; idempotent. */
  start(): void {
    if (this.#timer !== undefined) return;
    const sampleQuietly = () => void this.sample().catch(() => undefined);
    sampleQuietly();
    this.#timer = setInterval(sampleQuietly, this.intervalMs);
    // The sampler never keeps the process alive on its own.
    this.#timer.unref();
  }

  stop(): void {
    clearInterval(this.#timer);
    this.#timer = undefined;
  }

  /**
   * Takes one sample (the timer calls this; tests call it directly). Samples
   * never overlap; one that fails leaves a gap in the window and the next
   * is taken as usual.
   */
  sample(): Promise<void> {
    const registry = this.#registry;
    const ring = this.#ring;
    const now = this.#now;
    const taken = this.#sampling.then(async function takeOne() {
      ring.push(await takeSnapshot(registry, now(), WINDOWED_METRICS));
    });
    this.#sampling = taken.catch(() => undefined);
    return taken;
  }

  /** The samples of the window, oldest first. */
  snapshots(): Snapshot[] {
    return this.#ring.toArray();
  }

  /** A sample taken now, not kept: the answer's totals are current even between ticks. */
  current(): Promise<Snapshot> {
    return takeSnapshot(this.#registry, this.#now());
  }
}
