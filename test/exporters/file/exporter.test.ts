import { mkdtemp, open, readFile, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { ProtobufTraceSerializer } from '@opentelemetry/otlp-transformer';
import pino from 'pino';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import type { Host } from '../../../src/core/component.js';
import { Telemetry } from '../../../src/shared/telemetry.js';
import { fileConfigSchema } from '../../../src/exporters/file/config.js';
import { appendLines, createFileExporter, type AppendTarget } from '../../../src/exporters/file/exporter.js';
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

  it('writes lines that arrive during a write together, in order, and fails only a line that cannot be encoded', async () => {
    const telemetry = new Telemetry({ defaultMetrics: false });
    const logger = pino({ level: 'silent' });
    const path = join(dir, 'traces.jsonl');
    const exporter = createFileExporter({ id: 'file', logger, telemetry, storageDirectory: dir, version: '0.0.0' }, fileConfigSchema.parse({ path, fsync: false }));
    await exporter.start(testHost({ logger, telemetry, storageDirectory: dir, version: '0.0.0' }));
    const batches = Array.from({ length: 40 }, (_, i) => TraceBatch.fromProto(ProtobufTraceSerializer.serializeRequest(makeSdkSpans({ 'service.name': `svc-${i}` }))!));
    // A batch whose encoding fails (batches are checked on arrival, so only a stand-in can).
    const broken = { spanCount: 1, toJsonBytes: () => Promise.reject(new Error('cannot encode')) } as unknown as TraceBatch;
    const results = await Promise.allSettled([...batches.slice(0, 20).map((b) => exporter.consume(b)), exporter.consume(broken), ...batches.slice(20).map((b) => exporter.consume(b))]);
    await exporter.shutdown();
    expect(results.map((r) => r.status)).toEqual([...Array<string>(20).fill('fulfilled'), 'rejected', ...Array<string>(20).fill('fulfilled')]);
    const lines = (await readFile(path, 'utf8')).trimEnd().split('\n');
    expect(lines).toHaveLength(40);
    lines.forEach((line, i) => expect(parseJsonRequest(line)).toEqual(batches[i]?.toModel()));
  });

  it('cuts a write that fails part way back to the last whole line, so the next line stays readable', async () => {
    const path = join(dir, 'cut.jsonl');
    const file = await open(path, 'a');
    try {
      await appendLines(file, [Buffer.from('{"first":1}\n')]);
      // A full disk: the kernel takes part of the write, then refuses the rest.
      let full = true;
      const failing: AppendTarget = {
        stat: () => file.stat(),
        truncate: (len) => file.truncate(len),
        writev: async (buffers: NodeJS.ArrayBufferView[]) => {
          if (!full) return file.writev(buffers);
          await file.write(Buffer.from('{"seco'));
          throw Object.assign(new Error('ENOSPC: no space left on device, write'), { code: 'ENOSPC' });
        },
      } as AppendTarget;
      await expect(appendLines(failing, [Buffer.from('{"second":2}\n')])).rejects.toThrow('ENOSPC');
      full = false;
      await appendLines(failing, [Buffer.from('{"third":3}\n')]);
    } finally {
      await file.close();
    }
    expect((await readFile(path, 'utf8')).split('\n').filter((line) => line !== '').map((line) => JSON.parse(line) as unknown)).toEqual([{ first: 1 }, { third: 3 }]);
  });
});
