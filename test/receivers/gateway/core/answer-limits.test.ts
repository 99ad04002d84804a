// An upstream whose 2xx answer never ends (an endless JSON body, an SSE line
// with no newline) must not fill the gateway's memory: past the bound the
// attempt fails as an unreadable answer, the next endpoint is tried (or, after
// the first byte, the stream ends with an in-band error) and the upstream's
// connection is dropped.
import type { ServerResponse } from 'node:http';
import OpenAI from 'openai';
import { afterEach, describe, expect, it, vi } from 'vitest';
import { MAX_ANSWER_BYTES, MAX_EVENT_CHARS } from '../../../../src/receivers/gateway/providers/shared/answer-limits.js';
import { API_KEY, chunk, completion, openaiProvider, sendJson, startGateway, startUpstream, textStream, type Gateway, type Upstream } from '../harness.js';

let gateway: Gateway | undefined;
const upstreams: Upstream[] = [];

afterEach(async () => {
  await gateway?.close();
  gateway = undefined;
  await Promise.all(upstreams.splice(0).map((u) => u.close()));
});

const messages = [{ role: 'user' as const, content: 'hi' }];
const MiB = 1024 * 1024;
const PART = Buffer.alloc(MiB, 'x');

/** Writes `bytes` of PART after `head`, waiting for the socket to drain, and then keeps the body open. */
function endless(res: ServerResponse, head: string, bytes: number): void {
  let left = bytes;
  res.write(head);
  function more(): void {
    while (left > 0) {
      left -= PART.length;
      if (!res.write(PART)) {
        res.once('drain', more);
        return;
      }
    }
  }
  more();
}

/** How each provider type is configured and what its first bytes of a hostile answer look like. */
const TYPES = {
  openai: { provider: (url: string) => ({ type: 'openai', base_url: url, api_key: 'k' }), sse: 'data: {"x":"' },
  anthropic: { provider: (url: string) => ({ type: 'anthropic', base_url: url, api_key: 'k' }), sse: 'event: message_start\ndata: {"x":"' },
  google: { provider: (url: string) => ({ type: 'google', base_url: url, api_key: 'k' }), sse: 'data: {"x":"' },
  bedrock: { provider: (url: string) => ({ type: 'bedrock', base_url: url, region: 'us-east-1', access_key_id: 'a', secret_access_key: 'b' }), sse: '' },
} as const;

interface Setup {
  readonly client: OpenAI;
  readonly closed: () => number;
}

/** `first` (of `type`) answers with `answer`; `second`, an OpenAI-compatible upstream, answers well. */
async function setup(type: keyof typeof TYPES, answer: (res: ServerResponse, stream: boolean) => void): Promise<Setup> {
  let closed = 0;
  const first = await startUpstream((body, res, req) => {
    res.on('close', () => (closed += 1));
    answer(res, body['stream'] === true || /stream/i.test(req.url ?? ''));
  });
  const second = await startUpstream((body, res) => (body['stream'] === true ? textStream(res, ['from ', 'second']) : sendJson(res, 200, completion('from second'))));
  upstreams.push(first, second);
  const base = type === 'openai' ? first.url : first.url.replace(/\/v1$/, '');
  gateway = await startGateway({
    providers: { first: TYPES[type].provider(base), second: openaiProvider(second) },
    models: [{ id: 'acme/m', endpoints: [{ provider: 'first', model: 'm' }, { provider: 'second', model: 'm' }] }],
  });
  return { client: new OpenAI({ baseURL: gateway.baseURL, apiKey: API_KEY, maxRetries: 0 }), closed: () => closed };
}

async function streamed(client: OpenAI): Promise<string> {
  const stream = await client.chat.completions.create({ model: 'acme/m', messages, stream: true });
  let text = '';
  for await (const c of stream) text += c.choices[0]?.delta.content ?? '';
  return text;
}

