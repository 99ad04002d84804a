import type { Counter, Histogram } from 'prom-client';
import { receiverMetrics, type Telemetry } from '../../../shared/telemetry.js';

export interface GatewayMetrics {
  requests: Counter<'receiver' | 'route' | 'status'>;
  attempts: Counter<'receiver' | 'provider' | 'outcome'>;
  duration: Histogram<'receiver' | 'route'>;
  attemptDuration: Histogram<'receiver' | 'provider'>;
  spansAccepted: Counter<'receiver' | 'transport'>;
  spansRefused: Counter<'receiver' | 'transport' | 'reason'>;
}

const DURATION_BUCKETS = [0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10, 30, 60, 120]; // seconds

export function gatewayMetrics(telemetry: Telemetry): GatewayMetrics {
  return {
    requests: telemetry.counter('sluice_gateway_requests_total', 'Gateway requests answered, by route and HTTP status.', ['receiver', 'route', 'status']),
    attempts: telemetry.counter('sluice_gateway_attempts_total', 'Upstream attempts, by provider slug and outcome.', ['receiver', 'provider', 'outcome']),
    duration: telemetry.histogram('sluice_gateway_request_duration_seconds', 'Gateway request latency until the response ended.', ['receiver', 'route'], DURATION_BUCKETS),
    attemptDuration: telemetry.histogram('sluice_gateway_attempt_duration_seconds', 'Upstream attempt latency by provider slug, until its answer or stream ended.', ['receiver', 'provider'], DURATION_BUCKETS),
    spansAccepted: receiverMetrics(telemetry).accepted,
    spansRefused: receiverMetrics(telemetry).refused,
  };
}
