// The otlphttp exporter as a pipeline runs it: batches queued on disk and
// delivered to a destination on port 0, read back from the log lines it
// writes through the daemon's logger.
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { Writable } from 'node:stream';
import { ProtobufTraceSerializer } from '@opentelemetry/otlp-transformer';
import { afterEach, describe, expect, it } from 'vitest';
import { deepMerge } from '../../../src/config/merge.js';
import type { Exporter } from '../../../src/core/component.js';
import { createLogger } from '../../../src/core/logger.js';
import { otlphttpExporterFactory } from '../../../src/exporters/otlphttp/factory.js';
import { TraceBatch } from '../../../src/otlp/batch.js';
import { Telemetry } from '../../../src/shared/telemetry.js';
import { waitUntil } from '../../helpers/daemon.js';
import { testHost } from '../../helpers/host.js';
import { startOtlpSink, type OtlpSink } from '../../helpers/otlp-sink.js';
import { makeSdkSpans } from '../../helpers/sdk-spans.js';

let exporter: Exporter | undefined;
let sink: OtlpSink | undefined;
let dir: string | undefined;
afterEach(async () => {
  await exporter?.shutdown();
  await sink?.close();
  if (dir !== undefined) await rm(dir, { recursive: true, force: true });
});

/** Starts otlphttp/acme delivering to `sink`; its log lines, as written, go to `lines`. */
async function startExporter(destination: OtlpSink, lines: string[], sendingQueue: Record<string, unknown> = {}): Promise<Exporter> {
  dir = await mkdtemp(join(tmpdir(), 'sluice-otlphttp-'));
  const logger = createLogger({
    destination: new Writable({
      write(chunk: Buffer, _encoding, done) {
        lines.push(...chunk.toString('utf8').split('\n').filter((line) => line !== ''));
        done();
      },
    }),
  });
  const telemetry = new Telemetry({ defaultMetrics: false });
  const config = otlphttpExporterFactory.configSchema.parse(
    deepMerge(otlphttpExporterFactory.createDefaultConfig(), { endpoint: destination.url, sending_queue: { flush_timeout: '10ms', ...sendingQueue } }),
  );
  // As the pipeline graph hands a component its logger.
  const settings = { id: 'otlphttp/acme', logger: logger.child({ kind: 'exporter', component: 'otlphttp/acme' }), telemetry, storageDirectory: dir, version: '0.0.0-test' };
  const created = otlphttpExporterFactory.create(settings, config);
  await created.start(testHost({ logger, telemetry, storageDirectory: dir }));
  return created;
}

/** Runs one batch through otlphttp/acme to a destination answering partial_success; resolves with the lines logged by the first drop. */
async function partialSuccessLines(): Promise<string[]> {
  sink = await startOtlpSink({ tls: false });
  sink.respond = () => ({ status: 200, headers: { 'content-type': 'application/json' }, body: '{"partialSuccess":{"rejectedSpans":"1","errorMessage":"nope"}}' });
  const lines: string[] = [];
  exporter = await startExporter(sink, lines);
  await exporter.consume(TraceBatch.fromProto(ProtobufTraceSerializer.serializeRequest(makeSdkSpans())!));
  await waitUntil(() => lines.some((line) => line.includes('"dropped spans"')), 10_000, 'the dropped spans line');
  return lines;
}

describe('otlphttp exporter', () => {
  it('logs the destination\'s partial_success error_message with the spans it rejected', async () => {
    const line = (await partialSuccessLines()).find((l) => l.includes('"dropped spans"'))!;
    expect(JSON.parse(line)).toMatchObject({ exporter: 'otlphttp/acme', reason: 'rejected', spans: 1, error: 'nope' });
  });

  it('logs a partial_success that rejects nothing but carries a message: the destination\'s warning, as the OTLP spec has it', async () => {
    sink = await startOtlpSink({ tls: false });
    sink.respond = () => ({ status: 200, headers: { 'content-type': 'application/json' }, body: '{"partialSuccess":{"rejectedSpans":"0","errorMessage":"attribute values over 4 KiB were cut"}}' });
    const lines: string[] = [];
    exporter = await startExporter(sink, lines);
    await exporter.consume(TraceBatch.fromProto(ProtobufTraceSerializer.serializeRequest(makeSdkSpans())!));
    await waitUntil(() => lines.some((line) => line.includes('attribute values over 4 KiB were cut')), 10_000, 'the warning line');
    const line = JSON.parse(lines.find((l) => l.includes('attribute values over 4 KiB were cut'))!) as Record<string, unknown>;
    expect(line).toMatchObject({ level: 40, exporter: 'otlphttp/acme', warning: 'attribute values over 4 KiB were cut' });
    expect(lines.some((l) => l.includes('"dropped spans"'))).toBe(false);
  });

  it('drops and counts a batch larger than its whole queue, on_full refuse or drop, rather than failing the request others stored', async () => {
    sink = await startOtlpSink({ tls: false });
    const lines: string[] = [];
    const batch = TraceBatch.fromProto(ProtobufTraceSerializer.serializeRequest(makeSdkSpans())!);
    for (const onFull of ['refuse', 'drop']) {
      exporter = await startExporter(sink, lines, { max_size: '64B', max_batch_bytes: '64B', on_full: onFull });
      // It can never fit: refusing (429) would have the client retry it for ever, a 400 would say its data was bad.
      await expect(exporter.consume(batch)).resolves.toBeUndefined();
      await exporter.shutdown();
    }
    const drops = lines.filter((l) => l.includes('"dropped spans"')).map((l) => JSON.parse(l) as Record<string, unknown>);
    expect(drops).toMatchObject([{ reason: 'queue_full', spans: batch.spanCount }, { reason: 'queue_full', spans: batch.spanCount }]);
    expect(sink.received).toHaveLength(0);
  });

  it('never repeats the exporter key in a line it logs', async () => {
    const lines = (await partialSuccessLines()).filter((l) => l.includes('"component":"otlphttp/acme"'));
    expect(lines.some((l) => l.includes('"dropped spans"'))).toBe(true);
    for (const line of lines) expect((line.match(/"exporter":/g) ?? []).length).toBeLessThanOrEqual(1);
  });
});
