// Usage, cost and budgets through real clients: the openai SDK against a fake
// upstream reporting known token counts (cache reads and writes included),
// and @ai-sdk/gateway's getGenerationInfo() / getSpendReport().
import { createGateway, GatewayInvalidRequestError, GatewayRateLimitError } from '@ai-sdk/gateway';
import Anthropic from '@anthropic-ai/sdk';
import { generateText } from 'ai';
import OpenAI from 'openai';
import { afterEach, describe, expect, it } from 'vitest';
import { messageStart, textBlock } from '../providers/anthropic/fixtures.js';
import { OTHER_MODEL, UNLISTED_MODEL_LENGTH, UNLISTED_MODELS } from '../../../../src/usage/metrics.js';
import { ADMIN_KEY, attr, chunk, completion, openaiProvider, sendJson, sendStream, startGateway, startUpstream, type Gateway, type Upstream } from '../harness.js';

const KEY_A = 'sk-team-a';
const KEY_B = 'sk-team-b';

// USD per token; the endpoint overrides the model's output price.
const models = [
  {
    id: 'openai/gpt-cache',
    pricing: { input: '0.0000025', output: '0.00001', input_cache_read: '0.000000123' },
    endpoints: [{ provider: 'openai', model: 'gpt-upstream', pricing: { output: '0.000012' } }],
  },
];

const usage = { prompt_tokens: 1234, completion_tokens: 567, total_tokens: 1801, prompt_tokens_details: { cached_tokens: 800, cache_creation_tokens: 100 } };
// 334 uncached x 2500 + 800 cached x 123 + 100 written x 2500 (input price) + 567 x 12000 nano-dollars
const COST_NANO = 334 * 2500 + 800 * 123 + 100 * 2500 + 567 * 12000;
const COST = COST_NANO / 1e9;

let gateway: Gateway | undefined;
let upstream: Upstream | undefined;

afterEach(async () => {
  await gateway?.close();
  await upstream?.close();
  gateway = undefined;
  upstream = undefined;
});

async function setup(apiKeys: unknown[] = [{ key: KEY_A, name: 'team-a' }, { key: KEY_B, name: 'team-b' }]): Promise<Gateway> {
  upstream = await startUpstream(function answer(body, res) {
    if (body['stream'] === true) sendStream(res, [chunk({ role: 'assistant', content: 'hi' }), chunk({}, 'stop'), { ...chunk({}), choices: [], usage }]);
    else sendJson(res, 200, completion('hi', { usage }));
  });
  gateway = await startGateway({ api_keys: apiKeys, providers: { openai: openaiProvider(upstream) }, models });
  return gateway;
}

function client(key: string): OpenAI {
  return new OpenAI({ baseURL: (gateway as Gateway).baseURL, apiKey: key, maxRetries: 0 });
}

async function ask(key: string, stream = false): Promise<{ id: string; cost: unknown }> {
  if (stream) {
    const { data, response } = await client(key).chat.completions.create({ model: 'openai/gpt-cache', messages: [{ role: 'user', content: 'hi' }], stream: true, stream_options: { include_usage: true } }).withResponse();
    let cost: unknown;
    for await (const part of data) if (part.usage) cost = (part.usage as { cost?: unknown }).cost;
    return { id: response.headers.get('x-sluice-generation-id') ?? '', cost };
  }
  const { data, response } = await client(key).chat.completions.create({ model: 'openai/gpt-cache', messages: [{ role: 'user', content: 'hi' }] }).withResponse();
  return { id: response.headers.get('x-sluice-generation-id') ?? '', cost: (data.usage as { cost?: unknown } | undefined)?.cost };
}

async function getJson(path: string, key: string): Promise<{ status: number; body: Record<string, unknown> }> {
  const response = await fetch(`http://127.0.0.1:${(gateway as Gateway).port}${path}`, { headers: { authorization: `Bearer ${key}` } });
  return { status: response.status, body: (await response.json()) as Record<string, unknown> };
}

function today(): string {
  return new Date().toISOString().slice(0, 10);
}

