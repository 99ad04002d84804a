// Usage records and budgets survive the daemon: a kill -9 right after 500
// answered requests loses at most the last second of generation records, and
// a key that spent its budget is still refused after the restart.
import { readFile, writeFile } from 'node:fs/promises';
import OpenAI from 'openai';
import { afterEach, describe, expect, it } from 'vitest';
import { freePort, startDaemon, waitUntil, type RunningDaemon } from '../helpers/daemon.js';
import { completion, sendJson, startUpstream } from '../receivers/gateway/harness.js';

const cleanups: Array<() => Promise<unknown>> = [];
afterEach(async () => {
  for (const c of cleanups.splice(0).reverse()) await c();
});

const REQUESTS = 500;
const CONCURRENCY = 10;
const usage = { prompt_tokens: 1000, completion_tokens: 100, total_tokens: 1100, prompt_tokens_details: { cached_tokens: 400 } };

function config(port: number, upstreamUrl: string) {
  return ({ dir, adminPort }: { dir: string; adminPort: number }) => `
receivers:
  gateway:
    endpoint: 127.0.0.1:${port}
    environment: e2e
    api_keys:
      - { key: sk-team, name: team }
      - { key: sk-tiny, name: tiny, budget: { usd: 0.0001, period: total } }
    providers:
      fake: { type: openai, base_url: ${upstreamUrl}, api_key: sk-upstream }
    models:
      - id: fake/model
        pricing: { input: "0.000001", output: "0.000002", input_cache_read: "0.0000001" }
        endpoints: [{ provider: fake, model: upstream-model }]
exporters:
  debug: { verbosity: basic }
service:
  storage: { directory: ${dir}/data }
  admin: { endpoint: 127.0.0.1:${adminPort}, api_key: admin-e2e }
  telemetry: { logs: { level: warn } }
  pipelines:
    traces:
      receivers: [gateway]
      exporters: [debug]
`;
}

function ask(port: number, key: string) {
  return new OpenAI({ baseURL: `http://127.0.0.1:${port}/v1`, apiKey: key, maxRetries: 0 }).chat.completions.create({ model: 'fake/model', messages: [{ role: 'user', content: 'hi' }] }).withResponse();
}

describe('usage records end to end', () => {
  it('keeps every generation answered more than a second before a kill -9, and the spent budget', { timeout: 60_000 }, async () => {
    const upstream = await startUpstream((_body, res) => sendJson(res, 200, completion('ok', { usage })));
    cleanups.push(() => upstream.close());
    const port = await freePort();
    const first: RunningDaemon = await startDaemon(config(port, upstream.url));
    cleanups.push(() => first.cleanup());

    // 600 uncached x $0.000001 + 400 cached x $0.0000001 + 100 x $0.000002 = $0.00084, over the $0.0001 budget.
    const tiny = await ask(port, 'sk-tiny');
    expect((tiny.data.usage as { cost?: number } | undefined)?.cost).toBe(0.00084);
    expect(await ask(port, 'sk-tiny').catch((err: unknown) => (err as { code?: string }).code)).toBe('budget_exceeded');

    const answered: Array<{ id: string; at: number }> = [];
    let next = 0;
    await Promise.all(
      Array.from({ length: CONCURRENCY }, async () => {
        while (next < REQUESTS) {
          next += 1;
          const { response } = await ask(port, 'sk-team');
          answered.push({ id: response.headers.get('x-sluice-generation-id') ?? '', at: Date.now() });
        }
      }),
    );
    await first.stop('SIGKILL');
    const killedAt = Date.now();
    expect(first.child.signalCode).toBe('SIGKILL');

    const second = await startDaemon(config(port, upstream.url), { dir: first.dir });
    cleanups.push(() => second.cleanup());
    const mustSurvive = answered.filter((a) => a.at < killedAt - 1000);
    const found = await Promise.all(
      answered.map(async (a) => (await fetch(`http://127.0.0.1:${port}/v1/generation?id=${a.id}`, { headers: { authorization: 'Bearer sk-team' } })).status === 200),
    );
    const survived = new Set(answered.filter((_, i) => found[i]).map((a) => a.id));
    console.log(`usage e2e: ${survived.size} of ${REQUESTS} generation records after kill -9 (${mustSurvive.length} answered over a second before it)`);
    expect(mustSurvive.every((a) => survived.has(a.id))).toBe(true);

    const day = new Date().toISOString().slice(0, 10);
    const report = (await (await fetch(`http://127.0.0.1:${port}/v1/report?start_date=${day}&end_date=${day}&group_by=key`, { headers: { authorization: 'Bearer admin-e2e' } })).json()) as { results: Array<{ user: string; request_count: number; total_cost: number }> };
    const team = report.results.find((r) => r.user === 'team');
    expect(team?.request_count).toBe(survived.size);
    expect(team?.total_cost).toBeCloseTo(survived.size * 0.00084, 12);
    expect(await ask(port, 'sk-tiny').catch((err: unknown) => (err as { code?: string }).code)).toBe('budget_exceeded');
  });
});

