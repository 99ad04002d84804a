// The otlphttp exporter: the queued sender (durable queue, batching on read,
// retries) in front of the OTLP/HTTP transport. consume() settles once the
// batch is in the queue.
import { readFile } from 'node:fs/promises';
import type { CreateSettings, Exporter } from '../../core/component.js';
import { hostService, SHUTDOWN_DEADLINE } from '../../core/host-services.js';
import type { ShutdownDeadline } from '../../core/shutdown-deadline.js';
import { createQueuedSender, createSendingQueue, type QueuedSender } from '../exporterhelper/index.js';
import type { OtlpHttpConfig } from './config.js';
import { createHttpTransport, type Transport } from './transport.js';

export function createOtlpHttpExporter(settings: CreateSettings, config: OtlpHttpConfig): Exporter {
  let sender: QueuedSender | undefined;
  let transport: Transport | undefined;
  let deadline: ShutdownDeadline | undefined;

  return {
    start: async function start(host) {
      deadline = hostService(host, SHUTDOWN_DEADLINE);
      const ca = config.tls.ca_file === undefined ? undefined : await readFile(config.tls.ca_file, 'utf8');
      transport = createHttpTransport({
        url: config.endpoint,
        encoding: config.encoding,
        compression: config.compression,
        headers: config.headers,
        ca,
        // The collector's otlphttp exporter follows the endpoint's scheme; HTTPS-only is a drains rule.
        insecure: true,
        timeoutMs: config.timeout,
        userAgent: `sluice/${settings.version}`,
      });
      sender = createQueuedSender({
        id: settings.id,
        queue: createSendingQueue({ id: settings.id, storageDirectory: settings.storageDirectory, config: config.sending_queue, logger: settings.logger }),
        transport,
        // The sender names the exporter in each line itself.
        logger: settings.logger,
        telemetry: settings.telemetry,
        config,
      });
      await sender.start();
    },
    consume: function consume(batch) {
      if (sender === undefined) return Promise.reject(new Error(`exporters.${settings.id}: not started`));
      return sender.consume(batch.toProto(), batch.spanCount);
    },
    shutdown: async function shutdown() {
      // In-flight deliveries get what is left of service.shutdown_grace; the rest stays queued.
      try {
        await sender?.shutdown(deadline?.remainingMs());
      } finally {
        await transport?.close();
        sender = undefined;
        transport = undefined;
      }
    },
  };
}
