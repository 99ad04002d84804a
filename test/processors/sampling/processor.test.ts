import { pino } from 'pino';
import { afterEach, describe, expect, it } from 'vitest';
import { deepMerge } from '../../../src/config/merge.js';
import type { Processor } from '../../../src/core/component.js';
import { Telemetry } from '../../../src/shared/telemetry.js';
import type { TraceBatch } from '../../../src/otlp/batch.js';
import { samplingConfigSchema } from '../../../src/processors/sampling/config.js';
import { samplingProcessorFactory } from '../../../src/processors/sampling/factory.js';
import { batchOf, spanIdsOf, trace, traceIdWithR, type TestSpan } from './helpers.js';
import { testHost } from '../../helpers/host.js';

const processors: Processor[] = [];
afterEach(async () => {
  for (const processor of processors.splice(0)) await processor.shutdown?.();
});

function make(settings: Record<string, unknown>): Processor {
  const config = samplingConfigSchema.parse(deepMerge(samplingProcessorFactory.createDefaultConfig(), settings));
  const telemetry = new Telemetry({ defaultMetrics: false });
  const logger = pino({ level: 'silent' });
  const processor = samplingProcessorFactory.create({ id: 'sampling/web', logger, telemetry, storageDirectory: '/nonexistent', version: 'test' }, config);
  processors.push(processor);
  return processor;
}

async function started(settings: Record<string, unknown>): Promise<Processor> {
  const processor = make(settings);
  await processor.start?.(testHost({ logger: pino({ level: 'silent' }), telemetry: new Telemetry({ defaultMetrics: false }), storageDirectory: '/nonexistent', version: 'test' }));
  return processor;
}

describe('sampling processor', () => {
  it('defaults to decision_wait 2s, max_pending_spans 100000 and no rules', () => {
    expect(samplingConfigSchema.parse(samplingProcessorFactory.createDefaultConfig())).toEqual({ rules: [], decision_wait: 2000, max_pending_spans: 100_000 });
  });

  it('passes a batch through unchanged when every trace is kept', async () => {
    const processor = await started({});
    const batch = batchOf(trace({}));
    expect(await processor.process(batch)).toBe(batch);
  });

  it('returns nothing when every trace is dropped', async () => {
    const processor = await started({ rules: [{ environment: 'preview', percentage: 100 }] });
    expect(await processor.process(batchOf(trace({})))).toBeNull();
  });

  it('delays a batch of children until their root arrives in another batch', async () => {
    const processor = await started({ rules: [{ environment: 'production', percentage: 100, path_prefix: '/api' }] });
    const [root, ...children] = trace({ path: '/api/x', traceId: traceIdWithR(0n) });
    const waiting = processor.process(batchOf(children));
    let settled = false;
    void Promise.resolve(waiting).then(() => (settled = true));
    await new Promise((resolve) => setTimeout(resolve, 50));
    expect(settled).toBe(false);
    const rootOut = await processor.process(batchOf([root as TestSpan]));
    expect(rootOut?.spanCount).toBe(1);
    const out = (await waiting) as TraceBatch;
    expect(spanIdsOf(out.toProto()).sort()).toEqual(children.map((c) => c.spanId).sort());
  });

  it('decides a waiting batch as path-unknown after decision_wait', async () => {
    const processor = await started({ decision_wait: '50ms', rules: [{ environment: 'production', percentage: 100, path_prefix: '/api' }] });
    const [, ...children] = trace({});
    const began = Date.now();
    expect(await processor.process(batchOf(children))).toBeNull();
    expect(Date.now() - began).toBeGreaterThanOrEqual(40);
  });
});
