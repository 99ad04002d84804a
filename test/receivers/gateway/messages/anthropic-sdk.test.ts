// The Messages API driven by the official @anthropic-ai/sdk: against an
// Anthropic fake upstream, which checks that the body arrives as the client
// sent it, and against OpenAI-compatible and Bedrock fakes, which check the
// translation.
import Anthropic from '@anthropic-ai/sdk';
import type { ServerResponse } from 'node:http';
import { afterEach, describe, expect, it } from 'vitest';
import { API_KEY, attr, chunk, completion, EventPump, postUnread, readRest, sendJson, sendStream, startGateway, startUpstream, type Gateway, type Upstream } from '../harness.js';
import { message as anthropicMessage, messageEnd, messageStart, sendEvents, textBlock } from '../providers/anthropic/fixtures.js';
import { endFrames, frame, sendConverse, sendError as sendBedrockError, sendFrames, textFrames } from '../providers/bedrock/fixtures.js';
import { requestProblems } from '../providers/bedrock/wire-schema.js';
import { sendResponse as sendGemini } from '../providers/google/fixtures.js';
import { validateGemini } from '../providers/google/wire-schema.js';
import { json, PNG_BASE64, startFake, type FakeUpstream, type Handler, type Seen } from '../providers/shared/fake-upstream.js';

let gateway: Gateway | undefined;
let anthropic: FakeUpstream | undefined;
let bedrock: FakeUpstream | undefined;
let google: FakeUpstream | undefined;
let openai: Upstream | undefined;

afterEach(async () => {
  const problems = [...(anthropic?.problems ?? []), ...(bedrock?.problems ?? []), ...(google?.problems ?? [])];
  await gateway?.close();
  await anthropic?.close();
  await bedrock?.close();
  await google?.close();
  await openai?.close();
  gateway = anthropic = bedrock = google = openai = undefined;
  expect(problems).toEqual([]);
});

/** The native path: the request line and headers as Anthropic documents them (the body is compared whole by each test). */
function nativeProblems(seen: Seen): string[] {
  const problems: string[] = [];
  if (seen.method !== 'POST' || (seen.path !== '/v1/messages' && seen.path !== '/v1/messages/count_tokens')) problems.push(`request line ${seen.method} ${seen.path}`);
  if (seen.headers['x-api-key'] !== 'sk-ant-upstream') problems.push('x-api-key is not the provider key');
  if (!/^\d{4}-\d{2}-\d{2}$/.test(String(seen.headers['anthropic-version']))) problems.push('anthropic-version missing');
  if (seen.headers['authorization'] !== undefined) problems.push('the client key must not travel upstream');
  return problems;
}

const MODELS = [
  { id: 'anthropic/claude-test', name: 'Claude Test', endpoints: [{ provider: 'anthropic', model: 'claude-upstream-1' }, { provider: 'bedrock', model: 'anthropic.claude-upstream-v1:0' }] },
  { id: 'openai/gpt-test', name: 'GPT Test', endpoints: [{ provider: 'openai', model: 'gpt-upstream' }] },
  { id: 'bedrock/nova-test', name: 'Nova Test', endpoints: [{ provider: 'bedrock', model: 'anthropic.claude-sonnet-v1:0' }] },
  { id: 'bedrock/opus-test', name: 'Opus Test', endpoints: [{ provider: 'bedrock', model: 'us.anthropic.claude-opus-4-7' }] },
  { id: 'google/gemini-test', name: 'Gemini Test', endpoints: [{ provider: 'google', model: 'gemini-upstream' }] },
];

interface Fakes {
  anthropic?: Handler;
  openai?: (body: Record<string, unknown>, res: ServerResponse) => void;
  bedrock?: Handler;
  google?: Handler;
}

async function setup(fakes: Fakes, extra: Record<string, unknown> = {}): Promise<Anthropic> {
  const providers: Record<string, unknown> = {};
  if (fakes.anthropic !== undefined) {
    anthropic = await startFake(nativeProblems, fakes.anthropic);
    providers['anthropic'] = { type: 'anthropic', base_url: anthropic.url, api_key: 'sk-ant-upstream' };
  }
  if (fakes.openai !== undefined) {
    openai = await startUpstream(fakes.openai);
    providers['openai'] = { type: 'openai', base_url: openai.url, api_key: 'sk-openai-upstream' };
  }
  if (fakes.bedrock !== undefined) {
    bedrock = await startFake(requestProblems, fakes.bedrock);
    providers['bedrock'] = { type: 'bedrock', base_url: bedrock.url, region: 'us-east-1', api_key: 'bedrock-key' };
  }
  if (fakes.google !== undefined) {
    google = await startFake(validateGemini, fakes.google);
    providers['google'] = { type: 'google', base_url: google.url, api_key: 'gm-test-key' };
  }
  const models = MODELS.filter((m) => m.endpoints.every((e) => providers[e.provider] !== undefined) || m.endpoints.some((e) => providers[e.provider] !== undefined)).map((m) => ({ ...m, endpoints: m.endpoints.filter((e) => providers[e.provider] !== undefined) }));
  gateway = await startGateway({ providers, models, ...extra });
  return new Anthropic({ baseURL: `http://127.0.0.1:${gateway.port}`, apiKey: API_KEY, maxRetries: 0 });
}

function sentNative(index = 0): Record<string, unknown> {
  return anthropic?.requests[index]?.body as Record<string, unknown>;
}

function sentOpenAI(index = 0): Record<string, unknown> {
  return openai?.requests[index]?.body as Record<string, unknown>;
}

const weatherTool = { name: 'get_weather', description: 'Weather for a city', input_schema: { type: 'object' as const, properties: { city: { type: 'string' } }, required: ['city'] } };
const SIGNATURE = 'EqQBCkYIBxgCKkDsig==';

