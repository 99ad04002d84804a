// Accepted and refused spans per receiver and transport, plus refused
// requests: a malformed or oversized body has no span count to report.
import { receiverMetrics, type Telemetry } from '../../shared/telemetry.js';
import type { RefusalReason } from './outcome.js';

export type Transport = 'http' | 'grpc';

export interface TransportMetrics {
  accepted(spans: number): void;
  refused(reason: RefusalReason, spans: number): void;
}

export function transportMetrics(telemetry: Telemetry, receiver: string, transport: Transport): TransportMetrics {
  const spans = receiverMetrics(telemetry);
  const requests = telemetry.counter('sluice_receiver_refused_requests_total', 'Requests a receiver refused, by reason.', ['receiver', 'transport', 'reason']);
  const accepted = spans.accepted.labels({ receiver, transport });
  return {
    accepted(count) {
      accepted.inc(count);
    },
    refused(reason, count) {
      requests.labels({ receiver, transport, reason }).inc();
      if (count > 0) spans.refused.labels({ receiver, transport, reason }).inc(count);
    },
  };
}
