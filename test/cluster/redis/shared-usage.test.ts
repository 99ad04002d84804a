// The Redis spend ledger, generation store and rate limits against a real redis-server:
// what one instance adds, another reads, exactly; with Redis gone, each
// answers from its local copy, and what Redis missed is shared once it is
// back, counted once even when a write Redis answered late had run.
import { existsSync, mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { Redis } from 'ioredis';
import { pino } from 'pino';
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import { RedisConnection } from '../../../src/cluster/redis/connection.js';
import { RedisState } from '../../../src/cluster/redis/state.js';
import { LocalState } from '../../../src/cluster/local/state.js';
import { LocalSpendLedger } from '../../../src/cluster/spend-ledger.js';
import { newGenerationId } from '../../../src/shared/generation-id.js';
import type { GenerationRecord } from '../../../src/shared/generation.js';
import { parseUsd } from '../../../src/shared/money.js';
import { dayOf, periodId } from '../../../src/shared/periods.js';
import { waitUntil } from '../../helpers/daemon.js';
import { connectRedis, startRedis, type TestRedis } from '../../helpers/redis.js';

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

async function instance(prefix: string, timeout = 300, log = logger): Promise<{ state: RedisState; connection: RedisConnection }> {
  const connection = await connectRedis(redis.url, prefix, timeout, { logger: log });
  const directory = mkdtempSync(join(tmpdir(), 'sluice-shared-'));
  const state = new RedisState(connection, new LocalState({ storageDirectory: directory, retentionMs: 30 * DAY_MS, logger: log }), { logger: log, retentionMs: 30 * DAY_MS });
  cleanups.push(async () => {
    await state.close();
    await connection.close();
    rmSync(directory, { recursive: true, force: true });
  });
  return { state, connection };
}

/**
 * A connection and a storage directory the test keeps, and `open()` for a
 * state on them that the test closes itself, as a state closed before its
 * connection (the service closes the state first when service.cluster changes).
 */
async function keptConnection(prefix: string, timeout: number): Promise<{ connection: RedisConnection; directory: string; open: () => RedisState }> {
  const connection = await connectRedis(redis.url, prefix, timeout, { logger });
  const directory = mkdtempSync(join(tmpdir(), 'sluice-shared-'));
  cleanups.push(async () => {
    await connection.close();
    rmSync(directory, { recursive: true, force: true });
  });
  const open = () => new RedisState(connection, new LocalState({ storageDirectory: directory, retentionMs: 30 * DAY_MS, logger }), { logger, retentionMs: 30 * DAY_MS });
  return { connection, directory, open };
}

/** A connection of its own, for commands a test plays the operator with (pausing and killing clients). */
function operator(): Redis {
  const client = new Redis(redis.url);
  cleanups.push(() => client.disconnect());
  return client;
}

/**
 * Writes wait for `ms`: a write issued now times out and is remembered for
 * the next reconnection, yet runs once the pause ends.
 */
async function pauseWrites(client: Redis, ms: number): Promise<void> {
  await client.call('CLIENT', 'PAUSE', String(ms), 'WRITE');
}

/** Drops every other client's connection and waits for `connection` to be back (its missed writes are sent first). */
async function reconnect(client: Redis, connection: RedisConnection): Promise<void> {
  let reconnected = false;
  const stop = connection.onUp(() => {
    reconnected = true;
  });
  await client.call('CLIENT', 'KILL', 'TYPE', 'normal', 'SKIPME', 'yes');
  await waitUntil(() => reconnected && connection.up, 10_000, 'the reconnection');
  stop();
}

const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));

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

  it('still counts this instance\'s spend after Redis restarts empty', async () => {
    const [one, two] = await Promise.all([instance('spend5:'), instance('spend5:')]);
    const [a, b] = await Promise.all([one.state.spendLedger(), two.state.spendLedger()]);
    const now = Date.now();
    await a.add('team', parseUsd('50'), now);
    await redis.kill();
    await redis.start();
    await waitUntil(() => one.connection.up && two.connection.up, 10_000, 'the reconnection');
    expect(await a.spent('team', 'total', now)).toBe(parseUsd('50'));
    expect(await a.spent('team', 'day', now)).toBe(parseUsd('50'));
    // Other instances' past spend is not restored: Redis lost it.
    expect(await b.spent('team', 'total', now)).toBe(0n);
    await b.add('team', parseUsd('70'), now);
    expect(await a.spent('team', 'total', now)).toBe(parseUsd('70'));
  });

  it('sends an addition Redis refused again without waiting for a reconnection, once', async () => {
    const one = await instance('spend6:');
    const ledger = await one.state.spendLedger();
    const client = operator();
    const now = Date.now();
    const key = `spend6:spend:team:${periodId('total', now)}`;
    await client.config('SET', 'maxmemory-policy', 'noeviction');
    await client.config('SET', 'maxmemory', '1');
    try {
      await ledger.add('team', parseUsd('3'), now);
      expect(await client.hget(key, 'hi')).toBeNull();
    } finally {
      await client.config('SET', 'maxmemory', '0');
    }
    await waitUntil(async () => (await client.hget(key, 'hi')) !== null, 5_000, 'the addition sent again');
    expect(one.connection.up).toBe(true);
    await ledger.add('team', parseUsd('4'), now);
    expect(BigInt((await client.hget(key, 'hi')) ?? '0')).toBe(parseUsd('7') / 1_000_000_000n);
  });

  it('never skips an addition Redis refused for a later one it ran: the later one waits, and both count once', async () => {
    const one = await instance('spend8:');
    const ledger = await one.state.spendLedger();
    const client = operator();
    const now = Date.now();
    const counter = (key: string) => `spend8:spend:${key}:${periodId('total', now)}`;
    await ledger.add('ok', parseUsd('1'), now);
    // A counter of the wrong type: Redis refuses this key's addition (WRONGTYPE) until it is gone.
    await client.set(counter('broken'), 'not a hash');
    await Promise.all([ledger.add('broken', parseUsd('10'), now), ledger.add('ok', parseUsd('100'), now)]);
    expect(await client.hget(counter('ok'), 'hi')).toBe(String(parseUsd('1') / 1_000_000_000n));
    await client.del(counter('broken'));
    const usd = async (key: string) => BigInt((await client.hget(counter(key), 'hi')) ?? '0') * 1_000_000_000n;
    await waitUntil(async () => (await usd('broken')) === parseUsd('10'), 5_000, 'the refused addition to be sent again');
    expect(await usd('ok')).toBe(parseUsd('101'));
    // Sent again later, nothing counts twice.
    await ledger.add('ok', parseUsd('1000'), now);
    expect([await usd('ok'), await usd('broken')]).toEqual([parseUsd('1101'), parseUsd('10')]);
  });

  it('does not send everything Redis refused again with each new addition, only with the retry', async () => {
    const one = await instance('spend10:');
    const ledger = await one.state.spendLedger();
    const client = operator();
    const now = Date.now();
    const scriptCalls = async () => {
      const stats = await client.info('commandstats');
      let total = 0;
      for (const [, calls, rejected] of stats.matchAll(/cmdstat_eval(?:sha)?:calls=(\d+),.*?rejected_calls=(\d+)/g)) total += Number(calls) + Number(rejected);
      return total;
    };
    await client.config('RESETSTAT');
    await client.config('SET', 'maxmemory-policy', 'noeviction');
    await client.config('SET', 'maxmemory', '1');
    try {
      for (let i = 0; i < 100; i++) await ledger.add('team', parseUsd('1'), now);
      // One try, and at most a retry or two of the whole queue; not 1 + 2 + ... + 100.
      expect(await scriptCalls()).toBeLessThan(300);
    } finally {
      await client.config('SET', 'maxmemory', '0');
    }
    await waitUntil(async () => (await client.hget(`spend10:spend:team:${periodId('total', now)}`, 'hi')) === String(parseUsd('100') / 1_000_000_000n), 5_000, 'the refused additions sent again');
  });

  it('keeps sharing spend after Redis comes back from an older snapshot', async () => {
    const one = await instance('spend9:');
    const ledger = await one.state.spendLedger();
    const client = operator();
    const now = Date.now();
    const counter = `spend9:spend:team:${periodId('total', now)}`;
    await ledger.add('team', parseUsd('1'), now);
    const snapshot = await client.hgetall(counter);
    const [sequenceKey] = await client.keys('spend9:spend-seq:*');
    const sequence = await client.get(sequenceKey ?? '');
    await ledger.add('team', parseUsd('2'), now);
    // Redis restarts from a snapshot taken after the first addition (or a replica that lagged takes over).
    await client.hset(counter, snapshot);
    await client.set(sequenceKey ?? '', sequence ?? '');
    await ledger.add('team', parseUsd('4'), now);
    // The second addition is lost with Redis's data; this instance's own figure still counts it.
    expect(BigInt((await client.hget(counter, 'hi')) ?? '0')).toBe(parseUsd('5') / 1_000_000_000n);
    expect(await ledger.spent('team', 'total', now)).toBe(parseUsd('7'));
  });

  it('counts once an addition whose write timed out but ran, when it is sent again', async () => {
    const one = await instance('spend3:');
    const ledger = await one.state.spendLedger();
    const client = operator();
    const now = Date.now();
    await pauseWrites(client, 800);
    await ledger.add('team', parseUsd('1'), now);
    await sleep(1_000);
    expect(await ledger.spent('team', 'total', now)).toBe(parseUsd('1'));
    await reconnect(client, one.connection);
    // Sent after the replay on the same connection, so read after it too.
    await ledger.add('team', parseUsd('10'), now);
    expect(await ledger.spent('team', 'total', now)).toBe(parseUsd('11'));
  });

  it('closes after a batch in flight is answered, noting on disk what Redis took', async () => {
    const { directory, open } = await keptConnection('spend11:', 2_000);
    const state = open();
    const ledger = await state.spendLedger();
    const now = Date.now();
    await pauseWrites(operator(), 300);
    const adding = ledger.add('team', parseUsd('1'), now);
    await state.close();
    await adding;
    // Opened again, nothing waits to be sent: the addition Redis took is marked on disk.
    const again = await LocalSpendLedger.open(join(directory, 'usage'), logger, { outbox: true });
    expect(again.outbox).toEqual([]);
    expect(await again.spent('team', 'total', now)).toBe(parseUsd('1'));
    await again.close();
  });

  it('sends nothing more once closed, though a batch in flight when it closed timed out: the next start sends it', async () => {
    const { directory, open } = await keptConnection('spend12:', 300);
    const state = open();
    const ledger = await state.spendLedger();
    const now = Date.now();
    await pauseWrites(operator(), 700);
    const adding = ledger.add('team', parseUsd('1'), now);
    await state.close();
    await adding;
    // Past the retry a second after the timeout: it must not write to the closed ledger.
    await sleep(2_000);
    const again = await LocalSpendLedger.open(join(directory, 'usage'), logger, { outbox: true });
    expect(again.outbox.map(({ key, cost }) => ({ key, cost }))).toEqual([{ key: 'team', cost: parseUsd('1') }]);
    await again.close();
  });

  it('shares a long outage\'s additions in batches that each fit in redis.timeout', async () => {
    const lines: Array<{ msg?: string; additions?: number; left?: number }> = [];
    const log = pino({ level: 'info' }, { write: (line: string) => void lines.push(JSON.parse(line) as (typeof lines)[number]) });
    const one = await instance('spend4:', 250, log);
    const ledger = await one.state.spendLedger();
    const now = Date.now();
    await redis.kill();
    await waitUntil(() => !one.connection.up, 5_000, 'the outage');
    for (let i = 0; i < 20_000; i++) await ledger.add('team', parseUsd('0.01'), now);
    await redis.start();
    await waitUntil(() => lines.some((line) => line.msg === 'spend counted while Redis was down is now shared'), 10_000, 'the replay');
    expect(lines.find((line) => line.msg === 'spend counted while Redis was down is now shared')).toMatchObject({ additions: 20_000 });
    // Read Redis itself: the ledger may answer from its local copy.
    const hi = await operator().hget(`spend4:spend:team:${periodId('total', now)}`, 'hi');
    expect(BigInt(hi ?? '0') * 1_000_000_000n).toBe(parseUsd('200'));
  });
});

