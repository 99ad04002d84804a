// The body of GET /v1/stats, computed from the sampled metrics: totals since
// start from the current reading, the gateway's last 15 minutes as the
// difference from the oldest sample in the window, and spans per second
// between consecutive samples.
import { histogramQuantile } from './quantile.js';
import { type Series, type Snapshot, difference, sumBy, total } from './snapshot.js';
import type { GatewayCatalog } from './catalog.js';
import type { KeyUsage } from './key-usage.js';

const DRAIN_PREFIX = 'drain/';
const PENDING_SUFFIX = '/pending';

export interface QueueView {
  records: number;
  bytes: number;
  capacityBytes: number;
}

export interface ReceiverView {
  receiver: string;
  transport: string;
  /** Spans, as the sender's requests carried them. */
  accepted: number;
  refused: number;
  refusedByReason: Record<string, number>;
  /** Requests refused, whether or not their spans could be counted (`unauthenticated`, `malformed`, ...). */
  refusedRequests: number;
  refusedRequestsByReason: Record<string, number>;
}

export interface ExporterView {
  exporter: string;
  sent: number;
  failed: number;
  retries: number;
  dropped: number;
  droppedByReason: Record<string, number>;
  queue: QueueView | null;
}

export interface DrainStatsView extends Omit<ExporterView, 'exporter'> {
  id: string;
  /** Spans waiting for their trace's root to decide. */
  pendingQueue: QueueView | null;
}

export interface ProviderView {
  receiver: string;
  provider: string;
  attempts: number;
  failures: number;
  failuresByType: Record<string, number>;
  latencyMs: { p50: number | null; p99: number | null };
}

export interface KeyView {
  key: string;
  tokens: number;
  tokensByType: Record<string, number>;
  costUsd: number;
}

export interface StatsView {
  sampledAt: number;
  intervalMs: number;
  windowMs: number;
  receivers: ReceiverView[];
  exporters: ExporterView[];
  drains: DrainStatsView[];
  gateway: {
    catalogs: GatewayCatalog[];
    /** Over the window (the last 15 minutes, or since start when younger). */
    providers: ProviderView[];
    /** Tokens and spend since this process started, from the metrics. */
    keys: KeyView[];
    /** Today's requests, tokens and spend, and spend in each budget's period, from the usage records. */
    usage: KeyUsage[];
  };
  /** Spans per second between consecutive samples, oldest first. */
  series: Array<{ at: number; acceptedPerSecond: number; sentPerSecond: number }>;
}

function group(series: readonly Series[], ...labels: string[]): Map<string, Series[]> {
  const groups = new Map<string, Series[]>();
  for (const one of series) {
    const key = labels.map((label) => one.labels[label] ?? '').join('\u0000');
    let list = groups.get(key);
    if (list === undefined) groups.set(key, (list = []));
    list.push(one);
  }
  return groups;
}

function byLabel(series: readonly Series[] | undefined, label: string): Map<string, number> {
  return sumBy(series ?? [], label);
}

function record(map: Map<string, number>): Record<string, number> {
  return Object.fromEntries([...map].filter(([, value]) => value > 0).sort(([a], [b]) => a.localeCompare(b)));
}

function queuesOf(current: Snapshot): Map<string, QueueView> {
  const records = byLabel(current.metrics.get('sluice_queue_records'), 'queue');
  const bytes = byLabel(current.metrics.get('sluice_queue_size_bytes'), 'queue');
  const capacity = byLabel(current.metrics.get('sluice_queue_capacity_bytes'), 'queue');
  const queues = new Map<string, QueueView>();
  for (const name of new Set([...records.keys(), ...bytes.keys(), ...capacity.keys()])) {
    queues.set(name, { records: records.get(name) ?? 0, bytes: bytes.get(name) ?? 0, capacityBytes: capacity.get(name) ?? 0 });
  }
  return queues;
}

function exportersOf(current: Snapshot): ExporterView[] {
  const metric = (name: string) => current.metrics.get(name) ?? [];
  const sent = sumBy(metric('sluice_exporter_sent_spans_total'), 'exporter');
  const failed = sumBy(metric('sluice_exporter_send_failed_spans_total'), 'exporter');
  const retries = sumBy(metric('sluice_exporter_retries_total'), 'exporter');
  const dropped = group(metric('sluice_exporter_dropped_spans_total'), 'exporter');
  const queues = queuesOf(current);
  const names = new Set([...sent.keys(), ...failed.keys(), ...retries.keys(), ...dropped.keys(), ...[...queues.keys()].filter((q) => !q.endsWith(PENDING_SUFFIX))]);
  return [...names].sort().map(function exporterView(exporter) {
    const drops = dropped.get(exporter) ?? [];
    return {
      exporter,
      sent: sent.get(exporter) ?? 0,
      failed: failed.get(exporter) ?? 0,
      retries: retries.get(exporter) ?? 0,
      dropped: total(drops),
      droppedByReason: record(sumBy(drops, 'reason')),
      queue: queues.get(exporter) ?? null,
    };
  });
}

