// Issue 11, gateway limits across a fleet: three gateway daemons share one
// redis-server. A key with requests_per_minute: 30, hammered concurrently
// through all three with the openai SDK, gets 30 successes in all (each
// instance alone would allow 30); a key's budget spent through one instance
// is refused by the others, and its generation record answers on all three.
import OpenAI from 'openai';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { RunningDaemon } from '../helpers/daemon.js';
import { startGatewayDaemon } from '../helpers/gateway-daemon.js';
import { startRedis, type TestRedis } from '../helpers/redis.js';
import { completion, sendJson, startUpstream, type Upstream } from '../receivers/gateway/harness.js';

const LIMIT = 30;
const PER_INSTANCE = 30;

let redis: TestRedis;
let upstream: Upstream;
const gateways: Array<{ daemon: RunningDaemon; url: string }> = [];

beforeAll(async () => {
  redis = await startRedis();
  upstream = await startUpstream((_body, res) => sendJson(res, 200, completion('hello')));
  for (const name of ['a', 'b', 'c']) {
    const daemon = await startGatewayDaemon(
      `
    api_keys:
      - { key: k-limited, name: limited, requests_per_minute: ${LIMIT} }
      - { key: k-budget, name: budgeted, budget: { usd: 0.0001, period: day } }
      - { key: k-free, name: free }
    providers:
      fake: { type: openai, base_url: ${upstream.url}, api_key: sk-upstream }
    models:
      - id: fake/model
        name: Fake model
        pricing: { input: "0.00001", output: "0.00002" }
        endpoints: [{ provider: fake, model: upstream-model }]
`,
      {
        service: `
  cluster:
    redis: { url: "${redis.url}", key_prefix: "gateway-test:" }
    instance_id: ${name}
`,
      },
    );
    gateways.push({ daemon, url: `http://127.0.0.1:${daemon.port}/v1` });
  }
}, 60_000);

afterAll(async () => {
  await Promise.all(gateways.map((g) => g.daemon.cleanup()));
  await upstream?.close();
  await redis?.stop();
});

function client(url: string, apiKey: string): OpenAI {
  return new OpenAI({ baseURL: url, apiKey, maxRetries: 0 });
}

async function outcome(openai: OpenAI): Promise<number> {
  try {
    await openai.chat.completions.create({ model: 'fake/model', messages: [{ role: 'user', content: 'hi' }] });
    return 200;
  } catch (err) {
    if (err instanceof OpenAI.APIError) return err.status ?? 0;
    throw err;
  }
}

describe('gateway limits in cluster mode', () => {
  it('gives a key with requests_per_minute: 30 exactly 30 successes across three instances hammered at once', async () => {
    const statuses = await Promise.all(gateways.flatMap((g) => Array.from({ length: PER_INSTANCE }, () => outcome(client(g.url, 'k-limited')))));
    expect(statuses.filter((s) => s === 200)).toHaveLength(LIMIT);
    expect(statuses.filter((s) => s === 429)).toHaveLength(gateways.length * PER_INSTANCE - LIMIT);
  });

  it('refuses on every instance a key whose budget was spent through one of them, and answers its generation and report the same everywhere', async () => {
    const [a, b, c] = gateways as [(typeof gateways)[number], (typeof gateways)[number], (typeof gateways)[number]];
    // 11 input and 7 output tokens at these prices cost $0.00025: this request crosses the $0.0001 budget.
    const answered = await client(a.url, 'k-budget').chat.completions.create({ model: 'fake/model', messages: [{ role: 'user', content: 'hi' }] }).withResponse();
    const generationId = answered.response.headers.get('x-sluice-generation-id');
    expect(generationId).toMatch(/^gen_/);
    // The spend reaches Redis as the answer completes; give it a moment, then neither other instance may serve the key.
    await new Promise((r) => setTimeout(r, 500));
    for (const other of [b, c]) {
      expect(await outcome(client(other.url, 'k-budget'))).toBe(429);
      const generation = await fetch(`${other.url}/generation?id=${generationId ?? ''}`, { headers: { authorization: 'Bearer k-budget' } });
      expect(generation.status).toBe(200);
      expect(JSON.stringify(await generation.json())).toContain(generationId ?? 'missing');
    }
    const today = new Date().toISOString().slice(0, 10);
    const reports = await Promise.all(
      gateways.map(async (g) => (await fetch(`${g.url}/report?start_date=${today}&end_date=${today}&group_by=key`, { headers: { authorization: 'Bearer k-budget' } })).text()),
    );
    expect(reports[0]).toContain('budgeted');
    expect(reports[1]).toBe(reports[0]);
    expect(reports[2]).toBe(reports[0]);
  });

  it('answers a generation on another instance asked the moment its response ended', async () => {
    const [a, b] = gateways as [(typeof gateways)[number], (typeof gateways)[number]];
    for (let i = 0; i < 20; i++) {
      const answered = await client(a.url, 'k-free').chat.completions.create({ model: 'fake/model', messages: [{ role: 'user', content: 'hi' }] }).withResponse();
      const generationId = answered.response.headers.get('x-sluice-generation-id') ?? '';
      const generation = await fetch(`${b.url}/generation?id=${generationId}`, { headers: { authorization: 'Bearer k-free' } });
      expect(generation.status).toBe(200);
    }
  });
});