describe('gateway usage and cost', () => {
  it('prices a non-streaming answer to the nano-dollar in the answer, the span, /metrics and /v1/generation', async () => {
    const gw = await setup();
    const { id, cost } = await ask(KEY_A);
    expect(id).toMatch(/^gen_[0-9A-HJKMNP-TV-Z]{26}$/);
    expect(cost).toBe(COST);

    const spans = await gw.spans(2);
    const clientSpan = spans.find((s) => s.name === 'chat gpt-upstream');
    expect(attr(clientSpan, 'sluice.usage.cost')).toBe(COST);
    expect(attr(clientSpan, 'gen_ai.usage.input_tokens')).toBe(1234);
    expect(attr(clientSpan, 'gen_ai.usage.cache_read.input_tokens')).toBe(800);
    expect(attr(clientSpan, 'gen_ai.usage.cache_creation.input_tokens')).toBe(100);

    const metrics = await gw.telemetry.registry.metrics();
    expect(metrics).toContain(`sluice_gateway_cost_usd_total{model="openai/gpt-cache",provider="openai",key="team-a"} ${COST}`);
    expect(metrics).toContain('sluice_gateway_tokens_total{model="openai/gpt-cache",provider="openai",key="team-a",type="cache_read"} 800');
    expect(metrics).toContain('sluice_gateway_tokens_total{model="openai/gpt-cache",provider="openai",key="team-a",type="output"} 567');
    expect(metrics).not.toContain(KEY_A);

    const info = await createGateway({ baseURL: `${gw.baseURL}/ai`, apiKey: KEY_A }).getGenerationInfo({ id });
    expect(info).toMatchObject({ id, totalCost: COST, usage: COST, model: 'openai/gpt-cache', providerName: 'openai', streamed: false, finishReason: 'stop', promptTokens: 1234, completionTokens: 567, cachedTokens: 800, cacheCreationTokens: 100, isByok: false });
    expect(info.generationTime).toBeGreaterThanOrEqual(info.latency);
  });

  it('counts the tokens of model ids outside the catalog under their own names up to a bound, then as model="other"; catalog models always by name', async () => {
    const gw = await setup();
    const invented = Array.from({ length: UNLISTED_MODELS + 5 }, (_, i) => `openai/made-up-${i}`);
    for (const model of invented) await client(KEY_A).chat.completions.create({ model, messages: [{ role: 'user', content: 'hi' }] });
    await ask(KEY_A);
    const metrics = await gw.telemetry.registry.metrics();
    const outputSeries = metrics.split('\n').filter((line) => line.startsWith('sluice_gateway_tokens_total{') && line.includes('type="output"'));
    // Each invented id within the bound, the catalog model, and one series for the rest.
    expect(outputSeries).toHaveLength(UNLISTED_MODELS + 2);
    expect(metrics).toContain(`sluice_gateway_tokens_total{model="openai/made-up-${UNLISTED_MODELS - 1}",provider="openai",key="team-a",type="output"} 567`);
    expect(metrics).not.toContain(`model="openai/made-up-${UNLISTED_MODELS}"`);
    expect(metrics).toContain(`sluice_gateway_tokens_total{model="${OTHER_MODEL}",provider="openai",key="team-a",type="output"} ${5 * 567}`);
    expect(metrics).toContain('sluice_gateway_tokens_total{model="openai/gpt-cache",provider="openai",key="team-a",type="output"} 567');
  });

  it('counts a model id outside the catalog longer than the bound as model="other"', async () => {
    const gw = await setup();
    const long = `openai/${'x'.repeat(UNLISTED_MODEL_LENGTH)}`;
    await client(KEY_A).chat.completions.create({ model: long, messages: [{ role: 'user', content: 'hi' }] });
    const metrics = await gw.telemetry.registry.metrics();
    expect(metrics).not.toContain('x'.repeat(UNLISTED_MODEL_LENGTH));
    expect(metrics).toContain(`sluice_gateway_tokens_total{model="${OTHER_MODEL}",provider="openai",key="team-a",type="output"} 567`);
  });

  it('prices OpenRouter\'s cache_write_tokens as cache writes, in the answer, the span and /metrics', async () => {
    const openRouterUsage = { prompt_tokens: 1234, completion_tokens: 567, total_tokens: 1801, prompt_tokens_details: { cached_tokens: 800, cache_write_tokens: 100 } };
    upstream = await startUpstream(function answer(_body, res) {
      sendJson(res, 200, completion('hi', { usage: openRouterUsage }));
    });
    const writePriced = [{ id: 'openai/gpt-cache', pricing: { ...models[0]?.pricing, input_cache_write: '0.000003125' }, endpoints: [{ provider: 'openai', model: 'gpt-upstream' }] }];
    gateway = await startGateway({ api_keys: [{ key: KEY_A, name: 'team-a' }], providers: { openai: openaiProvider(upstream) }, models: writePriced });
    const answer = await client(KEY_A).chat.completions.create({ model: 'openai/gpt-cache', messages: [{ role: 'user', content: 'hi' }] });
    // 334 uncached x 2500 + 800 read x 123 + 100 written x 3125 + 567 x 10000 nano-dollars
    const cost = (334 * 2500 + 800 * 123 + 100 * 3125 + 567 * 10000) / 1e9;
    expect((answer.usage as { cost?: unknown } | undefined)?.cost).toBe(cost);
    const clientSpan = (await gateway.spans(2)).find((s) => s.name === 'chat gpt-upstream');
    expect(attr(clientSpan, 'gen_ai.usage.cache_creation.input_tokens')).toBe(100);
    expect(attr(clientSpan, 'sluice.usage.cost')).toBe(cost);
    expect(await gateway.telemetry.registry.metrics()).toContain('sluice_gateway_tokens_total{model="openai/gpt-cache",provider="openai",key="team-a",type="cache_write"} 100');
  });

  it('records DeepSeek\'s prompt_cache_hit_tokens on the span as cache reads, as it prices them', async () => {
    upstream = await startUpstream(function answer(_body, res) {
      sendJson(res, 200, completion('hi', { usage: { prompt_tokens: 1234, completion_tokens: 567, total_tokens: 1801, prompt_cache_hit_tokens: 800, prompt_cache_miss_tokens: 434 } }));
    });
    gateway = await startGateway({ api_keys: [{ key: KEY_A, name: 'team-a' }], providers: { openai: openaiProvider(upstream) }, models });
    await client(KEY_A).chat.completions.create({ model: 'openai/gpt-cache', messages: [{ role: 'user', content: 'hi' }] });
    const clientSpan = (await gateway.spans(2)).find((s) => s.name === 'chat gpt-upstream');
    expect(attr(clientSpan, 'gen_ai.usage.cache_read.input_tokens')).toBe(800);
  });

  it('puts the cost in the streamed usage chunk and records the generation as streamed', async () => {
    const gw = await setup();
    const { id, cost } = await ask(KEY_A, true);
    expect(cost).toBe(COST);
    const { status, body } = await getJson(`/v1/generation?id=${id}`, KEY_A);
    expect(status).toBe(200);
    expect(body['data']).toMatchObject({ id, total_cost: COST, streamed: true, status: 200, native_tokens_cached: 800 });
    expect(attr((await gw.spans(2)).find((s) => s.name === 'chat gpt-upstream'), 'sluice.usage.cost')).toBe(COST);
  });

  it('reports spend grouped by model, key and day; a key sees only its own, the admin key all', async () => {
    const gw = await setup();
    const [a1] = [await ask(KEY_A), await ask(KEY_A, true)];
    const b1 = await ask(KEY_B);
    const sdk = createGateway({ baseURL: `${gw.baseURL}/ai`, apiKey: KEY_A });

    const own = await sdk.getSpendReport({ startDate: today(), endDate: today(), groupBy: 'model' });
    expect(own.results).toEqual([{ model: 'openai/gpt-cache', totalCost: (2 * COST_NANO) / 1e9, marketCost: (2 * COST_NANO) / 1e9, inputTokens: 2468, outputTokens: 1134, cachedInputTokens: 1600, cacheCreationInputTokens: 200, reasoningTokens: 0, requestCount: 2 }]);

    const admin = await createGateway({ baseURL: `${gw.baseURL}/ai`, apiKey: ADMIN_KEY }).getSpendReport({ startDate: today(), endDate: today(), groupBy: 'user' });
    expect(admin.results.map((r) => [r.user, r.totalCost, r.requestCount])).toEqual([
      ['team-a', (2 * COST_NANO) / 1e9, 2],
      ['team-b', COST, 1],
    ]);
    // A key asking for another key's spend gets nothing, not its own under the other's name.
    const other = await getJson(`/v1/report?start_date=${today()}&end_date=${today()}&group_by=user&user_id=team-b`, KEY_A);
    expect(other).toEqual({ status: 200, body: { results: [] } });
    const mine = await getJson(`/v1/report?start_date=${today()}&end_date=${today()}&group_by=user&user_id=team-a`, KEY_A);
    expect((mine.body['results'] as unknown[]).length).toBe(1);
    const byDay = await getJson(`/v1/report?start_date=${today()}&end_date=${today()}&group_by=day`, ADMIN_KEY);
    expect(byDay.body).toMatchObject({ results: [{ day: today(), total_cost: (3 * COST_NANO) / 1e9, request_count: 3 }] });

    // Another key's generation is not found; the admin key finds it.
    expect((await getJson(`/v1/generation?id=${b1.id}`, KEY_A)).status).toBe(404);
    expect((await getJson(`/v1/generation?id=${b1.id}`, ADMIN_KEY)).body['data']).toMatchObject({ id: b1.id, key: 'team-b' });
    expect((await getJson(`/v1/generation?id=${a1.id}`, 'sk-wrong')).status).toBe(401);
    expect((await getJson(`/v1/report?start_date=2026-13-01&end_date=${today()}`, KEY_A)).body).toMatchObject({ error: { param: 'start_date' } });
  });

  it('answers 400 naming a query parameter given twice, rather than reading the first and dropping the other', async () => {
    await setup();
    const { id } = await ask(KEY_A);
    const day = today();
    const report = (query: string) => getJson(`/v1/report?start_date=${day}&end_date=${day}&${query}`, KEY_A);
    expect(await report('model=openai/gpt-cache&model=openai/other')).toEqual({
      status: 400,
      body: { error: { message: 'model must be given once, not 2 times', type: 'invalid_request_error', param: 'model', code: 'invalid_value' } },
    });
    expect((await report(`start_date=${day}`)).body).toMatchObject({ error: { param: 'start_date' } });
    expect((await report('group_by=day&group_by=model')).body).toMatchObject({ error: { param: 'group_by' } });
    expect((await getJson(`/v1/generation?id=${id}&id=gen_other`, KEY_A)).body).toMatchObject({ error: { message: 'id must be given once, not 2 times', param: 'id' } });
    expect((await getJson(`/v1/generation?id=${id}`, KEY_A)).status).toBe(200);
    expect((await report('group_by=model')).status).toBe(200);
  });

  it('refuses a $0.0001 budget after its first request, which completes', async () => {
    await setup([{ key: KEY_A, name: 'tiny', budget: { usd: 0.0001, period: 'day' } }]);
    expect((await ask(KEY_A)).cost).toBe(COST);
    const refused = await client(KEY_A).chat.completions.create({ model: 'openai/gpt-cache', messages: [{ role: 'user', content: 'again' }] }).catch((err: unknown) => err);
    expect(refused).toBeInstanceOf(OpenAI.RateLimitError);
    expect((refused as InstanceType<typeof OpenAI.RateLimitError>).code).toBe('budget_exceeded');
    expect(upstream?.requests).toHaveLength(1);
    // Nothing helps before the day ends: clients are told not to retry, and when it does.
    const raw = await fetch(`${(gateway as Gateway).baseURL}/chat/completions`, { method: 'POST', headers: { authorization: `Bearer ${KEY_A}`, 'content-type': 'application/json' }, body: JSON.stringify({ model: 'openai/gpt-cache', messages: [{ role: 'user', content: 'again' }] }) });
    expect(raw.status).toBe(429);
    expect(raw.headers.get('x-should-retry')).toBe('false');
    const nextDay = Date.parse(`${today()}T00:00:00Z`) + 86_400_000;
    expect(Number(raw.headers.get('retry-after'))).toBeLessThanOrEqual(Math.ceil((nextDay - Date.now()) / 1000) + 1);
    expect(Number(raw.headers.get('retry-after'))).toBeGreaterThan(0);
  });

  it('refuses a key whose spend has reached a budget of $50.10 exactly', async () => {
    // 50.1 has no exact double: the budget must be the decimal the config says, not 50.100000000000001.
    upstream = await startUpstream(function answer(_body, res) {
      sendJson(res, 200, completion('hi', { usage: { prompt_tokens: 2, completion_tokens: 0, total_tokens: 2 } }));
    });
    const costly = [{ id: 'openai/costly', pricing: { input: '25.05', output: '0' }, endpoints: [{ provider: 'openai', model: 'gpt-upstream' }] }];
    gateway = await startGateway({ api_keys: [{ key: KEY_A, name: 'exact', budget: { usd: 50.1, period: 'total' } }], providers: { openai: openaiProvider(upstream) }, models: costly });
    const first = await client(KEY_A).chat.completions.create({ model: 'openai/costly', messages: [{ role: 'user', content: 'hi' }] });
    expect((first.usage as { cost?: unknown } | undefined)?.cost).toBe(50.1);
    const refused = await client(KEY_A).chat.completions.create({ model: 'openai/costly', messages: [{ role: 'user', content: 'again' }] }).catch((err: unknown) => err);
    expect(refused).toBeInstanceOf(OpenAI.RateLimitError);
    expect((refused as InstanceType<typeof OpenAI.RateLimitError>).code).toBe('budget_exceeded');
    expect(upstream.requests).toHaveLength(1);
  });

  it('never lets concurrent requests on one key pass requests_per_minute', async () => {
    await setup([{ key: KEY_A, name: 'limited', requests_per_minute: 5 }]);
    const results = await Promise.allSettled(Array.from({ length: 20 }, () => ask(KEY_A)));
    expect(results.filter((r) => r.status === 'fulfilled')).toHaveLength(5);
    const refusals = results.filter((r): r is PromiseRejectedResult => r.status === 'rejected');
    expect(refusals.every((r) => r.reason instanceof OpenAI.RateLimitError && Number(r.reason.headers?.get('retry-after')) >= 1)).toBe(true);
    expect(upstream?.requests).toHaveLength(5);
  });

  it('refuses a key over tokens_per_minute, counted from the usage upstreams report', async () => {
    await setup([{ key: KEY_A, name: 'tokens', tokens_per_minute: 1000 }]);
    await ask(KEY_A);
    const refused = await ask(KEY_A).catch((err: unknown) => err);
    expect(refused).toBeInstanceOf(OpenAI.RateLimitError);
    expect((refused as InstanceType<typeof OpenAI.RateLimitError>).code).toBe('rate_limit_exceeded');
  });
});

