// The Redis drain store against a real redis-server: when Redis is emptied
// (restarted without persistence, or flushed), no instance ever reads an
// empty list it did not ask for, whichever instance reaches Redis first; a
// change Redis answers late is read back before the caller is answered.
import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { pino } from 'pino';
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import { ClusterUnavailableError } from '../../../src/shared/errors.js';
import { DRAINS_FILE, LocalDrainStore } from '../../../src/cluster/local/drain-store.js';
import { RedisConnection } from '../../../src/cluster/redis/connection.js';
import { RedisDrainStore } from '../../../src/cluster/redis/drain-store.js';
import { connectRedis, startRedis, type TestRedis } from '../../helpers/redis.js';

const logger = pino({ level: 'silent' });
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

interface Drain {
  readonly id: string;
  readonly updatedAt: number;
}

function parse(value: unknown): Drain {
  return value as Drain;
}

function drain(id: string): Drain {
  return { id, updatedAt: 1_700_000_000_000 };
}

interface Instance {
  readonly store: RedisDrainStore<Drain>;
  readonly connection: RedisConnection;
  readonly directory: string;
}

/** An instance whose local copy holds `drains` (a new pod when none). */
async function instance(prefix: string, drains: readonly Drain[] = [], timeout = 300): Promise<Instance> {
  const directory = mkdtempSync(join(tmpdir(), 'sluice-drains-'));
  if (drains.length > 0) await new LocalDrainStore(directory, parse).replace(drains);
  const connection = await connectRedis(redis.url, prefix, timeout, { logger });
  const store = new RedisDrainStore(connection, new LocalDrainStore(directory, parse), parse, logger);
  cleanups.push(async () => {
    await store.close();
    await connection.close();
    rmSync(directory, { recursive: true, force: true });
  });
  return { store, connection, directory };
}

function ids(drains: readonly Drain[]): string[] {
  return drains.map((d) => d.id);
}

function localIds(directory: string): string[] {
  return ids((JSON.parse(readFileSync(join(directory, DRAINS_FILE), 'utf8')) as { drains: Drain[] }).drains);
}

describe('API drains shared through Redis after Redis is emptied', () => {
  it('keeps the fleet\'s drains when a new instance with none reaches the emptied Redis first', async () => {
    const old = await instance('seed1:');
    await old.store.load();
    await old.store.put(drain('drn_a'));
    await old.connection.client.flushdb();
    const fresh = await instance('seed1:');
    expect(await fresh.store.load()).toEqual([]);
    // The new instance left Redis for an instance with drains to seed.
    expect(await old.connection.client.exists('seed1:drains:version')).toBe(0);
    expect(ids(await old.store.load())).toEqual(['drn_a']);
    expect(localIds(old.directory)).toEqual(['drn_a']);
    expect(ids(await fresh.store.load())).toEqual(['drn_a']);
  });

  it('adds the drains of every copy that reaches the emptied Redis within the merge window', async () => {
    const one = await instance('seed2:', [drain('drn_a')]);
    const two = await instance('seed2:', [drain('drn_a'), drain('drn_b')]);
    expect(ids(await one.store.load())).toEqual(['drn_a']);
    expect(ids(await two.store.load())).toEqual(['drn_a', 'drn_b']);
    expect(ids(await one.store.load())).toEqual(['drn_a', 'drn_b']);
  });

  it('keeps the drains of instances that have them when one with none creates a drain on the emptied Redis', async () => {
    const fresh = await instance('seed3:');
    const old = await instance('seed3:', [drain('drn_a')]);
    expect(await fresh.store.load()).toEqual([]);
    await fresh.store.put(drain('drn_new'));
    expect(ids(await old.store.load())).toEqual(['drn_a', 'drn_new']);
    expect(ids(await fresh.store.load())).toEqual(['drn_a', 'drn_new']);
  });

  it('does not put back a drain deleted through the API after the seed', async () => {
    const one = await instance('seed4:', [drain('drn_a'), drain('drn_b')]);
    const two = await instance('seed4:', [drain('drn_a'), drain('drn_b')]);
    await one.store.load();
    await one.store.remove('drn_b');
    expect(ids(await two.store.load())).toEqual(['drn_a']);
    expect(localIds(two.directory)).toEqual(['drn_a']);
  });

  it('puts its copy back before changing a drain on the emptied Redis', async () => {
    const one = await instance('seed5:', [drain('drn_a'), drain('drn_b')]);
    const changed = { ...drain('drn_a'), updatedAt: drain('drn_a').updatedAt + 1 };
    expect(await one.store.update(changed, drain('drn_a').updatedAt)).toBe('applied');
    expect(await one.connection.client.hget('seed5:drains', 'drn_a')).toBe(JSON.stringify(changed));
    expect(ids(await one.store.load())).toEqual(['drn_a', 'drn_b']);
  });

  it('does not let another copy put back a drain deleted on the emptied Redis', async () => {
    const one = await instance('seed6:', [drain('drn_a'), drain('drn_b')]);
    const two = await instance('seed6:', [drain('drn_a'), drain('drn_b')]);
    expect(await one.store.remove('drn_b')).toBe('applied');
    expect(ids(await two.store.load())).toEqual(['drn_a']);
    expect(ids(await one.store.load())).toEqual(['drn_a']);
  });
});

