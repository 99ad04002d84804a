// An otlp receiver built through its factory, on port 0, with a fake
// consumer that records batches and can be told to refuse.
import { Client, credentials, Metadata, type ChannelOptions, type ServiceError } from '@grpc/grpc-js';
import { pino, type Logger } from 'pino';
import type { TracesConsumer } from '../../../src/core/component.js';
import { Telemetry } from '../../../src/shared/telemetry.js';
import type { TraceBatch } from '../../../src/otlp/batch.js';
import type { ExportTraceServiceRequest, Span } from '../../../src/otlp/model.js';
import { deepMerge } from '../../../src/config/merge.js';
import { otlpReceiverFactory } from '../../../src/receivers/otlp/factory.js';
import { EXPORT_PATH } from '../../../src/receivers/otlp/grpc-server.js';
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

export async function startReceiver(
  protocols: Record<string, unknown> = {
    http: { endpoint: '127.0.0.1:0' },
    grpc: { endpoint: '127.0.0.1:0' },
  },
  rest: Record<string, unknown> = {},
  logger: Logger = pino({ level: 'silent' }),
): Promise<Harness> {
  const telemetry = new Telemetry({ defaultMetrics: false });
  const consumer = new FakeConsumer();
  const config = parseConfig({ ...rest, protocols });
  const receiver = otlpReceiverFactory.create(
    { id: 'otlp', logger, telemetry, storageDirectory: '/nonexistent', version: '0.0.0-test' },
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
  for (const client of grpcClients.splice(0)) client.close();
  await Promise.all(started.splice(0).map((receiver) => receiver.shutdown()));
}

const grpcClients: Client[] = [];

/** A plain-text grpc-js client of the receiver, closed by stopAll(). */
export function grpcClient(target: string, options: ChannelOptions = {}): Client {
  const client = new Client(target, credentials.createInsecure(), options);
  grpcClients.push(client);
  return client;
}

function identity(bytes: Buffer): Buffer {
  return bytes;
}

/** One Export call of raw request bytes on `client`; resolves with the response bytes or the ServiceError. */
export function exportBytes(client: Client, body: Buffer, metadata = new Metadata()): Promise<Buffer | ServiceError> {
  return new Promise((resolve) => {
    client.makeUnaryRequest(EXPORT_PATH, identity, identity, body, metadata, {}, (err, response) => {
      resolve(err ?? response ?? Buffer.alloc(0));
    });
  });
}

export async function metricValue(telemetry: Telemetry, name: string, labels: Record<string, string>): Promise<number> {
  const metric = await telemetry.registry.getSingleMetric(name)?.get();
  const match = metric?.values.find((v) => Object.entries(labels).every(([k, val]) => v.labels[k] === val));
  return match?.value ?? 0;
}