describe("a key's per-minute limits in answers' headers", () => {
  const RESET = /^(\d+ms|\d+(\.\d+)?s|\d+m\d+(\.\d+)?s)$/;

  it('tells what requests_per_minute and tokens_per_minute leave, as OpenAI names them, on whole and streamed answers and on the 429', async () => {
    await setup([{ key: KEY_A, name: 'limited', requests_per_minute: 3, tokens_per_minute: 100000 }, { key: KEY_B, name: 'free' }]);
    const first = await client(KEY_A).chat.completions.create({ model: 'openai/gpt-cache', messages: [{ role: 'user', content: 'hi' }] }).withResponse();
    const head = first.response.headers;
    expect([head.get('x-ratelimit-limit-requests'), head.get('x-ratelimit-remaining-requests')]).toEqual(['3', '2']);
    expect([head.get('x-ratelimit-limit-tokens'), head.get('x-ratelimit-remaining-tokens')]).toEqual(['100000', '100000']);
    expect(head.get('x-ratelimit-reset-requests')).toMatch(RESET);
    expect(head.get('x-ratelimit-reset-tokens')).toMatch(RESET);

    // Tokens are counted once reported: the next request sees the first one's 1,801.
    const streamed = await client(KEY_A).chat.completions.create({ model: 'openai/gpt-cache', messages: [{ role: 'user', content: 'hi' }], stream: true }).withResponse();
    for await (const _ of streamed.data);
    expect(streamed.response.headers.get('x-ratelimit-remaining-requests')).toBe('1');
    expect(streamed.response.headers.get('x-ratelimit-remaining-tokens')).toBe(String(100000 - 1801));

    await ask(KEY_A);
    const refused = await ask(KEY_A).catch((err: unknown) => err);
    expect(refused).toBeInstanceOf(OpenAI.RateLimitError);
    const refusedHead = (refused as InstanceType<typeof OpenAI.RateLimitError>).headers;
    expect([refusedHead?.get('x-ratelimit-limit-requests'), refusedHead?.get('x-ratelimit-remaining-requests')]).toEqual(['3', '0']);
    expect(refusedHead?.get('x-ratelimit-reset-requests')).toMatch(RESET);

    // A key without limits is told none.
    const free = await client(KEY_B).chat.completions.create({ model: 'openai/gpt-cache', messages: [{ role: 'user', content: 'hi' }] }).withResponse();
    expect([...free.response.headers.keys()].filter((name) => name.startsWith('x-ratelimit-'))).toEqual([]);
  });
});

