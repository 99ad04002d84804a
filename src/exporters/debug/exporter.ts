// Logs what passes through, as the collector's debug exporter: counts
// (basic), one line per span (normal) or the whole OTLP/JSON request
// (detailed). Only `basic` avoids decoding the batch.
import type { CreateSettings, Exporter } from '../../core/component.js';
import { exporterMetrics } from '../../shared/telemetry.js';
import type { DebugConfig } from './config.js';

export function createDebugExporter(settings: CreateSettings, config: DebugConfig): Exporter {
  const logger = settings.logger.child({ exporter: settings.id });
  const metrics = exporterMetrics(settings.telemetry);

  return {
    start: async () => {},
    shutdown: async () => {},
    consume: async function logBatch(batch) {
      const spans = batch.spanCount;
      if (config.verbosity === 'basic') {
        logger.info({ resourceSpans: batch.wire().resourceSpans.length, spans }, 'traces');
      } else if (config.verbosity === 'normal') {
        for (const rs of batch.toModel().resourceSpans) {
          for (const ss of rs.scopeSpans) {
            for (const s of ss.spans) logger.info({ traceId: s.traceId, spanId: s.spanId, name: s.name, kind: s.kind }, 'span');
          }
        }
      } else {
        logger.info({ request: batch.toModel() }, 'traces');
      }
      metrics.sent.inc({ exporter: settings.id }, spans);
    },
  };
}