function receiversOf(current: Snapshot): StatsView['receivers'] {
  const accepted = group(current.metrics.get('sluice_receiver_accepted_spans_total') ?? [], 'receiver', 'transport');
  const refused = group(current.metrics.get('sluice_receiver_refused_spans_total') ?? [], 'receiver', 'transport');
  // A request refused before its spans were read (no key, a body that does not decode) has no span count.
  const requests = group(current.metrics.get('sluice_receiver_refused_requests_total') ?? [], 'receiver', 'transport');
  return [...new Set([...accepted.keys(), ...refused.keys(), ...requests.keys()])].sort().map(function receiverView(key) {
    const [receiver = '', transport = ''] = key.split('\u0000');
    const refusals = refused.get(key) ?? [];
    const refusedRequests = requests.get(key) ?? [];
    return {
      receiver,
      transport,
      accepted: total(accepted.get(key) ?? []),
      refused: total(refusals),
      refusedByReason: record(sumBy(refusals, 'reason')),
      refusedRequests: total(refusedRequests),
      refusedRequestsByReason: record(sumBy(refusedRequests, 'reason')),
    };
  });
}

function providersOf(current: Snapshot, windowStart: Snapshot | undefined): ProviderView[] {
  const attempts = group(difference(current, windowStart, 'sluice_gateway_attempts_total'), 'receiver', 'provider');
  const buckets = group(difference(current, windowStart, 'sluice_gateway_attempt_duration_seconds_bucket'), 'receiver', 'provider');
  return [...new Set([...attempts.keys(), ...buckets.keys()])].sort().map(function providerView(key) {
    const [receiver = '', provider = ''] = key.split('\u0000');
    const outcomes = sumBy(attempts.get(key) ?? [], 'outcome');
    // A client that left (cancelled) is not the provider failing.
    const failures = new Map([...outcomes].filter(([outcome]) => outcome !== 'success' && outcome !== 'cancelled'));
    const latency = buckets.get(key) ?? [];
    const ms = (q: number) => {
      const seconds = histogramQuantile(q, latency);
      return seconds === null ? null : Math.round(seconds * 1000 * 10) / 10;
    };
    return {
      receiver,
      provider,
      attempts: total(attempts.get(key) ?? []),
      failures: total([...failures.values()].map((value) => ({ labels: {}, value }))),
      failuresByType: record(failures),
      latencyMs: { p50: ms(0.5), p99: ms(0.99) },
    };
  });
}

function keysOf(current: Snapshot): KeyView[] {
  const tokens = group(current.metrics.get('sluice_gateway_tokens_total') ?? [], 'key');
  const cost = sumBy(current.metrics.get('sluice_gateway_cost_usd_total') ?? [], 'key');
  return [...new Set([...tokens.keys(), ...cost.keys()])].sort().map(function keyView(key) {
    const series = tokens.get(key) ?? [];
    // `input` counts cache reads and writes, `output` reasoning: the other types are parts of these two.
    const billed = series.filter((s) => s.labels['type'] === 'input' || s.labels['type'] === 'output');
    return { key, tokens: total(billed), tokensByType: record(sumBy(series, 'type')), costUsd: cost.get(key) ?? 0 };
  });
}

function seriesOf(history: readonly Snapshot[]): StatsView['series'] {
  const points: StatsView['series'] = [];
  for (let i = 1; i < history.length; i += 1) {
    const before = history[i - 1];
    const after = history[i];
    if (before === undefined || after === undefined) continue;
    const seconds = (after.at - before.at) / 1000;
    if (seconds <= 0) continue;
    const perSecond = (name: string) => Math.round((total(difference(after, before, name)) / seconds) * 10) / 10;
    points.push({ at: after.at, acceptedPerSecond: perSecond('sluice_receiver_accepted_spans_total'), sentPerSecond: perSecond('sluice_exporter_sent_spans_total') });
  }
  return points;
}

export interface BuildStatsOptions {
  readonly intervalMs: number;
  readonly windowMs: number;
  readonly catalogs: GatewayCatalog[];
  readonly keyUsage: KeyUsage[];
}

/** `history` is the sampled window, oldest first; `current` a reading taken for this answer. */
export function buildStats(current: Snapshot, history: readonly Snapshot[], options: BuildStatsOptions): StatsView {
  const windowStart = history.find((snapshot) => snapshot.at >= current.at - options.windowMs);
  const exporters = exportersOf(current);
  const queues = queuesOf(current);
  return {
    sampledAt: current.at,
    intervalMs: options.intervalMs,
    windowMs: options.windowMs,
    receivers: receiversOf(current),
    exporters: exporters.filter((view) => !view.exporter.startsWith(DRAIN_PREFIX)),
    drains: exporters
      .filter((view) => view.exporter.startsWith(DRAIN_PREFIX))
      .map(function drainView({ exporter, ...rest }) {
        return { id: exporter.slice(DRAIN_PREFIX.length), ...rest, pendingQueue: queues.get(`${exporter}${PENDING_SUFFIX}`) ?? null };
      }),
    gateway: { catalogs: options.catalogs, providers: providersOf(current, windowStart), keys: keysOf(current), usage: options.keyUsage },
    series: seriesOf(history),
  };
}