describe('generation ids of refused requests', () => {
  async function post(path: string, key: string, body: Record<string, unknown>): Promise<Response> {
    return fetch(`${(gateway as Gateway).baseURL}${path}`, { method: 'POST', headers: { authorization: `Bearer ${key}`, 'content-type': 'application/json' }, body: JSON.stringify(body) });
  }
  const chat = { model: 'openai/gpt-cache', messages: [{ role: 'user', content: 'hi' }] };

  it('names one on a 401, a requests_per_minute 429 and a budget 429 of a model route, and records none of them', async () => {
    await setup([{ key: KEY_A, name: 'one-a-minute', requests_per_minute: 1 }, { key: KEY_B, name: 'tiny', budget: { usd: 0.0001, period: 'day' } }]);
    expect((await post('/chat/completions', KEY_A, chat)).status).toBe(200);
    expect((await post('/chat/completions', KEY_B, chat)).status).toBe(200);
    const refusals = [
      await post('/chat/completions', 'sk-wrong', chat),
      await post('/messages', 'sk-wrong', { model: 'openai/gpt-cache', max_tokens: 10, messages: [{ role: 'user', content: 'hi' }] }),
      await post('/chat/completions', KEY_A, chat),
      await post('/chat/completions', KEY_B, chat),
    ];
    expect(refusals.map((r) => r.status)).toEqual([401, 401, 429, 429]);
    const ids = refusals.map((r) => r.headers.get('x-sluice-generation-id') ?? '');
    for (const id of ids) expect(id).toMatch(/^gen_[0-9A-HJKMNP-TV-Z]{26}$/);
    expect(new Set(ids).size).toBe(ids.length);
    // As README says, only a request that reached an upstream is a generation.
    for (const id of ids) expect((await getJson(`/v1/generation?id=${id}`, ADMIN_KEY)).status).toBe(404);
    const byDay = await getJson(`/v1/report?start_date=${today()}&end_date=${today()}&group_by=day`, ADMIN_KEY);
    expect(byDay.body).toMatchObject({ results: [{ day: today(), request_count: 2 }] });
    expect(upstream?.requests).toHaveLength(2);
  });

  it('records no generation for a request the provider type refused before reaching the upstream', async () => {
    await setup();
    // An OpenAI-compatible upstream takes reasoning_effort, not a token budget: the adapter refuses it.
    const refused = await post('/chat/completions', KEY_A, { ...chat, reasoning: { max_tokens: 2048 } });
    expect(refused.status).toBe(400);
    const id = refused.headers.get('x-sluice-generation-id') ?? '';
    expect(id).toMatch(/^gen_/);
    expect((await getJson(`/v1/generation?id=${id}`, ADMIN_KEY)).status).toBe(404);
    expect(upstream?.requests).toHaveLength(0);
    expect((await post('/chat/completions', KEY_A, chat)).status).toBe(200);
    const byDay = await getJson(`/v1/report?start_date=${today()}&end_date=${today()}&group_by=day`, ADMIN_KEY);
    expect(byDay.body).toMatchObject({ results: [{ day: today(), request_count: 1 }] });
  });

  it('records no generation for a Messages request whose anthropic provider has no key, so never reached its upstream', async () => {
    upstream = await startUpstream(function answer(_body, res) {
      sendJson(res, 500, { error: { message: 'never asked' } });
    });
    const messagesModels = [{ id: 'anthropic/claude', endpoints: [{ provider: 'anthropic', model: 'claude-up' }] }];
    gateway = await startGateway({ api_keys: [{ key: KEY_A, name: 'team-a' }], providers: { anthropic: { type: 'anthropic', base_url: upstream.url.replace(/\/v1$/, ''), api_key: '' } }, models: messagesModels });
    const refused = await post('/messages', KEY_A, { model: 'anthropic/claude', max_tokens: 10, messages: [{ role: 'user', content: 'hi' }] });
    expect(refused.status).toBe(503);
    const id = refused.headers.get('x-sluice-generation-id') ?? '';
    expect(id).toMatch(/^gen_/);
    expect((await getJson(`/v1/generation?id=${id}`, ADMIN_KEY)).status).toBe(404);
    const byDay = await getJson(`/v1/report?start_date=${today()}&end_date=${today()}&group_by=day`, ADMIN_KEY);
    expect(byDay.body).toEqual({ results: [] });
    expect(upstream.requests).toHaveLength(0);
  });

  it('names none on a path that is no route', async () => {
    await setup();
    const response = await post('/chat/complete', KEY_A, chat);
    expect(response.status).toBe(404);
    expect(response.headers.get('x-sluice-generation-id')).toBeNull();
  });
});

