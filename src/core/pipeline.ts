// How data moves between components: fan-out to several consumers, and the
// processor stage that forwards to the next consumer and counts, so a
// processor never forwards by hand.
import type { TraceBatch } from '../otlp/batch.js';
import type { Processor, TracesConsumer } from './component.js';
import { isPermanent } from '../shared/errors.js';
import type { Telemetry } from '../shared/telemetry.js';

/**
 * Every consumer gets the same batch (processors are pure, so none may change
 * it) and the result settles only once all of them have. When several fail,
 * a retryable error wins over a permanent one: the sender should retry while
 * any destination can still take the data (at-least-once).
 */
export function fanOut(consumers: readonly TracesConsumer[]): TracesConsumer {
  const only = consumers[0];
  if (consumers.length === 1 && only !== undefined) return only;
  return {
    consume: async function fanOutConsume(batch: TraceBatch): Promise<void> {
      const results = await Promise.allSettled(consumers.map((consumer) => consumer.consume(batch)));
      let permanent: unknown;
      for (const result of results) {
        if (result.status === 'fulfilled') continue;
        if (!isPermanent(result.reason)) throw result.reason;
        permanent ??= result.reason;
      }
      if (permanent !== undefined) throw permanent;
    },
  };
}

export function processorMetrics(telemetry: Telemetry) {
  return {
    incoming: telemetry.counter('sluice_processor_incoming_spans_total', 'Spans handed to a processor.', ['pipeline', 'processor']),
    outgoing: telemetry.counter('sluice_processor_outgoing_spans_total', 'Spans a processor passed on.', ['pipeline', 'processor']),
  };
}

export function pipelineMetrics(telemetry: Telemetry) {
  return {
    accepted: telemetry.counter('sluice_pipeline_accepted_spans_total', 'Spans a pipeline accepted (every exporter took them).', ['pipeline']),
    refused: telemetry.counter('sluice_pipeline_refused_spans_total', 'Spans a pipeline refused, by error class.', ['pipeline', 'reason']),
  };
}

/** Runs `processor` and hands a non-empty result to `next`; null or empty stops here. */
export function processorStage(pipeline: string, id: string, processor: Processor, next: TracesConsumer, telemetry: Telemetry): TracesConsumer {
  const metrics = processorMetrics(telemetry);
  const labels = { pipeline, processor: id };
  return {
    consume: async function processAndForward(batch: TraceBatch): Promise<void> {
      metrics.incoming.inc(labels, batch.spanCount);
      const out = await processor.process(batch);
      if (out === null || out.spanCount === 0) return;
      metrics.outgoing.inc(labels, out.spanCount);
      await next.consume(out);
    },
  };
}

/** A pipeline's entry: its processors in order, then fan-out to its exporters. */
export function buildPipeline(
  pipeline: string,
  processors: readonly { readonly id: string; readonly processor: Processor }[],
  exporters: readonly TracesConsumer[],
  telemetry: Telemetry,
): TracesConsumer {
  let next = fanOut(exporters);
  for (let index = processors.length - 1; index >= 0; index--) {
    const stage = processors[index];
    if (stage !== undefined) next = processorStage(pipeline, stage.id, stage.processor, next, telemetry);
  }
  const head = next;
  const metrics = pipelineMetrics(telemetry);
  return {
    consume: async function pipelineConsume(batch: TraceBatch): Promise<void> {
      try {
        await head.consume(batch);
        metrics.accepted.inc({ pipeline }, batch.spanCount);
      } catch (err) {
        metrics.refused.inc({ pipeline, reason: isPermanent(err) ? 'permanent' : 'retryable' }, batch.spanCount);
        throw err;
      }
    },
  };
}
