import { mkdtemp, open, readdir, readFile, rename, rm, stat, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { ProtobufTraceSerializer } from '@opentelemetry/otlp-transformer';
import pino from 'pino';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import type { Host } from '../../../src/core/component.js';
import { Telemetry } from '../../../src/shared/telemetry.js';
import { fileConfigSchema } from '../../../src/exporters/file/config.js';
import { createFileExporter } from '../../../src/exporters/file/exporter.js';
import { appendWhole, type AppendTarget } from '../../../src/shared/append-whole.js';
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

  it('fails to start, naming its key and the reason, when its directory cannot be made (under /proc, where Node 20 retried mkdir for ever)', async () => {
    const telemetry = new Telemetry({ defaultMetrics: false });
    const logger = pino({ level: 'silent' });
    const settings = { id: 'file/proc', logger, telemetry, storageDirectory: dir, version: '0.0.0' };
    const host = testHost({ logger, telemetry, storageDirectory: dir, version: '0.0.0' });
    const underProc = createFileExporter(settings, fileConfigSchema.parse({ path: '/proc/self/sluice/x/traces.jsonl', fsync: false }));
    await expect(underProc.start(host)).rejects.toThrow(/^exporters\.file\/proc\.path: cannot open \/proc\/self\/sluice\/x\/traces\.jsonl for writing: .*ENOENT/);
    await underProc.shutdown();
    await writeFile(join(dir, 'plain'), '');
    const underFile = createFileExporter(settings, fileConfigSchema.parse({ path: join(dir, 'plain', 'x', 'traces.jsonl'), fsync: false }));
    await expect(underFile.start(host)).rejects.toThrow(/ENOTDIR/);
    await underFile.shutdown();
  });

  it('writes a double attribute of -0 with its sign, from protobuf and from OTLP/JSON alike, as the collector does', async () => {
    const telemetry = new Telemetry({ defaultMetrics: false });
    const logger = pino({ level: 'silent' });
    const path = join(dir, 'zero.jsonl');
    const exporter = createFileExporter({ id: 'file', logger, telemetry, storageDirectory: dir, version: '0.0.0' }, fileConfigSchema.parse({ path, fsync: false }));
    await exporter.start(testHost({ logger, telemetry, storageDirectory: dir, version: '0.0.0' }));
    const attributes = [
      { key: 'negative', value: { doubleValue: -0 } },
      { key: 'positive', value: { doubleValue: 0 } },
      { key: 'huge', value: { doubleValue: '-Infinity' } },
    ];
    const json = JSON.stringify({
      resourceSpans: [{ scopeSpans: [{ spans: [{ traceId: '0af7651916cd43dd8448eb211c80319c', spanId: 'b7ad6b7169203331', name: 'zero', startTimeUnixNano: '1', endTimeUnixNano: '2', attributes }] }] }],
    }).replace('"doubleValue":0', '"doubleValue":-0');
    const fromJson = TraceBatch.fromModel(parseJsonRequest(json));
    await exporter.consume(TraceBatch.fromProto(fromJson.toProto()));
    await exporter.consume(fromJson);
    await exporter.shutdown();
    const lines = (await readFile(path, 'utf8')).trimEnd().split('\n');
    expect(lines).toHaveLength(2);
    for (const line of lines) {
      expect(line).toContain('{"key":"negative","value":{"doubleValue":-0}}');
      expect(line).toContain('{"key":"positive","value":{"doubleValue":0}}');
      expect(line).toContain('{"key":"huge","value":{"doubleValue":"-Infinity"}}');
    }
    expect(lines[0]).toBe(lines[1]);
  });

  it('starts on a file whose last line a crash cut short by cutting that line, so the next line written stays readable', async () => {
    const telemetry = new Telemetry({ defaultMetrics: false });
    const logger = pino({ level: 'silent' });
    const path = join(dir, 'torn.jsonl');
    const batch = TraceBatch.fromProto(ProtobufTraceSerializer.serializeRequest(makeSdkSpans())!);
    const whole = batch.toJson();
    // A line acknowledged before the crash, then one the crash cut short (never acknowledged): short, or longer than one read.
    for (const torn of [whole.slice(0, 100), `{"resourceSpans":[{"resource":{"attributes":[{"key":"k","value":{"stringValue":"${'x'.repeat(150_000)}`]) {
      await writeFile(path, `${whole}\n${torn}`);
      const exporter = createFileExporter({ id: 'file', logger, telemetry, storageDirectory: dir, version: '0.0.0' }, fileConfigSchema.parse({ path, fsync: false }));
      await exporter.start(testHost({ logger, telemetry, storageDirectory: dir, version: '0.0.0' }));
      await exporter.consume(batch);
      await exporter.shutdown();
      const lines = (await readFile(path, 'utf8')).trimEnd().split('\n');
      expect(lines.map((line) => parseJsonRequest(line))).toEqual([batch.toModel(), batch.toModel()]);
    }
  });

  it('creates the file readable by its owner only, as the collector does: spans may carry prompts and answers', async () => {
    const telemetry = new Telemetry({ defaultMetrics: false });
    const logger = pino({ level: 'silent' });
    const path = join(dir, 'private.jsonl');
    const exporter = createFileExporter({ id: 'file', logger, telemetry, storageDirectory: dir, version: '0.0.0' }, fileConfigSchema.parse({ path, fsync: false }));
    await exporter.start(testHost({ logger, telemetry, storageDirectory: dir, version: '0.0.0' }));
    await exporter.shutdown();
    expect((await stat(path)).mode & 0o777).toBe(0o600);
  });

  it('writes to a new file when its file is removed or renamed (a rotation) while it runs', async () => {
    const telemetry = new Telemetry({ defaultMetrics: false });
    const logger = pino({ level: 'silent' });
    const path = join(dir, 'logs', 'traces.jsonl');
    const exporter = createFileExporter({ id: 'file', logger, telemetry, storageDirectory: dir, version: '0.0.0' }, fileConfigSchema.parse({ path, fsync: false }));
    await exporter.start(testHost({ logger, telemetry, storageDirectory: dir, version: '0.0.0' }));
    const batches = ['first', 'second', 'third'].map((service) => TraceBatch.fromProto(ProtobufTraceSerializer.serializeRequest(makeSdkSpans({ 'service.name': service }))!));
    const linesOf = async (file: string) => (await readFile(file, 'utf8')).trimEnd().split('\n').map((line) => parseJsonRequest(line));
    await exporter.consume(batches[0] as TraceBatch);
    await rename(path, `${path}.1`);
    await exporter.consume(batches[1] as TraceBatch);
    expect(await linesOf(`${path}.1`)).toEqual([batches[0]?.toModel()]);
    expect(await linesOf(path)).toEqual([batches[1]?.toModel()]);
    await rm(join(dir, 'logs'), { recursive: true });
    await exporter.consume(batches[2] as TraceBatch);
    await exporter.shutdown();
    expect(await linesOf(path)).toEqual([batches[2]?.toModel()]);
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
      await appendWhole(file, [Buffer.from('{"first":1}\n')]);
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
      await expect(appendWhole(failing, [Buffer.from('{"second":2}\n')])).rejects.toThrow('ENOSPC');
      full = false;
      await appendWhole(failing, [Buffer.from('{"third":3}\n')]);
    } finally {
      await file.close();
    }
    expect((await readFile(path, 'utf8')).split('\n').filter((line) => line !== '').map((line) => JSON.parse(line) as unknown)).toEqual([{ first: 1 }, { third: 3 }]);
  });

  describe('rotation', () => {
    const logger = pino({ level: 'silent' });
    /** A batch whose JSON line is about 300 KiB, so a 1 MiB file holds three. */
    const bigBatch = (i: number) => TraceBatch.fromProto(ProtobufTraceSerializer.serializeRequest(makeSdkSpans({ 'service.name': `svc-${i}`, filler: 'x'.repeat(300_000) }))!);

    async function writeBatches(rotation: Record<string, unknown>, count: number): Promise<TraceBatch[]> {
      const telemetry = new Telemetry({ defaultMetrics: false });
      const exporter = createFileExporter({ id: 'file', logger, telemetry, storageDirectory: dir, version: '0.0.0' }, fileConfigSchema.parse({ path: join(dir, 'traces.jsonl'), fsync: false, rotation }));
      await exporter.start(testHost({ logger, telemetry, storageDirectory: dir, version: '0.0.0' }));
      const batches = Array.from({ length: count }, (_, i) => bigBatch(i));
      for (const batch of batches) await exporter.consume(batch);
      await exporter.shutdown();
      return batches;
    }

    it('moves a file about to pass max_megabytes aside under its time, keeps max_backups of them, and loses no line', async () => {
      const batches = await writeBatches({ max_megabytes: 1, max_backups: 2 }, 10);
      const names = (await readdir(dir)).sort();
      expect(names).toHaveLength(3);
      for (const name of names.slice(0, 2)) expect(name).toMatch(/^traces-\d{4}-\d{2}-\d{2}T\d{2}-\d{2}-\d{2}\.\d{3}\.jsonl$/);
      expect(names[2]).toBe('traces.jsonl');
      const perFile = await Promise.all(names.map(async (name) => (await readFile(join(dir, name), 'utf8')).trimEnd().split('\n')));
      // Three lines a file: 10 lines made three full files and one with a line; the oldest full one is gone.
      expect(perFile.map((lines) => lines.length)).toEqual([3, 3, 1]);
      perFile.flat().forEach((line, i) => expect(parseJsonRequest(line)).toEqual(batches[i + 3]?.toModel()));
      for (const name of names) expect((await readFile(join(dir, name))).byteLength).toBeLessThanOrEqual(1024 * 1024);
    });

    it('removes moved-aside files older than max_days and leaves other files alone', async () => {
      await writeFile(join(dir, 'traces-2020-01-01T00-00-00.000.jsonl'), '{}\n');
      await writeFile(join(dir, 'traces-notes.jsonl'), 'mine\n');
      await writeBatches({ max_megabytes: 1, max_days: 1, max_backups: 0 }, 4);
      const names = (await readdir(dir)).sort();
      expect(names).toHaveLength(3);
      expect(names).not.toContain('traces-2020-01-01T00-00-00.000.jsonl');
      expect(names).toContain('traces-notes.jsonl');
      expect(names).toContain('traces.jsonl');
    });

    it('refuses a size under 1 MiB or a negative count, naming the key', () => {
      const parsed = fileConfigSchema.safeParse({ path: 'x.jsonl', fsync: false, rotation: { max_megabytes: 0, max_backups: -1, max_hours: 2 } });
      expect(parsed.success).toBe(false);
      expect(parsed.error?.issues.map((i) => [i.path.join('.'), i.message])).toEqual(
        expect.arrayContaining([
          ['rotation.max_megabytes', 'must be at least 1'],
          ['rotation.max_backups', 'must not be negative'],
        ]),
      );
    });
  });
});
