// OpenAI-compatible servers (vLLM, Ollama, llama.cpp, LiteLLM, OpenRouter,
// Groq, Together) that stray from OpenAI's own answers, through the official
// openai SDK.
import OpenAI from 'openai';
import { gzipSync } from 'node:zlib';
import { afterEach, describe, expect, it, vi } from 'vitest';
import { API_KEY, attr, chunk, completion, openaiProvider, sendJson, startGateway, startUpstream, textStream, type Gateway, type Upstream, type UpstreamHandler } from '../harness.js';

let gateway: Gateway | undefined;
const upstreams: Upstream[] = [];

afterEach(async () => {
  await gateway?.close();
  gateway = undefined;
  await Promise.all(upstreams.splice(0).map((u) => u.close()));
});

/** A gateway whose model `sloppy/m` goes to `first`, then (when given) to `second`. */
async function setup(first: UpstreamHandler, second?: UpstreamHandler): Promise<OpenAI> {
  const providers: Record<string, unknown> = {};
  const endpoints = [];
  for (const [slug, handler] of [['first', first], ['second', second]] as const) {
    if (handler === undefined) continue;
    const upstream = await startUpstream(handler);
    upstreams.push(upstream);
    providers[slug] = openaiProvider(upstream);
    endpoints.push({ provider: slug, model: 'm' });
  }
  gateway = await startGateway({ providers, models: [{ id: 'sloppy/m', endpoints }] });
  return new OpenAI({ baseURL: gateway.baseURL, apiKey: API_KEY, maxRetries: 0 });
}

const messages = [{ role: 'user' as const, content: 'hi' }];

type APIError = InstanceType<typeof OpenAI.APIError>;

async function failure(promise: Promise<unknown>): Promise<APIError> {
  const err = await promise.then(
    () => undefined,
    (e: unknown) => e,
  );
  expect(err).toBeInstanceOf(OpenAI.APIError);
  return err as APIError;
}

/** The first choice's text a stream gave before it failed, and the failure. */
async function textUntilFailure(stream: AsyncIterable<OpenAI.Chat.ChatCompletionChunk>): Promise<{ text: string; err: APIError }> {
  let text = '';
  const err = await failure(
    (async () => {
      for await (const c of stream) text += c.choices[0]?.delta.content ?? '';
    })(),
  );
  return { text, err };
}

describe('an OpenAI-compatible upstream answering 200 with an error object', () => {
  it('gives a whole answer the error with its message and the status its code stands for, not tried elsewhere', async () => {
    const client = await setup((_body, res) => sendJson(res, 200, { error: { message: 'prompt is too long', type: 'invalid_request_error', code: 400 } }), (_body, res) => sendJson(res, 200, completion('from second')));
    const err = await failure(client.chat.completions.create({ model: 'sloppy/m', messages }));
    expect(err.status).toBe(400);
    expect(err.message).toContain('Provider first failed: prompt is too long');
    expect(upstreams[1]?.requests).toHaveLength(0);
  });

  it('falls back from a whole answer whose error has no status, and says what it was when none is left', async () => {
    const client = await setup((_body, res) => sendJson(res, 200, { error: { message: 'model overloaded', type: 'server_error' } }));
    const err = await failure(client.chat.completions.create({ model: 'sloppy/m', messages }));
    expect(err.status).toBe(502);
    expect(err.message).toContain('Provider first failed: model overloaded');
  });

  it('gives a stream the error of a JSON error body, with its status', async () => {
    const client = await setup((_body, res) => sendJson(res, 200, { error: { message: 'rate limited upstream', code: 429 } }));
    const err = await failure(client.chat.completions.create({ model: 'sloppy/m', messages, stream: true }));
    expect(err.status).toBe(429);
    expect(err.message).toContain('Provider first failed: rate limited upstream');
  });

  it('falls back from a stream answered with a JSON error body', async () => {
    const client = await setup(
      (_body, res) => sendJson(res, 200, { error: 'upstream worker crashed' }),
      (_body, res) => textStream(res, ['from ', 'second']),
    );
    const stream = await client.chat.completions.create({ model: 'sloppy/m', messages, stream: true });
    let text = '';
    for await (const chunk of stream) text += chunk.choices[0]?.delta.content ?? '';
    expect(text).toBe('from second');
  });
});