describe('POST /v1/messages to an anthropic provider (native)', () => {
  it('creates a message: the body arrives unchanged but for the model, the answer comes back as Anthropic sent it', async () => {
    const upstreamMessage = anthropicMessage([{ type: 'text', text: 'Bonjour.' }], 'end_turn', { input_tokens: 12, output_tokens: 4, cache_read_input_tokens: 0, cache_creation_input_tokens: 0 });
    const client = await setup({ anthropic: (_seen, res) => json(res, 200, upstreamMessage) });
    const params = {
      model: 'anthropic/claude-test',
      max_tokens: 300,
      system: [{ type: 'text' as const, text: 'You translate.', cache_control: { type: 'ephemeral' as const } }],
      messages: [
        { role: 'user' as const, content: [{ type: 'image' as const, source: { type: 'base64' as const, media_type: 'image/png' as const, data: PNG_BASE64 } }, { type: 'document' as const, source: { type: 'text' as const, media_type: 'text/plain' as const, data: 'Hello.' } }, { type: 'text' as const, text: 'Translate.', cache_control: { type: 'ephemeral' as const, ttl: '1h' as const } }] },
      ],
      metadata: { user_id: 'u-1' },
      stop_sequences: ['END'],
    };
    const { data, response } = await client.messages.create(params).withResponse();
    expect(data).toEqual(upstreamMessage);
    expect(sentNative()).toEqual({ ...params, model: 'claude-upstream-1' });
    expect(response.headers.get('x-sluice-provider')).toBe('anthropic');
  });

  it('streams in the upstream event sequence, thinking and signatures included', async () => {
    const client = await setup({
      anthropic: (_seen, res) =>
        sendEvents(res, [
          messageStart(30),
          { event: 'content_block_start', data: { type: 'content_block_start', index: 0, content_block: { type: 'thinking', thinking: '', signature: '' } } },
          { event: 'content_block_delta', data: { type: 'content_block_delta', index: 0, delta: { type: 'thinking_delta', thinking: 'Hmm.' } } },
          { event: 'content_block_delta', data: { type: 'content_block_delta', index: 0, delta: { type: 'signature_delta', signature: SIGNATURE } } },
          { event: 'content_block_stop', data: { type: 'content_block_stop', index: 0 } },
          ...textBlock(1, ['Hel', 'lo']),
          ...messageEnd('end_turn', 9),
        ]),
    });
    const stream = await client.messages.create({ model: 'anthropic/claude-test', max_tokens: 4000, thinking: { type: 'enabled', budget_tokens: 2000 }, stream: true, messages: [{ role: 'user', content: 'Hi' }] });
    const types: string[] = [];
    for await (const event of stream) types.push(event.type === 'content_block_delta' ? `${event.type}:${event.delta.type}` : event.type);
    expect(types).toEqual([
      'message_start',
      'content_block_start',
      'content_block_delta:thinking_delta',
      'content_block_delta:signature_delta',
      'content_block_stop',
      'content_block_start',
      'content_block_delta:text_delta',
      'content_block_delta:text_delta',
      'content_block_stop',
      'message_delta',
      'message_stop',
    ]);
    expect(sentNative()).toMatchObject({ stream: true, thinking: { type: 'enabled', budget_tokens: 2000 } });
  });

  it('keeps thinking blocks and tool use untouched across turns, and forwards anthropic-beta', async () => {
    const client = await setup({ anthropic: (_seen, res) => json(res, 200, anthropicMessage([{ type: 'text', text: 'Sunny.' }], 'end_turn')) });
    const params = {
      model: 'anthropic/claude-test',
      max_tokens: 4000,
      thinking: { type: 'enabled' as const, budget_tokens: 2000 },
      tools: [weatherTool],
      messages: [
        { role: 'user' as const, content: 'Weather in Paris and Oslo?' },
        {
          role: 'assistant' as const,
          content: [
            { type: 'thinking' as const, thinking: 'Two cities.', signature: SIGNATURE },
            { type: 'tool_use' as const, id: 'toolu_1', name: 'get_weather', input: { city: 'Paris' } },
            { type: 'tool_use' as const, id: 'toolu_2', name: 'get_weather', input: { city: 'Oslo' } },
          ],
        },
        { role: 'user' as const, content: [{ type: 'tool_result' as const, tool_use_id: 'toolu_1', content: 'sunny' }, { type: 'tool_result' as const, tool_use_id: 'toolu_2', content: 'snow', is_error: false }] },
      ],
    };
    await client.beta.messages.create({ ...params, betas: ['interleaved-thinking-2025-05-14'] });
    expect(sentNative()).toEqual({ ...params, model: 'claude-upstream-1' });
    expect(anthropic?.requests[0]?.headers['anthropic-beta']).toBe('interleaved-thinking-2025-05-14');
  });

  it('passes on a thinking budget above max_tokens, which interleaved thinking allows, for Anthropic to judge; Bedrock refuses it by name', async () => {
    const client = await setup({ anthropic: (_seen, res) => json(res, 200, anthropicMessage([{ type: 'text', text: 'Sunny.' }], 'end_turn')), bedrock: () => undefined });
    // With interleaved thinking the budget spans every thinking block of the turn, so it may exceed max_tokens.
    const params = { model: 'anthropic/claude-test', max_tokens: 4000, thinking: { type: 'enabled' as const, budget_tokens: 16_000 }, tools: [weatherTool], messages: [{ role: 'user' as const, content: 'Weather in Oslo?' }] };
    const answer = await client.beta.messages.create({ ...params, betas: ['interleaved-thinking-2025-05-14'] });
    expect(answer.content).toEqual([{ type: 'text', text: 'Sunny.' }]);
    expect(sentNative()).toEqual({ ...params, model: 'claude-upstream-1' });
    const error = await client.messages.create({ ...params, model: 'bedrock/nova-test' }).catch((err: unknown) => err);
    expect(error).toBeInstanceOf(Anthropic.BadRequestError);
    expect((error as Error).message).toContain('thinking.budget_tokens');
    expect(bedrock?.requests).toHaveLength(0);
  });

  it("sends adaptive thinking and its effort, max included, to Claude on Bedrock as Converse's additionalModelRequestFields, and its thinking comes back", async () => {
    const client = await setup({ bedrock: (_seen, res) => sendConverse(res, [{ reasoningContent: { reasoningText: { text: 'Hmm.', signature: SIGNATURE } } }, { text: 'Yes.' }]) });
    const answer = await client.messages.create({ model: 'bedrock/opus-test', max_tokens: 8000, thinking: { type: 'adaptive' }, output_config: { effort: 'max' }, messages: [{ role: 'user', content: 'Sure?' }] });
    expect(answer.content).toEqual([{ type: 'thinking', thinking: 'Hmm.', signature: SIGNATURE }, { type: 'text', text: 'Yes.' }]);
    expect(bedrock?.requests[0]?.body).toMatchObject({ additionalModelRequestFields: { thinking: { type: 'adaptive', display: 'summarized' }, output_config: { effort: 'max' } }, inferenceConfig: { maxTokens: 8000 } });
  });

  it('passes on tools that have no name (an MCP toolset), natively and to count_tokens; a translation refuses them by name', async () => {
    const client = await setup({
      anthropic: (seen, res) => json(res, 200, seen.path.endsWith('/count_tokens') ? { input_tokens: 99 } : anthropicMessage([{ type: 'text', text: 'Listed.' }], 'end_turn')),
      openai: () => undefined,
    });
    const mcp = {
      mcp_servers: [{ type: 'url' as const, url: 'https://mcp.example.com/sse', name: 'example' }],
      tools: [weatherTool, { type: 'mcp_toolset' as const, mcp_server_name: 'example' }],
      messages: [{ role: 'user' as const, content: 'List my files.' }],
      betas: ['mcp-client-2025-11-20'],
    };
    const answer = await client.beta.messages.create({ model: 'anthropic/claude-test', max_tokens: 100, ...mcp });
    expect(answer.content).toEqual([{ type: 'text', text: 'Listed.' }]);
    const { betas: _betas, ...body } = mcp;
    expect(sentNative()).toEqual({ model: 'claude-upstream-1', max_tokens: 100, ...body });
    expect(await client.beta.messages.countTokens({ model: 'anthropic/claude-test', ...mcp })).toEqual({ input_tokens: 99 });
    const unnamed = await client.messages
      .create({ model: 'openai/gpt-test', max_tokens: 100, tools: [{ input_schema: { type: 'object' } } as unknown as Anthropic.Tool], messages: [{ role: 'user', content: 'Hi' }] })
      .catch((err: unknown) => err);
    expect(unnamed).toBeInstanceOf(Anthropic.BadRequestError);
    expect((unnamed as Error).message).toContain('tools.0.name: Field required');
    expect(openai?.requests).toHaveLength(0);
  });

  it('sends tool ids a Gemini answer minted without their thought signature, ids Anthropic refuses (Kimi K2) in its pattern, and every other id as it came', async () => {
    const client = await setup({ anthropic: (_seen, res) => json(res, 200, anthropicMessage([{ type: 'text', text: 'Sunny.' }], 'end_turn')) });
    const geminiId = 'gemini_a1956a0f9ee40666.CiQB0e2Kb+/abc=';
    // Kimi K2 behind an openai-type provider answered an earlier turn with this id.
    const kimiId = 'functions.get_weather:2';
    const call = (id: string, city: string) => ({ type: 'tool_use' as const, id, name: 'get_weather', input: { city } });
    await client.messages.create({
      model: 'anthropic/claude-test',
      max_tokens: 100,
      tools: [weatherTool],
      messages: [
        { role: 'user', content: 'Weather in Paris, Oslo and Rome?' },
        { role: 'assistant', content: [call(geminiId, 'Paris'), call('toolu_2', 'Oslo'), call(kimiId, 'Rome')] },
        { role: 'user', content: [{ type: 'tool_result', tool_use_id: geminiId, content: 'sunny' }, { type: 'tool_result', tool_use_id: 'toolu_2', content: 'snow' }, { type: 'tool_result', tool_use_id: kimiId, content: 'rain' }] },
      ],
    });
    const sent = sentNative()['messages'] as Array<{ content: Array<Record<string, unknown>> }>;
    const ids = sent[1]?.content.map((b) => String(b['id']));
    expect(ids?.slice(0, 2)).toEqual(['gemini_a1956a0f9ee40666', 'toolu_2']);
    expect(ids?.[2]).toMatch(/^functions_get_weather_2_[0-9a-f]{8}$/);
    expect(sent[2]?.content.map((b) => b['tool_use_id'])).toEqual(ids);
  });

  it('holds the upstream of a native stream back while the client does not read, and loses no event', async () => {
    const pad = 'x'.repeat(16 * 1024);
    const wire = (e: { event: string; data: unknown }): string => `event: ${e.event}\ndata: ${JSON.stringify(e.data)}\n\n`;
    let pump: EventPump | undefined;
    await setup({
      anthropic: (_seen, res) => {
        res.writeHead(200, { 'content-type': 'text/event-stream' });
        const [start, blockStart] = [messageStart(), ...textBlock(0, [])];
        res.write(wire(start as { event: string; data: unknown }) + wire(blockStart as { event: string; data: unknown }));
        const delta = (i: number): string => wire({ event: 'content_block_delta', data: { type: 'content_block_delta', index: 0, delta: { type: 'text_delta', text: `<${i}>${pad}` } } });
        const end = [{ event: 'content_block_stop', data: { type: 'content_block_stop', index: 0 } }, ...messageEnd('end_turn')].map(wire).join('');
        pump = new EventPump(res, delta, end, 16_384);
      },
    });
    const response = await postUnread(`http://127.0.0.1:${gateway?.port}/v1/messages`, { 'x-api-key': API_KEY, 'anthropic-version': '2023-06-01' }, { model: 'anthropic/claude-test', max_tokens: 10, stream: true, messages: [{ role: 'user', content: 'Hi' }] });
    while (pump === undefined) await new Promise((r) => setTimeout(r, 10));
    await pump.heldFor(300);
    expect(pump.written).toBeLessThan(pump.cap);
    pump.stop();
    const text = await readRest(response);
    const order = [...text.matchAll(/<(\d+)>/g)].map((m) => Number(m[1]));
    expect(order).toEqual(Array.from({ length: pump.written }, (_, i) => i));
    expect(text.trimEnd().endsWith('event: message_stop\ndata: {"type":"message_stop"}')).toBe(true);
  });

  it('passes on an event whose data the upstream split over several lines', async () => {
    const client = await setup({
      anthropic: (_seen, res) => {
        res.writeHead(200, { 'content-type': 'text/event-stream' });
        const wire = (e: { event: string; data: unknown }): string => `event: ${e.event}\ndata: ${JSON.stringify(e.data)}\n\n`;
        const [start, blockStart] = [messageStart(), ...textBlock(0, [])] as Array<{ event: string; data: unknown }>;
        // One delta's JSON over two data lines: SSE joins them with a newline, which JSON allows between tokens.
        const split = 'event: content_block_delta\ndata: {"type":"content_block_delta","index":0,\ndata: "delta":{"type":"text_delta","text":"Hello"}}\n\n';
        const end = [{ event: 'content_block_stop', data: { type: 'content_block_stop', index: 0 } }, ...messageEnd('end_turn')];
        res.end(wire(start as { event: string; data: unknown }) + wire(blockStart as { event: string; data: unknown }) + split + end.map(wire).join(''));
      },
    });
    const message = await client.messages.stream({ model: 'anthropic/claude-test', max_tokens: 10, messages: [{ role: 'user', content: 'Hi' }] }).finalMessage();
    expect(message.content).toEqual([{ type: 'text', text: 'Hello' }]);
  });

  it('passes over events with empty data (a keep-alive ping from a server in between), as the SDK does', async () => {
    const client = await setup({
      anthropic: (_seen, res) => {
        res.writeHead(200, { 'content-type': 'text/event-stream' });
        const wire = (e: { event: string; data: unknown }): string => `event: ${e.event}\ndata: ${JSON.stringify(e.data)}\n\n`;
        const events = [messageStart(), ...textBlock(0, ['Hel', 'lo']), ...messageEnd('end_turn')] as Array<{ event: string; data: unknown }>;
        res.end(`event: ping\ndata:\n\n${events.slice(0, 3).map(wire).join('')}event: ping\ndata:\n\n${events.slice(3).map(wire).join('')}`);
      },
    });
    const message = await client.messages.stream({ model: 'anthropic/claude-test', max_tokens: 10, messages: [{ role: 'user', content: 'Hi' }] }).finalMessage();
    expect(message.content).toEqual([{ type: 'text', text: 'Hello' }]);
  });

  it("passes on Anthropic's request-id (the SDK's _request_id), whole and streamed, and no other upstream header", async () => {
    const upstreamHeaders = { 'request-id': 'req_011CSHoEeqs5C35K2UUqR7Fy', 'set-cookie': 'session=upstream', 'anthropic-organization-id': 'org-upstream', 'x-envoy-upstream-service-time': '12' };
    const client = await setup({
      anthropic: (seen, res) => {
        if ((seen.body as { stream?: boolean }).stream === true) sendEvents(res, [messageStart(), ...textBlock(0, ['Hi.']), ...messageEnd('end_turn')], { headers: upstreamHeaders });
        else json(res, 200, anthropicMessage([{ type: 'text', text: 'Hi.' }], 'end_turn'), upstreamHeaders);
      },
    });
    const params = { model: 'anthropic/claude-test', max_tokens: 100, messages: [{ role: 'user' as const, content: 'Hi' }] };
    expect((await client.messages.create(params))._request_id).toBe('req_011CSHoEeqs5C35K2UUqR7Fy');
    const whole = await client.messages.create(params).withResponse();
    expect(whole.request_id).toBe('req_011CSHoEeqs5C35K2UUqR7Fy');
    const streamed = await client.messages.create({ ...params, stream: true }).withResponse();
    for await (const _event of streamed.data);
    expect(streamed.request_id).toBe('req_011CSHoEeqs5C35K2UUqR7Fy');
    for (const response of [whole.response, streamed.response]) {
      expect([response.headers.get('set-cookie'), response.headers.get('anthropic-organization-id'), response.headers.get('x-envoy-upstream-service-time')]).toEqual([null, null, null]);
    }
  });

  it("passes on Anthropic's request-id with an error it answered (the SDK's APIError.requestID), whole, streamed and counted, and no other upstream header", async () => {
    const upstreamHeaders = { 'request-id': 'req_011CSHoErrorq5C35K2UUqR7', 'set-cookie': 'session=upstream', 'anthropic-organization-id': 'org-upstream' };
    const client = await setup({ anthropic: (_seen, res) => json(res, 400, { type: 'error', error: { type: 'invalid_request_error', message: 'max_tokens: too large' } }, upstreamHeaders) });
    const params = { model: 'anthropic/claude-test', max_tokens: 100, messages: [{ role: 'user' as const, content: 'Hi' }] };
    const failures = await Promise.all([
      client.messages.create(params).catch((err: unknown) => err),
      client.messages.create({ ...params, stream: true }).catch((err: unknown) => err),
      client.messages.countTokens({ model: params.model, messages: params.messages }).catch((err: unknown) => err),
    ]);
    for (const err of failures) {
      expect(err).toBeInstanceOf(Anthropic.BadRequestError);
      const error = err as InstanceType<typeof Anthropic.BadRequestError>;
      expect(error.requestID).toBe('req_011CSHoErrorq5C35K2UUqR7');
      expect([error.headers?.get('set-cookie'), error.headers?.get('anthropic-organization-id')]).toEqual([null, null]);
    }
  });

  it("lets a browser script read Anthropic's request-id when cors is configured", async () => {
    await setup({ anthropic: (_seen, res) => json(res, 200, anthropicMessage([{ type: 'text', text: 'Hi.' }], 'end_turn'), { 'request-id': 'req_011CSHoEeqs5C35K2UUqR7Fy' }) }, { cors: { allowed_origins: ['https://app.example.com'] } });
    const response = await fetch(`http://127.0.0.1:${gateway?.port}/v1/messages`, {
      method: 'POST',
      headers: { origin: 'https://app.example.com', 'x-api-key': API_KEY, 'anthropic-version': '2023-06-01', 'content-type': 'application/json' },
      body: JSON.stringify({ model: 'anthropic/claude-test', max_tokens: 100, messages: [{ role: 'user', content: 'Hi' }] }),
    });
    await response.text();
    expect(response.status).toBe(200);
    expect(response.headers.get('request-id')).toBe('req_011CSHoEeqs5C35K2UUqR7Fy');
    expect(response.headers.get('access-control-expose-headers')?.split(', ')).toContain('request-id');
  });

  it('passes on no request-id with an error when Anthropic\'s is not a plain id', async () => {
    const client = await setup({ anthropic: (_seen, res) => json(res, 400, { type: 'error', error: { type: 'invalid_request_error', message: 'bad' } }, { 'request-id': 'req_1 <script>' }) });
    const err = await client.messages.create({ model: 'anthropic/claude-test', max_tokens: 100, messages: [{ role: 'user', content: 'Hi' }] }).catch((e: unknown) => e);
    expect(err).toBeInstanceOf(Anthropic.BadRequestError);
    expect((err as InstanceType<typeof Anthropic.BadRequestError>).requestID).toBeNull();
  });

  it('counts tokens at Anthropic', async () => {
    const client = await setup({ anthropic: (_seen, res) => json(res, 200, { input_tokens: 42 }) });
    const counted = await client.messages.countTokens({ model: 'anthropic/claude-test', messages: [{ role: 'user', content: 'How many?' }] });
    expect(counted).toEqual({ input_tokens: 42 });
    expect(anthropic?.requests[0]?.path).toBe('/v1/messages/count_tokens');
    expect(sentNative()).toEqual({ model: 'claude-upstream-1', messages: [{ role: 'user', content: 'How many?' }] });
  });

  it('falls back from an overloaded (529) Anthropic upstream to Bedrock, and the client sees one normal stream', async () => {
    const client = await setup({
      anthropic: (_seen, res) => json(res, 529, { type: 'error', error: { type: 'overloaded_error', message: 'Overloaded' } }),
      bedrock: (seen, res) => {
        if (seen.path.endsWith('/converse')) sendConverse(res, [{ text: 'From Bedrock.' }]);
        else void sendFrames(res, [frame('messageStart', { role: 'assistant' }), ...textFrames(0, ['From ', 'Bedrock.']), ...endFrames('end_turn')]);
      },
    });
    const stream = client.messages.stream({ model: 'anthropic/claude-test', max_tokens: 200, messages: [{ role: 'user', content: 'Hi' }] });
    const final = await stream.finalMessage();
    expect(final).toMatchObject({ type: 'message', role: 'assistant', content: [{ type: 'text', text: 'From Bedrock.' }], stop_reason: 'end_turn', usage: { input_tokens: 30, output_tokens: 12 } });
    expect(anthropic?.requests).toHaveLength(1);
    expect(bedrock?.requests[0]?.body).toMatchObject({ messages: [{ role: 'user', content: [{ text: 'Hi' }] }], inferenceConfig: { maxTokens: 200 } });
    const { data, response } = await client.messages.create({ model: 'anthropic/claude-test', max_tokens: 200, messages: [{ role: 'user', content: 'Hi' }] }).withResponse();
    expect(data.content).toEqual([{ type: 'text', text: 'From Bedrock.' }]);
    expect([response.headers.get('x-sluice-provider'), response.headers.get('x-sluice-attempts')]).toEqual(['bedrock', '2']);
  });

  it('falls back when an Anthropic upstream answers 200 with a body that is not a message', async () => {
    const client = await setup({
      anthropic: (_seen, res) => json(res, 200, { type: 'error', error: { type: 'api_error', message: 'proxy trouble' } }),
      bedrock: (_seen, res) => sendConverse(res, [{ text: 'From Bedrock.' }]),
    });
    const { data, response } = await client.messages.create({ model: 'anthropic/claude-test', max_tokens: 200, messages: [{ role: 'user', content: 'Hi' }] }).withResponse();
    expect(data.content).toEqual([{ type: 'text', text: 'From Bedrock.' }]);
    expect([response.headers.get('x-sluice-provider'), response.headers.get('x-sluice-attempts')]).toEqual(['bedrock', '2']);
  });

  it('refuses a tool_result holding null for a translated provider with a 400 naming it', async () => {
    const client = await setup({ openai: () => undefined });
    const messages = [{ role: 'user' as const, content: [{ type: 'tool_result' as const, tool_use_id: 't1', content: [null] }] }] as unknown as Anthropic.MessageParam[];
    const error = await client.messages.create({ model: 'openai/gpt-test', max_tokens: 100, messages }).catch((err: unknown) => err);
    expect(error).toBeInstanceOf(Anthropic.BadRequestError);
    expect((error as InstanceType<typeof Anthropic.BadRequestError>).error).toMatchObject({ type: 'error', error: { type: 'invalid_request_error' } });
    expect((error as Error).message).toContain('messages.0.content.0.content.0');
    expect(openai?.requests).toHaveLength(0);
  });

  it('answers the SERVER span POST /v1/messages and a CLIENT span per attempt with gen_ai attributes', async () => {
    const client = await setup({
      anthropic: (_seen, res) => json(res, 529, { type: 'error', error: { type: 'overloaded_error', message: 'Overloaded' } }),
      bedrock: (_seen, res) => sendConverse(res, [{ text: 'ok' }]),
    });
    await client.messages.create({ model: 'anthropic/claude-test', max_tokens: 100, messages: [{ role: 'user', content: 'Hi' }] });
    const spans = (await gateway?.spans(3)) ?? [];
    const server = spans.find((s) => s.name === 'POST /v1/messages');
    expect(attr(server, 'sluice.model')).toBe('anthropic/claude-test');
    expect(attr(server, 'sluice.provider')).toBe('bedrock');
    const clients = spans.filter((s) => s.parentSpanId === server?.spanId);
    expect(clients.map((s) => [s.name, attr(s, 'gen_ai.provider.name'), attr(s, 'error.type') ?? null])).toEqual([
      ['chat claude-upstream-1', 'anthropic', '529'],
      ['chat anthropic.claude-upstream-v1:0', 'aws.bedrock', null],
    ]);
    expect([attr(clients[1], 'gen_ai.usage.input_tokens'), attr(clients[1], 'gen_ai.usage.output_tokens'), attr(clients[1], 'gen_ai.operation.name')]).toEqual([30, 12, 'chat']);
  });
  it('records the settings a native request asked for on its CLIENT span with the GenAI names and types', async () => {
    const client = await setup({ anthropic: (_seen, res) => json(res, 200, anthropicMessage([{ type: 'text', text: 'ok' }], 'end_turn')) });
    // The SDK's types no longer list the sampling settings; the Messages API still takes them.
    const params = { model: 'anthropic/claude-test', max_tokens: 100, temperature: 1, top_k: 5, stop_sequences: ['END'], messages: [{ role: 'user' as const, content: 'Hi' }] };
    await client.messages.create(params as Anthropic.MessageCreateParamsNonStreaming);
    const span = (await gateway?.spans(2))?.find((s) => s.name === 'chat claude-upstream-1');
    expect(attr(span, 'gen_ai.request.max_tokens')).toBe(100);
    expect(attr(span, 'gen_ai.request.stop_sequences')).toEqual(['END']);
    const value = (key: string) => span?.attributes?.find((a) => a.key === key)?.value;
    expect(value('gen_ai.request.temperature')).toEqual({ doubleValue: 1 });
    expect(value('gen_ai.request.top_k')).toEqual({ doubleValue: 5 });
  });
  it('records at most 16 stop sequences, each cut at 256 characters: a client cannot put megabytes on every attempt\'s span', async () => {
    const client = await setup({ anthropic: (_seen, res) => json(res, 200, anthropicMessage([{ type: 'text', text: 'ok' }], 'end_turn')) });
    const stops = ['x'.repeat(10_000), ...Array.from({ length: 99 }, (_, i) => `S${i}`)];
    await client.messages.create({ model: 'anthropic/claude-test', max_tokens: 100, stop_sequences: stops, messages: [{ role: 'user', content: 'Hi' }] });
    const span = (await gateway?.spans(2))?.find((s) => s.name === 'chat claude-upstream-1');
    expect(attr(span, 'gen_ai.request.stop_sequences')).toEqual([`${'x'.repeat(256)}...`, ...stops.slice(1, 16)]);
  });
  it('names the provider on the SERVER span of a native stream, and keeps serving when an upstream sends a stop_reason that is not a string', async () => {
    const client = await setup({
      anthropic: (_seen, res) =>
        sendEvents(res, [
          messageStart(),
          ...textBlock(0, ['Hi.']),
          { event: 'message_delta', data: { type: 'message_delta', delta: { stop_reason: 7, stop_sequence: null }, usage: { output_tokens: 3 } } },
          { event: 'message_stop', data: { type: 'message_stop' } },
        ]),
    });
    const params = { model: 'anthropic/claude-test', max_tokens: 100, messages: [{ role: 'user' as const, content: 'Hi' }] };
    expect(await client.messages.stream(params).finalText()).toBe('Hi.');
    expect(await client.messages.stream(params).finalText()).toBe('Hi.');
    const spans = (await gateway?.spans(4)) ?? [];
    const servers = spans.filter((s) => s.name === 'POST /v1/messages');
    expect(servers.map((s) => attr(s, 'sluice.provider'))).toEqual(['anthropic', 'anthropic']);
    const attempts = spans.filter((s) => s.name === 'chat claude-upstream-1');
    expect(attempts).toHaveLength(2);
    for (const attempt of attempts) expect(attr(attempt, 'gen_ai.response.finish_reasons')).toBeUndefined();
  });
});