describe('a whole 2xx answer larger than the gateway reads', () => {
  it.each(Object.keys(TYPES) as (keyof typeof TYPES)[])('falls back from a %s answer that declares a length past the bound, without reading it', async (type) => {
    const { client, closed } = await setup(type, (res) => {
      res.writeHead(200, { 'content-type': 'application/json', 'content-length': String(MAX_ANSWER_BYTES + 1) });
      res.write('{"id":"');
    });
    const answer = await client.chat.completions.create({ model: 'acme/m', messages });
    expect(answer.choices[0]?.message.content).toBe('from second');
    await vi.waitFor(() => expect(closed()).toBe(1));
  });

  it('falls back from an answer without a length that goes on past the bound, saying why when none is left', async () => {
    const { client, closed } = await setup('openai', (res) => {
      res.writeHead(200, { 'content-type': 'application/json' });
      endless(res, '{"id":"', MAX_ANSWER_BYTES + MiB);
    });
    const answer = await client.chat.completions.create({ model: 'acme/m', messages });
    expect(answer.choices[0]?.message.content).toBe('from second');
    await vi.waitFor(() => expect(closed()).toBe(1));
    const spans = await gateway!.spans(3);
    const first = spans.find((s) => s.name === 'chat m' && s.attributes?.some((a) => a.key === 'sluice.provider' && a.value?.stringValue === 'first'));
    expect(first?.status?.message).toBe(`Provider first answered with an invalid response: its body passed ${MAX_ANSWER_BYTES / MiB} MiB, the most the gateway reads of a whole answer.`);
  });
});

describe('a streamed event larger than the gateway reads', () => {
  it.each(['openai', 'anthropic', 'google'] as const)('falls back from a %s stream whose first line never ends', async (type) => {
    const { client, closed } = await setup(type, (res) => {
      res.writeHead(200, { 'content-type': 'text/event-stream' });
      endless(res, TYPES[type].sse, MAX_EVENT_CHARS + MiB);
    });
    expect(await streamed(client)).toBe('from second');
    await vi.waitFor(() => expect(closed()).toBe(1));
  });

  it('falls back from an anthropic stream of a Messages request sent on natively whose first line never ends', async () => {
    const { closed } = await setup('anthropic', (res) => {
      res.writeHead(200, { 'content-type': 'text/event-stream' });
      endless(res, TYPES.anthropic.sse, MAX_EVENT_CHARS + MiB);
    });
    const answer = await fetch(`${gateway?.baseURL}/messages`, {
      method: 'POST',
      headers: { authorization: `Bearer ${API_KEY}`, 'content-type': 'application/json' },
      body: JSON.stringify({ model: 'acme/m', max_tokens: 10, messages, stream: true }),
    });
    expect(answer.status).toBe(200);
    expect(answer.headers.get('x-sluice-provider')).toBe('second');
    expect(await answer.text()).toContain('message_stop');
    await vi.waitFor(() => expect(closed()).toBe(1));
  });

  it('falls back from an OpenAI-compatible stream answered with an endless JSON body', async () => {
    const { client, closed } = await setup('openai', (res) => {
      res.writeHead(200, { 'content-type': 'application/json' });
      endless(res, '{"id":"', MAX_ANSWER_BYTES + MiB);
    });
    expect(await streamed(client)).toBe('from second');
    await vi.waitFor(() => expect(closed()).toBe(1));
  });

  it('ends a stream that began with an in-band error when a later event never ends', async () => {
    const { client, closed } = await setup('openai', (res) => {
      res.writeHead(200, { 'content-type': 'text/event-stream' });
      res.write(`data: ${JSON.stringify(chunk({ role: 'assistant', content: 'Hel' }))}\n\n`);
      res.write(`data: ${JSON.stringify(chunk({ content: 'lo' }))}\n\n`);
      endless(res, 'data: {"x":"', MAX_EVENT_CHARS + MiB);
    });
    const stream = await client.chat.completions.create({ model: 'acme/m', messages, stream: true });
    let text = '';
    const err = await (async () => {
      for await (const c of stream) text += c.choices[0]?.delta.content ?? '';
    })().then(
      () => undefined,
      (e: unknown) => e,
    );
    expect(text).toBe('Hello');
    expect(err).toBeInstanceOf(OpenAI.APIError);
    expect((err as Error).message).toBe(`Provider first failed: its stream sent an event longer than ${MAX_EVENT_CHARS / MiB} MiB, the most the gateway reads of one event`);
    await vi.waitFor(() => expect(closed()).toBe(1));
  });
});