describe('rate limits shared through Redis', () => {
  it('shares the points a limiter counted alone as its state closes, not a second later', async () => {
    const kept = await keptConnection('rate8:', 300);
    const state = kept.open();
    const limiter = state.rateLimiter({ name: 'rpm', points: 5, windowMs: 60_000 });
    const client = operator();
    // Redis refuses writes: the request falls back, and its point waits to be shared.
    await client.config('SET', 'maxmemory-policy', 'noeviction');
    await client.config('SET', 'maxmemory', '1');
    try {
      expect((await limiter.consume('team', 1)).allowed).toBe(true);
    } finally {
      await client.config('SET', 'maxmemory', '0');
    }
    await state.close();
    expect(await client.get('rate8:rate:rpm:team')).toBe('1');
  });

  it('stops sharing the points a limiter counted alone once its state is closed, though the connection stays', async () => {
    const kept = await keptConnection('rate7:', 300);
    const options = { name: 'rpm', points: 5, windowMs: 60_000 };
    const closedState = kept.open();
    const closed = closedState.rateLimiter(options);
    await redis.kill();
    await waitUntil(() => !kept.connection.up, 5_000, 'the outage');
    expect((await closed.consume('closed-team', 1)).allowed).toBe(true);
    await closedState.close();
    const next = kept.open();
    cleanups.push(() => next.close());
    expect((await next.rateLimiter(options).consume('open-team', 1)).allowed).toBe(true);
    await redis.start();
    // The closed limiter listened first: had it still shared, its points would have reached Redis before these.
    const client = operator();
    await waitUntil(async () => (await client.get('rate7:rate:rpm:open-team')) === '1', 10_000, 'the open limiter\'s points to be shared');
    expect(await client.get('rate7:rate:rpm:closed-team')).toBeNull();
  });

  it('tries sharing the points it counted alone again while Redis refuses them, without a reconnection', async () => {
    const lines: Array<{ msg?: string }> = [];
    const log = pino({ level: 'warn' }, { write: (line: string) => void lines.push(JSON.parse(line) as { msg?: string }) });
    const one = await instance('rate3:', 300, log);
    const limiter = one.state.rateLimiter({ name: 'rpm', points: 5, windowMs: 60_000 });
    expect((await limiter.consume('team', 1)).allowed).toBe(true);
    const client = operator();
    // Redis refuses writes (out of memory): requests fall back, and so does the first try at sharing.
    await client.config('SET', 'maxmemory-policy', 'noeviction');
    await client.config('SET', 'maxmemory', '1');
    try {
      expect((await limiter.consume('team', 1)).allowed).toBe(true);
      expect((await limiter.consume('team', 1)).allowed).toBe(true);
      await waitUntil(() => lines.some((line) => line.msg?.startsWith('sharing rate-limit points counted without Redis failed') === true), 5_000, 'a failed share');
    } finally {
      await client.config('SET', 'maxmemory', '0');
    }
    expect(one.connection.up).toBe(true);
    await waitUntil(async () => (await client.get('rate3:rate:rpm:team')) === '3', 5_000, 'the points to be shared');
  });

  it('warns once while Redis keeps refusing the points of many keys, not once per key and try', async () => {
    const lines: Array<{ msg?: string }> = [];
    const log = pino({ level: 'warn' }, { write: (line: string) => void lines.push(JSON.parse(line) as { msg?: string }) });
    const failedShares = () => lines.filter((line) => line.msg?.startsWith('sharing rate-limit points counted without Redis failed') === true);
    const one = await instance('rate4:', 300, log);
    const limiter = one.state.rateLimiter({ name: 'rpm', points: 5, windowMs: 60_000 });
    const client = operator();
    await client.config('SET', 'maxmemory-policy', 'noeviction');
    await client.config('SET', 'maxmemory', '1');
    try {
      for (const key of ['team-a', 'team-b', 'team-c']) expect((await limiter.consume(key, 1)).allowed).toBe(true);
      await waitUntil(() => failedShares().length > 0, 5_000, 'a failed share');
      // Long enough for the shares to be tried again at least once.
      await sleep(2_500);
      expect(failedShares()).toHaveLength(1);
    } finally {
      await client.config('SET', 'maxmemory', '0');
    }
    await waitUntil(async () => (await client.get('rate4:rate:rpm:team-c')) === '1', 5_000, 'the points to be shared');
  });

  it('answers from its own count while Redis is slow, then adds those points to the fleet\'s window', async () => {
    const one = await instance('rate2:');
    const limiter = one.state.rateLimiter({ name: 'rpm', points: 5, windowMs: 60_000 });
    expect((await limiter.consume('team', 1)).allowed).toBe(true);
    const client = operator();
    // Longer than redis.timeout (300 ms): both requests fall back to the instance's own count.
    await pauseWrites(client, 800);
    const slow = await Promise.all([limiter.consume('team', 1), limiter.consume('team', 1)]);
    expect(slow.map((answer) => answer.allowed)).toEqual([true, true]);
    expect(one.connection.up).toBe(true);
    // The timed-out commands still ran once the pause ended, and the points counted
    // alone are added a second after the fallback: counted in both places, as documented.
    await waitUntil(async () => (await client.get('rate2:rate:rpm:team')) === '5', 5_000, 'the fallback\'s points to be shared');
    expect((await limiter.consume('team', 1)).allowed).toBe(false);
  });

  it('adds the points it counted alone once when sharing them times out on a live connection', async () => {
    const lines: Array<{ msg?: string }> = [];
    const log = pino({ level: 'warn' }, { write: (line: string) => void lines.push(JSON.parse(line) as { msg?: string }) });
    const one = await instance('rate6:', 300, log);
    const limiter = one.state.rateLimiter({ name: 'rpm', points: 100, windowMs: 60_000 });
    expect((await limiter.consume('team', 1)).allowed).toBe(true);
    const client = operator();
    // Long enough for the first share (a second after the fallback) to time out too.
    await pauseWrites(client, 2_500);
    expect((await limiter.consume('team', 1)).allowed).toBe(true);
    await waitUntil(() => lines.some((line) => line.msg?.startsWith('sharing rate-limit points counted without Redis') === true), 5_000, 'a share that timed out');
    expect(one.connection.up).toBe(true);
    // Once the pause ends, the timed-out request and the timed-out share both run:
    // 1 + 1 (the request) + 1 (its share), and a share sent again would add one more.
    await waitUntil(async () => Number(await client.get('rate6:rate:rpm:team')) >= 3, 5_000, 'the pause to end');
    await sleep(2_500);
    expect(await client.get('rate6:rate:rpm:team')).toBe('3');
  });

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

  it('asks a stalled Redis once for a recent record it does not have, not again while waiting for it to arrive', async () => {
    const one = await instance('gen6:');
    const store = await one.state.generationStore();
    const client = operator();
    const gets = async () => Number(/cmdstat_get:calls=(\d+)/.exec(await client.info('commandstats'))?.[1] ?? 0);
    await client.config('RESETSTAT');
    await client.call('CLIENT', 'PAUSE', '1500', 'ALL');
    // Made elsewhere a moment ago: the lookup would wait for it to arrive, were Redis answering.
    expect(await store.get(newGenerationId(Date.now()))).toBeUndefined();
    expect(one.connection.up).toBe(true);
    // Read once the pause is over: each GET sent during it runs then.
    expect(await gets()).toBe(1);
  });

  it('sends a record Redis refused again without waiting for a reconnection', async () => {
    const one = await instance('gen4:');
    const store = await one.state.generationStore();
    const client = operator();
    const refused = record('team', '0.5');
    await client.config('SET', 'maxmemory-policy', 'noeviction');
    await client.config('SET', 'maxmemory', '1');
    try {
      store.add(refused);
      await store.flush();
      expect(await client.exists(`gen4:generation:${refused.id}`)).toBe(0);
    } finally {
      await client.config('SET', 'maxmemory', '0');
    }
    await waitUntil(async () => (await client.exists(`gen4:generation:${refused.id}`)) === 1, 5_000, 'the record sent again');
    expect(one.connection.up).toBe(true);
  });

  it('sends nothing more once closed, though Redis refused a record as it closed: the next start sends it', async () => {
    const { directory, open } = await keptConnection('gen7:', 300);
    const state = open();
    const store = await state.generationStore();
    const client = operator();
    const refused = record('team', '0.5');
    await client.config('SET', 'maxmemory-policy', 'noeviction');
    await client.config('SET', 'maxmemory', '1');
    try {
      store.add(refused);
      await state.close();
    } finally {
      await client.config('SET', 'maxmemory', '0');
    }
    // Past the retry a second after the refusal: a closed store sends nothing, and leaves
    // the file of what Redis lacks to the next one (which may be appending to it already).
    await sleep(1_500);
    expect(await client.exists(`gen7:generation:${refused.id}`)).toBe(0);
    expect(existsSync(join(directory, 'usage', 'generations-unshared.log'))).toBe(true);
    const next = open();
    cleanups.push(() => next.close());
    await next.generationStore();
    await waitUntil(async () => (await client.exists(`gen7:generation:${refused.id}`)) === 1, 5_000, 'the record sent by the next start');
  });

  it('takes a record added after it closed (a request that settled late) without failing, though Redis refuses it', async () => {
    const { open } = await keptConnection('gen8:', 300);
    const state = open();
    const store = await state.generationStore();
    await state.close();
    const client = operator();
    await client.config('SET', 'maxmemory-policy', 'noeviction');
    await client.config('SET', 'maxmemory', '1');
    try {
      store.add(record('team', '0.5'));
      // The write Redis refuses, a turn of the loop after the add.
      await expect(store.flush()).resolves.toBeUndefined();
    } finally {
      await client.config('SET', 'maxmemory', '0');
    }
  });

  it('counts a record once when its write timed out but ran, and it is sent again', async () => {
    const one = await instance('gen2:');
    const store = await one.state.generationStore();
    const client = operator();
    const today = dayOf(Date.now());
    await pauseWrites(client, 800);
    store.add(record('team', '1'));
    await sleep(1_000);
    expect((await store.rollups(today, today))[0]?.totals.requests).toBe(1);
    await reconnect(client, one.connection);
    store.add(record('team', '2'));
    await store.flush();
    const [row] = await store.rollups(today, today);
    expect(row?.totals.requests).toBe(2);
    expect(row?.totals.cost).toBe(parseUsd('3'));
  });

  it('keeps this instance\'s records in the report after Redis restarts empty', async () => {
    const one = await instance('gen3:');
    const store = await one.state.generationStore();
    const today = dayOf(Date.now());
    store.add(record('team', '3'));
    await store.flush();
    await redis.kill();
    await redis.start();
    await waitUntil(() => one.connection.up, 10_000, 'the reconnection');
    const [row] = await store.rollups(today, today);
    expect(row?.totals.requests).toBe(1);
    expect(row?.totals.cost).toBe(parseUsd('3'));
  });
});