describe('an OpenAI-compatible upstream answering stream: true with a whole completion', () => {
  it('streams the completion to the client: content, tool calls, finish_reason, usage and id', async () => {
    const toolCall = { id: 'call_1', type: 'function', function: { name: 'weather', arguments: '{"city":"Zürich"}' } };
    const client = await setup((_body, res) =>
      sendJson(res, 200, completion('it is', { id: 'chatcmpl-whole', choices: [{ index: 0, message: { role: 'assistant', content: 'it is', tool_calls: [toolCall] }, finish_reason: 'tool_calls' }] })),
    );
    const stream = client.chat.completions.stream({ model: 'sloppy/m', messages, stream: true, stream_options: { include_usage: true } });
    const chunks = [];
    for await (const chunk of stream) chunks.push(chunk);
    const final = await stream.finalChatCompletion();
    expect(final.id).toBe('chatcmpl-whole');
    expect(final.choices[0]?.message.content).toBe('it is');
    expect(final.choices[0]?.message.tool_calls).toEqual([toolCall]);
    expect(final.choices[0]?.finish_reason).toBe('tool_calls');
    expect(chunks.at(-1)?.usage).toEqual({ prompt_tokens: 11, completion_tokens: 7, total_tokens: 18 });
  });

  it('leaves the usage chunk out when the client did not ask for it', async () => {
    const client = await setup((_body, res) => sendJson(res, 200, completion('whole')));
    const stream = await client.chat.completions.create({ model: 'sloppy/m', messages, stream: true });
    const chunks = [];
    for await (const chunk of stream) chunks.push(chunk);
    expect(chunks.map((c) => c.choices[0]?.delta.content)).toEqual(['whole']);
    expect(chunks.some((c) => c.usage != null)).toBe(false);
  });
});

describe('an OpenAI-compatible upstream whose connection drops mid-stream', () => {
  it('ends the stream with an error saying the provider broke off its answer, not that it could not be reached', async () => {
    const client = await setup((_body, res) => {
      res.writeHead(200, { 'content-type': 'text/event-stream' });
      res.write(`data: ${JSON.stringify(chunk({ role: 'assistant', content: 'Hel' }))}\n\n`, () => setTimeout(() => res.destroy(), 50));
    });
    const stream = await client.chat.completions.create({ model: 'sloppy/m', messages, stream: true });
    const { text, err } = await textUntilFailure(stream);
    expect(text).toBe('Hel');
    expect(err.message).toMatch(/^Provider first broke off its answer \(UND_ERR_SOCKET\)\.$/);
  });

  it('says the same of a whole answer whose connection drops after its headers, and falls back', async () => {
    const client = await setup(
      (_body, res) => {
        res.writeHead(200, { 'content-type': 'application/json', 'content-length': '1000' });
        res.write('{"id":"chatcmpl-1","choices":[', () => setTimeout(() => res.destroy(), 50));
      },
      (_body, res) => sendJson(res, 500, { error: { message: 'second is down too' } }),
    );
    const err = await failure(client.chat.completions.create({ model: 'sloppy/m', messages }));
    expect(err.status).toBe(500);
    expect(upstreams[1]?.requests).toHaveLength(1);
    const spans = await gateway!.spans(3);
    const first = spans.find((s) => s.name === 'chat m' && attr(s, 'sluice.provider') === 'first');
    expect(first?.status?.message).toBe('Provider first broke off its answer (UND_ERR_SOCKET).');
  });
});

