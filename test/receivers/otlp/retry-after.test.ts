// The delay a throttled OTLP client is told to wait, over HTTP (Retry-After)
// and gRPC (RetryInfo), when the exporter behind the receiver has no queue and
// passes on its destination's own Retry-After.
import { mkdtemp, rm } from 'node:fs/promises';
import { request } from 'node:http';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { status, type ServiceError } from '@grpc/grpc-js';
import { ProtobufTraceSerializer } from '@opentelemetry/otlp-transformer';
import { pino } from 'pino';
import { afterEach, describe, expect, it } from 'vitest';
import { deepMerge } from '../../../src/config/merge.js';
import type { Exporter } from '../../../src/core/component.js';
import { otlphttpExporterFactory } from '../../../src/exporters/otlphttp/factory.js';
import { decodeStatus } from '../../../src/otlp/rpc-status.js';
import { Telemetry } from '../../../src/shared/telemetry.js';
import { testHost } from '../../helpers/host.js';
import { startOtlpSink, type OtlpSink } from '../../helpers/otlp-sink.js';
import { makeSdkSpans } from '../../helpers/sdk-spans.js';
import { exportBytes, grpcClient, startReceiver, stopAll } from './harness.js';

let exporter: Exporter | undefined;
let sink: OtlpSink | undefined;
let dir: string | undefined;
afterEach(async () => {
  await stopAll();
  await exporter?.shutdown();
  await sink?.close();
  if (dir !== undefined) await rm(dir, { recursive: true, force: true });
});

/** A receiver whose pipeline is an otlphttp exporter without a sending queue, its destination answering 503 with `retryAfter`. */
async function throttledReceiver(retryAfter: string) {
  sink = await startOtlpSink({ tls: false });
  sink.respond = () => ({ status: 503, headers: { 'retry-after': retryAfter } });
  dir = await mkdtemp(join(tmpdir(), 'sluice-retry-after-'));
  const logger = pino({ level: 'silent' });
  const telemetry = new Telemetry({ defaultMetrics: false });
  const config = otlphttpExporterFactory.configSchema.parse(deepMerge(otlphttpExporterFactory.createDefaultConfig(), { endpoint: sink.url, sending_queue: { enabled: false } }));
  const created = otlphttpExporterFactory.create({ id: 'otlphttp/acme', logger, telemetry, storageDirectory: dir, version: '0.0.0-test' }, config);
  await created.start(testHost({ logger, telemetry, storageDirectory: dir }));
  exporter = created;
  const harness = await startReceiver();
  harness.consumer.behaviour = (batch) => created.consume(batch);
  return harness;
}

function post(url: string, body: Uint8Array): Promise<{ status: number; retryAfter: string | undefined }> {
  return new Promise((resolve, reject) => {
    const req = request(url, { method: 'POST', headers: { 'content-type': 'application/x-protobuf', 'content-length': String(body.length) } }, (res) => {
      res.resume();
      res.on('end', () => resolve({ status: res.statusCode ?? 0, retryAfter: res.headers['retry-after'] }));
    });
    req.on('error', reject);
    req.end(Buffer.from(body));
  });
}

describe('OTLP receiver retry delays', () => {
  const body = ProtobufTraceSerializer.serializeRequest(makeSdkSpans())!;

  for (const [what, retryAfter] of [
    ['a date in the past', 'Thu, 01 Jan 2015 00:00:00 GMT'],
    ['zero seconds', '0'],
  ] as const) {
    it(`tells HTTP and gRPC clients to wait at least a second when the destination's Retry-After is ${what}`, async () => {
      const { tracesUrl, grpcTarget } = await throttledReceiver(retryAfter);
      expect(await post(tracesUrl, body)).toEqual({ status: 503, retryAfter: '1' });
      const answer = (await exportBytes(grpcClient(grpcTarget), Buffer.from(body))) as ServiceError;
      expect(answer.code).toBe(status.UNAVAILABLE);
      const details = answer.metadata.get('grpc-status-details-bin')[0] as Buffer;
      expect(decodeStatus(details).retryDelayMs).toBe(1_000);
    });
  }

  it("passes on a destination's Retry-After of several seconds as it is", async () => {
    const { tracesUrl, grpcTarget } = await throttledReceiver('7');
    expect(await post(tracesUrl, body)).toEqual({ status: 503, retryAfter: '7' });
    const answer = (await exportBytes(grpcClient(grpcTarget), Buffer.from(body))) as ServiceError;
    expect(decodeStatus(answer.metadata.get('grpc-status-details-bin')[0] as Buffer).retryDelayMs).toBe(7_000);
  });
});
