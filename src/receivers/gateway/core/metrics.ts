import type { Counter } from 'prom-client';
import type { CounterSeriesSet, SeriesHistogram } from '../../../shared/metric-series.js';
import { receiverMetrics, type Telemetry } from '../../../shared/telemetry.js';

export interface GatewayMetrics {
  // Updated on every request: label sets resolved once (metric-series.ts).
  requests: CounterSeriesSet<'receiver' | 'route' | 'status'>;
  attempts: CounterSeriesSet<'receiver' | 'provider' | 'outcome'>;
  duration: SeriesHistogram<'receiver' | 'route'>;
  attemptDuration: SeriesHistogram<'receiver' | 'provider'>;
  spansAccepted: Counter<'receiver' | 'transport'>;
  spansRefused: Counter<'receiver' | 'transport' | 'reason'>;
}

const DURATION_BUCKETS = [0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10, 30, 60, 120]; // seconds

export function gatewayMetrics(telemetry: Telemetry): GatewayMetrics {
  return {
    requests: telemetry.counterSeries('sluice_gateway_requests_total', 'Gateway requests answered, by route and HTTP status.', ['receiver', 'route', 'status']),
    attempts: telemetry.counterSeries('sluice_gateway_attempts_total', 'Upstream attempts, by provider slug and outcome.', ['receiver', 'provider', 'outcome']),
    duration: telemetry.histogramSeries('sluice_gateway_request_duration_seconds', 'Gateway request latency until the response ended.', ['receiver', 'route'], DURATION_BUCKETS),
    attemptDuration: telemetry.histogramSeries('sluice_gateway_attempt_duration_seconds', 'Upstream attempt latency by provider slug, until its answer or stream ended.', ['receiver', 'provider'], DURATION_BUCKETS),
    spansAccepted: receiverMetrics(telemetry).accepted,
    spansRefused: receiverMetrics(telemetry).refused,
  };
}