describe('an OpenAI-compatible upstream that ends its body without [DONE]', () => {
  const write = (res: import('node:http').ServerResponse, events: readonly unknown[]) => {
    res.writeHead(200, { 'content-type': 'text/event-stream' });
    for (const event of events) res.write(`data: ${JSON.stringify(event)}\n\n`);
    res.end();
  };

  it('answers the stream whole once every choice has its finish_reason', async () => {
    const client = await setup((_body, res) => write(res, [chunk({ role: 'assistant', content: 'all' }), chunk({}, 'stop')]));
    const stream = client.chat.completions.stream({ model: 'sloppy/m', messages });
    const answer = await stream.finalChatCompletion();
    expect(answer.choices[0]?.message.content).toBe('all');
    expect(answer.choices[0]?.finish_reason).toBe('stop');
  });

  it('ends the stream with an error, not a whole answer, when a choice never finished (a proxy that closed the body cleanly)', async () => {
    const client = await setup((_body, res) => write(res, [chunk({ role: 'assistant', content: 'Hel' }), { ...chunk({ content: '' }), choices: [{ index: 1, delta: { content: 'lo' }, finish_reason: 'stop' }] }]));
    const stream = await client.chat.completions.create({ model: 'sloppy/m', messages, stream: true, n: 2 });
    const { text, err } = await textUntilFailure(stream);
    expect(text).toBe('Hello');
    expect(err.message).toContain('ended before choice 0 finished');
  });

  it('ends the stream with an error when its choice said only finish_reason "" (SGLang, old Ollama: "" for null)', async () => {
    const unfinished = (content: string) => ({ ...chunk({ content }), choices: [{ index: 0, delta: { content }, finish_reason: '' }] });
    const client = await setup((_body, res) => write(res, [unfinished('Hel'), unfinished('lo')]));
    const stream = await client.chat.completions.create({ model: 'sloppy/m', messages, stream: true });
    const { text, err } = await textUntilFailure(stream);
    expect(text).toBe('Hello');
    expect(err.message).toContain('ended before choice 0 finished');
  });

  it('falls back when nothing but the opening role chunk came', async () => {
    const client = await setup(
      (_body, res) => write(res, [chunk({ role: 'assistant', content: '' })]),
      (_body, res) => textStream(res, ['from ', 'second']),
    );
    const stream = await client.chat.completions.create({ model: 'sloppy/m', messages, stream: true });
    let text = '';
    for await (const c of stream) text += c.choices[0]?.delta.content ?? '';
    expect(text).toBe('from second');
  });
});

describe('an upstream answering an error with a long body that does not end', () => {
  it('reads the start of it, answers its status and drops the connection, whole and streamed', async () => {
    let closed = 0;
    const client = await setup((_body, res) => {
      res.writeHead(500, { 'content-type': 'text/plain' });
      res.on('close', () => (closed += 1));
      // 4 MiB, and then the body stays open: it never ends.
      for (let i = 0; i < 64; i++) res.write(Buffer.alloc(64 * 1024, 'x'));
    });
    const whole = await failure(client.chat.completions.create({ model: 'sloppy/m', messages }));
    const streamed = await failure(client.chat.completions.create({ model: 'sloppy/m', messages, stream: true }));
    for (const err of [whole, streamed]) {
      expect(err.status).toBe(500);
      expect(err.message).toMatch(/^500 upstream answered HTTP 500: x{100}/);
    }
    await vi.waitFor(() => expect(closed).toBe(2));
  });
});

describe('an OpenAI-compatible upstream opening its answer with a byte order mark', () => {
  it('answers the completion without it', async () => {
    const client = await setup((_body, res) => {
      const body = Buffer.concat([Buffer.from([0xef, 0xbb, 0xbf]), Buffer.from(JSON.stringify(completion('Grüezi')))]);
      res.writeHead(200, { 'content-type': 'application/json; charset=utf-8', 'content-length': body.length });
      res.end(body);
    });
    const answer = await client.chat.completions.create({ model: 'sloppy/m', messages });
    expect(answer.choices[0]?.message.content).toBe('Grüezi');
    expect(answer.usage?.total_tokens).toBe(18);
  });
});

describe('an OpenAI-compatible upstream whose last chunk has no delta', () => {
  it('gives the client the choice with an empty delta, as every chunk of OpenAI has one', async () => {
    const client = await setup((_body, res) => {
      res.writeHead(200, { 'content-type': 'text/event-stream' });
      res.write(`data: ${JSON.stringify(chunk({ role: 'assistant', content: 'Hi' }))}\n\n`);
      res.write(`data: ${JSON.stringify({ ...chunk({}, 'stop'), choices: [{ index: 0, finish_reason: 'stop' }] })}\n\n`);
      res.write(`data: ${JSON.stringify({ ...chunk({}, 'stop'), choices: [{ index: 0, delta: null, finish_reason: 'stop' }] })}\n\n`);
      res.end('data: [DONE]\n\n');
    });
    const stream = await client.chat.completions.create({ model: 'sloppy/m', messages, stream: true });
    const deltas = [];
    for await (const c of stream) deltas.push(c.choices[0]?.delta);
    expect(deltas).toEqual([{ role: 'assistant', content: 'Hi' }, {}, {}]);
  });
});