describe('capture_content on the native path', () => {
  it('records the conversation and the streamed answer on the CLIENT span', async () => {
    const client = await setup(
      {
        anthropic: (_seen, res) =>
          sendEvents(res, [
            messageStart(),
            ...textBlock(0, ['Let me ', 'check.']),
            { event: 'content_block_start', data: { type: 'content_block_start', index: 1, content_block: { type: 'tool_use', id: 'toolu_1', name: 'get_weather', input: {} } } },
            { event: 'content_block_delta', data: { type: 'content_block_delta', index: 1, delta: { type: 'input_json_delta', partial_json: '{"city":"Oslo"}' } } },
            { event: 'content_block_stop', data: { type: 'content_block_stop', index: 1 } },
            ...messageEnd('tool_use'),
          ]),
      },
      { capture_content: true },
    );
    await client.messages.stream({ model: 'anthropic/claude-test', max_tokens: 100, system: 'Be brief.', tools: [weatherTool], messages: [{ role: 'user', content: 'Oslo?' }] }).finalMessage();
    const span = (await gateway?.spans(2))?.find((s) => s.name === 'chat claude-upstream-1');
    // Messages takes its system prompt apart from the history: the conventions' gen_ai.system_instructions.
    expect(JSON.parse(String(attr(span, 'gen_ai.system_instructions')))).toEqual([{ type: 'text', content: 'Be brief.' }]);
    expect(JSON.parse(String(attr(span, 'gen_ai.input.messages')))).toEqual([{ role: 'user', parts: [{ type: 'text', content: 'Oslo?' }] }]);
    expect(JSON.parse(String(attr(span, 'gen_ai.output.messages')))).toEqual([
      { role: 'assistant', parts: [{ type: 'text', content: 'Let me check.' }, { type: 'tool_call', id: 'toolu_1', name: 'get_weather', arguments: '{"city":"Oslo"}' }], finish_reason: 'tool_use' },
    ]);
  });
});

