import { createServer, type IncomingMessage, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import OpenAI from 'openai';
import { afterEach, describe, expect, it } from 'vitest';
import { saveProxyEnv, startConnectProxy } from '../../../helpers/connect-proxy.js';
import { startSilentServer, type SilentServer } from '../../../helpers/silent-server.js';
import { API_KEY, attr, chunk, completion, EventPump, openaiProvider, postUnread, readRest, sendJson, startGateway, startUpstream, textStream, type Gateway, type Upstream, type UpstreamHandler } from '../harness.js';

let gateway: Gateway | undefined;
const upstreams: Upstream[] = [];
const servers: Server[] = [];
const silentServers: SilentServer[] = [];

afterEach(async () => {
  await gateway?.close();
  gateway = undefined;
  await Promise.all(upstreams.splice(0).map((u) => u.close()));
  await Promise.all(servers.splice(0).map((s) => new Promise((r) => { s.closeAllConnections(); s.close(r); })));
  await Promise.all(silentServers.splice(0).map((s) => s.close()));
});

async function upstream(handler: UpstreamHandler): Promise<Upstream> {
  const u = await startUpstream(handler);
  upstreams.push(u);
  return u;
}

/**
 * An upstream writing 16 KiB chunks as fast as its socket takes them, and a
 * streaming request to it whose answer is not read yet. Without backpressure
 * through the gateway the upstream would get all `cap` chunks out (256 MiB,
 * far past every socket buffer on the way), the gateway buffering them.
 */
async function unreadStream(streamIdleTimeout: string): Promise<{ upstream: Upstream; pump: EventPump; response: IncomingMessage }> {
  const pad = 'x'.repeat(16 * 1024);
  let pump: EventPump | undefined;
  const a = await upstream((_b, res) => {
    res.writeHead(200, { 'content-type': 'text/event-stream' });
    pump = new EventPump(res, (i) => `data: ${JSON.stringify(chunk({ content: `<${i}>${pad}` }))}\n\n`, 'data: [DONE]\n\n', 16_384);
  });
  gateway = await startGateway({
    providers: { alpha: openaiProvider(a, { stream_idle_timeout: streamIdleTimeout }) },
    models: [{ id: 'acme/model', endpoints: [{ provider: 'alpha', model: 'm' }] }],
  });
  const response = await postUnread(`${gateway.baseURL}/chat/completions`, { authorization: `Bearer ${API_KEY}` }, { model: 'acme/model', messages: [{ role: 'user', content: 'hi' }], stream: true });
  while (pump === undefined) await new Promise((r) => setTimeout(r, 10));
  return { upstream: a, pump, response };
}

function answering(text: string): UpstreamHandler {
  return (_body, res) => sendJson(res, 200, completion(text));
}

/** A port that refuses connections: bound once, then closed. */
async function refusedPort(): Promise<number> {
  const s = createServer();
  await new Promise<void>((r) => s.listen(0, '127.0.0.1', r));
  const port = (s.address() as AddressInfo).port;
  await new Promise((r) => s.close(r));
  return port;
}

const threeWay = (a: Upstream, b: Upstream, c: Upstream, extra: Record<string, unknown> = {}) => ({
  providers: { alpha: openaiProvider(a), beta: openaiProvider(b), gamma: openaiProvider(c) },
  models: [{ id: 'acme/model', endpoints: [{ provider: 'alpha', model: 'm-alpha' }, { provider: 'beta', model: 'm-beta' }, { provider: 'gamma', model: 'm-gamma' }] }],
  ...extra,
});

function client(): OpenAI {
  return new OpenAI({ baseURL: gateway?.baseURL ?? '', apiKey: API_KEY, maxRetries: 0 });
}

async function ask(body: Record<string, unknown> = {}): Promise<{ text: string | null | undefined; provider: string | null; attempts: string | null }> {
  const { data, response } = await client()
    .chat.completions.create({ model: 'acme/model', messages: [{ role: 'user', content: 'hi' }], ...body } as OpenAI.ChatCompletionCreateParamsNonStreaming)
    .withResponse();
  return { text: data.choices[0]?.message.content, provider: response.headers.get('x-sluice-provider'), attempts: response.headers.get('x-sluice-attempts') };
}

describe('gateway routing and fallback', () => {
  it('tries the catalog endpoints in their default order', async () => {
    gateway = await startGateway(threeWay(await upstream(answering('A')), await upstream(answering('B')), await upstream(answering('C'))));
    expect(await ask()).toEqual({ text: 'A', provider: 'alpha', attempts: '1' });
  });

  it('puts providerOptions.gateway.order first, in its order', async () => {
    gateway = await startGateway(threeWay(await upstream(answering('A')), await upstream(answering('B')), await upstream(answering('C'))));
    expect((await ask({ providerOptions: { gateway: { order: ['gamma', 'beta'] } } })).provider).toBe('gamma');
  });

  it('keeps only the providers listed in only', async () => {
    const a = await upstream((_b, res) => sendJson(res, 503, { error: { message: 'down' } }));
    gateway = await startGateway(threeWay(a, await upstream(answering('B')), await upstream(answering('C'))));
    const result = await ask({ providerOptions: { gateway: { only: ['alpha', 'gamma'] } } });
    expect(result).toEqual({ text: 'C', provider: 'gamma', attempts: '2' });
  });

  it('combines order and only as their intersection in order', async () => {
    gateway = await startGateway(threeWay(await upstream(answering('A')), await upstream(answering('B')), await upstream(answering('C'))));
    expect((await ask({ providerOptions: { gateway: { order: ['beta', 'gamma'], only: ['gamma', 'alpha'] } } })).provider).toBe('gamma');
  });

  it('falls back to the models listed in providerOptions.gateway.models', async () => {
    const down = await upstream((_b, res) => sendJson(res, 503, { error: { message: 'down' } }));
    const other = await upstream(answering('from backup'));
    gateway = await startGateway({
      providers: { alpha: openaiProvider(down), beta: openaiProvider(other) },
      models: [{ id: 'acme/model', endpoints: [{ provider: 'alpha', model: 'm1' }] }],
    });
    const result = await ask({ providerOptions: { gateway: { models: ['beta/backup-model'] } } });
    expect(result).toEqual({ text: 'from backup', provider: 'beta', attempts: '2' });
    expect(other.requests[0]?.body['model']).toBe('backup-model');
  });

  it('refuses a model id with a control character on every model route, as a 400 naming where it was, and sends nothing upstream', async () => {
    const a = await upstream(answering('A'));
    gateway = await startGateway({ providers: { alpha: openaiProvider(a) }, models: [{ id: 'acme/model', endpoints: [{ provider: 'alpha', model: 'm' }] }] });
    const post = async (path: string, body: Record<string, unknown>, headers: Record<string, string> = {}) => {
      const response = await fetch(`${gateway?.baseURL ?? ''}${path}`, { method: 'POST', headers: { authorization: `Bearer ${API_KEY}`, 'content-type': 'application/json', ...headers }, body: JSON.stringify(body) });
      return { status: response.status, error: ((await response.json()) as { error: { param: unknown; code: string } }).error };
    };
    const messages = [{ role: 'user', content: 'hi' }];
    const nul = 'alpha/m\u0000fake\u0000requests';
    expect(await post('/chat/completions', { model: nul, messages })).toMatchObject({ status: 400, error: { param: 'model', code: 'invalid_value' } });
    expect(await post('/chat/completions', { model: 'acme/model', messages, providerOptions: { gateway: { models: ['alpha/m\u0007'] } } })).toMatchObject({ status: 400, error: { param: 'providerOptions.gateway.models[0]', code: 'invalid_value' } });
    expect(await post('/messages', { model: nul, max_tokens: 10, messages })).toMatchObject({ status: 400 });
    expect(await post('/embeddings', { model: nul, input: 'hi' })).toMatchObject({ status: 400, error: { param: 'model', code: 'invalid_value' } });
    // Headers carry no NUL, but a tab they do.
    const aiSdk = { 'ai-language-model-specification-version': '3', 'ai-language-model-streaming': 'false', 'ai-language-model-id': 'alpha/m\tx' };
    expect(await post('/ai/language-model', { prompt: [{ role: 'user', content: [{ type: 'text', text: 'hi' }] }] }, aiSdk)).toMatchObject({ status: 400, error: { param: 'model' } });
    expect(a.requests).toHaveLength(0);
  });

  it('routes a model outside the catalog straight to its configured provider', async () => {
    const u = await upstream(answering('direct'));
    gateway = await startGateway({ providers: { local: openaiProvider(u) }, models: [] });
    const result = await client().chat.completions.create({ model: 'local/llama3.2:1b', messages: [{ role: 'user', content: 'hi' }] });
    expect(result.choices[0]?.message.content).toBe('direct');
    expect(u.requests[0]?.body['model']).toBe('llama3.2:1b');
  });

  it('falls back when the first endpoint answers 503', async () => {
    const a = await upstream((_b, res) => sendJson(res, 503, { error: { message: 'overloaded' } }));
    gateway = await startGateway(threeWay(a, await upstream(answering('B')), await upstream(answering('C'))));
    expect(await ask()).toEqual({ text: 'B', provider: 'beta', attempts: '2' });
  });

  it('falls back when the first endpoint refuses connections', async () => {
    const port = await refusedPort();
    const b = await upstream(answering('B'));
    gateway = await startGateway({
      providers: { alpha: { type: 'openai', base_url: `http://127.0.0.1:${port}/v1` }, beta: openaiProvider(b) },
      models: [{ id: 'acme/model', endpoints: [{ provider: 'alpha', model: 'm' }, { provider: 'beta', model: 'm' }] }],
    });
    expect(await ask()).toEqual({ text: 'B', provider: 'beta', attempts: '2' });
  });

  it('falls back when the first endpoint sends no headers within first_byte_timeout', async () => {
    const a = await upstream(() => undefined);
    const b = await upstream(answering('B'));
    gateway = await startGateway(threeWay(a, b, b, { first_byte_timeout: '150ms' }));
    expect(await ask()).toEqual({ text: 'B', provider: 'beta', attempts: '2' });
    expect(a.aborted).toHaveLength(1);
  });

  it('falls back at first_byte_timeout from a provider that accepts the connection but never answers its TLS handshake', async () => {
    const silent = await startSilentServer();
    silentServers.push(silent);
    const b = await upstream((body, res) => (body['stream'] === true ? textStream(res, ['B']) : sendJson(res, 200, completion('B'))));
    const hanging = { type: 'openai', base_url: `https://127.0.0.1:${silent.port}/v1`, api_key: 'sk-upstream', first_byte_timeout: '150ms' };
    gateway = await startGateway({
      providers: { alpha: hanging, beta: openaiProvider(b) },
      models: [{ id: 'acme/model', endpoints: [{ provider: 'alpha', model: 'm' }, { provider: 'beta', model: 'm' }] }],
    });
    expect(await ask()).toEqual({ text: 'B', provider: 'beta', attempts: '2' });
    // Answered while the handshake still hangs: by Sluice's clock, not once
    // undici's connect timeout (10 s), which does not hear an abort, gave up.
    expect(silent.open()).toBe(1);
    const { data: stream, response } = await client().chat.completions.create({ model: 'acme/model', messages: [{ role: 'user', content: 'hi' }], stream: true }).withResponse();
    let text = '';
    for await (const part of stream) text += part.choices[0]?.delta.content ?? '';
    expect({ text, provider: response.headers.get('x-sluice-provider') }).toEqual({ text: 'B', provider: 'beta' });
    expect(silent.open()).toBe(2);
    const metrics = await gateway.telemetry.registry.metrics();
    expect(metrics).toContain('sluice_gateway_attempts_total{receiver="gateway",provider="alpha",outcome="timeout"} 2');
    expect(metrics).not.toContain('outcome="network_error"');
  });

  it('reaches providers through the proxy HTTP_PROXY names, streaming or not', async () => {
    const b = await upstream((body, res) => (body['stream'] === true ? textStream(res, ['B']) : sendJson(res, 200, completion('B'))));
    const proxy = await startConnectProxy();
    const env = saveProxyEnv();
    try {
      process.env['HTTP_PROXY'] = process.env['http_proxy'] = proxy.url;
      delete process.env['NO_PROXY'];
      delete process.env['no_proxy'];
      gateway = await startGateway({ providers: { beta: openaiProvider(b) }, models: [{ id: 'acme/model', endpoints: [{ provider: 'beta', model: 'm' }] }] });
      expect(await ask()).toEqual({ text: 'B', provider: 'beta', attempts: '1' });
      const stream = await client().chat.completions.create({ model: 'acme/model', messages: [{ role: 'user', content: 'hi' }], stream: true });
      let text = '';
      for await (const part of stream) text += part.choices[0]?.delta.content ?? '';
      expect(text).toBe('B');
      expect(proxy.targets.length).toBeGreaterThanOrEqual(1);
      expect(new Set(proxy.targets)).toEqual(new Set([new URL(b.url).host]));
      expect(b.requests).toHaveLength(2);
    } finally {
      env.restore();
      await proxy.close();
    }
  });

  it('falls back when a stream sends headers but stalls before its first byte', async () => {
    const a = await upstream((_b, res) => {
      res.writeHead(200, { 'content-type': 'text/event-stream' });
      res.flushHeaders();
    });
    const b = await upstream((_b, res) => textStream(res, ['from ', 'beta']));
    gateway = await startGateway({
      providers: { alpha: openaiProvider(a, { first_byte_timeout: '150ms' }), beta: openaiProvider(b) },
      models: [{ id: 'acme/model', endpoints: [{ provider: 'alpha', model: 'm' }, { provider: 'beta', model: 'm' }] }],
    });
    const { data: stream, response } = await client().chat.completions.create({ model: 'acme/model', messages: [{ role: 'user', content: 'hi' }], stream: true }).withResponse();
    let text = '';
    for await (const part of stream) text += part.choices[0]?.delta.content ?? '';
    expect(text).toBe('from beta');
    expect(response.headers.get('x-sluice-provider')).toBe('beta');
    expect(response.headers.get('x-sluice-attempts')).toBe('2');
  });

  it('ends a stream cut after its first byte with an in-band error and does not fall back', async () => {
    const a = await upstream((_b, res) => {
      res.writeHead(200, { 'content-type': 'text/event-stream' });
      res.write(`data: ${JSON.stringify(chunk({ role: 'assistant', content: 'half' }))}\n\n`);
      setTimeout(() => res.socket?.destroy(), 20);
    });
    const b = await upstream((_b, res) => textStream(res, ['never']));
    gateway = await startGateway(threeWay(a, b, b));
    const response = await fetch(`${gateway.baseURL}/chat/completions`, {
      method: 'POST',
      headers: { authorization: `Bearer ${API_KEY}`, 'content-type': 'application/json' },
      body: JSON.stringify({ model: 'acme/model', messages: [{ role: 'user', content: 'hi' }], stream: true }),
    });
    const text = await response.text();
    const events = text.split('\n\n').filter((e) => e !== '');
    expect(response.status).toBe(200);
    expect(events[0]).toContain('half');
    expect(JSON.parse(events.at(-1)?.slice('data: '.length) ?? '{}')).toMatchObject({ error: { type: 'api_error', code: 'upstream_error' } });
    expect(text).not.toContain('[DONE]');
    expect(b.requests).toHaveLength(0);
  });

  it('judges an in-band error with an HTTP status as its code (vLLM, OpenRouter) as that answer: a 400 is not tried elsewhere, a 429 is', async () => {
    const inBand = (code: number, message: string): UpstreamHandler => (_b, res) => {
      res.writeHead(200, { 'content-type': 'text/event-stream' });
      res.end(`data: ${JSON.stringify({ error: { object: 'error', message, type: 'BadRequestError', code } })}\n\n`);
    };
    const a = await upstream(inBand(400, 'This model\'s maximum context length is 4096 tokens.'));
    const b = await upstream((_b, res) => textStream(res, ['from beta']));
    gateway = await startGateway(threeWay(a, b, b));
    const refused = await client().chat.completions.create({ model: 'acme/model', messages: [{ role: 'user', content: 'hi' }], stream: true }).then(
      () => undefined,
      (err: unknown) => err,
    );
    expect(refused).toBeInstanceOf(OpenAI.BadRequestError);
    expect((refused as Error).message).toContain('maximum context length');
    expect(b.requests).toHaveLength(0);
    await gateway.close();

    const busy = await upstream(inBand(429, 'Rate limit reached'));
    gateway = await startGateway(threeWay(busy, b, b));
    const { data: stream, response } = await client().chat.completions.create({ model: 'acme/model', messages: [{ role: 'user', content: 'hi' }], stream: true }).withResponse();
    let text = '';
    for await (const part of stream) text += part.choices[0]?.delta.content ?? '';
    expect([text, response.headers.get('x-sluice-provider')]).toEqual(['from beta', 'beta']);
  });

  it('ends a stream that goes silent past stream_idle_timeout with an in-band error', async () => {
    const a = await upstream((_b, res) => {
      res.writeHead(200, { 'content-type': 'text/event-stream' });
      res.write(`data: ${JSON.stringify(chunk({ role: 'assistant', content: 'started' }))}\n\n`);
    });
    gateway = await startGateway({
      providers: { alpha: openaiProvider(a, { stream_idle_timeout: '150ms' }) },
      models: [{ id: 'acme/model', endpoints: [{ provider: 'alpha', model: 'm' }] }],
    });
    const stream = await client().chat.completions.create({ model: 'acme/model', messages: [{ role: 'user', content: 'hi' }], stream: true });
    const error = await (async () => {
      for await (const part of stream) void part;
    })().catch((e: unknown) => e);
    expect(error).toBeInstanceOf(OpenAI.APIError);
    expect((error as Error).message).toContain('stream_idle_timeout');
  });

  it('keeps a stream whose chunks keep coming, however long it lasts in all past stream_idle_timeout', async () => {
    const a = await upstream((_b, res) => {
      res.writeHead(200, { 'content-type': 'text/event-stream' });
      let sent = 0;
      const timer = setInterval(() => {
        res.write(`data: ${JSON.stringify(chunk({ content: `w${sent} ` }))}\n\n`);
        sent += 1;
        if (sent === 20) {
          clearInterval(timer);
          res.end('data: [DONE]\n\n');
        }
      }, 40);
    });
    gateway = await startGateway({
      providers: { alpha: openaiProvider(a, { stream_idle_timeout: '400ms' }) },
      models: [{ id: 'acme/model', endpoints: [{ provider: 'alpha', model: 'm' }] }],
    });
    const stream = await client().chat.completions.create({ model: 'acme/model', messages: [{ role: 'user', content: 'hi' }], stream: true });
    let text = '';
    for await (const part of stream) text += part.choices[0]?.delta.content ?? '';
    // 20 chunks 40 ms apart: 800 ms in all, never 400 ms without one.
    expect(text).toBe(Array.from({ length: 20 }, (_, i) => `w${i} `).join(''));
  });

  it('passes an upstream 400 back without trying the next endpoint', async () => {
    const a = await upstream((_b, res) => sendJson(res, 400, { error: { message: 'bad thing in messages', type: 'invalid_request_error', param: 'messages', code: 'bad_messages' } }));
    const b = await upstream(answering('B'));
    gateway = await startGateway(threeWay(a, b, b));
    const error = await ask().catch((e: unknown) => e);
    expect(error).toBeInstanceOf(OpenAI.BadRequestError);
    expect((error as InstanceType<typeof OpenAI.BadRequestError>).code).toBe('bad_messages');
    expect((error as Error).message).toContain('bad thing in messages');
    expect(b.requests).toHaveLength(0);
  });

  it('answers with the last upstream status when every endpoint fails', async () => {
    const a = await upstream((_b, res) => sendJson(res, 503, { error: { message: 'first down' } }));
    const b = await upstream((_b, res) => sendJson(res, 429, { error: { message: 'second busy' } }));
    gateway = await startGateway({
      providers: { alpha: openaiProvider(a), beta: openaiProvider(b) },
      models: [{ id: 'acme/model', endpoints: [{ provider: 'alpha', model: 'm' }, { provider: 'beta', model: 'm' }] }],
    });
    const error = await ask().catch((e: unknown) => e);
    expect(error).toBeInstanceOf(OpenAI.RateLimitError);
    expect((error as Error).message).toContain('second busy');
    expect((error as InstanceType<typeof OpenAI.RateLimitError>).headers?.get('x-sluice-attempts')).toBe('2');
    // The failure answered is beta's.
    expect((error as InstanceType<typeof OpenAI.RateLimitError>).headers?.get('x-sluice-provider')).toBe('beta');
  });

  it('answers with the last upstream failure, not a provider without credentials tried after it', async () => {
    const a = await upstream((_b, res) => sendJson(res, 429, { error: { message: 'first busy' } }));
    const b = await upstream(answering('never asked'));
    gateway = await startGateway({
      providers: { alpha: openaiProvider(a), beta: openaiProvider(b, { api_key: '' }) },
      models: [{ id: 'acme/model', endpoints: [{ provider: 'alpha', model: 'm' }, { provider: 'beta', model: 'm' }] }],
    });
    const error = await ask().catch((e: unknown) => e);
    expect(error).toBeInstanceOf(OpenAI.RateLimitError);
    expect((error as Error).message).toContain('first busy');
    expect((error as InstanceType<typeof OpenAI.RateLimitError>).headers?.get('x-sluice-provider')).toBe('alpha');
    expect((error as InstanceType<typeof OpenAI.RateLimitError>).headers?.get('x-sluice-attempts')).toBe('2');
    expect(b.requests).toHaveLength(0);
  });

  // A 402 is the provider's account out of credit (OpenRouter, DeepSeek's "Insufficient Balance"), not the request's fault.
  it.each([401, 402])('falls back on an upstream %i', async (status) => {
    const a = await upstream((_b, res) => sendJson(res, status, { error: { message: 'bad upstream key or no credit left' } }));
    gateway = await startGateway(threeWay(a, await upstream(answering('B')), await upstream(answering('C'))));
    expect((await ask()).provider).toBe('beta');
  });

  it('cancels the upstream request when the client disconnects', async () => {
    let arrived: () => void = () => undefined;
    const seen = new Promise<void>((r) => (arrived = r));
    const a = await upstream(() => arrived());
    gateway = await startGateway(threeWay(a, a, a));
    const controller = new AbortController();
    const pending = fetch(`${gateway.baseURL}/chat/completions`, {
      method: 'POST',
      headers: { authorization: `Bearer ${API_KEY}`, 'content-type': 'application/json' },
      body: JSON.stringify({ model: 'acme/model', messages: [{ role: 'user', content: 'hi' }] }),
      signal: controller.signal,
    }).catch(() => undefined);
    await seen;
    controller.abort();
    await pending;
    for (let i = 0; i < 100 && a.aborted.length === 0; i++) await new Promise((r) => setTimeout(r, 10));
    expect(a.aborted).toHaveLength(1);
    expect(a.requests).toHaveLength(1);
  });

  it('holds a streaming upstream back while its client does not read, and loses no chunk', async () => {
    const { pump, response } = await unreadStream('5s');
    // Held back for 300 ms on end: the gateway has stopped reading the upstream.
    await pump.heldFor(300);
    expect(pump.written).toBeLessThan(pump.cap);
    pump.stop();
    const events = (await readRest(response)).split('\n\n').filter((e) => e !== '');
    expect(events.at(-1)).toBe('data: [DONE]');
    const order = events.slice(0, -1).map((e) => Number(/<(\d+)>/.exec(e)?.[1]));
    expect(order).toEqual(Array.from({ length: pump.written }, (_, i) => i));
  });

  it('ends a stream whose client reads nothing for longer than stream_idle_timeout as cancelled, not as an upstream timeout', async () => {
    const { upstream: a, pump, response } = await unreadStream('1s');
    for (let i = 0; i < 300 && a.aborted.length === 0; i++) await new Promise((r) => setTimeout(r, 10));
    expect(a.aborted).toHaveLength(1);
    expect(pump.written).toBeLessThan(pump.cap);
    const spans = await (gateway as Gateway).spans(2);
    const attempt = spans.find((s) => s.kind === 3);
    expect(attr(attempt, 'error.type')).toBe('cancelled');
    response.destroy();
  });

  it('passes on an upstream stream that comes after an informational 103 answer', async () => {
    const a = await upstream((_b, res) => {
      res.writeEarlyHints({ link: '</style.css>; rel=preload; as=style' });
      res.writeHead(200, { 'content-type': 'text/event-stream' });
      // No [DONE]: the body's end after the finish_reason ends the stream, as some OpenAI-compatible servers do.
      res.end([chunk({ content: 'one ' }), chunk({ content: 'two' }, 'stop')].map((e) => `data: ${JSON.stringify(e)}\n\n`).join(''));
    });
    gateway = await startGateway(threeWay(a, a, a));
    const stream = await client().chat.completions.create({ model: 'acme/model', messages: [{ role: 'user', content: 'hi' }], stream: true });
    let text = '';
    for await (const part of stream) text += part.choices[0]?.delta.content ?? '';
    expect(text).toBe('one two');
  });

  it('delivers the chunks that came before an in-band upstream error in the same read, then the error', async () => {
    const a = await upstream((_b, res) => {
      res.writeHead(200, { 'content-type': 'text/event-stream' });
      res.end([chunk({ role: 'assistant', content: 'kept ' }), chunk({ content: 'too' }), { error: { message: 'overloaded', type: 'server_error' } }].map((e) => `data: ${JSON.stringify(e)}\n\n`).join(''));
    });
    const b = await upstream((_b, res) => textStream(res, ['never']));
    gateway = await startGateway(threeWay(a, b, b));
    const stream = await client().chat.completions.create({ model: 'acme/model', messages: [{ role: 'user', content: 'hi' }], stream: true });
    let text = '';
    const error = await (async () => {
      for await (const part of stream) text += part.choices[0]?.delta.content ?? '';
    })().catch((e: unknown) => e);
    expect(text).toBe('kept too');
    expect(error).toBeInstanceOf(OpenAI.APIError);
    expect((error as Error).message).toContain('overloaded');
    expect(b.requests).toHaveLength(0);
  });

  it('ends the stream at [DONE] and lets go of an upstream that keeps its body open', async () => {
    const a = await upstream((_b, res) => {
      res.writeHead(200, { 'content-type': 'text/event-stream' });
      res.write(`data: ${JSON.stringify(chunk({ role: 'assistant', content: 'all' }))}\n\ndata: [DONE]\n\n`);
    });
    gateway = await startGateway(threeWay(a, a, a));
    const stream = await client().chat.completions.create({ model: 'acme/model', messages: [{ role: 'user', content: 'hi' }], stream: true });
    let text = '';
    for await (const part of stream) text += part.choices[0]?.delta.content ?? '';
    expect(text).toBe('all');
    for (let i = 0; i < 300 && a.aborted.length === 0; i++) await new Promise((r) => setTimeout(r, 10));
    expect(a.aborted).toHaveLength(1);
  });

  it('keeps the upstream connection of a stream whose body ends a little after [DONE]', async () => {
    const ports: number[] = [];
    let finished = 0;
    const a = await upstream((_b, res, req) => {
      ports.push(req.socket.remotePort ?? 0);
      res.on('finish', () => (finished += 1));
      res.writeHead(200, { 'content-type': 'text/event-stream' });
      res.write(`data: ${JSON.stringify(chunk({ role: 'assistant', content: 'ok' }))}\n\ndata: [DONE]\n\n`);
      setTimeout(() => res.end(), 50);
    });
    gateway = await startGateway(threeWay(a, a, a));
    for (let n = 1; n <= 2; n++) {
      const stream = await client().chat.completions.create({ model: 'acme/model', messages: [{ role: 'user', content: 'hi' }], stream: true });
      for await (const part of stream) void part;
      for (let i = 0; i < 100 && finished < n; i++) await new Promise((r) => setTimeout(r, 10));
      await new Promise((r) => setTimeout(r, 20));
    }
    expect(a.aborted).toHaveLength(0);
    expect(ports).toHaveLength(2);
    expect(ports[1]).toBe(ports[0]);
  });

  it('cancels the upstream stream when the client disconnects mid-stream', async () => {
    const a = await upstream((_b, res) => {
      res.writeHead(200, { 'content-type': 'text/event-stream' });
      res.write(`data: ${JSON.stringify(chunk({ role: 'assistant', content: 'first' }))}\n\n`);
    });
    gateway = await startGateway(threeWay(a, a, a));
    const controller = new AbortController();
    const stream = await client().chat.completions.create({ model: 'acme/model', messages: [{ role: 'user', content: 'hi' }], stream: true }, { signal: controller.signal });
    const seen: string[] = [];
    await (async () => {
      for await (const part of stream) {
        seen.push(part.choices[0]?.delta.content ?? '');
        controller.abort();
      }
    })().catch(() => undefined);
    for (let i = 0; i < 100 && a.aborted.length === 0; i++) await new Promise((r) => setTimeout(r, 10));
    expect(seen).toEqual(['first']);
    expect(a.aborted).toHaveLength(1);
    expect(a.requests).toHaveLength(1);
  });

  it('accepts the routing options as @ai-sdk/openai-compatible spreads them into the body', async () => {
    gateway = await startGateway(threeWay(await upstream(answering('A')), await upstream(answering('B')), await upstream(answering('C'))));
    expect((await ask({ order: ['beta'] })).provider).toBe('beta');
    expect((await ask({ gateway: { only: ['gamma'] } })).provider).toBe('gamma');
  });

  it('does not send the routing options upstream', async () => {
    const a = await upstream(answering('A'));
    gateway = await startGateway(threeWay(a, a, a));
    await ask({ providerOptions: { gateway: { order: ['alpha'] } } });
    expect(Object.keys(a.requests[0]?.body ?? {}).sort()).toEqual(['messages', 'model']);
  });

  it('refuses a routing list longer than 32 entries, naming it', async () => {
    const a = await upstream(answering('A'));
    gateway = await startGateway(threeWay(a, a, a));
    const models = Array.from({ length: 33 }, (_, i) => `alpha/m${i}`);
    const error = await ask({ providerOptions: { gateway: { models } } }).catch((err: unknown) => err);
    expect(error).toBeInstanceOf(OpenAI.BadRequestError);
    expect((error as InstanceType<typeof OpenAI.BadRequestError>).param).toBe('providerOptions.gateway.models');
    expect(a.requests).toHaveLength(0);
  });

  it('tries an endpoint a fallback model repeats only once', async () => {
    const down = await upstream((_b, res) => sendJson(res, 503, { error: { message: 'down' } }));
    const other = await upstream(answering('from beta'));
    gateway = await startGateway({
      providers: { alpha: openaiProvider(down), beta: openaiProvider(other) },
      models: [{ id: 'acme/model', endpoints: [{ provider: 'alpha', model: 'm1' }] }],
    });
    // acme/model twice and alpha/m1 (the same endpoint) would mean three attempts on the failing one.
    const result = await ask({ providerOptions: { gateway: { models: ['acme/model', 'alpha/m1', 'beta/b'] } } });
    expect(result).toEqual({ text: 'from beta', provider: 'beta', attempts: '2' });
    expect(down.requests).toHaveLength(1);
  });

  it('falls back when a streaming upstream answers 200 with a body that is not SSE', async () => {
    const a = await upstream((_b, res) => sendJson(res, 200, { error: { message: 'quota exceeded' } }));
    const b = await upstream((_b, res) => textStream(res, ['from', ' beta']));
    gateway = await startGateway(threeWay(a, b, b));
    const { data: stream, response } = await client().chat.completions.create({ model: 'acme/model', messages: [{ role: 'user', content: 'hi' }], stream: true }).withResponse();
    let text = '';
    for await (const part of stream) text += part.choices[0]?.delta.content ?? '';
    expect(text).toBe('from beta');
    expect(response.headers.get('x-sluice-provider')).toBe('beta');
  });

  it('answers 502 when the only streaming upstream sends an empty 200 body', async () => {
    const a = await upstream((_b, res) => {
      res.writeHead(200, { 'content-type': 'text/event-stream' });
      res.end();
    });
    gateway = await startGateway({ providers: { alpha: openaiProvider(a) }, models: [{ id: 'acme/model', endpoints: [{ provider: 'alpha', model: 'm' }] }] });
    const error = await client().chat.completions.create({ model: 'acme/model', messages: [{ role: 'user', content: 'hi' }], stream: true }).catch((err: unknown) => err);
    expect(error).toBeInstanceOf(OpenAI.InternalServerError);
    expect((error as Error).message).toContain('ended without a chunk');
  });

  it('falls back, as a bad answer, when a completion holds a choice that is not an object', async () => {
    const a = await upstream((_b, res) => sendJson(res, 200, { ...completion('x'), choices: [null] }));
    gateway = await startGateway(threeWay(a, await upstream(answering('B')), await upstream(answering('C'))));
    expect(await ask()).toEqual({ text: 'B', provider: 'beta', attempts: '2' });
    const client = (await gateway.spans(3)).find((span) => attr(span, 'sluice.provider') === 'alpha');
    expect(client?.status?.message).toContain('not a chat completion');
  });
});
