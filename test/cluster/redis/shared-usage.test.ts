// The Redis spend ledger, generation store and rate limits against a real redis-server:
// what one instance adds, another reads, exactly; with Redis gone, each
// answers from its local copy, and what Redis missed is shared once it is back.
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { pino } from 'pino';
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import { RedisConnection } from '../../../src/cluster/redis/connection.js';
import { RedisState } from '../../../src/cluster/redis/state.js';
import { LocalState } from '../../../src/cluster/local/state.js';
import { Telemetry } from '../../../src/shared/telemetry.js';
import { newGenerationId } from '../../../src/shared/generation-id.js';
import type { GenerationRecord } from '../../../src/shared/generation.js';
import { parseUsd } from '../../../src/shared/money.js';
import { dayOf } from '../../../src/shared/periods.js';
import { waitUntil } from '../../helpers/daemon.js';
import { startRedis, type TestRedis } from '../../helpers/redis.js';

const logger = pino({ level: 'silent' });
const DAY_MS = 86_400_000;
let redis: TestRedis;
const cleanups: Array<() => Promise<void> | void> = [];

beforeAll(async () => {
  redis = await startRedis();
});
afterAll(async () => {
  await redis?.stop();
});
afterEach(async () => {
  for (const cleanup of cleanups.splice(0).reverse()) await cleanup();
});

async function instance(prefix: string): Promise<{ state: RedisState; connection: RedisConnection }> {
  const connection = new RedisConnection({ url: redis.url, key_prefix: prefix, timeout: 300 }, { logger, telemetry: new Telemetry({ defaultMetrics: false }) });
  connection.connect();
  await waitUntil(() => connection.up, 5_000, 'redis connection');
  const directory = mkdtempSync(join(tmpdir(), 'sluice-shared-'));
  const state = new RedisState(connection, new LocalState({ storageDirectory: directory, retentionMs: 30 * DAY_MS, logger }), { logger, retentionMs: 30 * DAY_MS });
  cleanups.push(async () => {
    await state.close();
    await connection.close();
    rmSync(directory, { recursive: true, force: true });
  });
  return { state, connection };
}

describe('spend shared through Redis', () => {
  it('adds exactly across instances, beyond what one 64-bit counter of 10^-15 USD holds', async () => {
    const [one, two] = await Promise.all([instance('spend1:'), instance('spend1:')]);
    const [a, b] = await Promise.all([one.state.spendLedger(), two.state.spendLedger()]);
    const now = Date.now();
    await a.add('team', parseUsd('9000.000000000000001'), now);
    await b.add('team', parseUsd('1000.000000000000002'), now);
    expect(await a.spent('team', 'day', now)).toBe(parseUsd('10000.000000000000003'));
    expect(await b.spent('team', 'total', now)).toBe(parseUsd('10000.000000000000003'));
    expect(await b.spent('other', 'day', now)).toBe(0n);
  });

  it('counts locally while Redis is down and shares what it missed when it is back', async () => {
    const [one, two] = await Promise.all([instance('spend2:'), instance('spend2:')]);
    const [a, b] = await Promise.all([one.state.spendLedger(), two.state.spendLedger()]);
    const now = Date.now();
    await a.add('team', parseUsd('1'), now);
    await redis.kill();
    await waitUntil(() => !one.connection.up && !two.connection.up, 5_000, 'the outage');
    await a.add('team', parseUsd('2'), now);
    expect(await a.spent('team', 'day', now)).toBe(parseUsd('3'));
    await redis.start();
    await waitUntil(() => one.connection.up && two.connection.up, 10_000, 'the reconnection');
    // Redis restarted empty: it now holds what was added during the outage.
    await waitUntil(async () => (await b.spent('team', 'day', now)) === parseUsd('2'), 5_000, 'the missed addition to be shared');
  });
});

describe('rate limits shared through Redis', () => {
  it('counts per instance while Redis is down, then adds what it counted to the fleet\'s window', async () => {
    const [one, two] = await Promise.all([instance('rate1:'), instance('rate1:')]);
    const options = { name: 'rpm', points: 5, windowMs: 60_000 };
    const [a, b] = [one.state.rateLimiter(options), two.state.rateLimiter(options)];
    expect((await a.consume('team', 1)).allowed).toBe(true);
    await redis.kill();
    await waitUntil(() => !one.connection.up && !two.connection.up, 5_000, 'the outage');
    // Alone, the instance still counts against the same allowance.
    for (let i = 0; i < 3; i++) expect((await a.consume('team', 1)).allowed).toBe(true);
    await redis.start();
    await waitUntil(() => one.connection.up && two.connection.up, 10_000, 'the reconnection');
    // Redis restarted empty: its window for the key now holds the outage's 3 points.
    await waitUntil(async () => (await one.connection.client.get('rate1:rate:rpm:team')) === '3', 5_000, 'the outage\'s points to be shared');
    expect((await b.consume('team', 1)).allowed).toBe(true);
    expect((await b.consume('team', 1)).allowed).toBe(true);
    expect((await b.consume('team', 1)).allowed).toBe(false);
    expect((await a.consume('other', 1)).allowed).toBe(true);
  });
});

function record(key: string, cost: string): GenerationRecord {
  const now = Date.now();
  return {
    id: newGenerationId(now),
    createdAt: now,
    key,
    model: 'fake/model',
    provider: 'fake',
    streamed: false,
    status: 200,
    finishReason: 'stop',
    latencyMs: 12,
    generationMs: 30,
    tokens: { input: 11, output: 7, cacheRead: 3, cacheWrite: 0, reasoning: 0 },
    cost: parseUsd(cost),
  };
}

describe('generation records shared through Redis', () => {
  it('answers a record and the day\'s rollups the same on every instance', async () => {
    const [one, two] = await Promise.all([instance('gen1:'), instance('gen1:')]);
    const [a, b] = await Promise.all([one.state.generationStore(), two.state.generationStore()]);
    const first = record('team', '0.000250000000001');
    a.add(first);
    b.add(record('team', '0.000250000000002'));
    await Promise.all([a.flush(), b.flush()]);
    expect(await b.get(first.id)).toEqual(first);
    const today = dayOf(Date.now());
    const [rowsA, rowsB] = await Promise.all([a.rollups(today, today), b.rollups(today, today)]);
    expect(rowsA).toEqual(rowsB);
    expect(rowsA).toEqual([{ day: today, key: 'team', model: 'fake/model', provider: 'fake', totals: { cost: parseUsd('0.000500000000003'), input: 22, output: 14, cacheRead: 6, cacheWrite: 0, reasoning: 0, requests: 2 } }]);
  });
});
