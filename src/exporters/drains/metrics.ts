// Per-drain delivery metrics (DESIGN section 8).
import type { Telemetry } from '../../core/telemetry.js';

export function drainMetrics(telemetry: Telemetry) {
  return {
    sent: telemetry.counter('sluice_drain_sent_spans_total', 'Spans delivered to a drain.', ['drain']),
    failed: telemetry.counter('sluice_drain_send_failed_spans_total', 'Spans in delivery attempts to a drain that failed.', ['drain']),
    dropped: telemetry.counter('sluice_drain_dropped_spans_total', 'Spans a drain did not deliver, by reason.', ['drain', 'reason']),
    retries: telemetry.counter('sluice_drain_retries_total', 'Delivery attempts to a drain that were retried.', ['drain']),
  };
}

export type DrainMetrics = ReturnType<typeof drainMetrics>;
