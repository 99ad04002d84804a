// How a drain delivers: its HTTP transport (from the drain's delivery
// settings) behind the shared queued sender (from the exporter's settings).
import { readFileSync } from 'node:fs';
import type { Logger } from 'pino';
import type { Telemetry } from '../../shared/telemetry.js';
import type { Queue } from '../../queue/types.js';
import { createQueuedSender, type QueuedSender } from '../exporterhelper/index.js';
import { createHttpTransport, type Transport } from '../otlphttp/transport.js';
import type { DrainsExporterConfig } from './config.js';
import type { DrainDefinition } from './definition.js';
import type { DeliveryStats } from './delivery-stats.js';
import { observedTransport } from './observed-transport.js';

export function createTransport(definition: DrainDefinition, timeoutMs: number, userAgent: string): Transport {
  const { delivery } = definition;
  const ca = delivery.ca ?? (delivery.caFile === undefined ? undefined : readFileSync(delivery.caFile, 'utf8'));
  return createHttpTransport({
    url: delivery.url,
    encoding: delivery.encoding,
    compression: delivery.compression,
    headers: delivery.headers,
    secret: delivery.secret,
    ca,
    insecure: delivery.insecure,
    timeoutMs,
    userAgent,
  });
}

export interface DrainSenderOptions {
  readonly label: string;
  readonly queue: Queue;
  readonly transport: () => Transport;
  readonly stats: DeliveryStats;
  readonly config: DrainsExporterConfig;
  readonly maxSizeBytes: number;
  readonly onFull: 'drop' | 'refuse';
  readonly logger: Logger;
  readonly telemetry: Telemetry;
}

export function createDrainSender(options: DrainSenderOptions): QueuedSender {
  const { config } = options;
  return createQueuedSender({
    id: options.label,
    queue: options.queue,
    transport: observedTransport(options.transport, options.stats),
    // Every give-up the sender counts (a refusal, a partial success, max_age, retries disabled) shows in the drain's API counters too.
    onDrop: (reason, spans) => options.stats.dropped(reason === 'retry_disabled' ? 'permanent' : reason, spans),
    logger: options.logger,
    telemetry: options.telemetry,
    config: {
      sending_queue: { ...config.sending_queue, max_size: options.maxSizeBytes, on_full: options.onFull },
      retry_on_failure: config.retry_on_failure,
    },
  });
}
