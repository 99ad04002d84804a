import OpenAI from 'openai';
import { afterEach, describe, expect, it } from 'vitest';
import { API_KEY, attr, chunk, completion, openaiProvider, sendJson, sendStream, startGateway, startUpstream, textStream, usageChunk, type Gateway, type Upstream } from '../harness.js';

const PNG_DATA_URL = 'data:image/png;base64,iVBORw0KGgoAAAANSUhEUgAAAAEAAAABCAYAAAAfFcSJAAAADUlEQVR42mP8z8BQDwAEhQGAhKmMIQAAAABJRU5ErkJggg==';

const models = [
  {
    id: 'openai/gpt-test',
    name: 'GPT Test',
    description: 'a test model',
    context_window: 128000,
    max_tokens: 16000,
    pricing: { input: '0.000001', output: '0.000002' },
    endpoints: [{ provider: 'openai', model: 'gpt-test-upstream' }],
  },
];

let gateway: Gateway | undefined;
let upstream: Upstream | undefined;

afterEach(async () => {
  await gateway?.close();
  await upstream?.close();
  gateway = undefined;
  upstream = undefined;
});

async function setup(handler: Parameters<typeof startUpstream>[0], extra: Record<string, unknown> = {}): Promise<OpenAI> {
  upstream = await startUpstream(handler);
  gateway = await startGateway({ providers: { openai: openaiProvider(upstream) }, models, ...extra });
  return new OpenAI({ baseURL: gateway.baseURL, apiKey: API_KEY, maxRetries: 0 });
}

/** The same, with one anthropic-type provider behind `acme/claude`. */
async function setupAnthropic(handler: Parameters<typeof startUpstream>[0]): Promise<OpenAI> {
  upstream = await startUpstream(handler);
  gateway = await startGateway({
    providers: { claude: { type: 'anthropic', base_url: upstream.url, api_key: 'k' } },
    models: [{ id: 'acme/claude', endpoints: [{ provider: 'claude', model: 'claude-x' }] }],
  });
  return new OpenAI({ baseURL: gateway.baseURL, apiKey: API_KEY, maxRetries: 0 });
}

