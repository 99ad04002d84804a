// Queue gauges, labelled by queue (the exporter or drain id).
import type { Telemetry } from '../shared/telemetry.js';
import type { Queue } from './types.js';

export function queueMetrics(telemetry: Telemetry) {
  return {
    sizeBytes: telemetry.gauge('sluice_queue_size_bytes', 'Bytes held by a sending queue.', ['queue']),
    records: telemetry.gauge('sluice_queue_records', 'Records in a sending queue not yet acknowledged.', ['queue']),
    capacityBytes: telemetry.gauge('sluice_queue_capacity_bytes', 'Capacity of a sending queue (max_size).', ['queue']),
    enqueueFailedSpans: telemetry.counter('sluice_queue_enqueue_failed_spans_total', 'Spans that could not be added to a sending queue.', ['queue']),
  };
}

export type QueueMetrics = ReturnType<typeof queueMetrics>;

export function updateQueueGauges(metrics: QueueMetrics, queue: Queue): void {
  const stats = queue.stats();
  const labels = { queue: queue.name };
  metrics.sizeBytes.set(labels, stats.sizeBytes);
  metrics.records.set(labels, stats.records);
  metrics.capacityBytes.set(labels, stats.capacityBytes);
}
