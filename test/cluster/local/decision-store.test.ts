import { execFileSync } from 'node:child_process';
import { appendFileSync, mkdirSync, mkdtempSync, readdirSync, readFileSync, rmSync, statSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { pino } from 'pino';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { LocalDecisionStore } from '../../../src/cluster/local/decision-store.js';

let dir: string;
beforeEach(() => {
  dir = mkdtempSync(join(tmpdir(), 'sluice-decisions-'));
});
afterEach(() => rmSync(dir, { recursive: true, force: true }));

const TRACE_A = 'a'.repeat(32);
const TRACE_B = 'b'.repeat(32);

async function until(done: () => boolean): Promise<void> {
  while (!done()) await new Promise((resolve) => setTimeout(resolve, 50));
}

describe('the local decision store', () => {
  it('keeps decisions made with the root across a restart, and only those', async () => {
    const store = new LocalDecisionStore({ directory: dir });
    await store.open();
    store.set(TRACE_A, { keep: true, rule: '0' }, true);
    store.set(TRACE_B, { keep: false, rule: 'no_rule' }, false);
    expect(store.get(TRACE_B)).toEqual({ keep: false, rule: 'no_rule' });
    await store.close();

    const reopened = new LocalDecisionStore({ directory: dir });
    await reopened.open();
    expect(reopened.get(TRACE_A)).toEqual({ keep: true, rule: '0' });
    expect(reopened.get(TRACE_B)).toBeUndefined();
    await reopened.close();
  });

  it('forgets decisions older than their TTL, on read and on reload', async () => {
    let now = 1_000_000;
    const store = new LocalDecisionStore({ directory: dir, ttlMs: 60_000, now: () => now });
    await store.open();
    store.set(TRACE_A, { keep: true, rule: '1' }, true);
    await store.close();
    now += 61_000;
    expect(store.get(TRACE_A)).toBeUndefined();
    const reopened = new LocalDecisionStore({ directory: dir, ttlMs: 60_000, now: () => now });
    await reopened.open();
    expect(reopened.get(TRACE_A)).toBeUndefined();
    await reopened.close();
  });

  it('survives two restarts in a row (compaction keeps what is live)', async () => {
    for (let run = 0; run < 3; run++) {
      const store = new LocalDecisionStore({ directory: dir });
      await store.open();
      if (run === 0) store.set(TRACE_A, { keep: false, rule: '2' }, true);
      else expect(store.get(TRACE_A)).toEqual({ keep: false, rule: '2' });
      await store.close();
    }
    expect(readdirSync(dir).sort()).toEqual(['decisions.log', 'decisions.old.log']);
  });

  it('skips a torn last line left by a crash', async () => {
    const store = new LocalDecisionStore({ directory: dir });
    await store.open();
    store.set(TRACE_A, { keep: true, rule: '0' }, true);
    await store.close();
    appendFileSync(join(dir, 'decisions.log'), '{"t":"bbbb","k":1,"r');
    const reopened = new LocalDecisionStore({ directory: dir });
    await reopened.open();
    expect(reopened.get(TRACE_A)).toEqual({ keep: true, rule: '0' });
    await reopened.close();
  });

  it('holds decisions in memory only without a directory, bounded by entries', async () => {
    const store = new LocalDecisionStore({ maxEntries: 2 });
    await store.open();
    store.set('1', { keep: true, rule: '0' }, true);
    store.set('2', { keep: true, rule: '0' }, true);
    store.set('3', { keep: true, rule: '0' }, true);
    expect(store.get('1')).toBeUndefined();
    expect(store.get('3')).toEqual({ keep: true, rule: '0' });
    expect(await store.lookup()).toEqual(new Map());
    await store.close();
  });

  // A small tmpfs makes a real full disk; mounting one needs root.
  it.runIf(process.getuid?.() === 0)('opens on a full disk, keeping what its log holds, so a restarted drain can deliver its queue', async () => {
    const full = join(dir, 'full');
    mkdirSync(full);
    execFileSync('mount', ['-t', 'tmpfs', '-o', 'size=64k', 'tmpfs', full]);
    try {
      const store = new LocalDecisionStore({ directory: full });
      await store.open();
      store.set(TRACE_A, { keep: true, rule: '0' }, true);
      await store.close();
      try {
        writeFileSync(join(full, 'filler'), Buffer.alloc(256 * 1024));
      } catch (err) {
        expect((err as NodeJS.ErrnoException).code).toBe('ENOSPC');
      }

      const reopened = new LocalDecisionStore({ directory: full });
      await reopened.open();
      expect(reopened.get(TRACE_A)).toEqual({ keep: true, rule: '0' });
      await reopened.close();
      expect(readdirSync(full).sort()).toEqual(['decisions.log', 'decisions.old.log', 'filler']);
    } finally {
      execFileSync('umount', [full]);
    }
  });

  it.runIf(process.getuid?.() === 0)('keeps the decisions a full disk refused and writes them whole, in order, once there is room', async () => {
    const full = join(dir, 'full');
    mkdirSync(full);
    execFileSync('mount', ['-t', 'tmpfs', '-o', 'size=64k', 'tmpfs', full]);
    const errors: string[] = [];
    const store = new LocalDecisionStore({ directory: full, logger: pino({ level: 'error' }, { write: (line: string) => errors.push(line) }) });
    const reopened = new LocalDecisionStore({ directory: full });
    const log = join(full, 'decisions.log');
    try {
      await store.open();
      store.set(TRACE_A, { keep: true, rule: '0' }, true);
      await until(() => readFileSync(log, 'utf8').includes(TRACE_A));
      // The log's page has room for part of the next write only.
      try {
        writeFileSync(join(full, 'filler'), Buffer.alloc(256 * 1024));
      } catch (err) {
        expect((err as NodeJS.ErrnoException).code).toBe('ENOSPC');
      }
      const sizeOnFullDisk = statSync(log).size;
      const refused = Array.from({ length: 60 }, (_, i) => i.toString(16).padStart(32, '0'));
      for (const traceId of refused) store.set(traceId, { keep: true, rule: '1' }, true);
      // The write is tried: refused (logged), or taken in part.
      await until(() => errors.length > 0 || statSync(log).size > sizeOnFullDisk);
      rmSync(join(full, 'filler'));
      store.set(TRACE_B, { keep: false, rule: '2' }, true);
      await until(() => readFileSync(log, 'utf8').includes(TRACE_B));
      await store.close();
      await reopened.open();
      expect(reopened.get(TRACE_A)).toEqual({ keep: true, rule: '0' });
      for (const traceId of refused) expect(reopened.get(traceId)).toEqual({ keep: true, rule: '1' });
      expect(reopened.get(TRACE_B)).toEqual({ keep: false, rule: '2' });
      await reopened.close();
    } finally {
      await store.close();
      await reopened.close();
      execFileSync('umount', [full]);
    }
  });
});