describe('gateway with the official openai SDK', () => {
  it('lists the catalog in the DESIGN record shape', async () => {
    const client = await setup(() => undefined);
    const page = await client.models.list();
    expect(page.data).toHaveLength(1);
    expect(page.data[0]).toMatchObject({
      id: 'openai/gpt-test',
      object: 'model',
      owned_by: 'openai',
      name: 'GPT Test',
      description: 'a test model',
      type: 'language',
      tags: [],
      context_window: 128000,
      max_tokens: 16000,
      pricing: { input: '0.000001', output: '0.000002' },
    });
    expect(typeof page.data[0]?.created).toBe('number');
  });

  it('lists every DESIGN field of a sparse catalog entry, null where the catalog says nothing', async () => {
    upstream = await startUpstream(() => undefined);
    gateway = await startGateway({ providers: { openai: openaiProvider(upstream) }, models: [{ id: 'openai/bare', endpoints: [{ provider: 'openai', model: 'bare' }] }] });
    const client = new OpenAI({ baseURL: gateway.baseURL, apiKey: API_KEY, maxRetries: 0 });
    const [record] = (await client.models.list()).data;
    expect(record).toEqual({
      id: 'openai/bare',
      object: 'model',
      created: expect.any(Number),
      owned_by: 'openai',
      name: 'openai/bare',
      description: null,
      type: 'language',
      tags: [],
      context_window: null,
      max_tokens: null,
      pricing: null,
    });
    expect(await client.models.retrieve('openai/bare')).toEqual(record);
  });

  it('retrieves one model whose id contains a slash', async () => {
    const client = await setup(() => undefined);
    const model = await client.models.retrieve('openai/gpt-test');
    expect(model.id).toBe('openai/gpt-test');
  });

  it('answers 400 for a model id in the path with malformed percent-escapes', async () => {
    await setup(() => undefined);
    const response = await fetch(`${(gateway as Gateway).baseURL}/models/%E0`, { headers: { authorization: `Bearer ${API_KEY}` } });
    expect(response.status).toBe(400);
    expect(await response.json()).toMatchObject({ error: { type: 'invalid_request_error', code: 'invalid_value', param: 'model' } });
  });

  it('answers a non-streaming completion through the upstream with the upstream model name', async () => {
    const client = await setup((_body, res) => sendJson(res, 200, completion('hello there')));
    const result = await client.chat.completions.create({ model: 'openai/gpt-test', messages: [{ role: 'user', content: 'hi' }] });
    expect(result.choices[0]?.message.content).toBe('hello there');
    expect(upstream?.requests[0]?.body['model']).toBe('gpt-test-upstream');
    expect(upstream?.requests[0]?.headers['authorization']).toBe('Bearer sk-upstream');
    expect(upstream?.requests[0]?.url).toBe('/v1/chat/completions');
  });

  it('sets x-sluice-provider and x-sluice-attempts on the response', async () => {
    const client = await setup((_body, res) => sendJson(res, 200, completion('ok')));
    const { response } = await client.chat.completions.create({ model: 'openai/gpt-test', messages: [{ role: 'user', content: 'hi' }] }).withResponse();
    expect(response.headers.get('x-sluice-provider')).toBe('openai');
    expect(response.headers.get('x-sluice-attempts')).toBe('1');
  });

  it('streams chunks that the SDK iterates asynchronously', async () => {
    const client = await setup((_body, res) => textStream(res, ['Hel', 'lo']));
    const stream = await client.chat.completions.create({ model: 'openai/gpt-test', messages: [{ role: 'user', content: 'hi' }], stream: true });
    let text = '';
    const finishes: Array<string | null> = [];
    for await (const part of stream) {
      text += part.choices[0]?.delta.content ?? '';
      if (part.choices[0] !== undefined) finishes.push(part.choices[0].finish_reason);
    }
    expect(text).toBe('Hello');
    expect(finishes.at(-1)).toBe('stop');
  });

  it('sends the final usage chunk only when stream_options.include_usage is set', async () => {
    const client = await setup((_body, res) => textStream(res, ['a']));
    const withUsage = await client.chat.completions.create({ model: 'openai/gpt-test', messages: [{ role: 'user', content: 'hi' }], stream: true, stream_options: { include_usage: true } });
    const usages: unknown[] = [];
    for await (const part of withUsage) if (part.usage) usages.push(part.usage);
    // 5 x $0.000001 + 3 x $0.000002 at the catalog prices
    expect(usages).toEqual([{ prompt_tokens: 5, completion_tokens: 3, total_tokens: 8, cost: 0.000011 }]);
    const without = await client.chat.completions.create({ model: 'openai/gpt-test', messages: [{ role: 'user', content: 'hi' }], stream: true });
    let sawUsage = false;
    for await (const part of without) if (part.usage) sawUsage = true;
    expect(sawUsage).toBe(false);
  });

  it.each([
    ['a priced', models],
    ['an unpriced', models.map(({ pricing: _pricing, ...model }) => model)],
  ])('gives usage counts an upstream got wrong as 0, as billed, whole and streamed, for %s model', async (_name, catalog) => {
    const wrong = { prompt_tokens: -5, completion_tokens: 'many', total_tokens: 1e308, prompt_tokens_details: { cached_tokens: 2.5 } };
    const client = await setup(
      (body, res) => (body['stream'] === true ? sendStream(res, [chunk({ role: 'assistant', content: 'a' }), chunk({}, 'stop'), { ...usageChunk, usage: wrong }]) : sendJson(res, 200, completion('a', { usage: wrong }))),
      { models: catalog },
    );
    const billed = { prompt_tokens: 0, completion_tokens: 0, total_tokens: 0, prompt_tokens_details: { cached_tokens: 0 } };
    const priced = catalog === models ? { cost: 0 } : {};
    const whole = await client.chat.completions.create({ model: 'openai/gpt-test', messages: [{ role: 'user', content: 'hi' }] });
    expect(whole.usage).toEqual({ ...billed, ...priced });
    const stream = await client.chat.completions.create({ model: 'openai/gpt-test', messages: [{ role: 'user', content: 'hi' }], stream: true, stream_options: { include_usage: true } });
    const usages: unknown[] = [];
    for await (const part of stream) if (part.usage) usages.push(part.usage);
    expect(usages).toEqual([{ ...billed, ...priced }]);
  });

  it("relays an unchanged chunk's text as the upstream wrote it, and re-encodes one sent over several data lines", async () => {
    // Spacing and key order JSON.stringify would not produce: only a byte-for-byte relay keeps them.
    const spaced = '{ "id": "chatcmpl-s", "object": "chat.completion.chunk", "created": 1700000000, "model": "gpt-test-2024", "choices": [ { "index": 0, "delta": { "content": "Hel" }, "finish_reason": null } ] }';
    const split = '{"id":"chatcmpl-s","object":"chat.completion.chunk","created":1700000000,\ndata: "model":"gpt-test-2024","choices":[{"index":0,"delta":{"content":"lo"},"finish_reason":null}]}';
    const client = await setup((_body, res) => {
      res.writeHead(200, { 'content-type': 'text/event-stream' });
      res.write(`data: ${spaced}\n\n`);
      res.write(`data: ${split}\n\n`);
      res.end('data: [DONE]\n\n');
    });
    const raw = await fetch(`${gateway?.baseURL}/chat/completions`, {
      method: 'POST',
      headers: { 'content-type': 'application/json', authorization: `Bearer ${API_KEY}` },
      body: JSON.stringify({ model: 'openai/gpt-test', messages: [{ role: 'user', content: 'hi' }], stream: true }),
    });
    const events = (await raw.text()).split('\n\n').filter((e) => e !== '');
    expect(events[0]).toBe(`data: ${spaced}`);
    expect(JSON.parse(events[1]?.slice('data: '.length) ?? '')).toMatchObject({ choices: [{ delta: { content: 'lo' } }] });
    expect(events[2]).toBe('data: [DONE]');
    const stream = await client.chat.completions.create({ model: 'openai/gpt-test', messages: [{ role: 'user', content: 'hi' }], stream: true });
    let text = '';
    for await (const part of stream) text += part.choices[0]?.delta.content ?? '';
    expect(text).toBe('Hello');
  });

  it('round-trips a tool call: tool_calls out, tool result back in', async () => {
    const client = await setup((body, res) => {
      const messages = body['messages'] as Array<Record<string, unknown>>;
      if (messages.at(-1)?.['role'] === 'tool') return sendJson(res, 200, completion(`It is ${String(messages.at(-1)?.['content'])}`));
      sendJson(res, 200, {
        ...completion(''),
        choices: [{ index: 0, message: { role: 'assistant', content: null, tool_calls: [{ id: 'call_1', type: 'function', function: { name: 'weather', arguments: '{"city":"Paris"}' } }] }, finish_reason: 'tool_calls' }],
      });
    });
    const tools = [{ type: 'function' as const, function: { name: 'weather', description: 'Weather in a city', parameters: { type: 'object', properties: { city: { type: 'string' } }, required: ['city'] } } }];
    const first = await client.chat.completions.create({ model: 'openai/gpt-test', messages: [{ role: 'user', content: 'Weather in Paris?' }], tools, tool_choice: 'auto' });
    const call = first.choices[0]?.message.tool_calls?.[0];
    expect(call?.type === 'function' ? call.function : undefined).toEqual({ name: 'weather', arguments: '{"city":"Paris"}' });
    const second = await client.chat.completions.create({
      model: 'openai/gpt-test',
      tools,
      messages: [
        { role: 'user', content: 'Weather in Paris?' },
        { role: 'assistant', content: null, tool_calls: [{ id: 'call_1', type: 'function', function: { name: 'weather', arguments: '{"city":"Paris"}' } }] },
        { role: 'tool', tool_call_id: 'call_1', content: 'sunny' },
      ],
    });
    expect(second.choices[0]?.message.content).toBe('It is sunny');
    expect(upstream?.requests[0]?.body['tools']).toEqual(tools);
  });

  it('sends Gemini-minted tool call ids without their thought signature, within the 40 characters OpenAI takes', async () => {
    const client = await setup((_b, res) => sendJson(res, 200, completion('It is sunny')));
    const geminiId = 'gemini_0123456789abcdef.c2lnbmF0dXJlLW9mLXRoZS10aG91Z2h0cw==';
    await client.chat.completions.create({
      model: 'openai/gpt-test',
      messages: [
        { role: 'user', content: 'Weather in Paris?' },
        { role: 'assistant', content: null, tool_calls: [{ id: geminiId, type: 'function', function: { name: 'weather', arguments: '{"city":"Paris"}' } }] },
        { role: 'tool', tool_call_id: geminiId, content: 'sunny' },
      ],
    });
    const messages = upstream?.requests[0]?.body['messages'] as Array<Record<string, unknown>>;
    expect(messages[1]?.['tool_calls']).toEqual([{ id: 'gemini_0123456789abcdef', type: 'function', function: { name: 'weather', arguments: '{"city":"Paris"}' } }]);
    expect(messages[2]).toEqual({ role: 'tool', tool_call_id: 'gemini_0123456789abcdef', content: 'sunny' });
  });

  it('streams tool calls as delta.tool_calls', async () => {
    const client = await setup((_body, res) =>
      sendStream(res, [
        chunk({ role: 'assistant', tool_calls: [{ index: 0, id: 'call_a', type: 'function', function: { name: 'weather', arguments: '' } }] }),
        chunk({ tool_calls: [{ index: 0, function: { arguments: '{"city":"Oslo"}' } }] }),
        chunk({}, 'tool_calls'),
      ]),
    );
    const stream = await client.chat.completions.create({
      model: 'openai/gpt-test',
      messages: [{ role: 'user', content: 'x' }],
      tools: [{ type: 'function', function: { name: 'weather', parameters: { type: 'object', properties: {} } } }],
      stream: true,
    });
    let args = '';
    for await (const part of stream) args += part.choices[0]?.delta.tool_calls?.[0]?.function?.arguments ?? '';
    expect(args).toBe('{"city":"Oslo"}');
  });

  it('passes image parts as an http URL and as a data URL', async () => {
    const client = await setup((_body, res) => sendJson(res, 200, completion('a pixel')));
    await client.chat.completions.create({
      model: 'openai/gpt-test',
      messages: [
        {
          role: 'user',
          content: [
            { type: 'text', text: 'what is this?' },
            { type: 'image_url', image_url: { url: 'https://example.com/cat.png', detail: 'low' } },
            { type: 'image_url', image_url: { url: PNG_DATA_URL } },
          ],
        },
      ],
    });
    const content = (upstream?.requests[0]?.body['messages'] as Array<{ content: Array<{ image_url?: { url: string } }> }>)[0]?.content;
    expect(content?.[1]?.image_url?.url).toBe('https://example.com/cat.png');
    expect(content?.[2]?.image_url?.url).toBe(PNG_DATA_URL);
  });

  it('surfaces a wrong key as AuthenticationError', async () => {
    await setup(() => undefined);
    const client = new OpenAI({ baseURL: gateway?.baseURL ?? '', apiKey: 'wrong', maxRetries: 0 });
    await expect(client.models.list()).rejects.toBeInstanceOf(OpenAI.AuthenticationError);
  });

  it('surfaces an invalid request as BadRequestError naming the param', async () => {
    const client = await setup(() => undefined);
    const error = await client.chat.completions.create({ model: 'openai/gpt-test', messages: [{ role: 'user', content: 'hi' }], temperature: 3 }).catch((e: unknown) => e);
    expect(error).toBeInstanceOf(OpenAI.BadRequestError);
    expect((error as InstanceType<typeof OpenAI.BadRequestError>).param).toBe('temperature');
  });

  it('surfaces an unknown model as NotFoundError with code model_not_found', async () => {
    const client = await setup(() => undefined);
    const error = await client.chat.completions.create({ model: 'nobody/nothing', messages: [{ role: 'user', content: 'hi' }] }).catch((e: unknown) => e);
    expect(error).toBeInstanceOf(OpenAI.NotFoundError);
    expect((error as InstanceType<typeof OpenAI.NotFoundError>).code).toBe('model_not_found');
  });

  it('surfaces the key rate limit as RateLimitError', async () => {
    const client = await setup((_body, res) => sendJson(res, 200, completion('ok')), { api_keys: [{ key: API_KEY, requests_per_minute: 1 }] });
    await client.models.list();
    await expect(client.models.list()).rejects.toBeInstanceOf(OpenAI.RateLimitError);
  });

  it('surfaces a body over the limit as a 413 APIError', async () => {
    const client = await setup(() => undefined, { max_request_body_size: '1KiB' });
    const error = await client.chat.completions.create({ model: 'openai/gpt-test', messages: [{ role: 'user', content: 'x'.repeat(4096) }] }).catch((e: unknown) => e);
    expect(error).toBeInstanceOf(OpenAI.APIError);
    expect((error as InstanceType<typeof OpenAI.APIError>).status).toBe(413);
  });

  it('surfaces an unreachable upstream as InternalServerError 502', async () => {
    await setup(() => undefined);
    const port = upstream?.port ?? 0;
    await upstream?.close();
    upstream = undefined;
    await gateway?.close();
    gateway = await startGateway({ providers: { openai: { type: 'openai', base_url: `http://127.0.0.1:${port}/v1` } }, models });
    const direct = new OpenAI({ baseURL: gateway.baseURL, apiKey: API_KEY, maxRetries: 0 });
    const error = await direct.chat.completions.create({ model: 'openai/gpt-test', messages: [{ role: 'user', content: 'hi' }] }).catch((e: unknown) => e);
    expect(error).toBeInstanceOf(OpenAI.InternalServerError);
    expect((error as InstanceType<typeof OpenAI.InternalServerError>).status).toBe(502);
    expect((error as InstanceType<typeof OpenAI.InternalServerError>).code).toBe('upstream_error');
  });

  it('surfaces an upstream 500 as InternalServerError with the upstream message', async () => {
    const client = await setup((_body, res) => sendJson(res, 500, { error: { message: 'upstream exploded', type: 'server_error', param: null, code: null } }));
    const error = await client.chat.completions.create({ model: 'openai/gpt-test', messages: [{ role: 'user', content: 'hi' }] }).catch((e: unknown) => e);
    expect(error).toBeInstanceOf(OpenAI.InternalServerError);
    expect((error as Error).message).toContain('upstream exploded');
  });

  it('passes on the retry hints of the upstream answer the client gets, so the SDK does not retry against them', async () => {
    const client = await setup((_body, res) => {
      res.writeHead(429, { 'content-type': 'application/json', 'retry-after': '17', 'x-should-retry': 'false' });
      res.end(JSON.stringify({ error: { message: 'slow down', type: 'rate_limit_error', param: null, code: null } }));
    });
    const retrying = new OpenAI({ baseURL: (gateway as Gateway).baseURL, apiKey: API_KEY, maxRetries: 2 });
    const { response } = await client.chat.completions.create({ model: 'openai/gpt-test', messages: [{ role: 'user', content: 'hi' }] }).withResponse().catch((e: unknown) => ({ response: (e as { headers?: Headers }).headers === undefined ? undefined : { headers: (e as { headers: Headers }).headers } }));
    expect(response?.headers.get('retry-after')).toBe('17');
    expect(response?.headers.get('x-should-retry')).toBe('false');
    const error = await retrying.chat.completions.create({ model: 'openai/gpt-test', messages: [{ role: 'user', content: 'hi' }] }).catch((e: unknown) => e);
    expect(error).toBeInstanceOf(OpenAI.RateLimitError);
    // One request from the first client, one from the second: no SDK retry.
    expect(upstream?.requests).toHaveLength(2);
  });

  it('raises an in-band stream error as an APIError during iteration', async () => {
    const client = await setup((_body, res) => {
      res.writeHead(200, { 'content-type': 'text/event-stream' });
      res.write(`data: ${JSON.stringify(chunk({ role: 'assistant', content: 'partial' }))}\n\n`);
      setTimeout(() => res.socket?.destroy(), 20);
    });
    const stream = await client.chat.completions.create({ model: 'openai/gpt-test', messages: [{ role: 'user', content: 'hi' }], stream: true });
    const seen: string[] = [];
    const error = await (async () => {
      for await (const part of stream) seen.push(part.choices[0]?.delta.content ?? '');
    })().catch((e: unknown) => e);
    expect(seen).toEqual(['partial']);
    expect(error).toBeInstanceOf(OpenAI.APIError);
  });
});