/** Two gateways with one key under one name, `requests_per_minute: 2`. */
function limitsConfig(ports: readonly [number, number], upstreamUrl: string) {
  const gateway = (port: number) => `
    endpoint: 127.0.0.1:${port}
    api_keys: [{ key: sk-minute, name: minute, requests_per_minute: 2 }]
    providers:
      fake: { type: openai, base_url: ${upstreamUrl}, api_key: sk-upstream }
    models:
      - id: fake/model
        endpoints: [{ provider: fake, model: upstream-model }]`;
  return ({ dir, adminPort }: { dir: string; adminPort: number }) => `
receivers:
  gateway:${gateway(ports[0])}
  gateway/two:${gateway(ports[1])}
exporters:
  debug: { verbosity: basic }
service:
  storage: { directory: ${dir}/data }
  admin: { endpoint: 127.0.0.1:${adminPort} }
  pipelines:
    traces:
      receivers: [gateway, gateway/two]
      exporters: [debug]
`;
}

describe('per-minute limits of one instance', () => {
  async function start(): Promise<{ daemon: RunningDaemon; ports: [number, number] }> {
    const upstream = await startUpstream((_body, res) => sendJson(res, 200, completion('ok', { usage })));
    cleanups.push(() => upstream.close());
    const ports: [number, number] = [await freePort(), await freePort()];
    const daemon = await startDaemon(limitsConfig(ports, upstream.url));
    cleanups.push(() => daemon.cleanup());
    return { daemon, ports };
  }
  const status = (port: number) => ask(port, 'sk-minute').then(({ response }) => response.status, (err: unknown) => (err as { status?: number }).status);

  it('keeps counting a key\'s window across a SIGHUP reload', { timeout: 30_000 }, async () => {
    const { daemon, ports } = await start();
    expect([await status(ports[0]), await status(ports[0])]).toEqual([200, 200]);
    daemon.child.kill('SIGHUP');
    await waitUntil(() => daemon.logs.some((line) => line.includes('config reloaded')), 10_000, 'the reload');
    expect(await status(ports[0])).toBe(429);
  });

  it("keeps counting a key's window across a reload that changes service.usage.retention", { timeout: 30_000 }, async () => {
    const { daemon, ports } = await start();
    expect([await status(ports[0]), await status(ports[0])]).toEqual([200, 200]);
    await writeFile(daemon.configPath, (await readFile(daemon.configPath, 'utf8')).replace('service:\n', 'service:\n  usage: { retention: 7d }\n'));
    daemon.child.kill('SIGHUP');
    await waitUntil(() => daemon.logs.some((line) => line.includes('config reloaded')), 10_000, 'the reload');
    expect(await status(ports[0])).toBe(429);
  });

  it('counts a key on two gateways under one name once', { timeout: 30_000 }, async () => {
    const { ports } = await start();
    expect([await status(ports[0]), await status(ports[1]), await status(ports[1]), await status(ports[0])]).toEqual([200, 200, 429, 429]);
  });
});
