import { request as httpsRequest } from 'node:https';
import OpenAI from 'openai';
import { afterEach, describe, expect, it } from 'vitest';
import { SpanKind, StatusCode } from '../../../../src/otlp/model.js';
import { API_KEY, attr, chunk, completion, openaiProvider, sendJson, sendStream, startGateway, startUpstream, textStream, type Gateway, type Upstream } from '../harness.js';
import { issueCert, testTls } from '../../../helpers/tls.js';

let gateway: Gateway | undefined;
const upstreams: Upstream[] = [];

afterEach(async () => {
  await gateway?.close();
  gateway = undefined;
  await Promise.all(upstreams.splice(0).map((u) => u.close()));
});

async function setup(extra: Record<string, unknown> = {}, firstStatus = 503): Promise<OpenAI> {
  const down = await startUpstream((_b, res) => sendJson(res, firstStatus, { error: { message: 'down' } }));
  const up = await startUpstream((body, res) => (body['stream'] === true ? textStream(res, ['streamed']) : sendJson(res, 200, completion('hello'))));
  upstreams.push(down, up);
  gateway = await startGateway({
    environment: 'staging',
    providers: { first: openaiProvider(down), second: openaiProvider(up) },
    models: [{ id: 'acme/model', endpoints: [{ provider: 'first', model: 'm-first' }, { provider: 'second', model: 'm-second' }] }],
    ...extra,
  });
  return new OpenAI({ baseURL: gateway.baseURL, apiKey: API_KEY, maxRetries: 0 });
}

const messages = [{ role: 'user' as const, content: 'a secret prompt' }];