describe('usage of streams and direct routes', () => {
  it('prices a model reached as <provider>/<model> as the catalog endpoint sending that model there', async () => {
    await setup();
    const { data } = await client(KEY_A).chat.completions.create({ model: 'openai/gpt-upstream', messages: [{ role: 'user', content: 'hi' }] }).withResponse();
    expect((data.usage as { cost?: unknown } | undefined)?.cost).toBe(COST);
  });

  it('prices a dated snapshot of that model reached as <provider>/<model> as the catalog prices the model, rather than at nothing', async () => {
    await setup();
    const { data } = await client(KEY_A).chat.completions.create({ model: 'openai/gpt-upstream-2025-01-31', messages: [{ role: 'user', content: 'hi' }] }).withResponse();
    expect((data.usage as { cost?: unknown } | undefined)?.cost).toBe(COST);
  });

  it('puts the cost in the top-level usage of an answer whose extension object after it has a usage of its own', async () => {
    upstream = await startUpstream(function answer(_body, res) {
      sendJson(res, 200, completion('hi', { usage, x_groq: { id: 'r', usage: { queue_time: 0.01 } } }));
    });
    gateway = await startGateway({ api_keys: [{ key: KEY_A, name: 'team-a' }], providers: { openai: openaiProvider(upstream) }, models });
    const response = await fetch(`${gateway.baseURL}/chat/completions`, {
      method: 'POST',
      headers: { authorization: `Bearer ${KEY_A}`, 'content-type': 'application/json' },
      body: JSON.stringify({ model: 'openai/gpt-cache', messages: [{ role: 'user', content: 'hi' }] }),
    });
    const body = (await response.json()) as { usage: { cost?: unknown }; x_groq: unknown };
    expect(body.usage.cost).toBe(COST);
    expect(body.x_groq).toEqual({ id: 'r', usage: { queue_time: 0.01 } });
  });

  it('records a generation a fallback model answered under that model and its provider', async () => {
    upstream = await startUpstream(function answer(body, res) {
      if (body['model'] === 'up-broken') sendJson(res, 500, { error: { message: 'down', type: 'server_error' } });
      else sendJson(res, 200, completion('hi', { usage }));
    });
    const fallbackModels = [
      { id: 'openai/broken', pricing: { input: '0.000001', output: '0.000001' }, endpoints: [{ provider: 'openai', model: 'up-broken' }] },
      ...models,
    ];
    gateway = await startGateway({ api_keys: [{ key: KEY_A, name: 'team-a' }], providers: { openai: openaiProvider(upstream) }, models: fallbackModels });
    const body = { model: 'openai/broken', messages: [{ role: 'user', content: 'hi' }], models: ['openai/gpt-cache'] };
    const response = await fetch(`${gateway.baseURL}/chat/completions`, { method: 'POST', headers: { authorization: `Bearer ${KEY_A}`, 'content-type': 'application/json' }, body: JSON.stringify(body) });
    expect(response.status).toBe(200);
    const id = response.headers.get('x-sluice-generation-id') ?? '';
    await waitForGeneration(id);
    expect((await getJson(`/v1/generation?id=${id}`, KEY_A)).body['data']).toMatchObject({ model: 'openai/gpt-cache', provider_name: 'openai', total_cost: COST });
  });

  it('names the generation in the error of a request whose every attempt failed', async () => {
    upstream = await startUpstream(function answer(_body, res) {
      sendJson(res, 500, { error: { message: 'down', type: 'server_error' } });
    });
    gateway = await startGateway({ api_keys: [{ key: KEY_A, name: 'team-a' }], providers: { openai: openaiProvider(upstream) }, models });
    const failure = await client(KEY_A).chat.completions.create({ model: 'openai/gpt-cache', messages: [{ role: 'user', content: 'hi' }] }).catch((err: unknown) => err);
    expect(failure).toBeInstanceOf(OpenAI.APIError);
    const headers = (failure as InstanceType<typeof OpenAI.APIError>).headers as Record<string, string> | Headers | undefined;
    const id = (headers instanceof Headers ? headers.get('x-sluice-generation-id') : headers?.['x-sluice-generation-id']) ?? '';
    expect(id).toMatch(/^gen_/);
    await waitForGeneration(id);
    expect((await getJson(`/v1/generation?id=${id}`, KEY_A)).body['data']).toMatchObject({ model: 'openai/gpt-cache', provider_name: 'openai', total_cost: 0 });
  });

  it('charges the last of usage reports repeated on every chunk, once, and shows it in the last one', async () => {
    const cumulative = (completion: number) => ({ prompt_tokens: 1234, completion_tokens: completion, total_tokens: 1234 + completion, prompt_tokens_details: { cached_tokens: 800, cache_creation_tokens: 100 } });
    upstream = await startUpstream(function answer(_body, res) {
      sendStream(res, [
        { ...chunk({ role: 'assistant', content: 'a' }), usage: cumulative(1) },
        { ...chunk({ content: 'b' }), usage: cumulative(300) },
        { ...chunk({}, 'stop'), usage: cumulative(567) },
      ]);
    });
    gateway = await startGateway({ api_keys: [{ key: KEY_A, name: 'team-a' }], providers: { openai: openaiProvider(upstream) }, models });
    const { data, response } = await client(KEY_A).chat.completions.create({ model: 'openai/gpt-cache', messages: [{ role: 'user', content: 'hi' }], stream: true, stream_options: { include_usage: true } }).withResponse();
    const costs: unknown[] = [];
    for await (const part of data) if (part.usage) costs.push((part.usage as { cost?: unknown }).cost);
    expect(costs[costs.length - 1]).toBe(COST);
    const id = response.headers.get('x-sluice-generation-id') ?? '';
    expect((await getJson(`/v1/generation?id=${id}`, KEY_A)).body['data']).toMatchObject({ total_cost: COST, native_tokens_prompt: 1234, native_tokens_completion: 567 });
    const metrics = await gateway.telemetry.registry.metrics();
    expect(metrics).toContain(`sluice_gateway_cost_usd_total{model="openai/gpt-cache",provider="openai",key="team-a"} ${COST}`);
  });

  it('charges a stream the upstream breaks off with the usage it had told so far', async () => {
    await startPartialAnthropicStream('error');
    const { data, response } = await client(KEY_A).chat.completions.create({ model: 'anthropic/claude', messages: [{ role: 'user', content: 'hi' }], stream: true }).withResponse();
    const failure = await (async () => {
      for await (const _part of data) {
        // read until the in-band error
      }
    })().catch((err: unknown) => err);
    expect(failure).toBeInstanceOf(OpenAI.APIError);
    const id = response.headers.get('x-sluice-generation-id') ?? '';
    await waitForGeneration(id);
    // 1000 input tokens x $0.000001 + 2 output tokens ('partial' relayed) x $0.000002
    expect((await getJson(`/v1/generation?id=${id}`, KEY_A)).body['data']).toMatchObject({ total_cost: 0.001004, native_tokens_prompt: 1000, native_tokens_completion: 2 });
  });
});

