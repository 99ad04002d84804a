// One reading of the metrics /v1/stats reports: every series of the named
// metrics, by metric name and label set. Counters are cumulative; windows are
// the difference of two snapshots.
import type { Registry } from 'prom-client';

export type Labels = Readonly<Record<string, string>>;

export interface Series {
  readonly labels: Labels;
  readonly value: number;
}

export interface Snapshot {
  /** ms since epoch */
  readonly at: number;
  /** metric (or histogram sample) name -> its series */
  readonly metrics: ReadonlyMap<string, readonly Series[]>;
}

/** The metrics the stats read; the rest of /metrics (process, sampling) is not sampled. */
export const SAMPLED_METRICS = [
  'sluice_receiver_accepted_spans_total',
  'sluice_receiver_refused_spans_total',
  'sluice_receiver_refused_requests_total',
  'sluice_exporter_sent_spans_total',
  'sluice_exporter_send_failed_spans_total',
  'sluice_exporter_dropped_spans_total',
  'sluice_exporter_retries_total',
  'sluice_queue_records',
  'sluice_queue_size_bytes',
  'sluice_queue_capacity_bytes',
  'sluice_gateway_requests_total',
  'sluice_gateway_attempts_total',
  'sluice_gateway_attempt_duration_seconds',
  'sluice_gateway_tokens_total',
  'sluice_gateway_cost_usd_total',
] as const;

function labelsOf(raw: Partial<Record<string, string | number>>): Labels {
  const labels: Record<string, string> = {};
  for (const [key, value] of Object.entries(raw)) if (value !== undefined) labels[key] = String(value);
  return labels;
}

/**
 * The metrics read over a window (rates, window percentiles, the chart): the
 * only ones the samples kept for the window hold. Everything else is read
 * from a sample taken when asked, so the window's memory does not grow with
 * the number of keys, models and queues.
 */
export const WINDOWED_METRICS = [
  'sluice_receiver_accepted_spans_total',
  'sluice_exporter_sent_spans_total',
  'sluice_gateway_attempts_total',
  'sluice_gateway_attempt_duration_seconds',
] as const;

export async function takeSnapshot(registry: Registry, at: number, names: readonly string[] = SAMPLED_METRICS): Promise<Snapshot> {
  const metrics = new Map<string, Series[]>();
  for (const name of names) {
    const metric = registry.getSingleMetric(name);
    if (metric === undefined) continue;
    const read = await metric.get();
    for (const sample of read.values) {
      // Histograms report _bucket, _sum and _count samples under one metric.
      const sampleName = 'metricName' in sample && typeof sample.metricName === 'string' ? sample.metricName : name;
      let list = metrics.get(sampleName);
      if (list === undefined) metrics.set(sampleName, (list = []));
      list.push({ labels: labelsOf(sample.labels), value: sample.value });
    }
  }
  return { at, metrics };
}

export function seriesKey(labels: Labels): string {
  return Object.keys(labels)
    .sort()
    .map((key) => `${key}=${labels[key] ?? ''}`)
    .join('\u0000');
}

/** The series of `name` in `later` minus the same series in `earlier` (missing there: 0). */
export function difference(later: Snapshot, earlier: Snapshot | undefined, name: string): Series[] {
  const before = new Map<string, number>();
  for (const series of earlier?.metrics.get(name) ?? []) before.set(seriesKey(series.labels), series.value);
  return (later.metrics.get(name) ?? []).map(function delta(series) {
    // A counter that went down was reset (a reloaded component): count from zero.
    const previous = before.get(seriesKey(series.labels)) ?? 0;
    return { labels: series.labels, value: series.value >= previous ? series.value - previous : series.value };
  });
}

/** Sums the series of `name` by the value of `label`. */
export function sumBy(series: readonly Series[], label: string): Map<string, number> {
  const sums = new Map<string, number>();
  for (const one of series) {
    const key = one.labels[label] ?? '';
    sums.set(key, (sums.get(key) ?? 0) + one.value);
  }
  return sums;
}

export function total(series: readonly Series[]): number {
  let sum = 0;
  for (const one of series) sum += one.value;
  return sum;
}
