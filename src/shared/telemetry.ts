// Self-observability shared by every component. Metrics are memoized by name
// so that a component (re)created on config reload finds the series it had
// before instead of registering a duplicate.
import { Counter, Gauge, Histogram, Registry, collectDefaultMetrics } from 'prom-client';
import { registerEventLoopDelay } from './event-loop-delay.js';
import { CounterSeriesSet, SeriesHistogram } from './metric-series.js';

// prom-client samples event-loop delay with a timer of this period; its
// default (10 ms) wakes an idle daemon 100 times a second, 0.4% of a core here.
const EVENT_LOOP_MONITORING_PRECISION_MS = 100;

export class Telemetry {
  readonly registry = new Registry();
  readonly #metrics = new Map<string, Counter | Gauge | Histogram>();
  readonly #seriesSets = new Map<string, CounterSeriesSet<string>>();
  readonly #seriesHistograms = new Map<string, SeriesHistogram<string>>();

  constructor(options: { defaultMetrics?: boolean } = {}) {
    if (options.defaultMetrics !== false) {
      collectDefaultMetrics({ register: this.registry, prefix: 'sluice_', eventLoopMonitoringPrecision: EVENT_LOOP_MONITORING_PRECISION_MS });
      registerEventLoopDelay(this.registry);
    }
  }

  /** `collect` runs before each scrape (to set values kept elsewhere); only the first registration's is kept. */
  counter<L extends string>(name: string, help: string, labelNames: readonly L[], collect?: (this: Counter<L>) => void): Counter<L> {
    return this.#memo(name, () => new Counter({ name, help, labelNames, registers: [this.registry], ...(collect === undefined ? {} : { collect }) })) as Counter<L>;
  }

  gauge<L extends string>(name: string, help: string, labelNames: readonly L[]): Gauge<L> {
    return this.#memo(name, () => new Gauge({ name, help, labelNames, registers: [this.registry] })) as Gauge<L>;
  }

  histogram<L extends string>(name: string, help: string, labelNames: readonly L[], buckets: number[]): Histogram<L> {
    return this.#memo(name, () => new Histogram({ name, help, labelNames, buckets, registers: [this.registry] })) as Histogram<L>;
  }

  /** A counter whose label sets are resolved once (hot paths): see metric-series.ts. */
  counterSeries<L extends string>(name: string, help: string, labelNames: readonly L[]): CounterSeriesSet<L> {
    let set = this.#seriesSets.get(name) as CounterSeriesSet<L> | undefined;
    if (set === undefined) {
      // A plain counter of that name would never get the series' counts.
      if (this.#metrics.has(name)) throw new Error(`metric ${name} is already registered as a plain counter`);
      const made = new CounterSeriesSet<L>();
      const counter = this.counter(name, help, labelNames, function flush(this: Counter<L>) {
        made.flushInto(this);
      });
      // A reset (registry.resetMetrics) drops what the series gathered since the last scrape too.
      const reset = counter.reset.bind(counter);
      counter.reset = function resetWithSeries(): void {
        made.clearPending();
        reset();
      };
      this.#seriesSets.set(name, made as CounterSeriesSet<string>);
      set = made;
    }
    return set;
  }

  /** A histogram whose label sets are resolved once (hot paths): see metric-series.ts. */
  histogramSeries<L extends string>(name: string, help: string, labelNames: readonly L[], buckets: readonly number[]): SeriesHistogram<L> {
    let histogram = this.#seriesHistograms.get(name) as SeriesHistogram<L> | undefined;
    if (histogram === undefined) {
      histogram = new SeriesHistogram<L>({ name, help, labelNames, buckets, registry: this.registry });
      this.#seriesHistograms.set(name, histogram as SeriesHistogram<string>);
    }
    return histogram;
  }

  /**
   * Removes every series of the counters, gauges and histograms with a
   * label value `matches` accepts: a deleted drain's (`drain/<id>`), or a
   * component's a reload removed, which would otherwise stay in /metrics, at
   * its last value, for the process's life.
   */
  async forgetSeries(matches: (labelValue: string, labelName: string) => boolean): Promise<void> {
    for (const metric of this.registry.getMetricsAsArray()) {
      if (!(metric instanceof Counter || metric instanceof Gauge || metric instanceof Histogram || metric instanceof SeriesHistogram)) continue;
      const seen = new Set<string>();
      for (const sample of (await metric.get()).values) {
        const { le: _bucket, ...labels } = sample.labels as Record<string, string | number>;
        if (!Object.entries(labels).some(([name, value]) => typeof value === 'string' && matches(value, name))) continue;
        const key = JSON.stringify(labels);
        if (seen.has(key)) continue;
        seen.add(key);
        metric.remove(labels as Record<string, string>);
      }
    }
  }

  #memo(name: string, make: () => Counter | Gauge | Histogram): Counter | Gauge | Histogram {
    let metric = this.#metrics.get(name);
    if (metric === undefined) {
      metric = make();
      this.#metrics.set(name, metric);
    }
    return metric;
  }
}

/** The metrics every pipeline component reports, with their label sets. */
export function receiverMetrics(telemetry: Telemetry) {
  return {
    accepted: telemetry.counter('sluice_receiver_accepted_spans_total', 'Spans accepted by a receiver and acknowledged to the sender.', ['receiver', 'transport']),
    refused: telemetry.counter('sluice_receiver_refused_spans_total', 'Spans a receiver refused (bad data or backpressure).', ['receiver', 'transport', 'reason']),
  };
}

export function exporterMetrics(telemetry: Telemetry) {
  return {
    sent: telemetry.counter('sluice_exporter_sent_spans_total', 'Spans delivered to the destination.', ['exporter']),
    failed: telemetry.counter('sluice_exporter_send_failed_spans_total', 'Spans in delivery attempts that failed (retryable or not).', ['exporter']),
    dropped: telemetry.counter('sluice_exporter_dropped_spans_total', 'Spans given up on, by reason.', ['exporter', 'reason']),
    retries: telemetry.counter('sluice_exporter_retries_total', 'Delivery attempts that were retried.', ['exporter']),
  };
}