describe('usage of a stream the client leaves', () => {
  it('charges what the upstream had reported when the client left', async () => {
    // ...and nothing more: the client leaves.
    await startPartialAnthropicStream('stall');
    const abort = new AbortController();
    const { data, response } = await client(KEY_A).chat.completions.create({ model: 'anthropic/claude', messages: [{ role: 'user', content: 'hi' }], stream: true }, { signal: abort.signal }).withResponse();
    for await (const _part of data) {
      abort.abort();
      break;
    }
    const id = response.headers.get('x-sluice-generation-id') ?? '';
    await waitForGeneration(id);
    expect((await getJson(`/v1/generation?id=${id}`, KEY_A)).body['data']).toMatchObject({ total_cost: 0.001004, native_tokens_prompt: 1000, native_tokens_completion: 2 });
  });

  // message_start's output_tokens is a placeholder: the count comes in message_delta.
  it('charges an Anthropic stream the client read whole but left before message_delta for the output it was relayed', async () => {
    await startPartialAnthropicStream('stall', Array.from({ length: 10 }, () => 'x'.repeat(400)));
    const id = await leaveAfter('anthropic/claude', 4000);
    // 1000 input tokens x $0.000001 + 4000 characters out, 1000 tokens x $0.000002.
    expect((await getJson(`/v1/generation?id=${id}`, KEY_A)).body['data']).toMatchObject({ total_cost: 0.003, native_tokens_prompt: 1000, native_tokens_completion: 1000 });
    const attempt = (await (gateway as Gateway).spans(2)).find((s) => s.name === 'chat claude-up');
    expect(attr(attempt, 'sluice.usage.source')).toBe('estimate');
    expect(attr(attempt, 'gen_ai.usage.output_tokens')).toBe(1000);
  });

  // Gemini's events before the last carry promptTokenCount alone (candidatesTokenCount comes at the end).
  it('charges a Gemini stream the client left before its last event for the output it was relayed', async () => {
    upstream = await startUpstream(function answer(_body, res) {
      res.writeHead(200, { 'content-type': 'text/event-stream' });
      const event = { candidates: [{ content: { role: 'model', parts: [{ text: 'x'.repeat(4000) }] }, index: 0 }], usageMetadata: { promptTokenCount: 1000, totalTokenCount: 1000 } };
      res.write(`data: ${JSON.stringify(event)}\n\n`);
    });
    const geminiModels = [{ id: 'google/gemini', pricing: { input: '0.000001', output: '0.000002' }, endpoints: [{ provider: 'google', model: 'gemini-up' }] }];
    gateway = await startGateway({ api_keys: [{ key: KEY_A, name: 'team-a' }], providers: { google: { type: 'google', base_url: upstream.url.replace(/\/v1$/, ''), api_key: 'gm-key' } }, models: geminiModels });
    const id = await leaveAfter('google/gemini', 4000);
    expect((await getJson(`/v1/generation?id=${id}`, KEY_A)).body['data']).toMatchObject({ total_cost: 0.003, native_tokens_prompt: 1000, native_tokens_completion: 1000 });
  });

  it('charges a native Messages stream the client left before message_delta for the output it was relayed', async () => {
    await startPartialAnthropicStream('stall', Array.from({ length: 10 }, () => 'x'.repeat(400)));
    const abort = new AbortController();
    const messages = new Anthropic({ baseURL: `http://127.0.0.1:${(gateway as Gateway).port}`, apiKey: KEY_A, maxRetries: 0 });
    const { data, response } = await messages.messages.create({ model: 'anthropic/claude', max_tokens: 2000, messages: [{ role: 'user', content: 'hi' }], stream: true }, { signal: abort.signal }).withResponse();
    let text = '';
    for await (const event of data) {
      if (event.type === 'content_block_delta' && event.delta.type === 'text_delta') text += event.delta.text;
      if (event.type === 'content_block_stop') {
        abort.abort();
        break;
      }
    }
    expect(text).toHaveLength(4000);
    const id = response.headers.get('x-sluice-generation-id') ?? '';
    await waitForGeneration(id);
    expect((await getJson(`/v1/generation?id=${id}`, KEY_A)).body['data']).toMatchObject({ total_cost: 0.003, native_tokens_prompt: 1000, native_tokens_completion: 1000 });
    const attempt = (await (gateway as Gateway).spans(2)).find((s) => s.name === 'chat claude-up');
    expect(attr(attempt, 'sluice.usage.source')).toBe('estimate');
  });
});

describe('usage of an Anthropic-compatible stream that counts tokens only in message_delta', () => {
  it('charges a native Messages stream the client left before message_delta the estimates of its request and of what was relayed', async () => {
    upstream = await startUpstream(function answer(_body, res) {
      res.writeHead(200, { 'content-type': 'text/event-stream' });
      const start = { type: 'message_start', message: { id: 'msg_1', type: 'message', role: 'assistant', model: 'claude-up', content: [], stop_reason: null, stop_sequence: null } };
      for (const e of [{ event: 'message_start', data: start }, ...textBlock(0, ['x'.repeat(4000)])]) res.write(`event: ${e.event}\ndata: ${JSON.stringify(e.data)}\n\n`);
    });
    const anthropicModels = [{ id: 'anthropic/claude', pricing: { input: '0.000001', output: '0.000002' }, endpoints: [{ provider: 'anthropic', model: 'claude-up' }] }];
    gateway = await startGateway({ api_keys: [{ key: KEY_A, name: 'team-a' }], providers: { anthropic: { type: 'anthropic', base_url: upstream.url.replace(/\/v1$/, ''), api_key: 'sk-ant' } }, models: anthropicModels });
    const abort = new AbortController();
    const messages = new Anthropic({ baseURL: `http://127.0.0.1:${gateway.port}`, apiKey: KEY_A, maxRetries: 0 });
    const { data, response } = await messages.messages.create({ model: 'anthropic/claude', max_tokens: 2000, messages: [{ role: 'user', content: 'y'.repeat(400) }], stream: true }, { signal: abort.signal }).withResponse();
    for await (const event of data) {
      if (event.type === 'content_block_stop') {
        abort.abort();
        break;
      }
    }
    const id = response.headers.get('x-sluice-generation-id') ?? '';
    await waitForGeneration(id);
    // 400 characters in: 100 tokens x $0.000001; 4000 characters out: 1000 tokens x $0.000002.
    expect((await getJson(`/v1/generation?id=${id}`, KEY_A)).body['data']).toMatchObject({ total_cost: 0.0021, native_tokens_prompt: 100, native_tokens_completion: 1000 });
    expect(attr((await gateway.spans(2)).find((s) => s.name === 'chat claude-up'), 'sluice.usage.source')).toBe('estimate');
  });
});

