// Logs what passes through, as the collector's debug exporter: counts
// (basic), one line per span with its ids, name and kind (normal), or one
// line per span with every field, its resource and its scope (detailed).
// Only `basic` avoids decoding; the others decode span by span from the
// batch's wire index and give the event loop a turn every half millisecond,
// so a large batch never holds the loop that serves requests.
import type { Logger } from 'pino';
import type { CreateSettings, Exporter } from '../../core/component.js';
import type { Resource } from '../../otlp/model.js';
import { withNonFiniteSpelled } from '../../otlp/json-codec.js';
import { decodeResource, decodeScopeSpansHead, decodeSpan } from '../../otlp/proto-codec.js';
import type { WireIndex, WireScopeSpans } from '../../otlp/wire.js';
import { LoopSlices } from '../../shared/loop-slices.js';
import { exporterMetrics } from '../../shared/telemetry.js';
import type { DebugConfig } from './config.js';

const SLICE_MS = 0.5; // logging between two turns of the event loop

export function createDebugExporter(settings: CreateSettings, config: DebugConfig): Exporter {
  const logger = settings.logger.child({ exporter: settings.id });
  const metrics = exporterMetrics(settings.telemetry);

  return {
    start: async () => {},
    shutdown: async () => {},
    consume: async function logBatch(batch) {
      const spans = batch.spanCount;
      if (config.verbosity === 'basic') logger.info({ resourceSpans: batch.wire().resourceSpans.length, spans }, 'traces');
      else await logSpans(logger, batch.wire(), config.verbosity === 'detailed');
      metrics.sent.inc({ exporter: settings.id }, spans);
    },
  };
}

async function logSpans(logger: Logger, wire: WireIndex, detailed: boolean): Promise<void> {
  const slices = await LoopSlices.start(SLICE_MS);
  for (const rs of wire.resourceSpans) {
    // Doubles as OTLP/JSON spells them: the logger would write NaN and Infinity as null.
    const resource: Resource | undefined = detailed && rs.resource !== undefined ? withNonFiniteSpelled(decodeResource(wire.buf.subarray(rs.resource[0], rs.resource[1]))) : undefined;
    for (const ss of rs.scopeSpans) {
      const head = detailed ? withNonFiniteSpelled(scopeHead(wire, ss)) : undefined;
      for (let i = 0; i < ss.spans.length; i++) {
        const span = decodeSpan(ss.spans.content(i));
        if (detailed) logger.info({ resource, scope: head?.scope, schemaUrl: head?.schemaUrl, span: withNonFiniteSpelled(span) }, 'span');
        // `kind` is the component's (the logger's bindings): a second `kind` would make the line a JSON object with a duplicate key.
        else logger.info({ traceId: span.traceId, spanId: span.spanId, name: span.name, spanKind: span.kind }, 'span');
        if (slices.due) await slices.turn();
      }
    }
  }
}

/** The scope and schema URL of a ScopeSpans: its fields other than spans form a ScopeSpans message of their own. */
function scopeHead(wire: WireIndex, ss: WireScopeSpans): ReturnType<typeof decodeScopeSpansHead> | undefined {
  if (ss.otherFields.length === 0) return undefined;
  return decodeScopeSpansHead(Buffer.concat(ss.otherFields.map(([start, end]) => wire.buf.subarray(start, end))));
}