describe('gateway spans', () => {
  it('emits a SERVER span and one CLIENT child per attempt', async () => {
    const client = await setup();
    await client.chat.completions.create({ model: 'acme/model', messages });
    const spans = await gateway!.spans(3);
    const server = spans.find((s) => s.kind === SpanKind.SERVER);
    const clients = spans.filter((s) => s.kind === SpanKind.CLIENT);
    expect(server?.name).toBe('POST /v1/chat/completions');
    expect(server?.parentSpanId ?? '').toBe('');
    expect(clients.map((s) => s.name)).toEqual(['chat m-first', 'chat m-second']);
    for (const c of clients) {
      expect(c.parentSpanId).toBe(server?.spanId);
      expect(c.traceId).toBe(server?.traceId);
    }
  });

  it('records HTTP attributes and the requested model on the SERVER span', async () => {
    const client = await setup();
    await client.chat.completions.create({ model: 'acme/model', messages });
    const server = (await gateway!.spans(3)).find((s) => s.kind === SpanKind.SERVER);
    expect(attr(server, 'http.request.method')).toBe('POST');
    expect(attr(server, 'url.path')).toBe('/v1/chat/completions');
    expect(attr(server, 'http.route')).toBe('/v1/chat/completions');
    expect(attr(server, 'http.response.status_code')).toBe(200);
    expect(attr(server, 'url.scheme')).toBe('http');
    expect(attr(server, 'url.query')).toBeUndefined();
    expect(attr(server, 'network.protocol.version')).toBe('1.1');
    expect(attr(server, 'user_agent.original')).toMatch(/^OpenAI\/JS /);
    expect(attr(server, 'sluice.model')).toBe('acme/model');
    // UNSET is proto3's default: the decoded status leaves the code (and any message) out.
    expect(server?.status).toEqual({});
  });

  it('records url.query with signed-URL credentials redacted, as the HTTP conventions ask, and keys and tokens a client put there', async () => {
    await setup();
    await fetch(`${gateway!.baseURL}/models?beta=true&sig=secret-signature&Signature=x&key=sk-secret&access_token=t`, { headers: { authorization: `Bearer ${API_KEY}` } });
    const [server] = await gateway!.spans(1);
    expect(attr(server, 'url.path')).toBe('/v1/models');
    expect(attr(server, 'url.query')).toBe('beta=true&sig=REDACTED&Signature=REDACTED&key=REDACTED&access_token=REDACTED');
  });

  it('redacts a credential in url.query however its name is cased or percent-encoded', async () => {
    await setup();
    await fetch(`${gateway!.baseURL}/models?Key=sk-one&k%65y=sk-two&ACCESS%5FTOKEN=t&x-goog-signature=s`, { headers: { authorization: `Bearer ${API_KEY}` } });
    const [server] = await gateway!.spans(1);
    expect(attr(server, 'url.query')).toBe('Key=REDACTED&k%65y=REDACTED&ACCESS%5FTOKEN=REDACTED&x-goog-signature=REDACTED');
  });

  it('records a method the conventions do not know as _OTHER, with the method as sent, and names its span HTTP', async () => {
    await setup();
    await fetch(`${gateway!.baseURL}/chat/completions`, { method: 'PROPFIND', headers: { authorization: `Bearer ${API_KEY}` } });
    const [server] = await gateway!.spans(1);
    expect(server?.name).toBe('HTTP /v1/chat/completions');
    expect(attr(server, 'http.request.method')).toBe('_OTHER');
    expect(attr(server, 'http.request.method_original')).toBe('PROPFIND');
  });

  it('records url.scheme https on a TLS listener', async () => {
    const cert = issueCert('localhost', 'server');
    await setup({ tls: { cert_file: cert.certFile, key_file: cert.keyFile } });
    const status = await new Promise<number | undefined>((resolve, reject) => {
      const req = httpsRequest({ host: '127.0.0.1', port: gateway!.port, path: '/v1/models', ca: testTls().ca, headers: { authorization: `Bearer ${API_KEY}` } }, (res) => {
        res.resume();
        res.on('end', () => resolve(res.statusCode));
      });
      req.on('error', reject);
      req.end();
    });
    expect(status).toBe(200);
    const [server] = await gateway!.spans(1);
    expect(attr(server, 'url.scheme')).toBe('https');
  });

  it('cuts a requested model id of megabytes at 256 characters on the SERVER span (chat, messages, embeddings)', async () => {
    const client = await setup();
    const model = 'x'.repeat(1_000_000);
    await client.chat.completions.create({ model, messages }).catch(() => undefined);
    await client.embeddings.create({ model, input: 'hi' }).catch(() => undefined);
    await fetch(`${gateway!.baseURL.replace(/\/v1$/, '')}/v1/messages`, { method: 'POST', headers: { 'x-api-key': API_KEY, 'content-type': 'application/json' }, body: JSON.stringify({ model, max_tokens: 10, messages }) });
    const servers = await gateway!.spans(3);
    expect(servers.map((s) => attr(s, 'http.response.status_code'))).toEqual([404, 404, 404]);
    for (const server of servers) expect(attr(server, 'sluice.model')).toBe(`${'x'.repeat(256)}...`);
  });

  it('records GenAI attributes on the CLIENT spans, with error.type on the failed one', async () => {
    const client = await setup();
    await client.chat.completions.create({ model: 'acme/model', messages });
    const [failed, ok] = (await gateway!.spans(3)).filter((s) => s.kind === SpanKind.CLIENT);
    expect(attr(failed, 'error.type')).toBe('503');
    expect(failed?.status?.code).toBe(StatusCode.ERROR);
    expect(attr(ok, 'gen_ai.operation.name')).toBe('chat');
    expect(attr(ok, 'gen_ai.provider.name')).toBe('openai');
    expect(attr(ok, 'sluice.provider')).toBe('second');
    expect(attr(ok, 'gen_ai.request.model')).toBe('m-second');
    expect(attr(ok, 'gen_ai.response.model')).toBe('gpt-test-2024');
    expect(attr(ok, 'gen_ai.usage.input_tokens')).toBe(11);
    expect(attr(ok, 'gen_ai.usage.output_tokens')).toBe(7);
    expect(attr(ok, 'gen_ai.response.finish_reasons')).toEqual(['stop']);
    expect(attr(ok, 'server.address')).toBe('127.0.0.1');
    expect(attr(ok, 'server.port')).toBe(upstreams[1]?.port);
    expect(attr(ok, 'error.type')).toBeUndefined();
  });

  it('records what the request asked for with the GenAI names and types: seed, choice count, output type, sampling settings', async () => {
    const client = await setup();
    await client.chat.completions.create({ model: 'acme/model', messages, seed: 42, n: 2, response_format: { type: 'json_object' }, max_completion_tokens: 100, temperature: 1, top_p: 0.5, frequency_penalty: 0.25, presence_penalty: 0, stop: 'END' });
    const ok = (await gateway!.spans(3)).filter((s) => s.kind === SpanKind.CLIENT)[1];
    expect(attr(ok, 'gen_ai.request.seed')).toBe(42);
    expect(attr(ok, 'gen_ai.request.choice.count')).toBe(2);
    expect(attr(ok, 'gen_ai.output.type')).toBe('json');
    expect(attr(ok, 'gen_ai.request.max_tokens')).toBe(100);
    expect(attr(ok, 'gen_ai.request.stop_sequences')).toEqual(['END']);
    // Doubles on the wire, whole or not: a temperature of 1 is not an int attribute.
    const value = (key: string) => ok?.attributes?.find((a) => a.key === key)?.value;
    expect(value('gen_ai.request.temperature')).toEqual({ doubleValue: 1 });
    expect(value('gen_ai.request.top_p')).toEqual({ doubleValue: 0.5 });
    expect(value('gen_ai.request.frequency_penalty')).toEqual({ doubleValue: 0.25 });
    expect(value('gen_ai.request.presence_penalty')).toEqual({ doubleValue: 0 });
  });

  it('leaves out what the request did not ask for, and a choice count of 1', async () => {
    const client = await setup();
    await client.chat.completions.create({ model: 'acme/model', messages, n: 1, response_format: { type: 'text' } });
    const ok = (await gateway!.spans(3)).filter((s) => s.kind === SpanKind.CLIENT)[1];
    const keys = ok?.attributes?.map((a) => a.key).filter((k) => k.startsWith('gen_ai.request.')) ?? [];
    expect(keys).toEqual(['gen_ai.request.model']);
    expect(attr(ok, 'gen_ai.output.type')).toBe('text');
  });

  it('records usage and finish reasons of a streamed attempt', async () => {
    const client = await setup();
    const stream = await client.chat.completions.create({ model: 'acme/model', messages, stream: true });
    for await (const part of stream) void part;
    const ok = (await gateway!.spans(3)).filter((s) => s.kind === SpanKind.CLIENT)[1];
    expect(attr(ok, 'gen_ai.usage.input_tokens')).toBe(5);
    expect(attr(ok, 'gen_ai.usage.output_tokens')).toBe(3);
    expect(attr(ok, 'gen_ai.response.finish_reasons')).toEqual(['stop']);
  });

  it('stamps service.name and deployment.environment.name on the resource', async () => {
    const client = await setup();
    await client.models.list();
    await gateway!.spans(1);
    expect(gateway!.resource()).toEqual({ 'service.name': 'sluice', 'deployment.environment.name': 'staging' });
  });

  it('continues an incoming traceparent', async () => {
    const client = await setup();
    const traceId = '4bf92f3577b34da6a3ce929d0e0e4736';
    const parent = '00f067aa0ba902b7';
    await client.chat.completions.create({ model: 'acme/model', messages }, { headers: { traceparent: `00-${traceId}-${parent}-01` } });
    const spans = await gateway!.spans(3);
    const server = spans.find((s) => s.kind === SpanKind.SERVER);
    expect(server?.traceId).toBe(traceId);
    expect(server?.parentSpanId).toBe(parent);
    expect(spans.every((s) => s.traceId === traceId)).toBe(true);
  });

  it('carries the incoming tracestate onto the attempts as well as the SERVER span', async () => {
    const client = await setup();
    await client.chat.completions.create({ model: 'acme/model', messages }, { headers: { traceparent: '00-4bf92f3577b34da6a3ce929d0e0e4736-00f067aa0ba902b7-01', tracestate: 'vendor=abc' } });
    const spans = await gateway!.spans(3);
    expect(spans.filter((s) => s.kind === SpanKind.CLIENT)).toHaveLength(2);
    expect(spans.map((s) => s.traceState)).toEqual(['vendor=abc', 'vendor=abc', 'vendor=abc']);
  });

  it('sends each attempt upstream as a child of its CLIENT span (traceparent, tracestate), streamed or not', async () => {
    const down = await startUpstream((_b, res) => sendJson(res, 503, { error: { message: 'down' } }));
    const up = await startUpstream((body, res) => (body['stream'] === true ? textStream(res, ['streamed']) : sendJson(res, 200, completion('hello'))));
    upstreams.push(down, up);
    gateway = await startGateway({ providers: { first: openaiProvider(down), second: openaiProvider(up) }, models: [{ id: 'acme/model', endpoints: [{ provider: 'first', model: 'm-first' }, { provider: 'second', model: 'm-second' }] }] });
    const client = new OpenAI({ baseURL: gateway.baseURL, apiKey: API_KEY, maxRetries: 0 });
    const traceId = '4bf92f3577b34da6a3ce929d0e0e4736';
    await client.chat.completions.create({ model: 'acme/model', messages }, { headers: { traceparent: `00-${traceId}-00f067aa0ba902b7-00`, tracestate: 'vendor=abc' } });
    const stream = await client.chat.completions.create({ model: 'acme/model', messages, stream: true });
    for await (const _chunk of stream) void _chunk;
    const attempts = (await gateway.spans(6)).filter((s) => s.kind === SpanKind.CLIENT);
    const sent = [down.requests[0], up.requests[0], down.requests[1], up.requests[1]];
    expect(sent.map((r) => r?.headers['traceparent'])).toEqual(attempts.map((s) => `00-${s.traceId}-${s.spanId}-${s === attempts[0] || s === attempts[1] ? '00' : '01'}`));
    expect(attempts[0]?.traceId).toBe(traceId);
    expect(sent.map((r) => r?.headers['tracestate'])).toEqual(['vendor=abc', 'vendor=abc', undefined, undefined]);
  });

  it('neither continues nor sends W3C Trace Context when OTEL_PROPAGATORS leaves out tracecontext', async () => {
    process.env['OTEL_PROPAGATORS'] = 'none';
    try {
      const client = await setup();
      const traceId = '4bf92f3577b34da6a3ce929d0e0e4736';
      await client.chat.completions.create({ model: 'acme/model', messages }, { headers: { traceparent: `00-${traceId}-00f067aa0ba902b7-01`, tracestate: 'vendor=abc' } });
      const spans = await gateway!.spans(3);
      expect(spans.every((s) => s.traceId !== traceId && (s.traceState ?? '') === '')).toBe(true);
      const sent = upstreams.flatMap((u) => u.requests);
      expect(sent).toHaveLength(2);
      expect(sent.map((r) => [r.headers['traceparent'], r.headers['tracestate']])).toEqual([
        [undefined, undefined],
        [undefined, undefined],
      ]);
    } finally {
      delete process.env['OTEL_PROPAGATORS'];
    }
  });

  it('keeps W3C Trace Context when OTEL_PROPAGATORS lists tracecontext among others', async () => {
    process.env['OTEL_PROPAGATORS'] = 'baggage, TraceContext';
    try {
      const client = await setup();
      const traceId = '4bf92f3577b34da6a3ce929d0e0e4736';
      await client.chat.completions.create({ model: 'acme/model', messages }, { headers: { traceparent: `00-${traceId}-00f067aa0ba902b7-01` } });
      expect((await gateway!.spans(3)).every((s) => s.traceId === traceId)).toBe(true);
      expect(upstreams.flatMap((u) => u.requests).map((r) => r.headers['traceparent']?.slice(3, 35))).toEqual([traceId, traceId]);
    } finally {
      delete process.env['OTEL_PROPAGATORS'];
    }
  });

  it('starts a new trace when the traceparent is malformed', async () => {
    const client = await setup();
    await client.models.list({ headers: { traceparent: '00-4BF92F3577B34DA6A3CE929D0E0E4736-00f067aa0ba902b7-01' } });
    const [server] = await gateway!.spans(1);
    expect(server?.traceId).not.toBe('4bf92f3577b34da6a3ce929d0e0e4736');
    expect(server?.traceId).toMatch(/^[0-9a-f]{32}$/);
    expect(server?.parentSpanId ?? '').toBe('');
  });

  it('records no prompt or completion text by default', async () => {
    const client = await setup();
    await client.chat.completions.create({ model: 'acme/model', messages });
    const text = JSON.stringify(await gateway!.spans(3));
    expect(text).not.toContain('a secret prompt');
    expect(text).not.toContain('hello');
  });

  it('records input and output messages without image data when capture_content is true', async () => {
    const client = await setup({ capture_content: true });
    await client.chat.completions.create({
      model: 'acme/model',
      messages: [{ role: 'user', content: [{ type: 'text', text: 'look' }, { type: 'image_url', image_url: { url: 'data:image/png;base64,aGVsbG8gaW1hZ2U=' } }] }],
    });
    const ok = (await gateway!.spans(3)).filter((s) => s.kind === SpanKind.CLIENT)[1];
    const input = JSON.parse(String(attr(ok, 'gen_ai.input.messages'))) as unknown;
    expect(input).toEqual([{ role: 'user', parts: [{ type: 'text', content: 'look' }, { type: 'blob', modality: 'image', mime_type: 'image/png', content: '[omitted]' }] }]);
    expect(JSON.parse(String(attr(ok, 'gen_ai.output.messages')))).toEqual([{ role: 'assistant', parts: [{ type: 'text', content: 'hello' }], finish_reason: 'stop' }]);
    expect(JSON.stringify(ok)).not.toContain('aGVsbG8gaW1hZ2U=');
  });

  it('records files as the conventions\' file part (by id) or blob (inline, data omitted), each with its modality', async () => {
    const client = await setup({ capture_content: true });
    await client.chat.completions.create({
      model: 'acme/model',
      messages: [
        {
          role: 'user',
          content: [
            { type: 'file', file: { file_id: 'file-abc123' } },
            { type: 'file', file: { filename: 'a.pdf', file_data: 'data:application/pdf;base64,JVBERi0xLjQ=' } },
            { type: 'file', file: { filename: 'b.png', file_data: 'data:image/png;base64,aGVsbG8gaW1hZ2U=' } },
          ],
        },
      ],
    });
    const ok = (await gateway!.spans(3)).filter((s) => s.kind === SpanKind.CLIENT)[1];
    expect(JSON.parse(String(attr(ok, 'gen_ai.input.messages')))).toEqual([
      {
        role: 'user',
        parts: [
          { type: 'file', modality: 'document', file_id: 'file-abc123' },
          { type: 'blob', modality: 'document', mime_type: 'application/pdf', content: '[omitted]' },
          { type: 'blob', modality: 'image', mime_type: 'image/png', content: '[omitted]' },
        ],
      },
    ]);
    expect(JSON.stringify(ok)).not.toContain('JVBERi0xLjQ=');
  });

  it('records no media type for a file whose data URL is malformed, never its data', async () => {
    const client = await setup({ capture_content: true });
    await client.chat.completions.create({
      model: 'acme/model',
      messages: [
        {
          role: 'user',
          content: [
            { type: 'file', file: { filename: 'a.pdf', file_data: 'data:JVBERi0secret-document' } },
          ],
        },
      ],
    });
    const ok = (await gateway!.spans(3)).filter((s) => s.kind === SpanKind.CLIENT)[1];
    expect(JSON.parse(String(attr(ok, 'gen_ai.input.messages')))).toEqual([
      {
        role: 'user',
        parts: [{ type: 'blob', modality: 'document', content: '[omitted]' }],
      },
    ]);
    expect(JSON.stringify(ok)).not.toContain('secret');
  });

  it('records streamed tool calls in the output messages, those of servers that leave index out told apart by id', async () => {
    const up = await startUpstream((_b, res) =>
      sendStream(res, [
        chunk({ role: 'assistant', tool_calls: [{ id: 'call_a', type: 'function', function: { name: 'get_weather', arguments: '{"city":' } }] }),
        chunk({ tool_calls: [{ function: { arguments: '"Paris"}' } }] }),
        chunk({ tool_calls: [{ id: 'call_b', type: 'function', function: { name: 'get_time', arguments: '{}' } }] }),
        chunk({}, 'tool_calls'),
      ]),
    );
    upstreams.push(up);
    gateway = await startGateway({ capture_content: true, providers: { only: openaiProvider(up) }, models: [{ id: 'acme/model', endpoints: [{ provider: 'only', model: 'm' }] }] });
    const client = new OpenAI({ baseURL: gateway.baseURL, apiKey: API_KEY, maxRetries: 0 });
    for await (const _part of await client.chat.completions.create({ model: 'acme/model', messages, stream: true })) {
      // read to the end
    }
    const attempt = (await gateway.spans(2)).find((s) => s.kind === SpanKind.CLIENT);
    const output = JSON.parse(String(attr(attempt, 'gen_ai.output.messages'))) as Array<{ parts: Array<{ type: string; id?: string; name?: string; arguments?: unknown }> }>;
    expect(output[0]?.parts.filter((p) => p.type === 'tool_call').map((p) => [p.id, p.name, p.arguments])).toEqual([
      ['call_a', 'get_weather', '{"city":"Paris"}'],
      ['call_b', 'get_time', '{}'],
    ]);
  });

  it('records a refusal in the output messages, whole and streamed, as text', async () => {
    const refusal = "I'm sorry, I can't help with that.";
    const up = await startUpstream((body, res) => {
      if (body['stream'] !== true) sendJson(res, 200, { ...completion(''), choices: [{ index: 0, message: { role: 'assistant', content: null, refusal }, finish_reason: 'stop' }] });
      else sendStream(res, [chunk({ role: 'assistant', content: null, refusal: '' }), chunk({ refusal: refusal.slice(0, 9) }), chunk({ refusal: refusal.slice(9) }), chunk({}, 'stop')]);
    });
    upstreams.push(up);
    gateway = await startGateway({ capture_content: true, providers: { only: openaiProvider(up) }, models: [{ id: 'acme/model', endpoints: [{ provider: 'only', model: 'm' }] }] });
    const client = new OpenAI({ baseURL: gateway.baseURL, apiKey: API_KEY, maxRetries: 0 });
    await client.chat.completions.create({ model: 'acme/model', messages });
    for await (const _part of await client.chat.completions.create({ model: 'acme/model', messages, stream: true })) {
      // read to the end
    }
    const attempts = (await gateway.spans(4)).filter((s) => s.kind === SpanKind.CLIENT);
    expect(attempts).toHaveLength(2);
    for (const attempt of attempts) {
      expect(JSON.parse(String(attr(attempt, 'gen_ai.output.messages')))).toEqual([{ role: 'assistant', parts: [{ type: 'text', content: refusal }], finish_reason: 'stop' }]);
    }
  });

  it('records a rejected request as a SERVER span with error.type, its status UNSET (a 4xx is the client\'s error)', async () => {
    const client = await setup();
    await client.chat.completions.create({ model: 'acme/model', messages, temperature: 9 }).catch(() => undefined);
    const [server] = await gateway!.spans(1);
    expect(attr(server, 'http.response.status_code')).toBe(400);
    expect(attr(server, 'error.type')).toBe('invalid_value');
    expect(server?.status).toEqual({});
  });

  it('sets status ERROR on the SERVER span when every endpoint failed with a 5xx', async () => {
    const client = await setup({ models: [{ id: 'acme/model', endpoints: [{ provider: 'first', model: 'm-first' }] }] });
    await client.chat.completions.create({ model: 'acme/model', messages }).catch(() => undefined);
    const server = (await gateway!.spans(2)).find((s) => s.kind === SpanKind.SERVER);
    expect(attr(server, 'http.response.status_code')).toBe(503);
    expect(attr(server, 'error.type')).toBeDefined();
    expect(server?.status?.code).toBe(StatusCode.ERROR);
  });

  it('names the models route span after its route template', async () => {
    await setup();
    await fetch(`${gateway!.baseURL}/models/acme/model`, { headers: { authorization: `Bearer ${API_KEY}` } });
    const [server] = await gateway!.spans(1);
    expect(server?.name).toBe('GET /v1/models/{id}');
    expect(attr(server, 'url.path')).toBe('/v1/models/acme/model');
  });
});