describe('POST /v1/messages translated to an OpenAI-compatible provider', () => {
  it('records the system prompt as gen_ai.system_instructions, apart from the input messages, when capture_content is on', async () => {
    const client = await setup({ openai: (_body, res) => sendJson(res, 200, completion('Hi.')) }, { capture_content: true });
    await client.messages.create({ model: 'openai/gpt-test', max_tokens: 100, system: [{ type: 'text', text: 'Be brief.' }, { type: 'text', text: 'Be kind.' }], messages: [{ role: 'user', content: 'Hello' }] });
    const span = (await gateway?.spans(2))?.find((s) => s.name === 'chat gpt-upstream');
    expect(JSON.parse(String(attr(span, 'gen_ai.system_instructions')))).toEqual([
      { type: 'text', content: 'Be brief.' },
      { type: 'text', content: 'Be kind.' },
    ]);
    expect(JSON.parse(String(attr(span, 'gen_ai.input.messages')))).toEqual([{ role: 'user', parts: [{ type: 'text', content: 'Hello' }] }]);
  });

  it('answers tool_use for tool calls an upstream finished with stop (a named tool_choice), whole and streamed', async () => {
    const call = { id: 'call_a', type: 'function', function: { name: 'get_weather', arguments: '{"city":"Oslo"}' } };
    const client = await setup({
      openai: (body, res) => {
        if (body['stream'] === true) sendStream(res, [chunk({ role: 'assistant', tool_calls: [{ index: 0, ...call }] }), chunk({}, 'stop'), { ...chunk({}), choices: [], usage: { prompt_tokens: 5, completion_tokens: 3, total_tokens: 8 } }]);
        else sendJson(res, 200, { ...completion(''), choices: [{ index: 0, message: { role: 'assistant', content: null, tool_calls: [call] }, finish_reason: 'stop', logprobs: null }] });
      },
    });
    const params = { model: 'openai/gpt-test', max_tokens: 100, tools: [weatherTool], tool_choice: { type: 'tool' as const, name: 'get_weather' }, messages: [{ role: 'user' as const, content: 'Weather in Oslo?' }] };
    const whole = await client.messages.create(params);
    expect(whole.stop_reason).toBe('tool_use');
    expect(whole.content).toEqual([{ type: 'tool_use', id: 'call_a', name: 'get_weather', input: { city: 'Oslo' } }]);
    const streamed = await client.messages.stream(params).finalMessage();
    expect(streamed.stop_reason).toBe('tool_use');
  });

  it('gives counts an upstream got wrong (negative, not a number) as 0 in the Message and on the CLIENT span, as they are billed', async () => {
    const client = await setup({ openai: (_body, res) => sendJson(res, 200, completion('Hi.', { usage: { prompt_tokens: -5, completion_tokens: 'many', total_tokens: 1e308, prompt_tokens_details: { cached_tokens: 2.5 } } })) });
    const answer = await client.messages.create({ model: 'openai/gpt-test', max_tokens: 10, messages: [{ role: 'user', content: 'Hi' }] });
    expect(answer.usage).toEqual({ input_tokens: 0, output_tokens: 0, cache_creation_input_tokens: 0, cache_read_input_tokens: 0 });
    const attempt = ((await gateway?.spans(2)) ?? []).find((s) => s.name === 'chat gpt-upstream');
    expect([attr(attempt, 'gen_ai.usage.input_tokens'), attr(attempt, 'gen_ai.usage.output_tokens'), attr(attempt, 'gen_ai.usage.cache_read.input_tokens')]).toEqual([0, 0, 0]);
  });

  it.each([false, true])('gives a Message (streamed: %s) from an upstream that reported no usage the estimate it was charged, as the CLIENT span says', async (stream) => {
    const text = 'Bonjour tout le monde, comment allez-vous ?';
    const client = await setup({
      openai: (body, res) => {
        if (body['stream'] === true) sendStream(res, [chunk({ role: 'assistant', content: text }), chunk({}, 'stop')]);
        else sendJson(res, 200, completion(text, { usage: null }));
      },
    });
    const params = { model: 'openai/gpt-test', max_tokens: 10, messages: [{ role: 'user' as const, content: 'Say hello in French, politely, to everyone.' }] };
    const answer = stream ? await client.messages.stream(params).finalMessage() : await client.messages.create(params);
    const attempt = ((await gateway?.spans(2)) ?? []).find((s) => s.name === 'chat gpt-upstream');
    expect(attr(attempt, 'sluice.usage.source')).toBe('estimate');
    expect(answer.usage.input_tokens).toBeGreaterThan(0);
    expect(answer.usage.output_tokens).toBeGreaterThan(0);
    expect([answer.usage.input_tokens, answer.usage.output_tokens]).toEqual([attr(attempt, 'gen_ai.usage.input_tokens'), attr(attempt, 'gen_ai.usage.output_tokens')]);
  });

  it('creates a message with a system prompt and an image: Chat Completions upstream, a Message back', async () => {
    const client = await setup({ openai: (_body, res) => sendJson(res, 200, completion('Une image.', { usage: { prompt_tokens: 120, completion_tokens: 5, total_tokens: 125, prompt_tokens_details: { cached_tokens: 100 } } })) });
    const { data, response } = await client.messages
      .create({
        model: 'openai/gpt-test',
        max_tokens: 300,
        system: 'You describe images.',
        stop_sequences: ['END'],
        metadata: { user_id: 'u-1' },
        messages: [{ role: 'user', content: [{ type: 'image', source: { type: 'base64', media_type: 'image/png', data: PNG_BASE64 } }, { type: 'text', text: 'What is it?', cache_control: { type: 'ephemeral' } }] }],
      })
      .withResponse();
    expect(sentOpenAI()).toEqual({
      model: 'gpt-upstream',
      messages: [
        { role: 'system', content: [{ type: 'text', text: 'You describe images.' }] },
        { role: 'user', content: [{ type: 'image_url', image_url: { url: `data:image/png;base64,${PNG_BASE64}` } }, { type: 'text', text: 'What is it?' }] },
      ],
      max_completion_tokens: 300,
      stream: false,
      stop: ['END'],
      user: 'u-1',
    });
    expect(data).toMatchObject({ type: 'message', role: 'assistant', model: 'gpt-test-2024', content: [{ type: 'text', text: 'Une image.' }], stop_reason: 'end_turn', stop_sequence: null, usage: { input_tokens: 20, output_tokens: 5, cache_read_input_tokens: 100, cache_creation_input_tokens: 0 } });
    expect(data.id).toMatch(/^msg_/);
    expect(response.headers.get('x-sluice-provider')).toBe('openai');
  });

  it('streams in Anthropic event order, parallel tool calls as tool_use blocks', async () => {
    const client = await setup({
      openai: (_body, res) =>
        sendStream(res, [
          chunk({ role: 'assistant', content: 'Checking.' }),
          chunk({ tool_calls: [{ index: 0, id: 'call_1', type: 'function', function: { name: 'get_weather', arguments: '' } }] }),
          chunk({ tool_calls: [{ index: 0, function: { arguments: '{"city":' } }] }),
          chunk({ tool_calls: [{ index: 0, function: { arguments: '"Paris"}' } }] }),
          chunk({ tool_calls: [{ index: 1, id: 'call_2', type: 'function', function: { name: 'get_weather', arguments: '{"city":"Oslo"}' } }] }),
          chunk({}, 'tool_calls'),
          { id: 'chatcmpl-s', object: 'chat.completion.chunk', created: 1, model: 'gpt-test-2024', choices: [], usage: { prompt_tokens: 50, completion_tokens: 20, total_tokens: 70 } },
        ]),
    });
    const stream = await client.messages.create({ model: 'openai/gpt-test', max_tokens: 300, tools: [weatherTool], tool_choice: { type: 'auto' }, stream: true, messages: [{ role: 'user', content: 'Paris and Oslo?' }] });
    const types: string[] = [];
    for await (const event of stream) types.push(event.type === 'content_block_delta' ? `${event.type}:${event.delta.type}` : event.type);
    // The SDK reads past ping events; the raw stream below shows where it is.
    expect(types).toEqual([
      'message_start',
      'content_block_start',
      'content_block_delta:text_delta',
      'content_block_stop',
      'content_block_start',
      'content_block_delta:input_json_delta',
      'content_block_delta:input_json_delta',
      'content_block_stop',
      'content_block_start',
      'content_block_delta:input_json_delta',
      'content_block_stop',
      'message_delta',
      'message_stop',
    ]);
    const raw = await fetch(`http://127.0.0.1:${gateway?.port}/v1/messages`, {
      method: 'POST',
      headers: { 'x-api-key': API_KEY, 'content-type': 'application/json', 'anthropic-version': '2023-06-01' },
      body: JSON.stringify({ model: 'openai/gpt-test', max_tokens: 300, tools: [weatherTool], stream: true, messages: [{ role: 'user', content: 'Paris and Oslo?' }] }),
    });
    const text = await raw.text();
    expect(raw.headers.get('content-type')).toMatch(/^text\/event-stream/);
    expect([...text.matchAll(/^event: (\w+)$/gm)].map((m) => m[1]).slice(0, 3)).toEqual(['message_start', 'ping', 'content_block_start']);
    for (const event of text.split('\n\n').filter((e) => e !== '')) {
      const [name, data] = event.split('\n');
      expect(JSON.parse(String(data?.slice(6))).type).toBe(name?.slice(7));
    }
    expect(sentOpenAI()).toMatchObject({ stream: true, stream_options: { include_usage: true }, tools: [{ type: 'function', function: { name: 'get_weather', description: 'Weather for a city', parameters: weatherTool.input_schema } }], tool_choice: 'auto' });

    const final = await client.messages.stream({ model: 'openai/gpt-test', max_tokens: 300, tools: [weatherTool], messages: [{ role: 'user', content: 'Paris and Oslo?' }] }).finalMessage();
    expect(final).toMatchObject({
      content: [
        { type: 'text', text: 'Checking.' },
        { type: 'tool_use', id: 'call_1', name: 'get_weather', input: { city: 'Paris' } },
        { type: 'tool_use', id: 'call_2', name: 'get_weather', input: { city: 'Oslo' } },
      ],
      stop_reason: 'tool_use',
      usage: { input_tokens: 50, output_tokens: 20 },
    });
  });

  it('keeps a tool call an upstream streams without an id (given one) or names only in a later delta, whole and streamed', async () => {
    const streamed = [
      // NVIDIA NIM, StepFun, SiliconFlow: no id at all.
      chunk({ role: 'assistant', tool_calls: [{ index: 0, type: 'function', function: { name: 'get_weather', arguments: '' } }] }),
      chunk({ tool_calls: [{ index: 0, function: { arguments: '{"city":"Paris"}' } }] }),
      // The name after the id, and '' for id and name on the deltas that follow (DashScope).
      chunk({ tool_calls: [{ index: 1, id: 'call_2', type: 'function', function: { arguments: '' } }] }),
      chunk({ tool_calls: [{ index: 1, id: '', function: { name: 'get_weather', arguments: '{"city":' } }] }),
      chunk({ tool_calls: [{ index: 1, id: '', function: { name: '', arguments: '"Oslo"}' } }] }),
      chunk({}, 'tool_calls'),
    ];
    const whole = { ...completion(''), choices: [{ index: 0, message: { role: 'assistant', content: null, tool_calls: [{ type: 'function', function: { name: 'get_weather', arguments: '{"city":"Rome"}' } }] }, finish_reason: 'tool_calls' }] };
    const client = await setup({ openai: (body, res) => (body['stream'] === true ? sendStream(res, streamed) : sendJson(res, 200, whole)) });
    const params = { model: 'openai/gpt-test', max_tokens: 300, tools: [weatherTool], messages: [{ role: 'user' as const, content: 'Paris and Oslo?' }] };
    const final = await client.messages.stream(params).finalMessage();
    expect(final.content).toEqual([
      { type: 'tool_use', id: expect.stringMatching(/^toolu_\w{24}$/), name: 'get_weather', input: { city: 'Paris' } },
      { type: 'tool_use', id: 'call_2', name: 'get_weather', input: { city: 'Oslo' } },
    ]);
    const answer = await client.messages.create(params);
    expect(answer.content).toEqual([{ type: 'tool_use', id: expect.stringMatching(/^toolu_\w{24}$/), name: 'get_weather', input: { city: 'Rome' } }]);
  });

  it('keeps blocks one after another when an upstream interleaves parallel tool calls, and tells calls without an index by id', async () => {
    const interleaved = [
      chunk({ role: 'assistant', tool_calls: [{ index: 0, id: 'call_1', type: 'function', function: { name: 'get_weather', arguments: '' } }] }),
      chunk({ tool_calls: [{ index: 0, function: { arguments: '{"city":' } }] }),
      chunk({ tool_calls: [{ index: 1, id: 'call_2', type: 'function', function: { name: 'get_weather', arguments: '{"city":' } }] }),
      chunk({ tool_calls: [{ index: 0, function: { arguments: '"Paris"}' } }] }),
      chunk({ tool_calls: [{ index: 1, function: { arguments: '"Oslo"}' } }] }),
      chunk({}, 'tool_calls'),
    ];
    const withoutIndex = [
      chunk({ role: 'assistant', tool_calls: [{ id: 'call_x', type: 'function', function: { name: 'get_weather', arguments: '{"city":"Rome"}' } }] }),
      chunk({ tool_calls: [{ id: 'call_y', type: 'function', function: { name: 'get_weather', arguments: '{"city":"Lima"}' } }] }),
      chunk({}, 'tool_calls'),
    ];
    const client = await setup({ openai: (body, res) => sendStream(res, (body['messages'] as { content: string }[])[0]?.content === 'interleaved' ? interleaved : withoutIndex) });
    const params = (content: string) => ({ model: 'openai/gpt-test', max_tokens: 300, tools: [weatherTool], stream: true, messages: [{ role: 'user' as const, content }] });
    const raw = await fetch(`http://127.0.0.1:${gateway?.port}/v1/messages`, { method: 'POST', headers: { 'x-api-key': API_KEY, 'content-type': 'application/json' }, body: JSON.stringify(params('interleaved')) });
    // Anthropic's order: a block starts, takes its deltas and stops before the next one starts.
    let open: number | undefined;
    const problems: string[] = [];
    for (const event of (await raw.text()).split('\n\n').filter((e) => e !== '')) {
      const data = JSON.parse(String(event.split('\n')[1]?.slice(6))) as { type: string; index?: number };
      if (data.type === 'content_block_start') {
        if (open !== undefined) problems.push(`block ${data.index} started while ${open} is open`);
        open = data.index;
      } else if (data.type === 'content_block_delta' && data.index !== open) problems.push(`delta for block ${data.index} while ${open} is open`);
      else if (data.type === 'content_block_stop') open = data.index === open ? undefined : (problems.push(`stop for block ${data.index}`), open);
    }
    expect(problems).toEqual([]);
    const calls = [
      { type: 'tool_use', id: 'call_1', name: 'get_weather', input: { city: 'Paris' } },
      { type: 'tool_use', id: 'call_2', name: 'get_weather', input: { city: 'Oslo' } },
    ];
    expect((await client.messages.stream(params('interleaved')).finalMessage()).content).toEqual(calls);
    expect((await client.messages.stream(params('no index')).finalMessage()).content).toEqual([
      { type: 'tool_use', id: 'call_x', name: 'get_weather', input: { city: 'Rome' } },
      { type: 'tool_use', id: 'call_y', name: 'get_weather', input: { city: 'Lima' } },
    ]);
  });

  it('keeps parallel tool calls apart when an upstream gives them all index 0, each with its own id (Ollama), and a call whose id changes after its first delta whole (Poolside)', async () => {
    const ollama = [
      chunk({ role: 'assistant', tool_calls: [{ index: 0, id: 'call_a', type: 'function', function: { name: 'get_weather', arguments: '{"city":' } }] }),
      chunk({ tool_calls: [{ index: 0, function: { arguments: '"Paris"}' } }] }),
      chunk({ tool_calls: [{ index: 0, id: 'call_b', type: 'function', function: { name: 'get_weather', arguments: '{"city":' } }] }),
      chunk({ tool_calls: [{ index: 0, function: { arguments: '"Oslo"}' } }] }),
      chunk({}, 'tool_calls'),
    ];
    const poolside = [
      chunk({ role: 'assistant', tool_calls: [{ index: 0, id: 'call_1', type: 'function', function: { name: 'get_weather', arguments: '' } }] }),
      chunk({ tool_calls: [{ index: 0, id: 'call_2', function: { arguments: '{"city":' } }] }),
      chunk({ tool_calls: [{ index: 0, id: 'call_2', function: { arguments: '"Rome"}' } }] }),
      chunk({}, 'tool_calls'),
    ];
    const client = await setup({ openai: (body, res) => sendStream(res, (body['messages'] as { content: string }[])[0]?.content === 'Rome?' ? poolside : ollama) });
    const ask = (content: string) => client.messages.stream({ model: 'openai/gpt-test', max_tokens: 300, tools: [weatherTool], messages: [{ role: 'user', content }] }).finalMessage();
    expect((await ask('Paris and Oslo?')).content).toEqual([
      { type: 'tool_use', id: 'call_a', name: 'get_weather', input: { city: 'Paris' } },
      { type: 'tool_use', id: 'call_b', name: 'get_weather', input: { city: 'Oslo' } },
    ]);
    expect((await ask('Rome?')).content).toEqual([{ type: 'tool_use', id: 'call_1', name: 'get_weather', input: { city: 'Rome' } }]);
  });

  it('keeps a call without arguments apart from the next when an upstream gives parallel calls all index 0 and streams no arguments for it, and a call whose id changes as its name is repeated whole', async () => {
    const noArguments = [
      chunk({ role: 'assistant', tool_calls: [{ index: 0, id: 'call_a', type: 'function', function: { name: 'get_time', arguments: '' } }] }),
      chunk({ tool_calls: [{ index: 0, id: 'call_b', type: 'function', function: { name: 'get_weather', arguments: '' } }] }),
      chunk({ tool_calls: [{ index: 0, function: { arguments: '{"city":"Oslo"}' } }] }),
      chunk({}, 'tool_calls'),
    ];
    const renamed = [
      chunk({ role: 'assistant', tool_calls: [{ index: 0, id: 'call_1', type: 'function', function: { name: 'get_weather', arguments: '' } }] }),
      chunk({ tool_calls: [{ index: 0, id: 'call_2', type: 'function', function: { name: 'get_weather', arguments: '{"city":' } }] }),
      chunk({ tool_calls: [{ index: 0, id: 'call_3', type: 'function', function: { name: 'get_weather', arguments: '"Rome"}' } }] }),
      chunk({}, 'tool_calls'),
    ];
    const client = await setup({ openai: (body, res) => sendStream(res, (body['messages'] as { content: string }[])[0]?.content === 'Rome?' ? renamed : noArguments) });
    const timeTool = { name: 'get_time', input_schema: { type: 'object' as const, properties: {} } };
    const ask = (content: string) => client.messages.stream({ model: 'openai/gpt-test', max_tokens: 300, tools: [timeTool, weatherTool], messages: [{ role: 'user', content }] }).finalMessage();
    expect((await ask('Time, and Oslo?')).content).toEqual([
      { type: 'tool_use', id: 'call_a', name: 'get_time', input: {} },
      { type: 'tool_use', id: 'call_b', name: 'get_weather', input: { city: 'Oslo' } },
    ]);
    expect((await ask('Rome?')).content).toEqual([{ type: 'tool_use', id: 'call_1', name: 'get_weather', input: { city: 'Rome' } }]);
  });

  it('sends a tool round trip back as assistant tool_calls followed by tool messages', async () => {
    const client = await setup({ openai: (_body, res) => sendJson(res, 200, completion('Sunny and snowy.')) });
    await client.messages.create({
      model: 'openai/gpt-test',
      max_tokens: 300,
      tools: [weatherTool],
      messages: [
        { role: 'user', content: 'Paris and Oslo?' },
        { role: 'assistant', content: [{ type: 'text', text: 'Checking.' }, { type: 'tool_use', id: 'call_1', name: 'get_weather', input: { city: 'Paris' } }, { type: 'tool_use', id: 'call_2', name: 'get_weather', input: { city: 'Oslo' } }] },
        { role: 'user', content: [{ type: 'tool_result', tool_use_id: 'call_1', content: 'sunny' }, { type: 'tool_result', tool_use_id: 'call_2', content: [{ type: 'text', text: 'snow' }] }, { type: 'text', text: 'Summarise.' }] },
      ],
    });
    expect(sentOpenAI()['messages']).toEqual([
      { role: 'user', content: 'Paris and Oslo?' },
      {
        role: 'assistant',
        content: 'Checking.',
        tool_calls: [
          { id: 'call_1', type: 'function', function: { name: 'get_weather', arguments: '{"city":"Paris"}' } },
          { id: 'call_2', type: 'function', function: { name: 'get_weather', arguments: '{"city":"Oslo"}' } },
        ],
      },
      { role: 'tool', tool_call_id: 'call_1', content: 'sunny' },
      { role: 'tool', tool_call_id: 'call_2', content: 'snow' },
      { role: 'user', content: [{ type: 'text', text: 'Summarise.' }] },
    ]);
  });

  it('sends the thinking of a turn that called tools back as its reasoning_content to DeepSeek and Kimi models, which require it, and to no other', async () => {
    const client = await setup({ openai: (_body, res) => sendJson(res, 200, completion('Sunny.')) });
    const messages: Anthropic.MessageParam[] = [
      { role: 'user', content: 'Hi' },
      { role: 'assistant', content: [{ type: 'thinking', thinking: 'A greeting.', signature: '' }, { type: 'text', text: 'Hello.' }] },
      { role: 'user', content: 'Weather in Oslo?' },
      { role: 'assistant', content: [{ type: 'thinking', thinking: 'I need the weather ', signature: '' }, { type: 'thinking', thinking: 'for Oslo.', signature: '' }, { type: 'tool_use', id: 'call_1', name: 'get_weather', input: { city: 'Oslo' } }] },
      { role: 'user', content: [{ type: 'tool_result', tool_use_id: 'call_1', content: 'sunny' }] },
    ];
    const call = { id: 'call_1', type: 'function', function: { name: 'get_weather', arguments: '{"city":"Oslo"}' } };
    await client.messages.create({ model: 'openai/deepseek-chat', max_tokens: 300, tools: [weatherTool], messages });
    expect((sentOpenAI()['messages'] as unknown[]).slice(1, 4)).toEqual([
      { role: 'assistant', content: 'Hello.' },
      { role: 'user', content: 'Weather in Oslo?' },
      { role: 'assistant', content: null, reasoning_content: 'I need the weather for Oslo.', tool_calls: [call] },
    ]);
    // Other servers may refuse the field: a model not known to need it goes without.
    await client.messages.create({ model: 'openai/gpt-test', max_tokens: 300, tools: [weatherTool], messages });
    expect((sentOpenAI(1)['messages'] as unknown[])[3]).toEqual({ role: 'assistant', content: null, tool_calls: [call] });
  });

  it("carries a tool's strict: true (inputs that follow its schema) as the function's strict", async () => {
    const client = await setup({ openai: (_body, res) => sendJson(res, 200, completion('Ok.')) });
    const strictTool = { ...weatherTool, strict: true, input_schema: { ...weatherTool.input_schema, additionalProperties: false } };
    await client.messages.create({ model: 'openai/gpt-test', max_tokens: 100, tools: [strictTool, weatherTool], messages: [{ role: 'user', content: 'Oslo?' }] });
    expect(sentOpenAI()['tools']).toEqual([
      { type: 'function', function: { name: 'get_weather', description: 'Weather for a city', parameters: strictTool.input_schema, strict: true } },
      { type: 'function', function: { name: 'get_weather', description: 'Weather for a city', parameters: weatherTool.input_schema } },
    ]);
  });

  it("leaves out strict for a tool whose schema OpenAI's strict mode refuses (an optional property, an object left open), which Anthropic's takes", async () => {
    const client = await setup({ openai: (_body, res) => sendJson(res, 200, completion('Ok.')) });
    const optional = { type: 'object' as const, properties: { city: { type: 'string' }, unit: { type: 'string' } }, required: ['city'], additionalProperties: false };
    const openNested = { type: 'object' as const, properties: { place: { type: 'object', properties: { city: { type: 'string' } }, required: ['city'] } }, required: ['place'], additionalProperties: false };
    const closedNested = { ...openNested, properties: { place: { ...openNested.properties.place, additionalProperties: false } } };
    const tools = [
      { name: 'optional_unit', strict: true, input_schema: optional },
      { name: 'open_place', strict: true, input_schema: openNested },
      { name: 'closed_place', strict: true, input_schema: closedNested },
    ];
    await client.messages.create({ model: 'openai/gpt-test', max_tokens: 100, tools, messages: [{ role: 'user', content: 'Oslo?' }] });
    expect(sentOpenAI()['tools']).toEqual([
      { type: 'function', function: { name: 'optional_unit', parameters: optional } },
      { type: 'function', function: { name: 'open_place', parameters: openNested } },
      { type: 'function', function: { name: 'closed_place', parameters: closedNested, strict: true } },
    ]);
  });

  it("leaves out strict for a tool whose schema uses a keyword OpenAI's strict mode refuses (allOf), which Anthropic's takes", async () => {
    const client = await setup({ openai: (_body, res) => sendJson(res, 200, completion('Ok.')) });
    const city = { type: 'object', properties: { city: { type: 'string' } }, required: ['city'], additionalProperties: false };
    const combined = { type: 'object' as const, properties: { place: { allOf: [city] } }, required: ['place'], additionalProperties: false };
    await client.messages.create({ model: 'openai/gpt-test', max_tokens: 100, tools: [{ name: 'combined_place', strict: true, input_schema: combined }], messages: [{ role: 'user', content: 'Oslo?' }] });
    expect(sentOpenAI()['tools']).toEqual([{ type: 'function', function: { name: 'combined_place', parameters: combined } }]);
  });

  it('sends the images a tool_result holds as a user message after the tool messages, ahead of the turn\'s own blocks', async () => {
    const client = await setup({ openai: (_body, res) => sendJson(res, 200, completion('A chart.')) });
    const image = { type: 'image' as const, source: { type: 'base64' as const, media_type: 'image/png' as const, data: PNG_BASE64 } };
    await client.messages.create({
      model: 'openai/gpt-test',
      max_tokens: 300,
      tools: [weatherTool],
      messages: [
        { role: 'user', content: 'Chart?' },
        { role: 'assistant', content: [{ type: 'tool_use', id: 'call_1', name: 'get_weather', input: { city: 'Paris' } }] },
        { role: 'user', content: [{ type: 'tool_result', tool_use_id: 'call_1', content: [{ type: 'text', text: 'Here:' }, image] }, { type: 'text', text: 'Describe it.' }] },
      ],
    });
    expect((sentOpenAI()['messages'] as unknown[]).slice(2)).toEqual([
      { role: 'tool', tool_call_id: 'call_1', content: 'Here:' },
      { role: 'user', content: [{ type: 'image_url', image_url: { url: `data:image/png;base64,${PNG_BASE64}` } }, { type: 'text', text: 'Describe it.' }] },
    ]);
  });

  it('maps thinking to reasoning_effort, and reasoning text back to a thinking block', async () => {
    const client = await setup({ openai: (_body, res) => sendJson(res, 200, { ...completion('42'), choices: [{ index: 0, message: { role: 'assistant', content: '42', reasoning: 'Deep thought.' }, finish_reason: 'stop' }] }) });
    const answer = await client.messages.create({ model: 'openai/gpt-test', max_tokens: 20_000, thinking: { type: 'enabled', budget_tokens: 10_000 }, messages: [{ role: 'user', content: 'Meaning?' }] });
    expect(sentOpenAI()['reasoning_effort']).toBe('medium');
    expect(answer.content).toEqual([{ type: 'thinking', thinking: 'Deep thought.', signature: '' }, { type: 'text', text: '42' }]);
  });

  it("maps adaptive thinking without an effort to reasoning_effort high, Anthropic's default effort", async () => {
    const client = await setup({ openai: (_body, res) => sendJson(res, 200, completion('42')) });
    await client.messages.create({ model: 'openai/gpt-test', max_tokens: 20_000, thinking: { type: 'adaptive' }, messages: [{ role: 'user', content: 'Meaning?' }] });
    expect(sentOpenAI()['reasoning_effort']).toBe('high');
  });

  it('answers an OpenAI refusal as its text with stop_reason refusal, whole and streamed', async () => {
    const client = await setup({
      openai: (body, res) => {
        if (body['stream'] === true) sendStream(res, [chunk({ role: 'assistant', content: null, refusal: '' }), chunk({ refusal: 'I cannot ' }), chunk({ refusal: 'help with that.' }), chunk({}, 'stop')]);
        else sendJson(res, 200, { ...completion(''), choices: [{ index: 0, message: { role: 'assistant', content: null, refusal: 'I cannot help with that.' }, finish_reason: 'stop' }] });
      },
    });
    const params = { model: 'openai/gpt-test', max_tokens: 100, messages: [{ role: 'user' as const, content: 'Something bad.' }] };
    const refusal = { content: [{ type: 'text', text: 'I cannot help with that.' }], stop_reason: 'refusal' };
    expect(await client.messages.create(params)).toMatchObject(refusal);
    expect(await client.messages.stream(params).finalMessage()).toMatchObject(refusal);
  });

  it('answers stop_sequence with the sequence when the server names the one that matched (vLLM stop_reason, SGLang matched_stop), whole and streamed', async () => {
    const client = await setup({
      openai: (body, res) => {
        const server = (body['messages'] as { content: string }[])[0]?.content;
        // vLLM gives a token id (a number) when a stop token ended the answer, and null for its end of sequence.
        const named = server === 'vllm' ? { stop_reason: 'END' } : server === 'sglang' ? { matched_stop: 'END' } : { stop_reason: server === 'token' ? 128001 : null };
        if (body['stream'] === true) sendStream(res, [chunk({ role: 'assistant', content: 'one two' }), { ...chunk({}, 'stop'), choices: [{ index: 0, delta: {}, finish_reason: 'stop', ...named }] }]);
        else sendJson(res, 200, { ...completion('one two'), choices: [{ index: 0, message: { role: 'assistant', content: 'one two' }, finish_reason: 'stop', ...named }] });
      },
    });
    const params = (server: string) => ({ model: 'openai/gpt-test', max_tokens: 100, stop_sequences: ['END', 'STOP'], messages: [{ role: 'user' as const, content: server }] });
    for (const server of ['vllm', 'sglang']) {
      expect(await client.messages.create(params(server))).toMatchObject({ stop_reason: 'stop_sequence', stop_sequence: 'END' });
      expect(await client.messages.stream(params(server)).finalMessage()).toMatchObject({ stop_reason: 'stop_sequence', stop_sequence: 'END' });
    }
    for (const server of ['eos', 'token']) {
      expect(await client.messages.create(params(server))).toMatchObject({ stop_reason: 'end_turn', stop_sequence: null });
      expect(await client.messages.stream(params(server)).finalMessage()).toMatchObject({ stop_reason: 'end_turn', stop_sequence: null });
    }
    expect(sentOpenAI()['stop']).toEqual(['END', 'STOP']);
  });

  it('answers reasoning_content (DeepSeek, vLLM) as a thinking block, whole and streamed, and text given as parts as text', async () => {
    const client = await setup({
      openai: (body, res) => {
        if (body['stream'] === true) sendStream(res, [chunk({ role: 'assistant', content: '', reasoning_content: 'Six ' }), chunk({ reasoning_content: 'times seven.' }), chunk({ content: '42' }), chunk({}, 'stop')]);
        else sendJson(res, 200, { ...completion(''), choices: [{ index: 0, message: { role: 'assistant', content: [{ type: 'text', text: '4' }, { type: 'text', text: '2' }], reasoning_content: 'Six times seven.' }, finish_reason: 'stop' }] });
      },
    });
    const params = { model: 'openai/gpt-test', max_tokens: 100, messages: [{ role: 'user' as const, content: 'Meaning?' }] };
    const answer = [{ type: 'thinking', thinking: 'Six times seven.', signature: '' }, { type: 'text', text: '42' }];
    expect((await client.messages.create(params)).content).toEqual(answer);
    expect((await client.messages.stream(params).finalMessage()).content).toEqual(answer);
  });

  it('answers reasoning an upstream gives as summary details (OpenAI models through OpenRouter) as a thinking block with its text, whole and streamed, which goes back as it came', async () => {
    const summary = { type: 'reasoning.summary', summary: 'Six times seven.', format: 'openai-responses-v1', index: 0 };
    const encrypted = { type: 'reasoning.encrypted', data: 'gAAAAB', format: 'openai-responses-v1', index: 0 };
    const client = await setup({
      openai: (body, res) => {
        if (body['stream'] === true) sendStream(res, [chunk({ role: 'assistant', content: '', reasoning: 'Six times seven.', reasoning_details: [summary] }), chunk({ content: '', reasoning_details: [encrypted] }), chunk({ content: '42' }), chunk({}, 'stop')]);
        else sendJson(res, 200, { ...completion(''), choices: [{ index: 0, message: { role: 'assistant', content: '42', reasoning: 'Six times seven.', reasoning_details: [summary, encrypted] }, finish_reason: 'stop' }] });
      },
    });
    const params = { model: 'openai/gpt-test', max_tokens: 100, messages: [{ role: 'user' as const, content: 'Meaning?' }] };
    const answer = [{ type: 'thinking', thinking: 'Six times seven.', signature: '' }, { type: 'redacted_thinking', data: 'gAAAAB' }, { type: 'text', text: '42' }];
    const whole = await client.messages.create(params);
    expect(whole.content).toEqual(answer);
    expect((await client.messages.stream(params).finalMessage()).content).toEqual(answer);
    await client.messages.create({ ...params, messages: [...params.messages, { role: 'assistant', content: whole.content }, { role: 'user', content: 'Why?' }] });
    expect((sentOpenAI(2)['messages'] as unknown[])[1]).toEqual({ role: 'assistant', content: '42' });
  });

  it('names the model in a streamed Message whose upstream chunks name none, as in a whole one', async () => {
    const client = await setup({
      openai: (body, res) => {
        const { model: _model, ...noModel } = body['stream'] === true ? chunk({ role: 'assistant', content: 'Hi' }, 'stop') : completion('Hi');
        if (body['stream'] === true) sendStream(res, [noModel]);
        else sendJson(res, 200, noModel);
      },
    });
    const params = { model: 'openai/gpt-test', max_tokens: 10, messages: [{ role: 'user' as const, content: 'Hi' }] };
    expect((await client.messages.create(params)).model).toBe('openai/gpt-test');
    expect((await client.messages.stream(params).finalMessage()).model).toBe('openai/gpt-test');
  });

  it('answers a completion without a choice, or with a tool call without its function, as the invalid response it is (502)', async () => {
    const client = await setup({
      openai: (body, res) => {
        const noChoice = (body['messages'] as { content: string }[])[0]?.content === 'none';
        sendJson(res, 200, { ...completion(''), choices: noChoice ? [] : [{ index: 0, message: { role: 'assistant', content: null, tool_calls: [{ id: 'call_1', type: 'function' }] }, finish_reason: 'tool_calls' }] });
      },
    });
    const failed = async (content: string): Promise<string> => {
      const error = await client.messages.create({ model: 'openai/gpt-test', max_tokens: 10, messages: [{ role: 'user', content }] }).catch((err: unknown) => err);
      expect(error).toBeInstanceOf(Anthropic.APIError);
      expect((error as InstanceType<typeof Anthropic.APIError>).status).toBe(502);
      return String((error as Error).message);
    };
    expect(await failed('none')).toContain('an invalid response: the completion has no choice');
    expect(await failed('call')).toContain('an invalid response: choices[0].message.tool_calls[0] has no function name');
  });

  it('estimates count_tokens for a model no Anthropic provider serves, and says so', async () => {
    const client = await setup({ openai: () => undefined });
    const { data, response } = await client.messages.countTokens({ model: 'openai/gpt-test', system: 'abcd', messages: [{ role: 'user', content: 'abcdefgh' }] }).withResponse();
    expect(data).toEqual({ input_tokens: 3 });
    expect(response.headers.get('x-sluice-token-count')).toBe('estimate');
    expect(openai?.requests).toHaveLength(0);
  });

  it('estimates count_tokens for a model whose Anthropic provider has no api_key, and says so', async () => {
    // Nothing is sent: a provider without a key cannot ask Anthropic (an address nobody answers shows it).
    gateway = await startGateway({
      providers: { anthropic: { type: 'anthropic', base_url: 'http://127.0.0.1:9', api_key: '' } },
      models: [{ id: 'anthropic/claude-test', endpoints: [{ provider: 'anthropic', model: 'claude-upstream-1' }] }],
    });
    const client = new Anthropic({ baseURL: `http://127.0.0.1:${gateway.port}`, apiKey: API_KEY, maxRetries: 0 });
    const { data, response } = await client.messages.countTokens({ model: 'anthropic/claude-test', system: 'abcd', messages: [{ role: 'user', content: 'abcdefgh' }] }).withResponse();
    expect(data).toEqual({ input_tokens: 3 });
    expect(response.headers.get('x-sluice-token-count')).toBe('estimate');
  });

  it('refuses a block the target cannot carry with a 400 naming it, in Anthropic error shape', async () => {
    const client = await setup({ openai: () => undefined });
    const error = await client.messages
      .create({ model: 'openai/gpt-test', max_tokens: 10, messages: [{ role: 'user', content: [{ type: 'text', text: 'Read.' }, { type: 'document', source: { type: 'text', media_type: 'text/plain', data: 'x' } }] }] })
      .catch((err: unknown) => err);
    expect(error).toBeInstanceOf(Anthropic.BadRequestError);
    expect((error as InstanceType<typeof Anthropic.BadRequestError>).error).toEqual({ type: 'error', error: { type: 'invalid_request_error', message: expect.stringContaining('messages.0.content.1.type') } });
    expect(openai?.requests).toHaveLength(0);
  });

  it('refuses a malformed block or an empty user message with a 400 naming it, and sends nothing upstream', async () => {
    const client = await setup({ openai: () => undefined });
    const refused = async (messages: unknown[]): Promise<string> => {
      const error = await client.messages.create({ model: 'openai/gpt-test', max_tokens: 10, messages: messages as Anthropic.MessageParam[] }).catch((err: unknown) => err);
      expect(error).toBeInstanceOf(Anthropic.BadRequestError);
      return ((error as InstanceType<typeof Anthropic.BadRequestError>).error as { error: { message: string } }).error.message;
    };
    expect(await refused([{ role: 'user', content: [{ type: 'text', text: 'Hi' }, { type: 'text' }] }])).toContain('messages.0.content.1.text: Field required');
    expect(await refused([{ role: 'user', content: 'Hi' }, { role: 'assistant', content: [{ type: 'tool_use', name: 'get_weather', input: {} }] }])).toContain('messages.1.content.0.id');
    expect(await refused([{ role: 'user', content: 'Hi' }, { role: 'assistant', content: 'Hello.' }, { role: 'user', content: [] }])).toContain('messages.2.content');
    expect(openai?.requests).toHaveLength(0);
  });

  it('names the block a translated provider cannot take as the client sent it, past a system prompt and a tool result', async () => {
    const client = await setup({ bedrock: () => undefined });
    const error = await client.messages
      .create({
        model: 'bedrock/nova-test',
        max_tokens: 10,
        system: 'Be brief.',
        messages: [
          { role: 'user', content: 'Weather?' },
          { role: 'assistant', content: [{ type: 'tool_use', id: 'toolu_1', name: 'get_weather', input: {} }] },
          { role: 'user', content: [{ type: 'tool_result', tool_use_id: 'toolu_1', content: 'sunny' }, { type: 'text', text: 'And this?' }, { type: 'image', source: { type: 'base64', media_type: 'image/bmp' as 'image/png', data: 'Qk0=' } }] },
        ],
      })
      .catch((err: unknown) => err);
    expect(error).toBeInstanceOf(Anthropic.BadRequestError);
    const { message } = ((error as InstanceType<typeof Anthropic.BadRequestError>).error as { error: { message: string } }).error;
    // The Chat request the adapter saw had the system prompt and the tool result as messages of their own: messages[4].content[1].image_url.url.
    expect(message).toContain('messages.2.content.2.source: image/bmp is not supported by provider type bedrock');

    const oneCall = await client.messages
      .create({ model: 'bedrock/nova-test', max_tokens: 10, messages: [{ role: 'user', content: 'Weather?' }], tools: [weatherTool], tool_choice: { type: 'auto', disable_parallel_tool_use: true } })
      .catch((err: unknown) => err);
    expect(oneCall).toBeInstanceOf(Anthropic.BadRequestError);
    expect(String((oneCall as Error).message)).toContain('tool_choice.disable_parallel_tool_use: not supported by provider type bedrock');

    const notBase64 = await client.messages
      .create({ model: 'bedrock/nova-test', max_tokens: 10, messages: [{ role: 'user', content: [{ type: 'image', source: { type: 'base64', media_type: 'image/png', data: '!!!not base64!!!' } }] }] })
      .catch((err: unknown) => err);
    expect(notBase64).toBeInstanceOf(Anthropic.BadRequestError);
    expect(String((notBase64 as Error).message)).toContain('messages.0.content.0.source: the image data is not valid base64');
    expect(bedrock?.requests).toHaveLength(0);
  });

  it('ends a stream cut after its first byte with an error event the SDK raises', async () => {
    const client = await setup({
      openai: (_body, res) => {
        res.writeHead(200, { 'content-type': 'text/event-stream' });
        res.write(`data: ${JSON.stringify(chunk({ role: 'assistant', content: 'Partial' }))}\n\n`);
        setTimeout(() => res.socket?.destroy(), 30);
      },
    });
    const stream = client.messages.stream({ model: 'openai/gpt-test', max_tokens: 50, messages: [{ role: 'user', content: 'Hi' }] });
    const error = await stream.finalMessage().catch((err: unknown) => err);
    expect(error).toBeInstanceOf(Anthropic.APIError);
    expect(String((error as Error).message)).toMatch(/api_error|upstream/);
  });
});