describe('audio and file inputs', () => {
  const messages: OpenAI.Chat.ChatCompletionMessageParam[] = [
    {
      role: 'user',
      content: [
        { type: 'text', text: 'what is in these?' },
        { type: 'input_audio', input_audio: { data: 'UklGRg==', format: 'wav' } },
        { type: 'file', file: { file_id: 'file-abc123' } },
        { type: 'file', file: { filename: 'a.pdf', file_data: 'data:application/pdf;base64,JVBERi0=' } },
      ],
    },
  ];

  it('reach an openai-type upstream as the client sent them', async () => {
    const client = await setup((_body, res) => sendJson(res, 200, completion('ok')));
    await client.chat.completions.create({ model: 'openai/gpt-test', messages });
    expect(upstream?.requests[0]?.body['messages']).toEqual(messages);
  });

  it('are refused by provider types that cannot take them, naming the part', async () => {
    const client = await setupAnthropic(() => undefined);
    const error = await client.chat.completions.create({ model: 'acme/claude', messages }).catch((err: unknown) => err);
    expect(error).toMatchObject({ status: 400, code: 'unsupported_value', param: 'messages[0].content[1]' });
    expect(upstream?.requests).toHaveLength(0);
  });
});

describe('assistant turns with refusal parts and audio', () => {
  const messages: OpenAI.Chat.ChatCompletionMessageParam[] = [
    { role: 'user', content: 'say it' },
    { role: 'assistant', content: [{ type: 'text', text: 'Well, ' }, { type: 'refusal', refusal: 'I cannot help with that.' }] },
    { role: 'user', content: 'say it aloud' },
    { role: 'assistant', content: null, audio: { id: 'audio_abc123' } },
    { role: 'user', content: 'again' },
  ];

  it('reach an openai-type upstream as the client sent them', async () => {
    const client = await setup((_body, res) => sendJson(res, 200, completion('ok')));
    await client.chat.completions.create({ model: 'openai/gpt-test', messages });
    expect(upstream?.requests[0]?.body['messages']).toEqual(messages);
  });

  it('give other provider types the refusal as text and refuse the audio, naming it', async () => {
    const client = await setupAnthropic((_body, res) => sendJson(res, 200, { id: 'msg_1', type: 'message', role: 'assistant', model: 'claude-x', content: [{ type: 'text', text: 'ok' }], stop_reason: 'end_turn', usage: { input_tokens: 1, output_tokens: 1 } }));
    await client.chat.completions.create({ model: 'acme/claude', messages: messages.slice(0, 3) });
    expect(upstream?.requests[0]?.body['messages']).toEqual([
      { role: 'user', content: [{ type: 'text', text: 'say it' }] },
      { role: 'assistant', content: [{ type: 'text', text: 'Well, ' }, { type: 'text', text: 'I cannot help with that.' }] },
      { role: 'user', content: [{ type: 'text', text: 'say it aloud' }] },
    ]);
    const error = await client.chat.completions.create({ model: 'acme/claude', messages }).catch((err: unknown) => err);
    expect(error).toMatchObject({ status: 400, code: 'unsupported_value', param: 'messages[3].audio' });
  });
});

