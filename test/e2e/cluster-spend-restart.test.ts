// Spend and generation records a gateway counted while the cluster Redis was
// down, by a daemon killed with SIGKILL before Redis came back (and started
// again while it was still down), reach Redis once Redis is back: exactly
// once, including after a restart that sends the last ones again.
import { readdirSync, readFileSync } from 'node:fs';
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { Redis } from 'ioredis';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { waitUntil } from '../helpers/daemon.js';
import { startGatewayDaemon, type RunningGateway } from '../helpers/gateway-daemon.js';
import { startRedis, type TestRedis } from '../helpers/redis.js';
import { completion, sendJson, startUpstream, type Upstream } from '../receivers/gateway/harness.js';
import { parseUsd } from '../../src/shared/money.js';
import { dayOf, periodId } from '../../src/shared/periods.js';

const PREFIX = 'spend-restart:';

let redis: TestRedis;
let upstream: Upstream;
let dir: string;
const running: RunningGateway[] = [];

beforeAll(async () => {
  redis = await startRedis({ persistent: true });
  // Answers with as many input tokens as the message says, so each request costs its own amount.
  upstream = await startUpstream((body, res) => {
    const messages = body['messages'] as Array<{ content: string }>;
    sendJson(res, 200, completion('ok', { usage: { prompt_tokens: Number(messages[0]?.content), completion_tokens: 0, total_tokens: Number(messages[0]?.content) } }));
  });
  dir = await mkdtemp(join(tmpdir(), 'sluice-spend-restart-'));
});

afterAll(async () => {
  for (const gateway of running) await gateway.cleanup();
  await upstream?.close();
  await redis?.remove();
  await rm(dir, { recursive: true, force: true });
});

async function startGateway(): Promise<RunningGateway> {
  const gateway = await startGatewayDaemon(
    `
    api_keys:
      - { key: k-team, name: team, budget: { usd: 100, period: day } }
    providers:
      fake: { type: openai, base_url: ${upstream.url}, api_key: sk-upstream }
    models:
      - id: fake/model
        pricing: { input: "0.00001", output: "0.00002" }
        endpoints: [{ provider: fake, model: upstream-model }]
`,
    {
      dir,
      service: `
  cluster:
    redis: { url: "${redis.url}", key_prefix: "${PREFIX}", timeout: 500ms }
`,
    },
  );
  running.push(gateway);
  return gateway;
}

/** One request of `tokens` input tokens: $0.00001 each. */
async function spend(gateway: RunningGateway, tokens: number): Promise<void> {
  const res = await fetch(`http://127.0.0.1:${gateway.port}/v1/chat/completions`, {
    method: 'POST',
    headers: { authorization: 'Bearer k-team', 'content-type': 'application/json' },
    body: JSON.stringify({ model: 'fake/model', messages: [{ role: 'user', content: String(tokens) }] }),
  });
  expect(res.status).toBe(200);
  await res.text();
}

async function redisUp(gateway: RunningGateway): Promise<boolean> {
  const text = await (await fetch(`http://127.0.0.1:${gateway.adminPort}/metrics`)).text();
  return text.split('\n').includes('sluice_cluster_redis_up 1');
}

/** Whether the files on disk hold a request of `usd`: its spend and its generation record (written within a fraction of a second). */
function durable(usd: string): boolean {
  const usage = join(dir, 'data', 'usage');
  const holds = (name: string, text: string) => readFileSync(join(usage, name), 'utf8').includes(text);
  const files = readdirSync(usage);
  return (
    files.filter((name) => name.startsWith('spend')).some((name) => holds(name, `"c":"${usd}"`)) &&
    files.includes('generations-unshared.log') &&
    holds('generations-unshared.log', `"cost":"${usd}"`)
  );
}

/** The fleet's total for the key, read from Redis itself. */
async function sharedTotal(client: Redis): Promise<bigint> {
  const [hi, lo] = await client.hmget(`${PREFIX}spend:team:${periodId('total', Date.now())}`, 'hi', 'lo');
  return BigInt(hi ?? '0') * 1_000_000_000n + BigInt(lo ?? '0');
}

/** Requests in the fleet's report today, read from Redis's rollup. */
async function sharedRequests(client: Redis): Promise<number> {
  const rollup = await client.hgetall(`${PREFIX}rollup:${dayOf(Date.now())}`);
  return Object.entries(rollup)
    .filter(([field]) => field.endsWith('\u0000requests'))
    .reduce((sum, [, value]) => sum + Number(value), 0);
}

describe('spend counted while the cluster Redis is down', () => {
  it('reaches Redis, with its generation records, once Redis is back although the daemon was killed meanwhile, and counts once across later restarts', async () => {
    const first = await startGateway();
    await waitUntil(() => redisUp(first), 10_000, 'the Redis connection');
    await spend(first, 1_000);
    const client = new Redis(redis.url);
    client.on('error', () => undefined);
    try {
      await waitUntil(async () => (await sharedTotal(client)) === parseUsd('0.01'), 5_000, 'the first addition in Redis');

      await redis.stop();
      await waitUntil(async () => !(await redisUp(first)), 10_000, 'the outage');
      await spend(first, 2_000);
      await waitUntil(() => durable('0.02'), 5_000, 'the request on disk');
      await first.stop('SIGKILL');

      // Started again while Redis is still down: another addition, and another kill.
      const second = await startGateway();
      await spend(second, 4_000);
      await waitUntil(() => durable('0.04'), 5_000, 'the request on disk');
      await second.stop('SIGKILL');

      const third = await startGateway();
      await redis.start();
      await waitUntil(async () => (await sharedTotal(client)) === parseUsd('0.07'), 15_000, 'the missed additions in Redis');
      await waitUntil(async () => (await sharedRequests(client)) === 3, 5_000, 'the missed generation records in Redis');
      // Killed before it may have noted that Redis took them: the next start sends them again.
      await third.stop('SIGKILL');

      const fourth = await startGateway();
      await waitUntil(() => redisUp(fourth), 10_000, 'the Redis connection');
      await spend(fourth, 8_000);
      await waitUntil(async () => (await sharedTotal(client)) >= parseUsd('0.15'), 5_000, 'the last addition in Redis');
      await waitUntil(async () => (await sharedRequests(client)) >= 4, 5_000, 'the last generation record in Redis');
      expect(await sharedTotal(client)).toBe(parseUsd('0.15'));
      expect(await sharedRequests(client)).toBe(4);
    } finally {
      client.disconnect();
    }
  });
});