describe('POST /v1/messages translated to Gemini', () => {
  it('carries top_k to Gemini as generationConfig.topK; Bedrock, which has no top-k setting, refuses it by name', async () => {
    const client = await setup({ google: (_seen, res) => sendGemini(res, [{ text: 'Bonjour.' }]), bedrock: (_seen, res) => sendConverse(res, [{ text: 'Hi.' }]) });
    // This SDK's types no longer list top_k (newer Claude models refuse it); the API still takes it.
    const params = (model: string) => ({ model, max_tokens: 100, top_k: 40, messages: [{ role: 'user' as const, content: 'Hi' }] });
    const answer = await client.messages.create(params('google/gemini-test'));
    expect(answer.content).toEqual([{ type: 'text', text: 'Bonjour.' }]);
    expect(google?.requests[0]?.body).toMatchObject({ generationConfig: { topK: 40, maxOutputTokens: 100 } });
    const error = await client.messages.create(params('bedrock/nova-test')).catch((err: unknown) => err);
    expect(error).toBeInstanceOf(Anthropic.BadRequestError);
    expect((error as InstanceType<typeof Anthropic.BadRequestError>).error).toMatchObject({ type: 'error', error: { type: 'invalid_request_error', message: expect.stringContaining('top_k') } });
    expect(bedrock?.requests).toHaveLength(0);
  });
});