describe('legacy function calling', () => {
  const messages: OpenAI.Chat.ChatCompletionMessageParam[] = [
    { role: 'user', content: 'weather in Paris?' },
    { role: 'assistant', content: null, function_call: { name: 'get_weather', arguments: '{"city":"Paris"}' } },
    { role: 'function', name: 'get_weather', content: '{"temp":21}' },
  ];
  const functions = [{ name: 'get_weather', parameters: { type: 'object', properties: { city: { type: 'string' } } } }];

  it('sends the call and its result on to an openai-type upstream, as documented for functions', async () => {
    const client = await setup((_body, res) => sendJson(res, 200, completion('21 degrees')));
    await client.chat.completions.create({ model: 'openai/gpt-test', messages, functions, function_call: 'auto' });
    expect(upstream?.requests[0]?.body).toMatchObject({ messages, functions, function_call: 'auto' });
  });

  it('is refused by other provider types, naming the message', async () => {
    const client = await setupAnthropic(() => undefined);
    const error = await client.chat.completions.create({ model: 'acme/claude', messages }).catch((err: unknown) => err);
    expect(error).toMatchObject({ status: 400, code: 'unsupported_value', param: 'messages[1].function_call' });
    expect(upstream?.requests).toHaveLength(0);
  });
});

describe('tool_choice allowed_tools', () => {
  const tools: OpenAI.Chat.ChatCompletionTool[] = [
    { type: 'function', function: { name: 'get_weather', parameters: { type: 'object', properties: {} } } },
    { type: 'function', function: { name: 'get_time', parameters: { type: 'object', properties: {} } } },
  ];
  const toolChoice: OpenAI.Chat.ChatCompletionToolChoiceOption = { type: 'allowed_tools', allowed_tools: { mode: 'required', tools: [{ type: 'function', function: { name: 'get_time' } }] } };

  it('reaches an openai-type upstream as sent', async () => {
    const client = await setup((_body, res) => sendJson(res, 200, completion('ok')));
    await client.chat.completions.create({ model: 'openai/gpt-test', messages: [{ role: 'user', content: 'time?' }], tools, tool_choice: toolChoice });
    expect(upstream?.requests[0]?.body['tool_choice']).toEqual(toolChoice);
  });

  it('is refused by other provider types', async () => {
    const client = await setupAnthropic(() => undefined);
    const error = await client.chat.completions.create({ model: 'acme/claude', messages: [{ role: 'user', content: 'time?' }], tools, tool_choice: toolChoice }).catch((err: unknown) => err);
    expect(error).toMatchObject({ status: 400, code: 'unsupported_value', param: 'tool_choice' });
    expect(upstream?.requests).toHaveLength(0);
  });
});

