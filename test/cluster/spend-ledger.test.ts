import { execFileSync } from 'node:child_process';
import { appendFileSync, mkdirSync, mkdtempSync, readdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { pino } from 'pino';
import { afterEach, describe, expect, it } from 'vitest';
import { LocalSpendLedger } from '../../src/cluster/spend-ledger.js';
import { parseUsd } from '../../src/shared/money.js';

const logger = pino({ level: 'silent' });
const dirs: string[] = [];

function tempDir(): string {
  const dir = mkdtempSync(join(tmpdir(), 'sluice-ledger-'));
  dirs.push(dir);
  return dir;
}

afterEach(() => {
  for (const dir of dirs.splice(0)) rmSync(dir, { recursive: true, force: true });
});

describe('LocalSpendLedger', () => {
  it('sums spend per key and period and keeps it across a reopen', async () => {
    const dir = tempDir();
    const now = Date.UTC(2026, 10, 23, 12);
    const ledger = await LocalSpendLedger.open(dir, logger, { nowMs: now });
    await ledger.add('team-a', parseUsd('0.000123456789'), now);
    await ledger.add('team-a', parseUsd('0.000000000001'), now);
    await ledger.add('team-b', parseUsd('1'), now);
    await ledger.close();

    const reopened = await LocalSpendLedger.open(dir, logger, { nowMs: now + 1000 });
    expect(await reopened.spent('team-a', 'day', now)).toBe(parseUsd('0.00012345679'));
    expect(await reopened.spent('team-a', 'total', now)).toBe(parseUsd('0.00012345679'));
    expect(await reopened.spent('team-b', 'month', now)).toBe(parseUsd('1'));
    expect(await reopened.spent('team-a', 'day', now + 86_400_000)).toBe(0n);
    await reopened.close();
  });

  it('keeps what was flushed when the process dies, ignoring a torn last record', async () => {
    const dir = tempDir();
    const now = Date.UTC(2026, 10, 23, 12);
    const ledger = await LocalSpendLedger.open(dir, logger, { nowMs: now });
    await ledger.add('k', parseUsd('0.5'), now);
    await ledger.flush();
    appendFileSync(join(dir, 'spend-a.log'), Buffer.from([40, 0, 0, 0, 1, 2]));
    // No close(): as after a kill -9.
    const reopened = await LocalSpendLedger.open(dir, logger, { nowMs: now });
    expect(await reopened.spent('k', 'week', now)).toBe(parseUsd('0.5'));
    await reopened.close();
    await ledger.close();
  });

  it('refuses an addition after it closed with a rejected promise, not a throw its caller would not catch', async () => {
    const ledger = await LocalSpendLedger.open(tempDir(), logger);
    await ledger.close();
    let added: Promise<void> | undefined;
    expect(() => {
      added = ledger.add('team-a', parseUsd('1'), Date.now());
    }).not.toThrow();
    await expect(added).rejects.toThrow(/closed/);
  });

  it('drops finished periods on open but keeps the total', async () => {
    const dir = tempDir();
    const then = Date.UTC(2026, 9, 1);
    const ledger = await LocalSpendLedger.open(dir, logger, { nowMs: then });
    await ledger.add('k', parseUsd('2'), then);
    await ledger.close();
    const later = Date.UTC(2026, 10, 23);
    const reopened = await LocalSpendLedger.open(dir, logger, { nowMs: later });
    expect(await reopened.spent('k', 'month', then)).toBe(0n);
    expect(await reopened.spent('k', 'total', later)).toBe(parseUsd('2'));
    await reopened.close();
  });

  it('folds a growing log into the snapshot while running, and counts every entry once after a restart', async () => {
    const dir = tempDir();
    const now = Date.UTC(2026, 10, 23, 12);
    const ledger = await LocalSpendLedger.open(dir, logger, { nowMs: now, compactBytes: 2000 });
    for (let i = 0; i < 200; i++) await ledger.add('k', parseUsd('0.000001'), now);
    await ledger.flush();
    const snapshot = JSON.parse(readFileSync(join(dir, 'spend.json'), 'utf8')) as { upTo: number };
    expect(snapshot.upTo).toBeGreaterThan(0);
    expect(snapshot.upTo).toBeLessThan(200);
    // No close(): the entries after the last fold are only in a log.
    const reopened = await LocalSpendLedger.open(dir, logger, { nowMs: now });
    expect(await reopened.spent('k', 'total', now)).toBe(parseUsd('0.0002'));
    await reopened.close();
    await ledger.close();
  });

  it('keeps in its outbox, across a kill and the folds of its log, the additions the cluster has not confirmed', async () => {
    const dir = tempDir();
    const now = Date.UTC(2026, 10, 23, 12);
    const ledger = await LocalSpendLedger.open(dir, logger, { nowMs: now, outbox: true, compactBytes: 2000 });
    for (let i = 1; i <= 60; i++) await ledger.add('k', parseUsd(`0.${String(i).padStart(3, '0')}`), now);
    ledger.markShared(ledger.outbox[49]?.seq ?? 0);
    await ledger.flush();
    expect(JSON.parse(readFileSync(join(dir, 'spend.json'), 'utf8'))).toHaveProperty('outbox');
    // No close(): as after a kill -9.
    const reopened = await LocalSpendLedger.open(dir, logger, { nowMs: now, outbox: true });
    expect(reopened.outbox.map((a) => a.cost)).toEqual(Array.from({ length: 10 }, (_, i) => parseUsd(`0.0${51 + i}`)));
    const earlier = reopened.outbox[0]?.ledger;
    await reopened.add('k', parseUsd('7'), now);
    // A new process shares under a ledger of its own; the earlier one's additions keep theirs.
    expect(reopened.outbox.at(-1)?.ledger).not.toBe(earlier);
    expect(reopened.outbox.at(-1)?.seq).toBeGreaterThan(reopened.outbox[0]?.seq ?? Infinity);
    await reopened.close();
    await ledger.close();
    // Without the cluster, nothing waits for it.
    const local = await LocalSpendLedger.open(dir, logger, { nowMs: now });
    expect(local.outbox).toEqual([]);
    expect(await local.spent('k', 'total', now)).toBe(parseUsd('1.83') + parseUsd('7'));
    await local.close();
  });

  // A small tmpfs makes a real full disk; mounting one needs root.
  it.runIf(process.getuid?.() === 0)('opens on a full disk with what it had spent, and keeps counting across the next start', async () => {
    const full = join(tempDir(), 'full');
    mkdirSync(full);
    execFileSync('mount', ['-t', 'tmpfs', '-o', 'size=64k', 'tmpfs', full]);
    try {
      const now = Date.UTC(2026, 10, 23, 12);
      const ledger = await LocalSpendLedger.open(full, logger, { nowMs: now });
      await ledger.add('k', parseUsd('0.5'), now);
      await ledger.close();
      try {
        writeFileSync(join(full, 'filler'), Buffer.alloc(256 * 1024));
      } catch (err) {
        expect((err as NodeJS.ErrnoException).code).toBe('ENOSPC');
      }

      const onFullDisk = await LocalSpendLedger.open(full, logger, { nowMs: now });
      expect(await onFullDisk.spent('k', 'day', now)).toBe(parseUsd('0.5'));
      expect(readdirSync(full).filter((name) => name.endsWith('.tmp'))).toEqual([]);
      await onFullDisk.add('k', parseUsd('0.25'), now);
      await onFullDisk.close();
      rmSync(join(full, 'filler'));

      const later = await LocalSpendLedger.open(full, logger, { nowMs: now });
      expect(await later.spent('k', 'day', now)).toBe(parseUsd('0.75'));
      await later.close();
    } finally {
      execFileSync('umount', [full]);
    }
  });
});