describe('API drains shared through Redis after Redis comes back from an older snapshot', () => {
  /** Writes the drains and version Redis held when `snapshot` was taken back, as a restart from that dump would. */
  async function restore(client: Instance['connection']['client'], prefix: string, snapshot: { drains: Record<string, string>; version: string }): Promise<void> {
    await client.del(`${prefix}drains`);
    if (Object.keys(snapshot.drains).length > 0) await client.hset(`${prefix}drains`, snapshot.drains);
    await client.set(`${prefix}drains:version`, snapshot.version);
  }

  async function snapshotOf(client: Instance['connection']['client'], prefix: string): Promise<{ drains: Record<string, string>; version: string }> {
    const version = await client.get(`${prefix}drains:version`);
    expect(version).not.toBeNull();
    return { drains: await client.hgetall(`${prefix}drains`), version: version ?? '' };
  }

  it('puts back the drains created and changed after the snapshot instead of deleting them', async () => {
    const one = await instance('rewind1:');
    const two = await instance('rewind1:');
    await one.store.load();
    await one.store.put(drain('drn_a'));
    const snapshot = await snapshotOf(one.connection.client, 'rewind1:');
    await one.store.put(drain('drn_b'));
    const changed = { ...drain('drn_a'), updatedAt: drain('drn_a').updatedAt + 1 };
    expect(await one.store.update(changed, drain('drn_a').updatedAt)).toBe('applied');
    expect(ids(await two.store.load())).toEqual(['drn_a', 'drn_b']);
    await restore(one.connection.client, 'rewind1:', snapshot);
    expect(await two.store.load()).toEqual([changed, drain('drn_b')]);
    expect(localIds(two.directory)).toEqual(['drn_a', 'drn_b']);
    expect(await one.store.load()).toEqual([changed, drain('drn_b')]);
  });

  it('puts its copy back before changing a drain Redis lost with the rollback', async () => {
    const one = await instance('rewind2:');
    await one.store.load();
    await one.store.put(drain('drn_0'));
    const snapshot = await snapshotOf(one.connection.client, 'rewind2:');
    await one.store.put(drain('drn_a'));
    await one.store.load();
    await restore(one.connection.client, 'rewind2:', snapshot);
    const changed = { ...drain('drn_a'), updatedAt: drain('drn_a').updatedAt + 1 };
    expect(await one.store.update(changed, drain('drn_a').updatedAt)).toBe('applied');
    expect(await one.store.load()).toEqual([drain('drn_0'), changed]);
  });
});

describe('API drain changes that Redis answers late', () => {
  it('reports a create that timed out but was applied as done', async () => {
    const one = await instance('late1:');
    await one.store.load();
    // Writes wait 800 ms: the change times out after 300 ms, and a read behind it answers once it ran.
    await one.connection.client.call('CLIENT', 'PAUSE', '800', 'WRITE');
    await one.store.put(drain('drn_late'));
    expect(await one.connection.client.hget('late1:drains', 'drn_late')).toBe(JSON.stringify(drain('drn_late')));
    expect(localIds(one.directory)).toEqual(['drn_late']);
  });

  it('answers 503 naming an unknown outcome when Redis does not say whether a change was applied', async () => {
    const one = await instance('late2:');
    await one.store.load();
    await one.connection.client.call('CLIENT', 'PAUSE', '3000', 'WRITE');
    cleanups.push(async () => {
      await one.connection.client.call('CLIENT', 'UNPAUSE').catch(() => undefined);
    });
    const failure = await one.store.put(drain('drn_slow')).then(
      () => undefined,
      (err: unknown) => err,
    );
    expect(failure).toBeInstanceOf(ClusterUnavailableError);
    expect((failure as Error).message).toMatch(/outcome is unknown/);
  });
});

describe('the drain limit across instances', () => {
  it('counts every instance\'s drains, so creates on several instances cannot pass the limit together', async () => {
    const one = await instance('limit1:');
    const two = await instance('limit1:');
    await one.store.load();
    await two.store.load();
    expect(await one.store.put(drain('drn_a'), 3)).toBe(true);
    expect(await two.store.put(drain('drn_b'), 3)).toBe(true);
    // Each instance has seen one or two drains; the third and fourth go at once from both.
    const [third, fourth] = await Promise.all([one.store.put(drain('drn_c'), 3), two.store.put(drain('drn_d'), 3)]);
    expect([third, fourth].filter(Boolean)).toHaveLength(1);
    expect(Object.keys(await one.connection.client.hgetall('limit1:drains'))).toHaveLength(3);
    // The refused create is in neither copy.
    const refused = third ? 'drn_d' : 'drn_c';
    expect(ids(await one.store.load())).not.toContain(refused);
    expect(localIds((third ? two : one).directory)).not.toContain(refused);
    // A delete makes room again.
    expect(await one.store.remove('drn_a')).toBe('applied');
    expect(await two.store.put(drain('drn_e'), 3)).toBe(true);
  });
});
