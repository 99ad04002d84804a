// An upstream error reported partway through a stream, after the client got
// its 200 and some text: each client protocol's in-band error keeps what the
// upstream said it was (rate limit, overloaded, refused request), as its real
// client reads it, and the attempt's span records it.
import Anthropic from '@anthropic-ai/sdk';
import OpenAI from 'openai';
import type { ServerResponse } from 'node:http';
import { afterEach, describe, expect, it } from 'vitest';
import { API_KEY, attr, chunk, startGateway, startUpstream, type Gateway, type Upstream } from '../harness.js';
import { messageStart, textBlock } from '../providers/anthropic/fixtures.js';
import { exceptionFrame, frame, sendFrames } from '../providers/bedrock/fixtures.js';
import { response as geminiResponse } from '../providers/google/fixtures.js';
import { sse } from '../providers/shared/fake-upstream.js';
import { aiClients } from '../aisdk/clients.js';

let gateway: Gateway | undefined;
let upstream: Upstream | undefined;

afterEach(async () => {
  await gateway?.close();
  await upstream?.close();
  gateway = undefined;
  upstream = undefined;
});

type Kind = 'rate_limit' | 'overloaded' | 'invalid';

const UPSTREAM_KEY = 'sk-upstream-secret';
/** Every upstream's message echoes its key, as some proxies do: no client may see it. */
const SAID = `says so for key ${UPSTREAM_KEY}`;
const REDACTED = 'says so for key ***';

interface Case {
  readonly name: string;
  readonly provider: Record<string, unknown>;
  /** Writes some text, then the upstream's documented mid-stream error of that kind. */
  readonly send: (res: ServerResponse, kind: Kind) => void | Promise<void>;
  /** The in-band Chat Completions error's type and code: the upstream's own words where it is OpenAI-compatible. */
  readonly chat: Record<Kind, { type: string; code: string }>;
}

const openaiErrors: Record<Kind, Record<string, unknown>> = {
  // OpenAI's rate-limit error names the limit as its type ("tokens", "requests").
  rate_limit: { message: `Rate limit reached for gpt-test on tokens per min ${SAID}`, type: 'tokens', param: null, code: 'rate_limit_exceeded' },
  // LiteLLM's proxy gives the status as a string code.
  overloaded: { message: `No deployments available ${SAID}`, type: 'api_error', param: null, code: '503' },
  invalid: { message: `Invalid prompt: your prompt was flagged ${SAID}`, type: 'invalid_request_error', param: null, code: 'invalid_prompt' },
};

const anthropicErrors: Record<Kind, string> = { rate_limit: 'rate_limit_error', overloaded: 'overloaded_error', invalid: 'invalid_request_error' };

const geminiErrors: Record<Kind, Record<string, unknown>> = {
  rate_limit: { code: 429, message: `Resource has been exhausted ${SAID}`, status: 'RESOURCE_EXHAUSTED' },
  overloaded: { code: 503, message: `The model is overloaded ${SAID}`, status: 'UNAVAILABLE' },
  invalid: { code: 400, message: `Request contains an invalid argument ${SAID}`, status: 'INVALID_ARGUMENT' },
};

const bedrockExceptions: Record<Kind, string> = { rate_limit: 'throttlingException', overloaded: 'serviceUnavailableException', invalid: 'validationException' };

const cases: readonly Case[] = [
  {
    name: 'an OpenAI-compatible error event',
    provider: { type: 'openai' },
    send: (res, kind) => {
      res.writeHead(200, { 'content-type': 'text/event-stream' });
      res.write(`data: ${JSON.stringify(chunk({ role: 'assistant', content: 'Part' }))}\n\n`);
      res.end(`data: ${JSON.stringify({ error: openaiErrors[kind] })}\n\n`);
    },
    chat: { rate_limit: { type: 'tokens', code: 'rate_limit_exceeded' }, overloaded: { type: 'api_error', code: '503' }, invalid: { type: 'invalid_request_error', code: 'invalid_prompt' } },
  },
  {
    name: "Anthropic's error event",
    provider: { type: 'anthropic' },
    send: (res, kind) => sse(res, [messageStart(), ...textBlock(0, ['Part']).slice(0, 3), { event: 'error', data: { type: 'error', error: { type: anthropicErrors[kind], message: `Trouble ${SAID}` } } }]),
    chat: { rate_limit: { type: 'rate_limit_error', code: 'rate_limit_error' }, overloaded: { type: 'api_error', code: 'overloaded_error' }, invalid: { type: 'invalid_request_error', code: 'invalid_request_error' } },
  },
  {
    name: "Gemini's error object",
    provider: { type: 'google' },
    send: (res, kind) => sse(res, [{ data: geminiResponse([{ text: 'Part' }]) }, { data: { error: geminiErrors[kind] } }]),
    chat: { rate_limit: { type: 'rate_limit_error', code: 'RESOURCE_EXHAUSTED' }, overloaded: { type: 'api_error', code: 'UNAVAILABLE' }, invalid: { type: 'invalid_request_error', code: 'INVALID_ARGUMENT' } },
  },
  {
    name: "Bedrock's exception frame",
    provider: { type: 'bedrock', region: 'us-east-1' },
    send: (res, kind) => sendFrames(res, [frame('messageStart', { role: 'assistant' }), frame('contentBlockDelta', { contentBlockIndex: 0, delta: { text: 'Part' } }), exceptionFrame(bedrockExceptions[kind], `Trouble ${SAID}`)]),
    chat: {
      rate_limit: { type: 'rate_limit_error', code: 'throttlingException' },
      overloaded: { type: 'api_error', code: 'serviceUnavailableException' },
      invalid: { type: 'invalid_request_error', code: 'validationException' },
    },
  },
];

