// Hot-path metric series. prom-client builds a label hash string on every
// inc() and observe(), bound children included: at thousands of gateway
// requests a second that was 2% of the CPU and 6% of the allocations. Here
// each label set is resolved once to a series that the hot path updates with
// plain arithmetic, and the registry reads it when /metrics is scraped.
import type { Counter, Registry } from 'prom-client';

/** One label set of a counter; its increments reach the counter at the next scrape. */
export class CounterSeries {
  pending = 0;

  inc(value = 1): void {
    this.pending += value;
  }
}

/**
 * The series of one prom-client counter, made once per label set. The
 * counter stays the registered metric (its output and reset are prom-client's):
 * its collect hook adds what the series gathered since the last scrape.
 */
export class CounterSeriesSet<L extends string> {
  readonly #series = new Map<string, { readonly labels: Partial<Record<L, string>>; readonly series: CounterSeries }>();

  /** `counter` must have been made with `collect: () => set.flushInto(counter)` (see Telemetry.counterSeries). */
  series(labels: Partial<Record<L, string>>): CounterSeries {
    const key = labelKey(labels);
    let found = this.#series.get(key);
    if (found === undefined) {
      found = { labels, series: new CounterSeries() };
      this.#series.set(key, found);
    }
    return found.series;
  }

  clearPending(): void {
    for (const { series } of this.#series.values()) series.pending = 0;
  }

  /** As prom-client's Counter.inc, for callers off the hot path. */
  inc(labels: Partial<Record<L, string>>, value = 1): void {
    this.series(labels).inc(value);
  }

  flushInto(counter: Counter<L>): void {
    for (const { labels, series } of this.#series.values()) {
      if (series.pending === 0) continue;
      counter.inc(labels, series.pending);
      series.pending = 0;
    }
  }
}

/** One label set of a histogram: cumulative bucket counts are made when scraped. */
export class HistogramSeries {
  readonly counts: number[];
  sum = 0;
  count = 0;
  readonly #bounds: readonly number[];

  constructor(bounds: readonly number[]) {
    this.#bounds = bounds;
    this.counts = new Array<number>(bounds.length).fill(0);
  }

  observe(value: number): void {
    if (!Number.isFinite(value)) throw new TypeError(`Value is not a valid number: ${value}`);
    const bounds = this.#bounds;
    for (let i = 0; i < bounds.length; i++) {
      if (value <= (bounds[i] as number)) {
        this.counts[i] = (this.counts[i] as number) + 1;
        break;
      }
    }
    this.sum += value;
    this.count += 1;
  }

  reset(): void {
    this.counts.fill(0);
    this.sum = 0;
    this.count = 0;
  }
}

interface MetricValue {
  readonly labels: Partial<Record<string, string | number>>;
  readonly value: number;
  readonly metricName: string;
}

/**
 * A histogram metric the prom-client registry exposes like its own (same
 * lines, same label order: `le` first), whose series are resolved once.
 */
export class SeriesHistogram<L extends string> {
  readonly type = 'histogram';
  readonly aggregator = 'sum';
  readonly name: string;
  readonly help: string;
  readonly #bounds: readonly number[];
  readonly #labelNames: ReadonlySet<string>;
  readonly #series = new Map<string, { readonly labels: Partial<Record<L, string>>; readonly series: HistogramSeries }>();

  constructor(options: { name: string; help: string; labelNames: readonly L[]; buckets: readonly number[]; registry: Registry }) {
    this.name = options.name;
    this.help = options.help;
    this.#labelNames = new Set(options.labelNames);
    this.#bounds = [...options.buckets].sort((a, b) => a - b);
    options.registry.registerMetric(this as unknown as Parameters<Registry['registerMetric']>[0]);
  }

  series(labels: Partial<Record<L, string>>): HistogramSeries {
    const key = labelKey(labels);
    let found = this.#series.get(key);
    if (found === undefined) {
      // Checked once per label set, as prom-client checks every call.
      for (const name of Object.keys(labels)) {
        if (!this.#labelNames.has(name)) throw new Error(`Added label "${name}" is not included in initial labelset: ${JSON.stringify([...this.#labelNames])}`);
      }
      found = { labels, series: new HistogramSeries(this.#bounds) };
      this.#series.set(key, found);
    }
    return found.series;
  }

  /** As prom-client's Histogram.observe, for callers off the hot path (tests, rare events). */
  observe(labels: Partial<Record<L, string>>, value: number): void {
    this.series(labels).observe(value);
  }

  /** Zeroes every series in place: the ones handed out keep counting. */
  reset(): void {
    for (const { series } of this.#series.values()) series.reset();
  }

  /** Drops one label set's series, as prom-client's remove() does; one handed out counts for nothing after. */
  remove(labels: Partial<Record<L, string>>): void {
    this.#series.delete(labelKey(labels));
  }

  get(): Promise<{ name: string; help: string; type: string; aggregator: string; values: MetricValue[] }> {
    const values: MetricValue[] = [];
    const bucket = `${this.name}_bucket`;
    for (const { labels, series } of this.#series.values()) {
      let cumulative = 0;
      for (let i = 0; i < this.#bounds.length; i++) {
        cumulative += series.counts[i] as number;
        values.push({ labels: { le: this.#bounds[i] as number, ...labels }, value: cumulative, metricName: bucket });
      }
      values.push({ labels: { le: '+Inf', ...labels }, value: series.count, metricName: bucket });
      values.push({ labels: { ...labels }, value: series.sum, metricName: `${this.name}_sum` });
      values.push({ labels: { ...labels }, value: series.count, metricName: `${this.name}_count` });
    }
    return Promise.resolve({ name: this.name, help: this.help, type: this.type, aggregator: this.aggregator, values });
  }
}

/**
 * Series looked up by one or two label values with no string built per call:
 * `make` resolves a pair the first time it is asked for.
 */
export class SeriesTable<T> {
  readonly #rows = new Map<string, Map<string, T>>();
  readonly #make: (first: string, second: string) => T;

  constructor(make: (first: string, second: string) => T) {
    this.#make = make;
  }

  get(first: string, second = ''): T {
    let row = this.#rows.get(first);
    if (row === undefined) {
      row = new Map();
      this.#rows.set(first, row);
    }
    let found = row.get(second);
    if (found === undefined) {
      found = this.#make(first, second);
      row.set(second, found);
    }
    return found;
  }
}

function labelKey(labels: Readonly<Record<string, string | undefined>>): string {
  let key = '';
  for (const name of Object.keys(labels).sort()) key += `${name}\u0000${labels[name] ?? ''}\u0001`;
  return key;
}