describe('an OpenAI-compatible upstream that fails right after its opening role chunk', () => {
  it('falls back, since the role chunk alone is held until there is more to send', async () => {
    const client = await setup(
      (_body, res) => {
        res.writeHead(200, { 'content-type': 'text/event-stream' });
        res.write(`data: ${JSON.stringify(chunk({ role: 'assistant', content: '' }))}\n\n`);
        res.end(`data: ${JSON.stringify({ error: { message: 'provider returned error', code: 502 } })}\n\n`);
      },
      (_body, res) => textStream(res, ['from ', 'second']),
    );
    const stream = await client.chat.completions.create({ model: 'sloppy/m', messages, stream: true });
    const chunks = [];
    for await (const c of stream) chunks.push(c);
    expect(chunks.map((c) => c.choices[0]?.delta.content).join('')).toBe('from second');
    expect(upstreams[1]?.requests).toHaveLength(1);
  });

  it('falls back too when the role chunk says finish_reason "" (SGLang, old Ollama: "" for null)', async () => {
    const client = await setup(
      (_body, res) => {
        res.writeHead(200, { 'content-type': 'text/event-stream' });
        res.write(`data: ${JSON.stringify({ ...chunk({}), choices: [{ index: 0, delta: { role: 'assistant', content: '' }, finish_reason: '' }] })}\n\n`);
        res.end(`data: ${JSON.stringify({ error: { message: 'provider returned error', code: 502 } })}\n\n`);
      },
      (_body, res) => textStream(res, ['from ', 'second']),
    );
    const stream = await client.chat.completions.create({ model: 'sloppy/m', messages, stream: true });
    const chunks = [];
    for await (const c of stream) chunks.push(c);
    expect(chunks.map((c) => c.choices[0]?.delta.content).join('')).toBe('from second');
    expect(upstreams[1]?.requests).toHaveLength(1);
  });

  it('still sends the role chunk, first, once content follows it', async () => {
    const client = await setup((_body, res) => textStream(res, ['Hi']));
    const stream = await client.chat.completions.create({ model: 'sloppy/m', messages, stream: true });
    const deltas = [];
    for await (const c of stream) deltas.push(c.choices[0]?.delta);
    expect(deltas).toEqual([{ role: 'assistant', content: '' }, { content: 'Hi' }, {}]);
  });
});

describe('a base_url that leads to a web page answering 200', () => {
  const page = '<!doctype html><html><head><title>Open WebUI</title></head><body></body></html>';
  function sendPage(_body: Record<string, unknown>, res: import('node:http').ServerResponse): void {
    res.writeHead(200, { 'content-type': 'text/html' });
    res.end(page);
  }

  it('answers a whole request with an error quoting the page', async () => {
    const client = await setup(sendPage);
    const err = await failure(client.chat.completions.create({ model: 'sloppy/m', messages }));
    expect(err.status).toBe(502);
    expect(err.message).toContain(`Provider first answered with an invalid response: the body is not JSON: ${page}`);
  });

  it('answers a stream with an error quoting the page', async () => {
    const client = await setup(sendPage);
    const err = await failure(client.chat.completions.create({ model: 'sloppy/m', messages, stream: true }));
    expect(err.status).toBe(502);
    expect(err.message).toContain(`Provider first failed: upstream answered with a body that is not an event stream: ${page}`);
  });
});

describe('an OpenAI-compatible upstream whose usage chunk has no choices (Vertex AI Mistral, Bedrock Mantle)', () => {
  it('passes the usage on with choices [] instead of ending the finished stream with an error', async () => {
    const client = await setup((_body, res) => {
      res.writeHead(200, { 'content-type': 'text/event-stream' });
      res.write(`data: ${JSON.stringify(chunk({ role: 'assistant', content: 'Hi' }))}\n\n`);
      res.write(`data: ${JSON.stringify(chunk({}, 'stop'))}\n\n`);
      res.write(`data: ${JSON.stringify({ id: 'chatcmpl-s', object: 'chat.completion.chunk', created: 1700000000, model: 'gpt-test-2024', usage: { prompt_tokens: 4, completion_tokens: 1, total_tokens: 5 } })}\n\n`);
      res.end('data: [DONE]\n\n');
    });
    const stream = await client.chat.completions.create({ model: 'sloppy/m', messages, stream: true, stream_options: { include_usage: true } });
    const chunks = [];
    for await (const c of stream) chunks.push(c);
    expect(chunks.map((c) => c.choices[0]?.delta.content ?? null)).toEqual(['Hi', null, null]);
    expect(chunks.at(-1)).toMatchObject({ choices: [], usage: { prompt_tokens: 4, completion_tokens: 1, total_tokens: 5 } });
  });
});

