import { execFileSync } from 'node:child_process';
import { mkdirSync, mkdtempSync, readFileSync, rmSync, statSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { pino } from 'pino';
import { afterEach, describe, expect, it } from 'vitest';
import { RecordLog, replayRecordFile } from '../../src/cluster/record-log.js';

const logger = pino({ level: 'silent' });
const dirs: string[] = [];

function tempFile(): string {
  const dir = mkdtempSync(join(tmpdir(), 'sluice-record-log-'));
  dirs.push(dir);
  return join(dir, 'records.log');
}

async function replay(path: string): Promise<Array<[string, number]>> {
  const records: Array<[string, number]> = [];
  await replayRecordFile(path, (data, at) => records.push([data.toString('utf8'), at]), logger);
  return records;
}

afterEach(() => {
  for (const dir of dirs.splice(0)) rmSync(dir, { recursive: true, force: true });
});

describe('RecordLog', () => {
  it('reads back every record in order across buffer boundaries, large records and multi-byte text', async () => {
    const path = tempFile();
    const log = new RecordLog(path, logger);
    const expected: Array<[string, number]> = [];
    const append = (text: string, at: number): void => {
      log.append(text, at);
      expected.push([text, at]);
    };
    // Enough small records to fill several 64 KiB buffers before the first write.
    for (let i = 0; i < 3_000; i++) append(`{"n":${i},"text":"${'x'.repeat(i % 97)}"}`, 1_700_000_000_000 + i);
    append('y'.repeat(200_000), 1);
    append('naïve 日本語 🚀 and a lone \ud800 surrogate', 2);
    append('', 3);
    await log.flush();
    append('after the first write', 4);
    await log.close();

    const records = await replay(path);
    expect(records.length).toBe(expected.length);
    // The lone surrogate is written as U+FFFD, as UTF-8 has no encoding for it.
    expected[3_001] = ['naïve 日本語 🚀 and a lone \ufffd surrogate', 2];
    expect(records).toEqual(expected);
  });

  it('writes nothing for a flush with nothing appended, and refuses appends once closed', async () => {
    const path = tempFile();
    const log = new RecordLog(path, logger);
    await log.flush();
    log.append('one', 5);
    await log.close();
    expect(await replay(path)).toEqual([['one', 5]]);
    expect(() => log.append('two', 6)).toThrow(/closed/);
  });

  it('passes over a damaged record between whole ones and keeps every record after it; cuts a damaged last record', async () => {
    const path = tempFile();
    const log = new RecordLog(path, logger);
    for (let i = 0; i < 5; i++) log.append(`record ${i}`, i);
    await log.close();
    const bytes = readFileSync(path);
    const frame = bytes.length / 5;
    // One flipped byte in the data of record 1, and one in the last record's.
    for (const at of [frame + frame - 2, 4 * frame + frame - 2]) bytes.writeUInt8(bytes.readUInt8(at) ^ 0xff, at);
    writeFileSync(path, bytes);
    expect(await replay(path)).toEqual([
      ['record 0', 0],
      ['record 2', 2],
      ['record 3', 3],
    ]);
    // The damaged last record is cut off the file.
    expect(readFileSync(path).length).toBe(4 * frame);
  });

  it('passes over damaged records in a row between whole ones', async () => {
    const path = tempFile();
    const log = new RecordLog(path, logger);
    for (let i = 0; i < 5; i++) log.append(`record ${i}`, i);
    await log.close();
    const bytes = readFileSync(path);
    const frame = bytes.length / 5;
    // One flipped byte in the data of records 1, 2 and 3.
    for (const index of [1, 2, 3]) bytes.writeUInt8(bytes.readUInt8((index + 1) * frame - 2) ^ 0xff, (index + 1) * frame - 2);
    writeFileSync(path, bytes);
    expect(await replay(path)).toEqual([
      ['record 0', 0],
      ['record 4', 4],
    ]);
    expect(readFileSync(path).length).toBe(bytes.length);
  });

  it('opens its file again for the next write after an open failed, and keeps the records meanwhile', async () => {
    const dir = join(mkdtempSync(join(tmpdir(), 'sluice-record-log-')), 'later');
    dirs.push(join(dir, '..'));
    const log = new RecordLog(join(dir, 'records.log'), logger);
    log.append('while the directory was missing', 1);
    await expect(log.flush()).rejects.toThrow(/ENOENT/);
    mkdirSync(dir);
    log.append('once it is back', 2);
    await log.close();
    expect(await replay(join(dir, 'records.log'))).toEqual([
      ['while the directory was missing', 1],
      ['once it is back', 2],
    ]);
  });

  // A small tmpfs makes a real full disk; mounting one needs root.
  it.runIf(process.getuid?.() === 0)('keeps the records a full disk refused and writes them, in order and whole, once there is room', async () => {
    const full = join(mkdtempSync(join(tmpdir(), 'sluice-record-log-')), 'full');
    dirs.push(join(full, '..'));
    mkdirSync(full);
    execFileSync('mount', ['-t', 'tmpfs', '-o', 'size=64k', 'tmpfs', full]);
    const path = join(full, 'records.log');
    let log: RecordLog | undefined;
    try {
      log = new RecordLog(path, logger);
      log.append('before', 1);
      await log.flush();
      // Fill what the file's page left too, so the next write fails part-way or at once.
      try {
        writeFileSync(join(full, 'filler'), Buffer.alloc(128 * 1024));
      } catch (err) {
        expect((err as NodeJS.ErrnoException).code).toBe('ENOSPC');
      }
      const sizeOnFullDisk = statSync(path).size;
      for (let i = 0; i < 100; i++) log.append(`refused ${i} ${'x'.repeat(100)}`, 10 + i);
      await expect(log.flush()).rejects.toThrow(/ENOSPC|short write/);
      // A write cut short leaves no torn record behind for later ones to follow.
      expect(statSync(path).size).toBe(sizeOnFullDisk);
      rmSync(join(full, 'filler'));
      log.append('after', 200);
      await log.close();

      const expected: Array<[string, number]> = [['before', 1]];
      for (let i = 0; i < 100; i++) expected.push([`refused ${i} ${'x'.repeat(100)}`, 10 + i]);
      expected.push(['after', 200]);
      expect(await replay(path)).toEqual(expected);
    } finally {
      await log?.close().catch(() => undefined);
      execFileSync('umount', [full]);
    }
  });
});
