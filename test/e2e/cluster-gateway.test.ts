// Issue 11, gateway limits across a fleet: three gateway daemons share one
// redis-server. A key with requests_per_minute: 30, hammered concurrently
// through all three with the openai SDK, gets 30 successes in all (each
// instance alone would allow 30).
import OpenAI from 'openai';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { freePort, startDaemon, type RunningDaemon } from '../helpers/daemon.js';
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
    const port = await freePort();
    const daemon = await startDaemon(
      ({ dir, adminPort }) => `
receivers:
  gateway:
    endpoint: 127.0.0.1:${port}
    api_keys:
      - { key: k-limited, name: limited, requests_per_minute: ${LIMIT} }
    providers:
      fake: { type: openai, base_url: ${upstream.url}, api_key: sk-upstream }
    models:
      - id: fake/model
        name: Fake model
        pricing: { input: "0.00001", output: "0.00002" }
        endpoints: [{ provider: fake, model: upstream-model }]
exporters:
  file: { path: ${dir}/traces.jsonl }
service:
  storage: { directory: ${dir}/data }
  admin: { endpoint: 127.0.0.1:${adminPort} }
  cluster:
    redis: { url: "${redis.url}", key_prefix: "gateway-test:" }
    instance_id: ${name}
  pipelines:
    traces: { receivers: [gateway], exporters: [file] }
`,
    );
    gateways.push({ daemon, url: `http://127.0.0.1:${port}/v1` });
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
});