describe('custom tools (free-form input)', () => {
  const tools: OpenAI.Chat.ChatCompletionTool[] = [
    { type: 'custom', custom: { name: 'run_sql', description: 'runs one SQL query', format: { type: 'grammar', grammar: { syntax: 'regex', definition: '^SELECT .+$' } } } },
    { type: 'function', function: { name: 'get_time', parameters: { type: 'object', properties: {} } } },
  ];
  const call = { id: 'call_sql', type: 'custom' as const, custom: { name: 'run_sql', input: 'SELECT 1' } };
  const history: OpenAI.Chat.ChatCompletionMessageParam[] = [
    { role: 'user', content: 'how many?' },
    { role: 'assistant', content: null, tool_calls: [call] },
    { role: 'tool', tool_call_id: 'call_sql', content: '1' },
  ];

  it('reach an openai-type upstream as sent, and its custom tool call reaches the client, whole and streamed', async () => {
    const client = await setup((body, res) =>
      body['stream'] === true
        ? sendStream(res, [
            chunk({ role: 'assistant', content: null, tool_calls: [{ index: 0, id: 'call_2', type: 'custom', custom: { name: 'run_sql', input: '' } }] }),
            chunk({ tool_calls: [{ index: 0, custom: { input: 'SELECT ' } }] }),
            chunk({ tool_calls: [{ index: 0, custom: { input: '2' } }] }),
            chunk({}, 'tool_calls'),
            usageChunk,
          ])
        : sendJson(res, 200, completion('', { choices: [{ index: 0, message: { role: 'assistant', content: null, tool_calls: [call] }, finish_reason: 'tool_calls', logprobs: null }] })),
    { capture_content: true });
    const toolChoice = { type: 'custom' as const, custom: { name: 'run_sql' } };
    const answer = await client.chat.completions.create({ model: 'openai/gpt-test', messages: history, tools, tool_choice: toolChoice });
    expect(upstream?.requests[0]?.body).toMatchObject({ messages: history, tools, tool_choice: toolChoice });
    expect(answer.choices[0]?.message.tool_calls).toEqual([call]);

    const stream = await client.chat.completions.create({ model: 'openai/gpt-test', messages: history, tools, stream: true });
    const inputs: string[] = [];
    for await (const part of stream) for (const delta of part.choices[0]?.delta.tool_calls ?? []) inputs.push((delta as { custom?: { input?: string } }).custom?.input ?? '');
    expect(inputs.join('')).toBe('SELECT 2');
    const attempts = (await gateway!.spans(4)).filter((s) => s.name.startsWith('chat '));
    const outputs = attempts.map((s) => JSON.parse(String(attr(s, 'gen_ai.output.messages'))) as unknown);
    expect(outputs).toEqual([
      [{ role: 'assistant', parts: [{ type: 'tool_call', id: 'call_sql', name: 'run_sql', arguments: 'SELECT 1' }], finish_reason: 'tool_calls' }],
      [{ role: 'assistant', parts: [{ type: 'tool_call', id: 'call_2', name: 'run_sql', arguments: 'SELECT 2' }], finish_reason: 'tool_calls' }],
    ]);
  });

  it('must name a custom tool in tool_choice', async () => {
    const client = await setup(() => undefined);
    const error = await client.chat.completions.create({ model: 'openai/gpt-test', messages: history, tools, tool_choice: { type: 'custom', custom: { name: 'get_time' } } }).catch((err: unknown) => err);
    expect(error).toMatchObject({ status: 400, param: 'tool_choice.custom.name', message: expect.stringContaining('no custom tool named get_time') });
    expect(upstream?.requests).toHaveLength(0);
  });

  it('are refused by other provider types, naming the tool or the call', async () => {
    const client = await setupAnthropic(() => undefined);
    const error = await client.chat.completions.create({ model: 'acme/claude', messages: history.slice(0, 1), tools }).catch((err: unknown) => err);
    expect(error).toMatchObject({ status: 400, code: 'unsupported_value', param: 'tools[0].type' });
    const replayed = await client.chat.completions.create({ model: 'acme/claude', messages: history, tools: tools.slice(1) }).catch((err: unknown) => err);
    expect(replayed).toMatchObject({ status: 400, code: 'unsupported_value', param: 'messages[1].tool_calls[0].type' });
    expect(upstream?.requests).toHaveLength(0);
  });
});

