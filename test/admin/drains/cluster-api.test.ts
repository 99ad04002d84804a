// The drains API of two instances sharing one redis-server, in this process:
// a change made on one instance is never undone by a change made on the other
// from a view that has not caught up with it yet.
import { execFileSync } from 'node:child_process';
import { existsSync, mkdirSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { pino } from 'pino';
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import { mountDrainsApi } from '../../../src/admin/drains/routes.js';
import { AdminServer } from '../../../src/admin/server.js';
import { createSharedState } from '../../../src/cluster/factory/create-state.js';
import { RedisConnection } from '../../../src/cluster/redis/connection.js';
import type { Host } from '../../../src/core/component.js';
import { hostService } from '../../../src/core/host-services.js';
import { DRAINS_CONTROLLER } from '../../../src/exporters/drains/controller.js';
import { DrainsExporter } from '../../../src/exporters/drains/exporter.js';
import { Telemetry } from '../../../src/shared/telemetry.js';
import { exporterConfig } from '../../exporters/drains/harness.js';
import { waitUntil } from '../../helpers/daemon.js';
import { testHost } from '../../helpers/host.js';
import { connectRedis, startRedis, type TestRedis } from '../../helpers/redis.js';

const KEY = 'admin-key-for-cluster-tests';
const DAY_MS = 86_400_000;
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

interface Instance {
  readonly base: string;
  readonly connection: RedisConnection;
  readonly prefix: string;
}

/** A drains exporter and admin endpoint in cluster mode, as the service wires them. */
async function instance(prefix: string, storageDirectory = mkdtempSync(join(tmpdir(), 'sluice-cluster-api-'))): Promise<Instance> {
  const telemetry = new Telemetry({ defaultMetrics: false });
  const connection = await connectRedis(redis.url, prefix, 1_000, { logger, telemetry });
  const state = createSharedState(connection, { storageDirectory, retentionMs: DAY_MS, logger });
  const host: Host = { ...testHost({ logger, telemetry, storageDirectory }), state };
  const exporter = new DrainsExporter({ id: 'drains', logger, telemetry, storageDirectory, version: '0.1.0-test' }, exporterConfig([]));
  await exporter.start(host);
  const admin = new AdminServer({ telemetry, logger, isReady: () => true, apiKey: () => KEY });
  await admin.listen('127.0.0.1:0');
  mountDrainsApi(admin, () => hostService(host, DRAINS_CONTROLLER));
  cleanups.push(async () => {
    await admin.close();
    await exporter.shutdown();
    await state.close();
    await connection.close();
    rmSync(storageDirectory, { recursive: true, force: true });
  });
  return { base: `http://127.0.0.1:${admin.address()?.port ?? 0}`, connection, prefix };
}

interface Answer {
  readonly status: number;
  readonly json: { id: string; name: string; status: string; updatedAt: number; error?: { message: string; code: string } };
}

async function call(on: Instance, method: string, path: string, body?: unknown): Promise<Answer> {
  const response = await fetch(`${on.base}${path}`, {
    method,
    headers: { authorization: `Bearer ${KEY}`, 'content-type': 'application/json' },
    ...(body === undefined ? {} : { body: JSON.stringify(body) }),
  });
  const text = await response.text();
  return { status: response.status, json: (text === '' ? {} : JSON.parse(text)) as Answer['json'] };
}

const drainBody = (name: string) => ({ name, delivery: { endpoint: { traces: 'http://127.0.0.1:9/v1/traces' }, insecure: true } });

/** The drain as Redis holds it (undefined: not there). */
async function stored(on: Instance, id: string): Promise<{ name: string; enabled: boolean; updatedAt: number } | undefined> {
  const text = await on.connection.client.hget(`${on.prefix}drains`, id);
  return text === null ? undefined : (JSON.parse(text) as { name: string; enabled: boolean; updatedAt: number });
}

async function createdOnBoth(a: Instance, b: Instance, name: string): Promise<string> {
  const created = await call(a, 'POST', '/v1/drains', drainBody(name));
  expect(created.status).toBe(201);
  await waitUntil(async () => (await call(b, 'GET', `/v1/drains/${created.json.id}`)).status === 200, 5_000, 'B to run the drain');
  return created.json.id;
}

describe('the drains API of instances sharing Redis', () => {
  it('keeps both of two PATCHes sent at once to one drain on two instances', async () => {
    const [a, b] = [await instance('both:'), await instance('both:')];
    for (let round = 0; round < 3; round++) {
      const id = await createdOnBoth(a, b, `both-${round}`);
      const [renamed, disabled] = await Promise.all([call(a, 'PATCH', `/v1/drains/${id}`, { name: `renamed-${round}` }), call(b, 'PATCH', `/v1/drains/${id}`, { status: 'disabled' })]);
      expect([renamed.status, disabled.status]).toEqual([200, 200]);
      expect(await stored(a, id)).toMatchObject({ name: `renamed-${round}`, enabled: false });
      const both = async (on: Instance) => {
        const { json } = await call(on, 'GET', `/v1/drains/${id}`);
        return json.name === `renamed-${round}` && json.status === 'disabled';
      };
      await waitUntil(async () => (await both(a)) && (await both(b)), 5_000, 'both instances to run both changes');
    }
  });

  it('applies a PATCH over a change made elsewhere that this instance has not heard of yet', async () => {
    const [a, b] = [await instance('unheard:'), await instance('unheard:')];
    const id = await createdOnBoth(a, b, 'original');
    // Another instance's change whose announcement has not reached B.
    const current = await stored(a, id);
    await a.connection.client.hset('unheard:drains', id, JSON.stringify({ ...current, name: 'renamed-elsewhere', updatedAt: (current?.updatedAt ?? 0) + 1 }));
    const disabled = await call(b, 'PATCH', `/v1/drains/${id}`, { status: 'disabled' });
    expect(disabled.status).toBe(200);
    expect(disabled.json).toMatchObject({ name: 'renamed-elsewhere', status: 'disabled' });
    expect(await stored(a, id)).toMatchObject({ name: 'renamed-elsewhere', enabled: false });
  });

  it('answers 404 to a PATCH of a drain deleted elsewhere, and does not bring it back', async () => {
    const [a, b] = [await instance('gone:'), await instance('gone:')];
    const id = await createdOnBoth(a, b, 'doomed');
    // Another instance's delete whose announcement has not reached B.
    await a.connection.client.hdel('gone:drains', id);
    const patched = await call(b, 'PATCH', `/v1/drains/${id}`, { name: 'revived' });
    expect(patched.status).toBe(404);
    expect(patched.json.error).toEqual({ message: `drain ${id} does not exist`, code: 'not_found' });
    expect(await stored(a, id)).toBeUndefined();
    expect((await call(b, 'GET', `/v1/drains/${id}`)).status).toBe(404);
  });

  it('never brings back a drain deleted on one instance while another patches it', async () => {
    const [a, b] = [await instance('race:'), await instance('race:')];
    for (let round = 0; round < 3; round++) {
      const id = await createdOnBoth(a, b, `race-${round}`);
      const [deleted, patched] = await Promise.all([call(a, 'DELETE', `/v1/drains/${id}`), call(b, 'PATCH', `/v1/drains/${id}`, { name: 'revived' })]);
      expect(deleted.status).toBe(204);
      expect([200, 404]).toContain(patched.status);
      expect(await stored(a, id)).toBeUndefined();
      await waitUntil(async () => (await call(b, 'GET', `/v1/drains/${id}`)).status === 404, 5_000, 'B to drop the drain');
      expect((await call(a, 'GET', `/v1/drains/${id}`)).status).toBe(404);
    }
  });

  // A small tmpfs makes a real full disk; mounting one needs root.
  it.runIf(process.getuid?.() === 0)('answers a change Redis took as made when a full disk refuses the instance\'s own copy, and writes the copy once there is room', async () => {
    const full = mkdtempSync(join(tmpdir(), 'sluice-cluster-full-'));
    execFileSync('mount', ['-t', 'tmpfs', '-o', 'size=1m', 'tmpfs', full]);
    cleanups.push(() => {
      execFileSync('umount', [full]);
      rmSync(full, { recursive: true, force: true });
    });
    const storage = join(full, 'storage');
    mkdirSync(storage);
    const a = await instance('full:', storage);
    try {
      writeFileSync(join(full, 'filler'), Buffer.alloc(2 * 1024 * 1024));
    } catch (err) {
      expect((err as NodeJS.ErrnoException).code).toBe('ENOSPC');
    }

    const created = await call(a, 'POST', '/v1/drains', drainBody('on-a-full-disk'));
    expect(created.status).toBe(201);
    expect(await stored(a, created.json.id)).toMatchObject({ name: 'on-a-full-disk' });
    const patched = await call(a, 'PATCH', `/v1/drains/${created.json.id}`, { name: 'renamed' });
    expect(patched.status).toBe(200);
    expect(await stored(a, created.json.id)).toMatchObject({ name: 'renamed' });
    expect(existsSync(join(storage, 'drains.json'))).toBe(false);

    rmSync(join(full, 'filler'));
    const next = await call(a, 'POST', '/v1/drains', drainBody('with-room'));
    expect(next.status).toBe(201);
    // Written again when the instance next reads Redis (the change's own announcement makes it).
    const copy = () => (JSON.parse(readFileSync(join(storage, 'drains.json'), 'utf8')) as { drains: { name: string }[] }).drains.map((d) => d.name).sort();
    await waitUntil(() => copy().length === 2, 5_000, 'the copy to hold both drains');
    expect(copy()).toEqual(['renamed', 'with-room']);
  });
});
