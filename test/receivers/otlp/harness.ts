// An otlp receiver built through its factory, on port 0, with a fake
// consumer that records batches and can be told to refuse.
import { pino } from 'pino';
import type { TracesConsumer } from '../../../src/core/component.js';
import { Telemetry } from '../../../src/shared/telemetry.js';
import type { TraceBatch } from '../../../src/otlp/batch.js';
import type { ExportTraceServiceRequest, Span } from '../../../src/otlp/model.js';
import { deepMerge } from '../../../src/config/merge.js';
import { otlpReceiverFactory } from '../../../src/receivers/otlp/factory.js';
import type { OtlpReceiver } from '../../../src/receivers/otlp/receiver.js';

export type Behaviour = (batch: TraceBatch, call: number) => Promise<void> | void;

export class FakeConsumer implements TracesConsumer {
  readonly batches: TraceBatch[] = [];
  calls = 0;
  behaviour: Behaviour | undefined;

  async consume(batch: TraceBatch): Promise<void> {
    this.calls += 1;
    if (this.behaviour !== undefined) await this.behaviour(batch, this.calls);
    this.batches.push(batch);
  }

  spans(): Span[] {
    return this.batches.flatMap((batch) => allSpans(batch.toModel()));
  }
}

export function allSpans(req: ExportTraceServiceRequest): Span[] {
  return req.resourceSpans.flatMap((rs) => rs.scopeSpans.flatMap((ss) => ss.spans));
}

export interface Harness {
  readonly receiver: OtlpReceiver;
  readonly consumer: FakeConsumer;
  readonly telemetry: Telemetry;
  /** http://127.0.0.1:<port>/v1/traces */
  readonly tracesUrl: string;
  /** 127.0.0.1:<port> */
  readonly grpcTarget: string;
}

/** The YAML section as the config loader would merge and validate it. */
export function parseConfig(section: unknown) {
  return otlpReceiverFactory.configSchema.parse(deepMerge(otlpReceiverFactory.createDefaultConfig(), section));
}

const started: OtlpReceiver[] = [];

export async function startReceiver(protocols: Record<string, unknown> = {
  http: { endpoint: '127.0.0.1:0' },
  grpc: { endpoint: '127.0.0.1:0' },
}): Promise<Harness> {
  const telemetry = new Telemetry({ defaultMetrics: false });
  const consumer = new FakeConsumer();
  const config = parseConfig({ protocols });
  const receiver = otlpReceiverFactory.create(
    { id: 'otlp', logger: pino({ level: 'silent' }), telemetry, storageDirectory: '/nonexistent', version: '0.0.0-test' },
    config,
    consumer,
  );
  started.push(receiver);
  await receiver.start();
  const { http, grpc } = receiver.addresses();
  return {
    receiver,
    consumer,
    telemetry,
    tracesUrl: http === undefined ? '' : `http://127.0.0.1:${http.port}/v1/traces`,
    grpcTarget: grpc === undefined ? '' : `127.0.0.1:${grpc.port}`,
  };
}

export async function stopAll(): Promise<void> {
  await Promise.all(started.splice(0).map((receiver) => receiver.shutdown()));
}

export async function metricValue(telemetry: Telemetry, name: string, labels: Record<string, string>): Promise<number> {
  const metric = await telemetry.registry.getSingleMetric(name)?.get();
  const match = metric?.values.find((v) => Object.entries(labels).every(([k, val]) => v.labels[k] === val));
  return match?.value ?? 0;
}