describe('usage of an OpenAI-compatible stream the client leaves before its usage chunk', () => {
  it('charges an estimate (4 characters a token) instead of nothing, and marks the span', async () => {
    // The answer whole, finish_reason included; the usage chunk would come next.
    upstream = await startUpstream(function answer(_body, res) {
      res.writeHead(200, { 'content-type': 'text/event-stream' });
      for (const event of [chunk({ role: 'assistant', content: 'Hello ' }), chunk({ content: 'world' }), chunk({}, 'stop')]) res.write(`data: ${JSON.stringify(event)}\n\n`);
    });
    const priced = [{ id: 'openai/gpt-cheap', pricing: { input: '0.000001', output: '0.000002' }, endpoints: [{ provider: 'openai', model: 'gpt-up' }] }];
    gateway = await startGateway({ api_keys: [{ key: KEY_A, name: 'team-a' }], providers: { openai: openaiProvider(upstream) }, models: priced });
    const abort = new AbortController();
    const prompt = 'x'.repeat(400);
    const { data, response } = await client(KEY_A).chat.completions.create({ model: 'openai/gpt-cheap', messages: [{ role: 'user', content: prompt }], stream: true }, { signal: abort.signal }).withResponse();
    let text = '';
    for await (const part of data) {
      text += part.choices[0]?.delta.content ?? '';
      if (part.choices[0]?.finish_reason === 'stop') {
        abort.abort();
        break;
      }
    }
    expect(text).toBe('Hello world');
    const id = response.headers.get('x-sluice-generation-id') ?? '';
    await waitForGeneration(id);
    // 400 characters in: 100 tokens x $0.000001; 11 characters out: 3 tokens x $0.000002.
    expect((await getJson(`/v1/generation?id=${id}`, KEY_A)).body['data']).toMatchObject({ total_cost: 0.000106, native_tokens_prompt: 100, native_tokens_completion: 3 });
    const attempt = (await gateway.spans(2)).find((s) => s.name === 'chat gpt-up');
    expect(attr(attempt, 'sluice.usage.source')).toBe('estimate');
    expect(attr(attempt, 'gen_ai.usage.input_tokens')).toBe(100);
  });
});

describe('usage of an OpenAI-compatible server that reports none', () => {
  // A server that ignores stream_options.include_usage and leaves usage out of its answers.
  async function startSilentUpstream(): Promise<void> {
    upstream = await startUpstream(function answer(body, res) {
      if (body['stream'] === true) sendStream(res, [chunk({ role: 'assistant', content: 'Hello ' }), chunk({ content: 'world' }), chunk({}, 'stop')]);
      else sendJson(res, 200, { ...completion('Hello world'), usage: undefined });
    });
    const priced = [{ id: 'openai/gpt-cheap', pricing: { input: '0.000001', output: '0.000002' }, endpoints: [{ provider: 'openai', model: 'gpt-up' }] }];
    gateway = await startGateway({ api_keys: [{ key: KEY_A, name: 'team-a' }], providers: { openai: openaiProvider(upstream) }, models: priced });
  }

  it.each([false, true])('charges a whole answer (stream: %s) the estimate instead of nothing, and marks the span', async (stream) => {
    await startSilentUpstream();
    const request = { model: 'openai/gpt-cheap', messages: [{ role: 'user' as const, content: 'x'.repeat(400) }] };
    let id: string;
    if (stream) {
      const { data, response } = await client(KEY_A).chat.completions.create({ ...request, stream: true }).withResponse();
      let text = '';
      for await (const part of data) text += part.choices[0]?.delta.content ?? '';
      expect(text).toBe('Hello world');
      id = response.headers.get('x-sluice-generation-id') ?? '';
    } else {
      const { data, response } = await client(KEY_A).chat.completions.create(request).withResponse();
      expect(data.choices[0]?.message.content).toBe('Hello world');
      // The answer stays as the upstream sent it: the estimate is what is charged, not what the upstream counted.
      expect(data.usage).toBeUndefined();
      id = response.headers.get('x-sluice-generation-id') ?? '';
    }
    await waitForGeneration(id);
    // 400 characters in: 100 tokens x $0.000001; 11 characters out: 3 tokens x $0.000002.
    expect((await getJson(`/v1/generation?id=${id}`, KEY_A)).body['data']).toMatchObject({ total_cost: 0.000106, native_tokens_prompt: 100, native_tokens_completion: 3 });
    const attempt = (await gateway!.spans(2)).find((s) => s.name === 'chat gpt-up');
    expect(attr(attempt, 'sluice.usage.source')).toBe('estimate');
    expect(attr(attempt, 'gen_ai.usage.output_tokens')).toBe(3);
  });
});

/**
 * An Anthropic upstream whose stream reports 1,000 input tokens (and
 * message_start's placeholder of 1 output token) and some text,
 * then an in-band error (`error`) or nothing more (`stall`), behind a gateway
 * pricing it at $0.000001 per input and $0.000002 per output token.
 */
async function startPartialAnthropicStream(then: 'error' | 'stall', parts: readonly string[] = ['partial']): Promise<void> {
  const events = [messageStart(1000), ...textBlock(0, parts)];
  upstream = await startUpstream(function answer(_body, res) {
    res.writeHead(200, { 'content-type': 'text/event-stream' });
    for (const e of events) res.write(`event: ${e.event}\ndata: ${JSON.stringify(e.data)}\n\n`);
    if (then === 'stall') return;
    res.end(`event: error\ndata: ${JSON.stringify({ type: 'error', error: { type: 'overloaded_error', message: 'Overloaded' } })}\n\n`);
  });
  const anthropicModels = [{ id: 'anthropic/claude', pricing: { input: '0.000001', output: '0.000002' }, endpoints: [{ provider: 'anthropic', model: 'claude-up' }] }];
  gateway = await startGateway({ api_keys: [{ key: KEY_A, name: 'team-a' }], providers: { anthropic: { type: 'anthropic', base_url: upstream.url.replace(/\/v1$/, ''), api_key: 'sk-ant' } }, models: anthropicModels });
}

/** Streams `model`'s answer to 'hi' and leaves once `chars` characters of text have come: the generation's id, once it is recorded. */
async function leaveAfter(model: string, chars: number): Promise<string> {
  const abort = new AbortController();
  const { data, response } = await client(KEY_A).chat.completions.create({ model, messages: [{ role: 'user', content: 'hi' }], stream: true }, { signal: abort.signal }).withResponse();
  let text = '';
  for await (const part of data) {
    text += part.choices[0]?.delta.content ?? '';
    if (text.length >= chars) {
      abort.abort();
      break;
    }
  }
  const id = response.headers.get('x-sluice-generation-id') ?? '';
  await waitForGeneration(id);
  return id;
}

/** A generation is recorded once its response closed and its attempts settled: wait for it. */
async function waitForGeneration(id: string): Promise<void> {
  for (let i = 0; i < 100; i++) {
    if ((await getJson(`/v1/generation?id=${id}`, KEY_A)).status === 200) return;
    await new Promise((resolve) => setTimeout(resolve, 20));
  }
  throw new Error(`generation ${id} was not recorded`);
}