describe('a base_url with a query (Azure OpenAI deployments take ?api-version= there)', () => {
  it('adds /chat/completions and /embeddings to the path and keeps the query at the end', async () => {
    upstream = await startUpstream((body, res) => {
      if (body['input'] !== undefined) sendJson(res, 200, { object: 'list', data: [{ object: 'embedding', index: 0, embedding: [0.5] }], model: 'e', usage: { prompt_tokens: 1, total_tokens: 1 } });
      else sendJson(res, 200, completion('from azure'));
    });
    const azure = openaiProvider(upstream, { base_url: `${upstream.url}/openai/deployments/gpt-4o/?api-version=2024-10-21` });
    gateway = await startGateway({ providers: { azure }, models: [{ id: 'azure/gpt-4o', endpoints: [{ provider: 'azure', model: 'gpt-4o' }] }, { id: 'azure/embed', type: 'embedding', endpoints: [{ provider: 'azure', model: 'e' }] }] });
    const client = new OpenAI({ baseURL: gateway.baseURL, apiKey: API_KEY, maxRetries: 0 });
    const answer = await client.chat.completions.create({ model: 'azure/gpt-4o', messages: [{ role: 'user', content: 'hi' }] });
    expect(answer.choices[0]?.message.content).toBe('from azure');
    await client.embeddings.create({ model: 'azure/embed', input: 'hi', encoding_format: 'float' });
    expect(upstream.requests.map((r) => r.url)).toEqual(['/v1/openai/deployments/gpt-4o/chat/completions?api-version=2024-10-21', '/v1/openai/deployments/gpt-4o/embeddings?api-version=2024-10-21']);
  });
});

