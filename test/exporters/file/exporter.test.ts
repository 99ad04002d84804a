import { mkdtemp, readFile, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { ProtobufTraceSerializer } from '@opentelemetry/otlp-transformer';
import pino from 'pino';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import type { Host } from '../../../src/core/component.js';
import { Telemetry } from '../../../src/shared/telemetry.js';
import { fileConfigSchema } from '../../../src/exporters/file/config.js';
import { createFileExporter } from '../../../src/exporters/file/exporter.js';
import { TraceBatch } from '../../../src/otlp/batch.js';
import { parseJsonRequest } from '../../../src/otlp/json-codec.js';
import { makeSdkSpans } from '../../helpers/sdk-spans.js';
import { testHost } from '../../helpers/host.js';

describe('file exporter', () => {
  let dir: string;
  beforeEach(async () => {
    dir = await mkdtemp(join(tmpdir(), 'sluice-file-'));
  });
  afterEach(async () => {
    await rm(dir, { recursive: true, force: true });
  });

  it('writes one OTLP/JSON request per line, creating the directory', async () => {
    const telemetry = new Telemetry({ defaultMetrics: false });
    const logger = pino({ level: 'silent' });
    const path = join(dir, 'nested', 'traces.jsonl');
    const exporter = createFileExporter(
      { id: 'file', logger, telemetry, storageDirectory: dir, version: '0.0.0' },
      fileConfigSchema.parse({ path, fsync: true }),
    );
    const host: Host = testHost({ logger, telemetry, storageDirectory: dir, version: '0.0.0' });
    await exporter.start(host);
    const batch = TraceBatch.fromProto(ProtobufTraceSerializer.serializeRequest(makeSdkSpans())!);
    await Promise.all([exporter.consume(batch), exporter.consume(batch)]);
    await exporter.shutdown();
    await exporter.shutdown();
    const lines = (await readFile(path, 'utf8')).trimEnd().split('\n');
    expect(lines).toHaveLength(2);
    for (const line of lines) expect(parseJsonRequest(line)).toEqual(batch.toModel());
  });
});