describe('usage on the Anthropic Messages API', () => {
  it('prices a message translated from an OpenAI-compatible upstream in its usage, as a native one', async () => {
    await setup();
    const client = new Anthropic({ baseURL: `http://127.0.0.1:${(gateway as Gateway).port}`, apiKey: KEY_A, maxRetries: 0 });
    const data = await client.messages.create({ model: 'openai/gpt-cache', max_tokens: 100, messages: [{ role: 'user', content: 'hi' }] });
    expect(data.usage).toMatchObject({ input_tokens: 334, cache_read_input_tokens: 800, cache_creation_input_tokens: 100, output_tokens: 567 });
    expect((data.usage as unknown as { cost?: number }).cost).toBe(COST);
  });

  it('prices a native message (cache reads and writes) in its usage, span and generation record', async () => {
    upstream = await startUpstream(function answer(_body, res) {
      sendJson(res, 200, { id: 'msg_1', type: 'message', role: 'assistant', model: 'claude-up', content: [{ type: 'text', text: 'hi' }], stop_reason: 'end_turn', stop_sequence: null, usage: { input_tokens: 334, cache_read_input_tokens: 800, cache_creation_input_tokens: 100, output_tokens: 567 } });
    });
    const messagesModels = [{ id: 'anthropic/claude', pricing: models[0]?.pricing, endpoints: [{ provider: 'anthropic', model: 'claude-up', pricing: { output: '0.000012' } }] }];
    gateway = await startGateway({ api_keys: [{ key: KEY_A, name: 'team-a' }], providers: { anthropic: { type: 'anthropic', base_url: upstream.url.replace(/\/v1$/, ''), api_key: 'sk-ant' } }, models: messagesModels });
    const client = new Anthropic({ baseURL: `http://127.0.0.1:${gateway.port}`, apiKey: KEY_A, maxRetries: 0 });
    const { data, response } = await client.messages.create({ model: 'anthropic/claude', max_tokens: 100, messages: [{ role: 'user', content: 'hi' }] }).withResponse();
    // The same tokens as the chat cases above: 334 uncached, 800 read, 100 written, 567 out.
    expect((data.usage as unknown as { cost?: number }).cost).toBe(COST);
    const id = response.headers.get('x-sluice-generation-id') ?? '';
    expect((await getJson(`/v1/generation?id=${id}`, KEY_A)).body['data']).toMatchObject({ total_cost: COST, native_tokens_prompt: 1234, native_tokens_cached: 800, native_tokens_cache_creation: 100, provider_name: 'anthropic', finish_reason: 'end_turn' });
    expect(attr((await gateway.spans(2)).find((s) => s.name === 'chat claude-up'), 'sluice.usage.cost')).toBe(COST);
  });

  it('records a streamed native message with its usage and cost', async () => {
    upstream = await startUpstream(function answer(_body, res) {
      res.writeHead(200, { 'content-type': 'text/event-stream' });
      const event = (type: string, data: unknown) => res.write(`event: ${type}\ndata: ${JSON.stringify(data)}\n\n`);
      event('message_start', { type: 'message_start', message: { id: 'msg_1', type: 'message', role: 'assistant', model: 'claude-up', content: [], stop_reason: null, stop_sequence: null, usage: { input_tokens: 334, cache_read_input_tokens: 800, cache_creation_input_tokens: 100, output_tokens: 1 } } });
      event('content_block_start', { type: 'content_block_start', index: 0, content_block: { type: 'text', text: '' } });
      event('content_block_delta', { type: 'content_block_delta', index: 0, delta: { type: 'text_delta', text: 'hi' } });
      event('content_block_stop', { type: 'content_block_stop', index: 0 });
      event('message_delta', { type: 'message_delta', delta: { stop_reason: 'end_turn', stop_sequence: null }, usage: { output_tokens: 567 } });
      event('message_stop', { type: 'message_stop' });
      res.end();
    });
    const messagesModels = [{ id: 'anthropic/claude', pricing: models[0]?.pricing, endpoints: [{ provider: 'anthropic', model: 'claude-up', pricing: { output: '0.000012' } }] }];
    gateway = await startGateway({ api_keys: [{ key: KEY_A, name: 'team-a' }], providers: { anthropic: { type: 'anthropic', base_url: upstream.url.replace(/\/v1$/, ''), api_key: 'sk-ant' } }, models: messagesModels });
    const client = new Anthropic({ baseURL: `http://127.0.0.1:${gateway.port}`, apiKey: KEY_A, maxRetries: 0 });
    const { data: stream, response } = await client.messages.create({ model: 'anthropic/claude', max_tokens: 100, messages: [{ role: 'user', content: 'hi' }], stream: true }).withResponse();
    for await (const _event of stream) {
      // read to the end
    }
    const id = response.headers.get('x-sluice-generation-id') ?? '';
    await waitForGeneration(id);
    expect((await getJson(`/v1/generation?id=${id}`, KEY_A)).body['data']).toMatchObject({ total_cost: COST, native_tokens_prompt: 1234, native_tokens_completion: 567, streamed: true, finish_reason: 'end_turn' });
  });
});

describe('usage lookups through the AI SDK', () => {
  it('answers errors the AI SDK reads as its own classes: an unknown generation, a bad query, a key out of requests', async () => {
    const gw = await setup([{ key: KEY_A, name: 'team-a', requests_per_minute: 2 }]);
    const sdk = createGateway({ baseURL: `${gw.baseURL}/ai`, apiKey: KEY_A });
    await expect(sdk.getGenerationInfo({ id: 'gen_01ARZ3NDEKTSV4RRFFQ69G5FAV' })).rejects.toBeInstanceOf(GatewayInvalidRequestError);
    await expect(sdk.getSpendReport({ startDate: 'yesterday', endDate: today() })).rejects.toBeInstanceOf(GatewayInvalidRequestError);
    await expect(sdk.getSpendReport({ startDate: today(), endDate: today() })).rejects.toBeInstanceOf(GatewayRateLimitError);
  });
});

describe('usage through the AI SDK protocol', () => {
  it('puts the generation id and the cost in providerMetadata.gateway, matching /v1/generation', async () => {
    const gw = await setup();
    const provider = createGateway({ baseURL: `${gw.baseURL}/ai`, apiKey: KEY_A });
    const result = await generateText({ model: provider('openai/gpt-cache'), prompt: 'hi', maxRetries: 0 });
    const metadata = result.providerMetadata?.['gateway'] as { generationId?: string; cost?: number } | undefined;
    expect(metadata?.cost).toBe(COST);
    expect(metadata?.generationId).toMatch(/^gen_[0-9A-HJKMNP-TV-Z]{26}$/);
    const info = await provider.getGenerationInfo({ id: metadata?.generationId ?? '' });
    expect(info).toMatchObject({ totalCost: COST, cachedTokens: 800, cacheCreationTokens: 100, providerName: 'openai' });
  });
});