describe('assistant turns as OpenAI-compatible servers take them back', () => {
  it("passes DeepSeek's and Kimi's reasoning_content (required back after a tool call) and the prefix completion flag to the upstream", async () => {
    const client = await setup((_b, res) => sendJson(res, 200, completion('done')));
    const call = { id: 'call_1', type: 'function' as const, function: { name: 'get_weather', arguments: '{"city":"Paris"}' } };
    const messages = [
      { role: 'user', content: 'Weather in Paris? Answer in code.' },
      { role: 'assistant', content: null, reasoning_content: 'I should call get_weather.', tool_calls: [call] },
      { role: 'tool', tool_call_id: 'call_1', content: 'sunny' },
      { role: 'assistant', content: '```python\n', prefix: true },
    ] as unknown as OpenAI.ChatCompletionMessageParam[];
    const tools = [{ type: 'function' as const, function: { name: 'get_weather', parameters: { type: 'object', properties: { city: { type: 'string' } } } } }];
    await client.chat.completions.create({ model: 'openai/gpt-test', messages, tools });
    const sent = upstream?.requests[0]?.body['messages'] as Array<Record<string, unknown>>;
    expect(sent[1]).toEqual({ role: 'assistant', content: null, reasoning_content: 'I should call get_weather.', tool_calls: [call] });
    expect(sent[3]).toEqual({ role: 'assistant', content: '```python\n', prefix: true });
  });
});