describe('an OpenAI-compatible upstream that reports a failure as an SSE event named error', () => {
  // The Responses API's shape: the event's type says error, its data is the error itself.
  const errorEvent = (res: import('node:http').ServerResponse, before: readonly unknown[]) => {
    res.writeHead(200, { 'content-type': 'text/event-stream' });
    for (const event of before) res.write(`data: ${JSON.stringify(event)}\n\n`);
    res.end(`event: error\ndata: ${JSON.stringify({ type: 'error', code: 'server_is_overloaded', message: 'The server is overloaded' })}\n\n`);
  };

  it('ends the stream with that error after the text before it, not with [DONE]', async () => {
    const client = await setup((_body, res) => errorEvent(res, [chunk({ role: 'assistant', content: 'Hel' })]));
    const stream = await client.chat.completions.create({ model: 'sloppy/m', messages, stream: true });
    const { text, err } = await textUntilFailure(stream);
    expect(text).toBe('Hel');
    expect(err.message).toContain('Provider first failed: The server is overloaded');
  });

  it('falls back when it comes first, instead of answering 200 with its data as a chunk', async () => {
    const client = await setup(
      (_body, res) => errorEvent(res, []),
      (_body, res) => textStream(res, ['from ', 'second']),
    );
    const stream = await client.chat.completions.create({ model: 'sloppy/m', messages, stream: true });
    let text = '';
    for await (const c of stream) text += c.choices[0]?.delta.content ?? '';
    expect(text).toBe('from second');
  });
});

describe('an OpenAI-compatible upstream whose SSE event named error names its kind', () => {
  it('answers with its code and the status it stands for, as for an error wrapped in an error key', async () => {
    const client = await setup((_body, res) => {
      res.writeHead(200, { 'content-type': 'text/event-stream' });
      res.end(`event: error\ndata: ${JSON.stringify({ type: 'requests', code: 'rate_limit_exceeded', message: 'Rate limit reached for requests' })}\n\n`);
    });
    const err = await failure(client.chat.completions.create({ model: 'sloppy/m', messages, stream: true }));
    expect(err.status).toBe(429);
    expect(err.code).toBe('rate_limit_exceeded');
    expect(err.type).toBe('requests');
    expect(err.message).toContain('Rate limit reached for requests');
  });
});

describe('an upstream that compresses its answer unless told not to', () => {
  // RFC 9110, 12.5.3: a request without Accept-Encoding takes any coding, so a server may gzip.
  const gzipUnlessIdentity = (send: (res: import('node:http').ServerResponse, encoded: (text: string) => Buffer | string) => void): UpstreamHandler =>
    function answer(_body, res, req) {
      const identity = req.headers['accept-encoding'] === 'identity';
      if (!identity) res.setHeader('content-encoding', 'gzip');
      send(res, (text) => (identity ? text : gzipSync(text)));
    };

  it('is asked for an uncompressed stream, which reaches the client whole', async () => {
    const client = await setup(
      gzipUnlessIdentity((res, encoded) => {
        res.writeHead(200, { 'content-type': 'text/event-stream' });
        res.end(encoded([chunk({ role: 'assistant', content: 'plain' }), chunk({}, 'stop')].map((c) => `data: ${JSON.stringify(c)}\n\n`).join('') + 'data: [DONE]\n\n'));
      }),
    );
    const stream = await client.chat.completions.create({ model: 'sloppy/m', messages, stream: true });
    let text = '';
    for await (const c of stream) text += c.choices[0]?.delta.content ?? '';
    expect(text).toBe('plain');
  });

  it('is asked for an uncompressed whole answer', async () => {
    const client = await setup(
      gzipUnlessIdentity((res, encoded) => {
        res.writeHead(200, { 'content-type': 'application/json' });
        res.end(encoded(JSON.stringify(completion('plain'))));
      }),
    );
    const answer = await client.chat.completions.create({ model: 'sloppy/m', messages });
    expect(answer.choices[0]?.message.content).toBe('plain');
  });
});