async function setup(test: Case, kind: Kind): Promise<Gateway> {
  upstream = await startUpstream((_body, res) => test.send(res, kind));
  gateway = await startGateway({
    providers: { up: { ...test.provider, base_url: upstream.url, api_key: UPSTREAM_KEY } },
    models: [{ id: 'acme/model', endpoints: [{ provider: 'up', model: 'up-model' }] }],
  });
  return gateway;
}

/** The HTTP answer each kind stands for, as the attempt's span records it. */
const statuses: Record<Kind, string> = { rate_limit: '429', overloaded: '503', invalid: '400' };
const messagesTypes: Record<Kind, string> = { rate_limit: 'rate_limit_error', overloaded: 'overloaded_error', invalid: 'invalid_request_error' };
const aiSdkTypes: Record<Kind, { type: string; statusCode: number }> = {
  rate_limit: { type: 'rate_limit_exceeded', statusCode: 429 },
  overloaded: { type: 'internal_server_error', statusCode: 503 },
  invalid: { type: 'invalid_request_error', statusCode: 400 },
};

const KINDS: readonly Kind[] = ['rate_limit', 'overloaded', 'invalid'];

describe.each(cases)('a mid-stream error from $name', (test) => {
  describe.each(KINDS)('of kind %s', (kind) => {
    it('reaches an openai SDK stream as its kind, after the text before it, and is recorded on the attempt span', async () => {
      const gw = await setup(test, kind);
      const client = new OpenAI({ baseURL: gw.baseURL, apiKey: API_KEY, maxRetries: 0 });
      const stream = await client.chat.completions.create({ model: 'acme/model', messages: [{ role: 'user', content: 'hi' }], stream: true });
      let text = '';
      const error = await (async () => {
        for await (const part of stream) text += part.choices[0]?.delta.content ?? '';
      })().catch((e: unknown) => e);
      expect(text).toBe('Part');
      expect(error).toBeInstanceOf(OpenAI.APIError);
      const body = (error as InstanceType<typeof OpenAI.APIError>).error as { type: string; code: string; message: string };
      expect({ type: body.type, code: body.code }).toEqual(test.chat[kind]);
      expect(body.message).toMatch(/^Provider up failed: .*says so for key \*\*\*$/);
      const spans = await gw.spans(2);
      const attempt = spans.find((s) => s.name === 'chat up-model');
      expect(attr(attempt, 'error.type')).toBe(statuses[kind]);
      expect(String(attempt?.status?.message)).toContain(REDACTED);
    });

    it('reaches an @anthropic-ai/sdk stream as an error event of its Anthropic type', async () => {
      const gw = await setup(test, kind);
      const client = new Anthropic({ baseURL: `http://127.0.0.1:${gw.port}`, apiKey: API_KEY, maxRetries: 0 });
      const stream = client.messages.stream({ model: 'acme/model', max_tokens: 10, messages: [{ role: 'user', content: 'hi' }] });
      let text = '';
      stream.on('text', (delta) => void (text += delta));
      const error = await stream.finalMessage().catch((e: unknown) => e);
      expect(text).toBe('Part');
      expect(error).toBeInstanceOf(Anthropic.APIError);
      expect((error as InstanceType<typeof Anthropic.APIError>).error).toMatchObject({ type: 'error', error: { type: messagesTypes[kind], message: expect.stringContaining(REDACTED) } });
      const spans = await gw.spans(2);
      expect(attr(spans.find((s) => s.name === 'chat up-model'), 'error.type')).toBe(statuses[kind]);
    });

    it.each(aiClients)('reaches $name streamText as an error part of its class and status', async ({ ai }) => {
      const gw = await setup(test, kind);
      const provider = ai.createGateway({ baseURL: `${gw.baseURL}/ai`, apiKey: API_KEY });
      const result = ai.streamText({ model: provider('acme/model'), prompt: 'hi', maxRetries: 0, onError: () => undefined });
      const parts: Array<{ type: string; error?: unknown; text?: string }> = [];
      for await (const part of result.fullStream) parts.push(part);
      expect(parts.filter((p) => p.type === 'text-delta').map((p) => p.text)).toEqual(['Part']);
      expect(parts.find((p) => p.type === 'error')?.error).toMatchObject({ ...aiSdkTypes[kind], message: expect.stringContaining(REDACTED) });
    });
  });
});