describe('POST /v1/messages translated to Bedrock', () => {
  it('carries thinking signatures across turns as reasoningContent', async () => {
    const client = await setup({
      bedrock: (_seen, res) => {
        if (bedrock?.requests.length === 1) sendConverse(res, [{ reasoningContent: { reasoningText: { text: 'Use the tool.', signature: SIGNATURE } } }, { toolUse: { toolUseId: 'tu_1', name: 'get_weather', input: { city: 'Oslo' } } }], 'tool_use');
        else sendConverse(res, [{ text: 'Cold.' }]);
      },
    });
    const base = { model: 'bedrock/nova-test', max_tokens: 8000, thinking: { type: 'enabled' as const, budget_tokens: 2000 }, tools: [weatherTool] };
    const first = await client.messages.create({ ...base, messages: [{ role: 'user', content: 'Oslo?' }] });
    expect(first.content).toEqual([
      { type: 'thinking', thinking: 'Use the tool.', signature: SIGNATURE },
      { type: 'tool_use', id: 'tu_1', name: 'get_weather', input: { city: 'Oslo' } },
    ]);
    expect(first.stop_reason).toBe('tool_use');
    await client.messages.create({ ...base, messages: [{ role: 'user', content: 'Oslo?' }, { role: 'assistant', content: first.content }, { role: 'user', content: [{ type: 'tool_result', tool_use_id: 'tu_1', content: 'minus 5' }] }] });
    expect(bedrock?.requests[1]?.body).toMatchObject({
      additionalModelRequestFields: { thinking: { type: 'enabled', budget_tokens: 2000 } },
      messages: [{ role: 'user' }, { role: 'assistant', content: [{ reasoningContent: { reasoningText: { text: 'Use the tool.', signature: SIGNATURE } } }, { toolUse: { toolUseId: 'tu_1' } }] }, { role: 'user', content: [{ toolResult: { toolUseId: 'tu_1' } }] }],
    });
  });

  it('sends a tool_result with no text (empty, or images only) as an empty JSON result, never the blank text block Converse refuses', async () => {
    const client = await setup({ bedrock: (_seen, res) => sendConverse(res, [{ text: 'Done.' }]) });
    const calls = [
      { type: 'tool_use' as const, id: 'tu_1', name: 'get_weather', input: { city: 'Oslo' } },
      { type: 'tool_use' as const, id: 'tu_2', name: 'get_weather', input: { city: 'Rome' } },
    ];
    const results = [
      { type: 'tool_result' as const, tool_use_id: 'tu_1', content: '' },
      { type: 'tool_result' as const, tool_use_id: 'tu_2', content: [{ type: 'image' as const, source: { type: 'base64' as const, media_type: 'image/png' as const, data: PNG_BASE64 } }] },
    ];
    const answer = await client.messages.create({ model: 'bedrock/nova-test', max_tokens: 100, tools: [weatherTool], messages: [{ role: 'user', content: 'Weather?' }, { role: 'assistant', content: calls }, { role: 'user', content: results }] });
    expect(answer.content).toEqual([{ type: 'text', text: 'Done.' }]);
    expect((bedrock?.requests[0]?.body as { messages: unknown[] }).messages[2]).toEqual({
      role: 'user',
      content: [{ toolResult: { toolUseId: 'tu_1', content: [{ json: {} }] } }, { toolResult: { toolUseId: 'tu_2', content: [{ json: {} }] } }, { image: { format: 'png', source: { bytes: PNG_BASE64 } } }],
    });
  });

  it('leaves out a whitespace-only text block Claude put before a tool call, which Converse refuses when it comes back', async () => {
    const client = await setup({
      bedrock: (_seen, res) => {
        if (bedrock?.requests.length === 1) sendConverse(res, [{ text: '\n\n' }, { toolUse: { toolUseId: 'tu_1', name: 'get_weather', input: { city: 'Oslo' } } }], 'tool_use');
        else sendConverse(res, [{ text: 'Cold.' }]);
      },
    });
    const first = await client.messages.create({ model: 'bedrock/nova-test', max_tokens: 100, tools: [weatherTool], messages: [{ role: 'user', content: 'Oslo?' }] });
    expect(first.content).toEqual([{ type: 'text', text: '\n\n' }, { type: 'tool_use', id: 'tu_1', name: 'get_weather', input: { city: 'Oslo' } }]);
    const second = await client.messages.create({ model: 'bedrock/nova-test', max_tokens: 100, tools: [weatherTool], messages: [{ role: 'user', content: 'Oslo?' }, { role: 'assistant', content: first.content }, { role: 'user', content: [{ type: 'tool_result', tool_use_id: 'tu_1', content: 'minus 5' }] }] });
    expect(second.content).toEqual([{ type: 'text', text: 'Cold.' }]);
    expect((bedrock?.requests[1]?.body as { messages: unknown[] }).messages[1]).toEqual({ role: 'assistant', content: [{ toolUse: { toolUseId: 'tu_1', name: 'get_weather', input: { city: 'Oslo' } } }] });
  });

  it("holds Claude on Bedrock to Anthropic's rules: a prefill goes without its trailing whitespace, and what thinking cannot take or a whitespace-only stop sequence is a 400 naming it", async () => {
    const client = await setup({ bedrock: (_seen, res) => sendConverse(res, [{ text: ' 42' }]) });
    const answer = await client.messages.create({ model: 'bedrock/nova-test', max_tokens: 100, messages: [{ role: 'user', content: 'The answer?' }, { role: 'assistant', content: 'Answer: ' }] });
    expect(answer.content).toEqual([{ type: 'text', text: ' 42' }]);
    expect(bedrock?.requests[0]?.body).toMatchObject({ messages: [{ role: 'user' }, { role: 'assistant', content: [{ text: 'Answer:' }] }] });

    const thinking = { thinking: { type: 'enabled', budget_tokens: 2000 } };
    const refusals: Array<[Record<string, unknown>, string]> = [
      [{ ...thinking, temperature: 0.5 }, 'temperature'],
      [{ ...thinking, top_p: 0.9 }, 'top_p'],
      [{ ...thinking, tools: [weatherTool], tool_choice: { type: 'any' } }, 'tool_choice'],
      [{ stop_sequences: ['\n'] }, 'stop_sequences'],
    ];
    for (const [body, param] of refusals) {
      const request = { model: 'bedrock/nova-test', max_tokens: 8000, messages: [{ role: 'user', content: 'Weather?' }], ...body } as Anthropic.MessageCreateParamsNonStreaming;
      const error = await client.messages.create(request).catch((err: unknown) => err);
      expect(error).toBeInstanceOf(Anthropic.BadRequestError);
      expect(((error as InstanceType<typeof Anthropic.BadRequestError>).error as { error: { message: string } }).error.message).toContain(`${param}: `);
    }
    expect(bedrock?.requests).toHaveLength(1);
  });

  it('answers stop_sequence with the sequence Claude on Bedrock names (additionalModelResponseFields), whole and streamed', async () => {
    // Converse answers the path asked for under `delta` (as in Claude's message_delta), whole and streamed.
    const matched = { additionalModelResponseFields: { delta: { stop_sequence: 'END' } } };
    const client = await setup({
      bedrock: (seen, res) => {
        if (seen.path.endsWith('/converse')) sendConverse(res, [{ text: 'Done. ' }], 'stop_sequence', matched);
        else void sendFrames(res, [frame('messageStart', { role: 'assistant' }), ...textFrames(0, ['Done. ']), frame('messageStop', { stopReason: 'stop_sequence', ...matched }), ...endFrames('end_turn').slice(1)]);
      },
    });
    const request = { model: 'bedrock/nova-test', max_tokens: 100, stop_sequences: ['STOP', 'END'], messages: [{ role: 'user' as const, content: 'Count.' }] };
    const answer = await client.messages.create(request);
    expect([answer.stop_reason, answer.stop_sequence]).toEqual(['stop_sequence', 'END']);
    expect(bedrock?.requests[0]?.body).toMatchObject({ inferenceConfig: { stopSequences: ['STOP', 'END'] }, additionalModelResponseFieldPaths: ['/delta/stop_sequence'] });
    const streamed = await client.messages.stream(request).finalMessage();
    expect([streamed.stop_reason, streamed.stop_sequence]).toEqual(['stop_sequence', 'END']);
    // Without stop sequences nothing extra is asked for.
    const { stop_sequences: _stops, ...unstopped } = request;
    await client.messages.create(unstopped);
    expect(bedrock?.requests[2]?.body).not.toHaveProperty('additionalModelResponseFieldPaths');
  });

  it('turns cache_control into cachePoints and reports cache reads in usage', async () => {
    const client = await setup({
      bedrock: (_seen, res) => sendConverse(res, [{ text: 'ok' }], 'end_turn', { usage: { inputTokens: 10, outputTokens: 2, totalTokens: 412, cacheReadInputTokens: 400 } }),
      openai: (_body, res) => sendJson(res, 200, completion('ok')),
    });
    const answer = await client.messages.create({ model: 'bedrock/nova-test', max_tokens: 100, system: [{ type: 'text', text: 'Long rules.', cache_control: { type: 'ephemeral' } }], messages: [{ role: 'user', content: 'Go.' }] });
    expect(bedrock?.requests[0]?.body).toMatchObject({ system: [{ text: 'Long rules.' }, { cachePoint: { type: 'default' } }] });
    expect(answer.usage).toMatchObject({ input_tokens: 10, output_tokens: 2, cache_read_input_tokens: 400 });

    // A tool's cache_control caches the tools up to it: a cache point after it in toolConfig.
    await client.messages.create({ model: 'bedrock/nova-test', max_tokens: 100, tools: [{ ...weatherTool, cache_control: { type: 'ephemeral' } }, { ...weatherTool, name: 'get_time' }], messages: [{ role: 'user', content: 'Go.' }] });
    const tools = (bedrock?.requests[1]?.body as { toolConfig?: { tools: unknown[] } }).toolConfig?.tools;
    expect(tools?.map((tool) => Object.keys(tool as object)[0])).toEqual(['toolSpec', 'cachePoint', 'toolSpec']);
    // OpenAI caches by itself and knows no cache_control on a tool: it is left out.
    await client.messages.create({ model: 'openai/gpt-test', max_tokens: 100, tools: [{ ...weatherTool, cache_control: { type: 'ephemeral' } }], messages: [{ role: 'user', content: 'Go.' }] });
    expect(sentOpenAI()['tools']).toEqual([{ type: 'function', function: { name: 'get_weather', description: 'Weather for a city', parameters: weatherTool.input_schema } }]);
  });
});

