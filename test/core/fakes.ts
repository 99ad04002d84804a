// Small fake components that record what happens to them.
import { z } from 'zod';
import type { Exporter, ExporterFactory, Processor, ProcessorFactory, ReceiverFactory, TracesConsumer } from '../../src/core/component.js';
import { ComponentRegistry } from '../../src/core/registry.js';
import type { TraceBatch } from '../../src/otlp/batch.js';

export function fakeBatch(spanCount: number, label = 'batch'): TraceBatch {
  return { spanCount, label } as unknown as TraceBatch;
}

export function labelOf(batch: TraceBatch): string {
  return (batch as unknown as { label: string }).label;
}

export interface Recorder {
  readonly events: string[];
  /** The `next` consumer each receiver was created with, by id. */
  readonly receivers: Map<string, TracesConsumer>;
  /** Every batch each exporter consumed, by id. */
  readonly exported: Map<string, TraceBatch[]>;
}

export function createRecorder(): Recorder {
  return { events: [], receivers: new Map(), exported: new Map() };
}

const receiverSchema = z.strictObject({ fail_start: z.boolean().default(false), hang_start: z.boolean().default(false) });
const processorSchema = z.strictObject({ tag: z.string().default(''), drop: z.boolean().default(false) });
const exporterSchema = z.strictObject({
  encoding: z.enum(['json', 'protobuf']).default('protobuf'),
  reject: z.enum(['none', 'permanent', 'retryable']).default('none'),
  delay_ms: z.number().default(0),
  start_delay_ms: z.number().default(0),
});

export function fakeReceiverFactory(recorder: Recorder, type = 'fakein'): ReceiverFactory<z.output<typeof receiverSchema>> {
  return {
    kind: 'receiver',
    type,
    configSchema: receiverSchema,
    createDefaultConfig: () => ({ fail_start: false }),
    create(settings, config, next) {
      recorder.receivers.set(settings.id, next);
      return {
        async start() {
          recorder.events.push(`start receiver ${settings.id}`);
          if (config.fail_start) throw new Error('port in use');
          // A start that never finishes (a filesystem that never answers).
          if (config.hang_start) await new Promise<never>(() => undefined);
        },
        async shutdown() {
          recorder.events.push(`shutdown receiver ${settings.id}`);
        },
      };
    },
  };
}

export function fakeProcessorFactory(recorder: Recorder, type = 'fakeproc'): ProcessorFactory<z.output<typeof processorSchema>> {
  return {
    kind: 'processor',
    type,
    configSchema: processorSchema,
    createDefaultConfig: () => ({ tag: '' }),
    create(settings, config): Processor {
      return {
        process(batch) {
          recorder.events.push(`process ${settings.id}`);
          if (config.drop) return null;
          return fakeBatch(batch.spanCount, `${labelOf(batch)}+${config.tag || settings.id}`);
        },
        async start() {
          recorder.events.push(`start processor ${settings.id}`);
        },
        async shutdown() {
          recorder.events.push(`shutdown processor ${settings.id}`);
        },
      };
    },
  };
}

export function fakeExporterFactory(recorder: Recorder, type = 'fakeout'): ExporterFactory<z.output<typeof exporterSchema>> {
  return {
    kind: 'exporter',
    type,
    configSchema: exporterSchema,
    createDefaultConfig: () => ({ encoding: 'protobuf' }),
    create(settings, config): Exporter {
      return {
        async consume(batch) {
          if (config.delay_ms > 0) await new Promise((resolve) => setTimeout(resolve, config.delay_ms));
          if (config.reject === 'permanent') {
            const { PermanentError } = await import('../../src/shared/errors.js');
            throw new PermanentError(`${settings.id} refused`);
          }
          if (config.reject === 'retryable') throw new Error(`${settings.id} unavailable`);
          const list = recorder.exported.get(settings.id) ?? [];
          list.push(batch);
          recorder.exported.set(settings.id, list);
          recorder.events.push(`export ${settings.id} ${labelOf(batch)}`);
        },
        async start() {
          recorder.events.push(`start exporter ${settings.id}`);
          if (config.start_delay_ms > 0) await new Promise((resolve) => setTimeout(resolve, config.start_delay_ms));
        },
        async shutdown() {
          recorder.events.push(`shutdown exporter ${settings.id}`);
        },
      };
    },
  };
}

export function fakeRegistry(recorder: Recorder = createRecorder()): ComponentRegistry {
  return new ComponentRegistry().register(fakeReceiverFactory(recorder), fakeProcessorFactory(recorder), fakeExporterFactory(recorder));
}
