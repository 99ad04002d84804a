import { existsSync, mkdtempSync, readdirSync, rmSync, statSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { pino } from 'pino';
import { afterEach, beforeEach, describe, expect, it, vi } from 'vitest';
import { LocalGenerationStore } from '../../src/cluster/generation-store.js';
import type { GenerationRecord } from '../../src/shared/generation.js';
import { newGenerationId } from '../../src/shared/generation-id.js';
import { parseUsd } from '../../src/shared/money.js';

const logger = pino({ level: 'silent' });
const DAY = 86_400_000;
const RETENTION = 30 * DAY;
let dir: string;

beforeEach(() => {
  dir = mkdtempSync(join(tmpdir(), 'sluice-generations-'));
  vi.useFakeTimers({ toFake: ['Date'] });
});

afterEach(() => {
  vi.useRealTimers();
  rmSync(dir, { recursive: true, force: true });
});

function record(at: number, key: string, model: string, cost: string): GenerationRecord {
  return {
    id: newGenerationId(at),
    createdAt: at,
    key,
    model,
    provider: model.split('/')[0] ?? '',
    streamed: false,
    status: 200,
    finishReason: 'stop',
    latencyMs: 12,
    generationMs: 30,
    tokens: { input: 100, output: 10, cacheRead: 40, cacheWrite: 0, reasoning: 0 },
    cost: parseUsd(cost),
  };
}

describe('LocalGenerationStore', () => {
  it('keeps its directory and record files readable by their owner only', async () => {
    const now = Date.UTC(2026, 10, 23, 10);
    vi.setSystemTime(now);
    const directory = join(dir, 'generations');
    const store = await LocalGenerationStore.open({ directory, retentionMs: RETENTION, logger });
    store.add(record(now, 'team-a', 'openai/gpt-4o', '0.25'));
    await store.flush();
    await store.close();
    expect(statSync(directory).mode & 0o777).toBe(0o700);
    const files = readdirSync(directory);
    expect(files.length).toBeGreaterThan(0);
    for (const file of files) expect(statSync(join(directory, file)).mode & 0o777, file).toBe(0o600);
  });

  it('answers lookups and daily rollups, and again after a restart', async () => {
    const now = Date.UTC(2026, 10, 23, 10);
    vi.setSystemTime(now);
    const store = await LocalGenerationStore.open({ directory: dir, retentionMs: RETENTION, logger });
    const a = record(now, 'team-a', 'openai/gpt-4o', '0.000123');
    const b = record(now, 'team-a', 'openai/gpt-4o', '0.000001');
    const c = record(now, 'team-b', 'anthropic/claude', '0.5');
    for (const r of [a, b, c]) store.add(r);
    expect(await store.get(b.id)).toEqual(b);
    const rows = await store.rollups('2026-11-23', '2026-11-23');
    expect(rows.map((r) => [r.key, r.model, r.totals.requests, r.totals.cost, r.totals.cacheRead])).toEqual([
      ['team-a', 'openai/gpt-4o', 2, parseUsd('0.000124'), 80],
      ['team-b', 'anthropic/claude', 1, parseUsd('0.5'), 40],
    ]);
    await store.close();

    const reopened = await LocalGenerationStore.open({ directory: dir, retentionMs: RETENTION, logger });
    expect(await reopened.get(c.id)).toEqual(c);
    expect(await reopened.rollups('2026-11-01', '2026-11-30')).toEqual(rows);
    expect(await reopened.get(newGenerationId(now))).toBeUndefined();
    await reopened.close();
  });

  it('counts records in rollups and flushes them at once, before the turn of the loop that writes them', async () => {
    const now = Date.UTC(2026, 10, 23, 10);
    vi.setSystemTime(now);
    const store = await LocalGenerationStore.open({ directory: dir, retentionMs: RETENTION, logger });
    const a = record(now, 'team-a', 'openai/gpt-4o', '0.25');
    store.add(a);
    expect((await store.rollups('2026-11-23', '2026-11-23')).map((r) => [r.key, r.totals.requests, r.totals.cost])).toEqual([['team-a', 1, parseUsd('0.25')]]);
    const b = record(now, 'team-b', 'openai/gpt-4o', '0.5');
    store.add(b);
    await store.flush();
    await store.close();
    const reopened = await LocalGenerationStore.open({ directory: dir, retentionMs: RETENTION, logger });
    expect(await reopened.get(b.id)).toEqual(b);
    await reopened.close();
  });

  it('logs a record added after its log was closed as not written, and throws nothing', async () => {
    const now = Date.UTC(2026, 10, 23, 10);
    vi.setSystemTime(now);
    const lines: string[] = [];
    const capture = pino({ level: 'error' }, { write: (line: string) => lines.push(line) });
    const store = await LocalGenerationStore.open({ directory: dir, retentionMs: RETENTION, logger: capture });
    store.add(record(now, 'team-a', 'openai/gpt-4o', '0.25'));
    await store.close();
    store.add(record(now, 'team-a', 'openai/gpt-4o', '0.25'));
    await new Promise((resolve) => setImmediate(resolve));
    expect(lines.map((line) => (JSON.parse(line) as { msg: string; records: number })).map((l) => [l.msg, l.records])).toEqual([['generation records not written', 1]]);
  });

  it('saves a finished day as rollups and still finds its records by id', async () => {
    const day1 = Date.UTC(2026, 10, 22, 23, 59);
    vi.setSystemTime(day1);
    const store = await LocalGenerationStore.open({ directory: dir, retentionMs: RETENTION, logger });
    const old = record(day1, 'k', 'openai/gpt-4o', '0.25');
    store.add(old);
    vi.setSystemTime(day1 + 2 * 60_000);
    const fresh = record(day1 + 2 * 60_000, 'k', 'openai/gpt-4o', '0.5');
    store.add(fresh);
    await store.close();
    expect(existsSync(join(dir, '2026-11-22.rollup.json'))).toBe(true);

    const reopened = await LocalGenerationStore.open({ directory: dir, retentionMs: RETENTION, logger });
    expect(await reopened.get(old.id)).toEqual(old);
    const rows = await reopened.rollups('2026-11-22', '2026-11-23');
    expect(rows.map((r) => [r.day, r.totals.cost])).toEqual([
      ['2026-11-22', parseUsd('0.25')],
      ['2026-11-23', parseUsd('0.5')],
    ]);
    await reopened.close();
  });

  it('deletes days older than the retention', async () => {
    const then = Date.UTC(2026, 9, 1, 12);
    vi.setSystemTime(then);
    const store = await LocalGenerationStore.open({ directory: dir, retentionMs: RETENTION, logger });
    const old = record(then, 'k', 'openai/gpt-4o', '1');
    store.add(old);
    await store.close();
    vi.setSystemTime(then + 40 * DAY);
    const reopened = await LocalGenerationStore.open({ directory: dir, retentionMs: RETENTION, logger });
    expect(existsSync(join(dir, '2026-10-01.log'))).toBe(false);
    expect(await reopened.rollups('2026-09-01', '2026-12-01')).toEqual([]);
    expect(await reopened.get(old.id)).toBeUndefined();
    await reopened.close();
  });
});