describe('Messages API errors through the SDK', () => {
  it.each([
    ['a wrong key', 401, Anthropic.AuthenticationError, 'authentication_error'],
    ['no max_tokens', 400, Anthropic.BadRequestError, 'invalid_request_error'],
    ['an unknown model', 404, Anthropic.NotFoundError, 'not_found_error'],
    ['an upstream 429', 429, Anthropic.RateLimitError, 'rate_limit_error'],
    ['an upstream 529', 529, Anthropic.OverloadedError, 'overloaded_error'],
    ['an upstream 500', 500, Anthropic.InternalServerError, 'api_error'],
  ] as const)('answers %s with %i %s', async (name, status, errorClass, type) => {
    const upstreamStatus = name === 'an upstream 429' ? 429 : name === 'an upstream 529' ? 529 : 500;
    const upstreamType = upstreamStatus === 429 ? 'rate_limit_error' : upstreamStatus === 529 ? 'overloaded_error' : 'api_error';
    let client = await setup({ anthropic: (_seen, res) => json(res, upstreamStatus, { type: 'error', error: { type: upstreamType, message: 'upstream says no' } }) });
    if (name === 'a wrong key') client = new Anthropic({ baseURL: `http://127.0.0.1:${gateway?.port}`, apiKey: 'sk-wrong', maxRetries: 0 });
    const params = { model: name === 'an unknown model' ? 'nosuch/model' : 'anthropic/claude-test', max_tokens: 10, messages: [{ role: 'user' as const, content: 'Hi' }] };
    if (name === 'no max_tokens') Reflect.deleteProperty(params, 'max_tokens');
    const error = await client.messages.create(params).catch((err: unknown) => err);
    expect(error).toBeInstanceOf(errorClass);
    expect((error as InstanceType<typeof Anthropic.APIError>).status).toBe(status);
    expect((error as InstanceType<typeof Anthropic.APIError>).error).toMatchObject({ type: 'error', error: { type } });
  });

  it("answers a Bedrock model failure (424 ModelErrorException) as the api_error it is, not the client's invalid request", async () => {
    const client = await setup({ bedrock: (_seen, res) => sendBedrockError(res, 424, 'ModelErrorException', 'The model failed to process the request.') });
    const error = await client.messages.create({ model: 'bedrock/nova-test', max_tokens: 10, messages: [{ role: 'user', content: 'Hi' }] }).catch((err: unknown) => err);
    expect(error).toBeInstanceOf(Anthropic.APIError);
    expect((error as InstanceType<typeof Anthropic.APIError>).status).toBe(424);
    expect((error as InstanceType<typeof Anthropic.APIError>).error).toMatchObject({ type: 'error', error: { type: 'api_error', message: 'The model failed to process the request.' } });
  });

  it.each([
    ['a missing max_tokens', { model: 'anthropic/claude-test', messages: [{ role: 'user', content: 'Hi' }] }, 'max_tokens: Field required'],
    ['a max_tokens that is a string', { model: 'anthropic/claude-test', max_tokens: '10', messages: [{ role: 'user', content: 'Hi' }] }, 'max_tokens: Invalid input: expected number, received string'],
    ['a model that is a number', { model: 5, max_tokens: 10, messages: [{ role: 'user', content: 'Hi' }] }, 'model: Invalid input: expected string, received number'],
  ])('words %s as what is wrong', async (_name, body, message) => {
    await setup({ anthropic: (_seen, res) => json(res, 500, {}) });
    const response = await fetch(`http://127.0.0.1:${gateway?.port}/v1/messages`, { method: 'POST', headers: { 'x-api-key': API_KEY, 'content-type': 'application/json' }, body: JSON.stringify(body) });
    expect(response.status).toBe(400);
    expect(await response.json()).toEqual({ type: 'error', error: { type: 'invalid_request_error', message } });
    expect(anthropic?.requests).toHaveLength(0);
  });

  it('answers a body nested deeper than 128 levels with a 400 in Anthropic error shape', async () => {
    await setup({ anthropic: (_seen, res) => json(res, 500, {}) });
    // Written as text: JSON.stringify itself gives up thousands of levels deep.
    const schema = `${'{"a":'.repeat(5000)}{"type":"string"}${'}'.repeat(5000)}`;
    const body = `{"model":"anthropic/claude-test","max_tokens":10,"messages":[{"role":"user","content":"Hi"}],"tools":[{"name":"f","input_schema":{"type":"object","properties":${schema}}}]}`;
    const response = await fetch(`http://127.0.0.1:${gateway?.port}/v1/messages`, { method: 'POST', headers: { 'x-api-key': API_KEY, 'content-type': 'application/json' }, body });
    expect(response.status).toBe(400);
    expect(await response.json()).toEqual({ type: 'error', error: { type: 'invalid_request_error', message: 'The JSON body nests arrays and objects more than 128 levels deep.' } });
    expect(anthropic?.requests).toHaveLength(0);
  });

  it('tells a client without a key to send x-api-key', async () => {
    await setup({ anthropic: (_seen, res) => json(res, 500, {}) });
    const response = await fetch(`http://127.0.0.1:${gateway?.port}/v1/messages`, { method: 'POST', headers: { 'content-type': 'application/json' }, body: '{}' });
    expect(response.status).toBe(401);
    expect(await response.json()).toEqual({ type: 'error', error: { type: 'authentication_error', message: 'Missing API key: send x-api-key: <key> (or Authorization: Bearer <key>).' } });
  });

  it('answers an overloaded error event before the first byte with 529, and a cut after it with an error event', async () => {
    const client = await setup({
      anthropic: (seen, res) => {
        const text = (seen.body as { messages: Array<{ content: string }> }).messages[0]?.content;
        if (text === 'busy') sendEvents(res, [{ event: 'error', data: { type: 'error', error: { type: 'overloaded_error', message: 'Overloaded' } } }]);
        else sendEvents(res, [messageStart(), ...textBlock(0, ['Part'])], { cut: true });
      },
    });
    const busy = await client.messages.create({ model: 'anthropic/claude-test', max_tokens: 10, stream: true, messages: [{ role: 'user', content: 'busy' }] }).catch((err: unknown) => err);
    expect(busy).toBeInstanceOf(Anthropic.OverloadedError);
    const cut = await client.messages.stream({ model: 'anthropic/claude-test', max_tokens: 10, messages: [{ role: 'user', content: 'cut' }] }).finalMessage().catch((err: unknown) => err);
    expect(cut).toBeInstanceOf(Anthropic.APIError);
    expect((cut as Error).message).toMatch(/api_error/);
  });

  it("answers an overloaded Anthropic upstream's 529, not the 400 of a fallback whose provider type cannot carry the request", async () => {
    const client = await setup({ anthropic: (_seen, res) => json(res, 529, { type: 'error', error: { type: 'overloaded_error', message: 'Overloaded' } }), bedrock: () => undefined });
    const content = [{ type: 'document' as const, source: { type: 'text' as const, media_type: 'text/plain' as const, data: 'Hello.' } }, { type: 'text' as const, text: 'Summarize.' }];
    const error = await client.messages.create({ model: 'anthropic/claude-test', max_tokens: 10, messages: [{ role: 'user', content }] }).catch((err: unknown) => err);
    expect(error).toBeInstanceOf(Anthropic.OverloadedError);
    expect((error as InstanceType<typeof Anthropic.APIError>).error).toEqual({ type: 'error', error: { type: 'overloaded_error', message: 'Overloaded' } });
    expect((error as InstanceType<typeof Anthropic.APIError>).headers?.get('x-sluice-provider')).toBe('anthropic');
    expect(bedrock?.requests).toHaveLength(0);
  });

  it("answers an upstream's 402 as billing_error and its 504 as timeout_error, Anthropic's types for them", async () => {
    const client = await setup({
      anthropic: (_seen, res) => json(res, 402, { type: 'error', error: { type: 'billing_error', message: 'Your credit balance is too low.' } }),
      openai: (_body, res) => sendJson(res, 504, { error: { message: 'Gateway Timeout' } }),
    });
    const ask = async (model: string): Promise<InstanceType<typeof Anthropic.APIError>> => {
      const error = await client.messages.create({ model, max_tokens: 10, messages: [{ role: 'user', content: 'Hi' }] }).catch((err: unknown) => err);
      expect(error).toBeInstanceOf(Anthropic.APIError);
      return error as InstanceType<typeof Anthropic.APIError>;
    };
    const billing = await ask('anthropic/claude-test');
    expect(billing.status).toBe(402);
    expect(billing.error).toEqual({ type: 'error', error: { type: 'billing_error', message: 'Your credit balance is too low.' } });
    const timeout = await ask('openai/gpt-test');
    expect(timeout.status).toBe(504);
    expect(timeout.error).toMatchObject({ type: 'error', error: { type: 'timeout_error' } });
  });

  it('answers a timeout_error or billing_error event before the first byte as the 504 or 402 it stands for', async () => {
    const client = await setup({
      anthropic: (seen, res) => {
        const type = (seen.body as { messages: Array<{ content: string }> }).messages[0]?.content ?? '';
        sendEvents(res, [{ event: 'error', data: { type: 'error', error: { type, message: `upstream ${type}` } } }]);
      },
    });
    const ask = async (type: string): Promise<InstanceType<typeof Anthropic.APIError>> => {
      const error = await client.messages.create({ model: 'anthropic/claude-test', max_tokens: 10, stream: true, messages: [{ role: 'user', content: type }] }).catch((err: unknown) => err);
      expect(error).toBeInstanceOf(Anthropic.APIError);
      return error as InstanceType<typeof Anthropic.APIError>;
    };
    const timeout = await ask('timeout_error');
    expect(timeout.status).toBe(504);
    expect(timeout.error).toMatchObject({ type: 'error', error: { type: 'timeout_error' } });
    const billing = await ask('billing_error');
    expect(billing.status).toBe(402);
    expect(billing.error).toMatchObject({ type: 'error', error: { type: 'billing_error' } });
  });

  it('answers an invalid_request_error event before the first byte with a 400, without trying the next endpoint', async () => {
    const client = await setup({
      anthropic: (_seen, res) => sendEvents(res, [{ event: 'error', data: { type: 'error', error: { type: 'invalid_request_error', message: 'prompt is too long: 210000 tokens > 200000 maximum' } } }]),
      bedrock: (_seen, res) => void sendFrames(res, [frame('messageStart', { role: 'assistant' }), ...textFrames(0, ['unused']), ...endFrames('end_turn')]),
    });
    const refused = await client.messages.create({ model: 'anthropic/claude-test', max_tokens: 10, stream: true, messages: [{ role: 'user', content: 'long' }] }).catch((err: unknown) => err);
    expect(refused).toBeInstanceOf(Anthropic.BadRequestError);
    expect((refused as Error).message).toContain('prompt is too long');
    expect(bedrock?.requests).toHaveLength(0);
  });

  it('takes the key as Authorization: Bearer too, and routes by the x-sluice-order header', async () => {
    const client = await setup({ anthropic: (_seen, res) => json(res, 200, anthropicMessage([{ type: 'text', text: 'A' }], 'end_turn')), bedrock: (_seen, res) => sendConverse(res, [{ text: 'B' }]) });
    const bearer = new Anthropic({ baseURL: `http://127.0.0.1:${gateway?.port}`, apiKey: null, authToken: API_KEY, maxRetries: 0, defaultHeaders: { 'x-sluice-order': 'bedrock' } });
    const answer = await bearer.messages.create({ model: 'anthropic/claude-test', max_tokens: 10, messages: [{ role: 'user', content: 'Hi' }] });
    expect(answer.content).toEqual([{ type: 'text', text: 'B' }]);
    const viaBody = await client.messages.create({ model: 'anthropic/claude-test', max_tokens: 10, messages: [{ role: 'user', content: 'Hi' }], providerOptions: { gateway: { order: ['bedrock'] } } } as Anthropic.MessageCreateParamsNonStreaming);
    expect(viaBody.content).toEqual([{ type: 'text', text: 'B' }]);
    expect(anthropic?.requests).toHaveLength(0);
  });
});

