// A `sampling/*` processor in a pipeline. Spans that wait for their trace's
// root are held in memory and the batch's consume() waits with them (at most
// decision_wait): a processor has no queue of its own, so the receiver's
// answer is what holds the data until it is decided. Decisions come from the
// host's shared state: in cluster mode, spans whose root another instance saw
// follow the decision it recorded.
import type { DecisionStore } from '../../cluster/decision-store.js';
import type { Host, Processor } from '../../core/component.js';
import type { Telemetry } from '../../shared/telemetry.js';
import { TraceBatch } from '../../otlp/batch.js';
import { concatRequests } from '../../otlp/wire.js';
import type { SamplingConfig } from './config.js';
import { Sampler } from './sampler.js';

export function createSamplingProcessor(id: string, config: SamplingConfig, telemetry: Telemetry): Processor {
  let sampler: Sampler | undefined;
  let decisions: DecisionStore | undefined;
  return {
    async start(host: Host) {
      // Memory only: a processor holds nothing across restarts (its receivers' clients resend).
      decisions = host.state.decisionStore({ name: id, directory: undefined, logger: host.logger });
      await decisions.open();
      sampler = new Sampler({
        name: id,
        rules: config.rules,
        decisionWaitMs: config.decision_wait,
        maxPendingSpans: config.max_pending_spans,
        excludeEdge: false,
        telemetry,
        decisions,
      });
      sampler.start();
    },
    async shutdown() {
      // Receivers have stopped: decide what still waits so those batches complete.
      sampler?.flush();
      sampler?.stop();
      await decisions?.close();
    },
    process: async function sample(batch: TraceBatch): Promise<TraceBatch | null> {
      if (sampler === undefined) throw new Error(`processor ${id} is not started`);
      const result = sampler.sample(batch.wire());
      if (result.pending === undefined) return keptBatch(batch, result.kept?.buf, result.kept?.spanCount);
      const held = await sampler.hold(result.pending.buf);
      const parts = [result.kept?.buf, held.kept?.buf].filter((part): part is Uint8Array => part !== undefined);
      if (parts.length === 0) return null;
      return TraceBatch.fromDerivedProto(concatRequests(parts));
    },
  };
}

function keptBatch(batch: TraceBatch, buf: Uint8Array | undefined, spanCount: number | undefined): TraceBatch | null {
  if (buf === undefined || spanCount === undefined) return null;
  if (spanCount === batch.spanCount) return batch;
  return TraceBatch.fromDerivedProto(buf);
}
