import { afterEach, describe, expect, it } from 'vitest';
import { anthropicAdapter } from '../../../../../src/receivers/gateway/providers/anthropic/index.js';
import { UpstreamStreamError } from '../../../../../src/receivers/gateway/providers/shared/types.js';
import { ProviderRequestError } from '../../../../../src/receivers/gateway/providers/shared/inputs.js';
import { assemble, complete, context, json, PNG_BASE64, PNG_DATA_URL, startFake, stream, type FakeUpstream, type Handler } from '../shared/fake-upstream.js';
import { message, messageEnd, messageStart, sendEvents, sendMessage, textBlock, toolBlock } from './fixtures.js';
import { messagesRequest, validateAnthropic, type MessagesRequest } from './wire-schema.js';

let fake: FakeUpstream | undefined;

afterEach(async () => {
  const problems = fake?.problems ?? [];
  await fake?.close();
  fake = undefined;
  expect(problems).toEqual([]);
});

async function setup(handler: Handler, extra: Record<string, unknown> = {}, maxTokens?: number) {
  fake = await startFake(validateAnthropic, handler);
  return context(anthropicAdapter, { type: 'anthropic', base_url: fake.url, api_key: 'sk-ant-test', ...extra }, 'claude-test', maxTokens);
}

function sent(index = 0): MessagesRequest {
  return messagesRequest.parse(fake?.requests[index]?.body);
}

const weatherTool = { type: 'function' as const, function: { name: 'get_weather', description: 'Weather for a city', parameters: { type: 'object', properties: { city: { type: 'string' } }, required: ['city'] } } };
// A Gemini thought signature (base64), as the google adapter appends it to the tool call ids it mints.
const SIGNATURE = 'c2lnbmF0dXJlLW9mLXRoZS10aG91Z2h0cw==';

describe('anthropic adapter', () => {
  it('maps a plain text exchange and its usage', async () => {
    const ctx = await setup((_seen, res) => sendMessage(res, [{ type: 'text', text: 'Hello there' }]));
    const out = await complete(anthropicAdapter, ctx, {
      messages: [
        { role: 'system', content: 'Be brief.' },
        { role: 'developer', content: [{ type: 'text', text: 'Answer in English.' }] },
        { role: 'user', content: 'Hi' },
      ],
      temperature: 0.5,
      top_p: 0.9,
      stop: 'END',
      user: 'user-42',
    });
    expect(out).toMatchObject({ ok: true, completion: { id: 'msg_01', object: 'chat.completion', model: 'claude-test-20250101', choices: [{ index: 0, message: { role: 'assistant', content: 'Hello there' }, finish_reason: 'stop' }], usage: { prompt_tokens: 12, completion_tokens: 6, total_tokens: 18 } } });
    expect(sent()).toEqual({
      model: 'claude-test',
      max_tokens: 4096,
      system: 'Be brief.\n\nAnswer in English.',
      messages: [{ role: 'user', content: [{ type: 'text', text: 'Hi' }] }],
      temperature: 0.5,
      top_p: 0.9,
      stop_sequences: ['END'],
      metadata: { user_id: 'user-42' },
    });
  });

  it('leaves empty strings out of stop, which Anthropic refuses', async () => {
    const ctx = await setup((_seen, res) => sendMessage(res, [{ type: 'text', text: 'ok' }]));
    await complete(anthropicAdapter, ctx, { messages: [{ role: 'user', content: 'a' }], stop: '' });
    await complete(anthropicAdapter, ctx, { messages: [{ role: 'user', content: 'a' }], stop: ['', 'END'] });
    expect(sent(0).stop_sequences).toBeUndefined();
    expect(sent(1).stop_sequences).toEqual(['END']);
  });

  it('passes over content blocks that are not objects or text that is not a string, and counts usage that is not a non-negative integer as 0', async () => {
    const usage = { input_tokens: -3, output_tokens: 'many', cache_read_input_tokens: 1.5 } as unknown as Record<string, number>;
    const ctx = await setup((_seen, res) => sendMessage(res, [null, { type: 'text' }, { type: 'text', text: 42 }, { type: 'text', text: 'ok' }], 'end_turn', usage));
    const out = await complete(anthropicAdapter, ctx, { messages: [{ role: 'user', content: 'Hi' }] });
    expect(out).toMatchObject({ ok: true, completion: { choices: [{ message: { content: 'ok' } }], usage: { prompt_tokens: 0, completion_tokens: 0, total_tokens: 0 } } });
  });

  it('refuses a stop sequence of whitespace only, which Anthropic cannot take, and sends one with other characters', async () => {
    const ctx = await setup((_seen, res) => sendMessage(res, [{ type: 'text', text: 'ok' }]));
    const tryBuild = (stop: string | string[]) => () => anthropicAdapter.buildRequest({ model: 'm', messages: [{ role: 'user', content: 'a' }], stop }, ctx);
    expect(tryBuild('\n')).toThrow(/^stop: /);
    expect(tryBuild(['END', ' '])).toThrow(ProviderRequestError);
    await complete(anthropicAdapter, ctx, { messages: [{ role: 'user', content: 'a' }], stop: ['\nUser:', 'END'] });
    expect(fake?.requests).toHaveLength(1);
    expect(sent().stop_sequences).toEqual(['\nUser:', 'END']);
  });

  it('takes max_tokens from the request, then the catalog, then default_max_tokens', async () => {
    const ctx = await setup((_seen, res) => sendMessage(res, [{ type: 'text', text: 'ok' }]), { default_max_tokens: 1000 }, 8000);
    await complete(anthropicAdapter, ctx, { messages: [{ role: 'user', content: 'a' }], max_completion_tokens: 50, max_tokens: 60 });
    await complete(anthropicAdapter, ctx, { messages: [{ role: 'user', content: 'a' }], max_tokens: 60 });
    await complete(anthropicAdapter, ctx, { messages: [{ role: 'user', content: 'a' }] });
    await complete(anthropicAdapter, { ...ctx, maxTokens: undefined }, { messages: [{ role: 'user', content: 'a' }] });
    expect([0, 1, 2, 3].map((i) => sent(i).max_tokens)).toEqual([50, 60, 8000, 1000]);
  });

  it('counts cache reads and writes into prompt_tokens', async () => {
    const ctx = await setup((_seen, res) => sendMessage(res, [{ type: 'text', text: 'ok' }], 'end_turn', { input_tokens: 10, output_tokens: 5, cache_read_input_tokens: 100, cache_creation_input_tokens: 20 }));
    const out = await complete(anthropicAdapter, ctx, { messages: [{ role: 'user', content: 'a' }] });
    expect(out.ok && out.completion.usage).toEqual({ prompt_tokens: 130, completion_tokens: 5, total_tokens: 135, prompt_tokens_details: { cached_tokens: 100, cache_creation_tokens: 20 } });
  });

  it.each([
    ['end_turn', 'stop'],
    ['stop_sequence', 'stop'],
    ['max_tokens', 'length'],
    ['tool_use', 'tool_calls'],
    ['refusal', 'content_filter'],
  ])('maps stop_reason %s to finish_reason %s', async (stopReason, finish) => {
    const ctx = await setup((_seen, res) => sendMessage(res, [{ type: 'text', text: 'x' }], stopReason));
    const out = await complete(anthropicAdapter, ctx, { messages: [{ role: 'user', content: 'a' }] });
    expect(out.ok && out.completion.choices[0]?.finish_reason).toBe(finish);
  });

  it('maps tools, tool_choice and a single tool_use answer', async () => {
    const ctx = await setup((_seen, res) => sendMessage(res, [{ type: 'text', text: 'Checking.' }, { type: 'tool_use', id: 'toolu_1', name: 'get_weather', input: { city: 'Paris' } }], 'tool_use'));
    const out = await complete(anthropicAdapter, ctx, { messages: [{ role: 'user', content: 'Weather in Paris?' }], tools: [weatherTool], tool_choice: 'required', parallel_tool_calls: false });
    expect(out).toMatchObject({ ok: true, completion: { choices: [{ message: { content: 'Checking.', tool_calls: [{ id: 'toolu_1', type: 'function', function: { name: 'get_weather', arguments: '{"city":"Paris"}' } }] }, finish_reason: 'tool_calls' }] } });
    expect(sent().tools).toEqual([{ name: 'get_weather', description: 'Weather for a city', input_schema: weatherTool.function.parameters }]);
    expect(sent().tool_choice).toEqual({ type: 'any', disable_parallel_tool_use: true });
  });

  it('gives a tool whose parameters leave out type the object schema Anthropic requires', async () => {
    const ctx = await setup((_seen, res) => sendMessage(res, [{ type: 'text', text: 'ok' }]));
    const tools = [
      { type: 'function' as const, function: { name: 'now', parameters: {} } },
      { type: 'function' as const, function: { name: 'get_weather', parameters: { properties: { city: { type: 'string' } } } } },
      { type: 'function' as const, function: { name: 'ping' } },
    ];
    await complete(anthropicAdapter, ctx, { messages: [{ role: 'user', content: 'a' }], tools });
    expect(sent().tools?.map((tool) => tool.input_schema)).toEqual([{ type: 'object' }, { type: 'object', properties: { city: { type: 'string' } } }, { type: 'object', properties: {} }]);
  });

  it.each([
    ['auto', { type: 'auto' }],
    ['none', { type: 'none' }],
    [{ type: 'function', function: { name: 'get_weather' } }, { type: 'tool', name: 'get_weather' }],
  ] as const)('maps tool_choice %j', async (choice, expected) => {
    const ctx = await setup((_seen, res) => sendMessage(res, [{ type: 'text', text: 'x' }]));
    await complete(anthropicAdapter, ctx, { messages: [{ role: 'user', content: 'a' }], tools: [weatherTool], tool_choice: choice });
    expect(sent().tool_choice).toEqual(expected);
  });

  it('sends tool calls and consecutive tool results as tool_use and one merged tool_result turn', async () => {
    const ctx = await setup((_seen, res) => sendMessage(res, [{ type: 'text', text: 'Sunny in both.' }]));
    await complete(anthropicAdapter, ctx, {
      messages: [
        { role: 'user', content: 'Weather in Paris and Rome?' },
        {
          role: 'assistant',
          content: null,
          tool_calls: [
            { id: 'toolu_a', type: 'function', function: { name: 'get_weather', arguments: '{"city":"Paris"}' } },
            { id: 'toolu_b', type: 'function', function: { name: 'get_weather', arguments: '' } },
          ],
        },
        { role: 'tool', tool_call_id: 'toolu_a', content: '18C' },
        { role: 'tool', tool_call_id: 'toolu_b', content: [{ type: 'text', text: '21C' }] },
        { role: 'user', content: 'Thanks' },
      ],
      tools: [weatherTool],
    });
    expect(sent().messages).toEqual([
      { role: 'user', content: [{ type: 'text', text: 'Weather in Paris and Rome?' }] },
      {
        role: 'assistant',
        content: [
          { type: 'tool_use', id: 'toolu_a', name: 'get_weather', input: { city: 'Paris' } },
          { type: 'tool_use', id: 'toolu_b', name: 'get_weather', input: {} },
        ],
      },
      {
        role: 'user',
        content: [
          { type: 'tool_result', tool_use_id: 'toolu_a', content: '18C' },
          { type: 'tool_result', tool_use_id: 'toolu_b', content: '21C' },
          { type: 'text', text: 'Thanks' },
        ],
      },
    ]);
  });

  it('sends Gemini-minted tool call ids without their thought signature, the same in the call and its result', async () => {
    const ctx = await setup((_seen, res) => sendMessage(res, [{ type: 'text', text: 'Mild.' }]));
    const out = await complete(anthropicAdapter, ctx, {
      messages: [
        { role: 'user', content: 'Weather in Paris?' },
        { role: 'assistant', content: null, tool_calls: [{ id: `gemini_0123456789abcdef.${SIGNATURE}`, type: 'function', function: { name: 'get_weather', arguments: '{"city":"Paris"}' } }] },
        { role: 'tool', tool_call_id: `gemini_0123456789abcdef.${SIGNATURE}`, content: '18C' },
      ],
      tools: [weatherTool],
    });
    expect(out.ok).toBe(true);
    expect(sent().messages.flatMap((m) => (typeof m.content === 'string' ? [] : m.content.flatMap((b) => (b.type === 'tool_use' ? [b.id] : b.type === 'tool_result' ? [b.tool_use_id] : []))))).toEqual(['gemini_0123456789abcdef', 'gemini_0123456789abcdef']);
  });

  it('sends tool call ids Anthropic refuses (Kimi K2\'s functions.name:0) as valid ones, the same in the call and its result, and valid ones unchanged', async () => {
    const ctx = await setup((_seen, res) => sendMessage(res, [{ type: 'text', text: 'Mild.' }]));
    const call = (id: string, city: string) => ({ id, type: 'function' as const, function: { name: 'get_weather', arguments: JSON.stringify({ city }) } });
    const out = await complete(anthropicAdapter, ctx, {
      messages: [
        { role: 'user', content: 'Weather in Paris and Rome?' },
        { role: 'assistant', content: null, tool_calls: [call('functions.get_weather:0', 'Paris'), call('functions.get_weather:1', 'Rome'), call('call_ok-1', 'Oslo')] },
        { role: 'tool', tool_call_id: 'functions.get_weather:0', content: '18C' },
        { role: 'tool', tool_call_id: 'functions.get_weather:1', content: '21C' },
        { role: 'tool', tool_call_id: 'call_ok-1', content: '5C' },
      ],
      tools: [weatherTool],
    });
    expect(out.ok).toBe(true);
    const [calls, results] = sent().messages.slice(1).map((m) => (typeof m.content === 'string' ? [] : m.content.map((b) => (b.type === 'tool_use' ? b.id : b.type === 'tool_result' ? b.tool_use_id : ''))));
    expect(results).toEqual(calls);
    expect(calls?.[0]).toMatch(/^functions_get_weather_0_[0-9a-f]{8}$/);
    expect(calls?.[1]).toMatch(/^functions_get_weather_1_[0-9a-f]{8}$/);
    expect(calls?.[2]).toBe('call_ok-1');
  });

  it('sends a data URL image as a base64 source and an http URL as a url source', async () => {
    const ctx = await setup((_seen, res) => sendMessage(res, [{ type: 'text', text: 'Two images.' }]));
    await complete(anthropicAdapter, ctx, {
      messages: [
        { role: 'user', content: [{ type: 'text', text: 'Compare' }, { type: 'image_url', image_url: { url: PNG_DATA_URL } }, { type: 'image_url', image_url: { url: 'https://example.com/cat.jpg', detail: 'high' } }] },
      ],
    });
    expect(sent().messages[0]?.content).toEqual([
      { type: 'text', text: 'Compare' },
      { type: 'image', source: { type: 'base64', media_type: 'image/png', data: PNG_BASE64 } },
      { type: 'image', source: { type: 'url', url: 'https://example.com/cat.jpg' } },
    ]);
  });

  it('rejects values Anthropic cannot take instead of clamping them', async () => {
    const ctx = await setup(() => undefined);
    const tryBuild = (body: Record<string, unknown>) => anthropicAdapter.buildRequest({ model: 'm', messages: [{ role: 'user', content: 'a' }], ...body }, ctx);
    expect(() => tryBuild({ temperature: 1.5 })).toThrow(ProviderRequestError);
    expect(() => tryBuild({ n: 2 })).toThrow(/n: /);
    expect(() => tryBuild({ response_format: { type: 'json_object' } })).toThrow(/response_format/);
    expect(() => tryBuild({ messages: [{ role: 'user', content: [{ type: 'image_url', image_url: { url: 'data:image/bmp;base64,Qk0=' } }] }] })).toThrow(/image\/bmp/);
    expect(() => tryBuild({ messages: [{ role: 'assistant', content: null, tool_calls: [{ id: 't', type: 'function', function: { name: 'f', arguments: '{oops' } }] }] })).toThrow(/messages\[0\]\.tool_calls\[0\]\.function\.arguments/);
    expect(fake?.requests).toHaveLength(0);
  });

  it('refuses an empty user message instead of leaving it out and changing the conversation', async () => {
    const ctx = await setup(() => undefined);
    const tryBuild = (messages: unknown[]) => () => anthropicAdapter.buildRequest({ model: 'm', messages } as never, ctx);
    const history = [{ role: 'user', content: 'hi' }, { role: 'assistant', content: 'Hello!' }];
    expect(tryBuild([...history, { role: 'user', content: '' }])).toThrow(/^messages\[2\]\.content: /);
    expect(tryBuild([...history, { role: 'user', content: [] }])).toThrow(ProviderRequestError);
    expect(tryBuild([{ role: 'user', content: [{ type: 'text', text: '' }] }])).toThrow(/^messages\[0\]\.content: /);
    expect(tryBuild([{ role: 'system', content: 'Be brief.' }])).toThrow(/^messages: /);
    expect(fake?.requests).toHaveLength(0);
  });

  it('leaves out whitespace-only text, which Anthropic refuses, such as the "\\n\\n" Claude writes before a tool call', async () => {
    const ctx = await setup((_seen, res) => sendMessage(res, [{ type: 'text', text: 'Noon.' }]));
    const out = await complete(anthropicAdapter, ctx, {
      messages: [
        { role: 'system', content: [{ type: 'text', text: 'Be brief.' }, { type: 'text', text: ' ' }] },
        { role: 'developer', content: '\n' },
        { role: 'user', content: [{ type: 'text', text: 'Time?' }, { type: 'text', text: '\n' }] },
        { role: 'assistant', content: '\n\n', tool_calls: [{ id: 'toolu_a', type: 'function', function: { name: 'get_time', arguments: '{}' } }] },
        { role: 'tool', tool_call_id: 'toolu_a', content: ' \n' },
      ],
      tools: [{ type: 'function', function: { name: 'get_time' } }],
    });
    expect(out.ok).toBe(true);
    expect(sent().system).toBe('Be brief.');
    expect(sent().messages).toEqual([
      { role: 'user', content: [{ type: 'text', text: 'Time?' }] },
      { role: 'assistant', content: [{ type: 'tool_use', id: 'toolu_a', name: 'get_time', input: {} }] },
      { role: 'user', content: [{ type: 'tool_result', tool_use_id: 'toolu_a' }] },
    ]);
  });

  it('sends a final assistant turn (a prefill) without the trailing whitespace Anthropic refuses there, and earlier turns as they are', async () => {
    const ctx = await setup((_seen, res) => sendMessage(res, [{ type: 'text', text: ' {"a": 1}' }]));
    const out = await complete(anthropicAdapter, ctx, {
      messages: [
        { role: 'user', content: 'Say hi.' },
        { role: 'assistant', content: 'Hi! \n' },
        { role: 'user', content: 'Now JSON.' },
        { role: 'assistant', content: [{ type: 'text', text: 'Sure.' }, { type: 'text', text: 'Answer: \n' }] },
      ],
    });
    expect(out.ok).toBe(true);
    expect(sent().messages.map((m) => m.content)).toEqual([
      [{ type: 'text', text: 'Say hi.' }],
      [{ type: 'text', text: 'Hi! \n' }],
      [{ type: 'text', text: 'Now JSON.' }],
      [{ type: 'text', text: 'Sure.' }, { type: 'text', text: 'Answer:' }],
    ]);
  });

  it('refuses a user message of whitespace only, as an empty one', async () => {
    const ctx = await setup(() => undefined);
    const tryBuild = (messages: unknown[]) => () => anthropicAdapter.buildRequest({ model: 'm', messages } as never, ctx);
    expect(tryBuild([{ role: 'user', content: 'hi' }, { role: 'assistant', content: 'Hello!' }, { role: 'user', content: ' \n' }])).toThrow(/^messages\[2\]\.content: /);
    expect(tryBuild([{ role: 'user', content: [{ type: 'text', text: '\t' }] }])).toThrow(/^messages\[0\]\.content: /);
    expect(fake?.requests).toHaveLength(0);
  });

  it('refuses with reasoning the sampling settings and forced tool calls extended thinking cannot take, and lets the ones it can through', async () => {
    const ctx = await setup((_seen, res) => sendMessage(res, [{ type: 'text', text: 'ok' }]));
    const thinking = { messages: [{ role: 'user' as const, content: 'a' }], reasoning_effort: 'low' as const, max_tokens: 8000, tools: [weatherTool] };
    const tryBuild = (body: Record<string, unknown>) => () => anthropicAdapter.buildRequest({ model: 'm', ...thinking, ...body }, ctx);
    expect(tryBuild({ temperature: 0.2 })).toThrow(/^temperature: /);
    expect(tryBuild({ top_k: 40 })).toThrow(/^top_k: /);
    expect(tryBuild({ top_p: 0.9 })).toThrow(/^top_p: /);
    expect(tryBuild({ tool_choice: 'required' })).toThrow(/^tool_choice: /);
    expect(tryBuild({ tool_choice: { type: 'function', function: { name: 'get_weather' } } })).toThrow(ProviderRequestError);
    expect(fake?.requests).toHaveLength(0);
    await complete(anthropicAdapter, ctx, { ...thinking, temperature: 1, top_p: 0.95, tool_choice: 'auto' });
    expect(sent()).toMatchObject({ thinking: { type: 'enabled', budget_tokens: 1600 }, top_p: 0.95, tool_choice: { type: 'auto' } });
    // temperature 1 is Claude's default, left out beside a top_p (claude-sampling.test.ts).
    expect(sent().temperature).toBeUndefined();
    await complete(anthropicAdapter, ctx, { ...thinking, reasoning_effort: 'none', temperature: 0.2, top_k: 40, tool_choice: 'required' });
    expect(sent(1)).toMatchObject({ temperature: 0.2, top_k: 40, tool_choice: { type: 'any' } });
  });

  it('refuses penalties, token biases and a seed, which the Messages API has no setting for, and lets their neutral values through', async () => {
    const ctx = await setup((_seen, res) => sendMessage(res, [{ type: 'text', text: 'ok' }]));
    const tryBuild = (body: Record<string, unknown>) => anthropicAdapter.buildRequest({ model: 'm', messages: [{ role: 'user', content: 'a' }], ...body }, ctx);
    expect(() => tryBuild({ frequency_penalty: 0.5 })).toThrow(/^frequency_penalty: /);
    expect(() => tryBuild({ presence_penalty: -1 })).toThrow(/^presence_penalty: /);
    expect(() => tryBuild({ logit_bias: { '50256': -100 } })).toThrow(/^logit_bias: /);
    expect(() => tryBuild({ seed: 0 })).toThrow(/^seed: /);
    expect(() => tryBuild({ seed: 42 })).toThrow(ProviderRequestError);
    const out = await complete(anthropicAdapter, ctx, { messages: [{ role: 'user', content: 'a' }], frequency_penalty: 0, presence_penalty: 0, logit_bias: {} });
    expect(out.ok).toBe(true);
    expect(sent()).toEqual({ model: 'claude-test', max_tokens: 4096, messages: [{ role: 'user', content: [{ type: 'text', text: 'a' }] }] });
  });

  it('streams text as OpenAI chunks with usage last', async () => {
    const ctx = await setup((_seen, res) => sendEvents(res, [messageStart(25), ...textBlock(0, ['Hel', 'lo']), ...messageEnd('end_turn', 15)]));
    const { chunks, error } = await stream(anthropicAdapter, ctx, { messages: [{ role: 'user', content: 'Hi' }] });
    expect(error).toBeUndefined();
    expect(sent().stream).toBe(true);
    expect(fake?.requests[0]?.headers['accept']).toBe('text/event-stream');
    expect(assemble(chunks)).toEqual({ role: 'assistant', text: 'Hello', toolCalls: [], finish: 'stop', usage: { prompt_tokens: 25, completion_tokens: 15, total_tokens: 40 } });
    expect(chunks.every((c) => c.object === 'chat.completion.chunk' && c.id === 'msg_01' && c.model === 'claude-test-20250101')).toBe(true);
    expect(chunks.at(-1)).toMatchObject({ choices: [], usage: { total_tokens: 40 } });
  });

  it('numbers parallel streamed tool calls 0, 1, 2 whatever their content block index', async () => {
    const ctx = await setup((_seen, res) =>
      sendEvents(res, [
        messageStart(),
        ...textBlock(0, ['Let me check.']),
        ...toolBlock(1, 'toolu_a', 'get_weather', ['{"city":', ' "Paris"}']),
        ...toolBlock(2, 'toolu_b', 'get_weather', ['{"city": "Rome"}']),
        ...toolBlock(3, 'toolu_c', 'get_time', ['{}']),
        ...messageEnd('tool_use'),
      ]),
    );
    const { chunks, error } = await stream(anthropicAdapter, ctx, { messages: [{ role: 'user', content: 'a' }], tools: [weatherTool] });
    expect(error).toBeUndefined();
    const indexes = chunks.flatMap((c) => c.choices.flatMap((ch) => (ch.delta.tool_calls ?? []).map((t) => t.index)));
    expect([...new Set(indexes)]).toEqual([0, 1, 2]);
    expect(assemble(chunks)).toMatchObject({
      text: 'Let me check.',
      finish: 'tool_calls',
      toolCalls: [
        { id: 'toolu_a', name: 'get_weather', arguments: '{"city": "Paris"}' },
        { id: 'toolu_b', name: 'get_weather', arguments: '{"city": "Rome"}' },
        { id: 'toolu_c', name: 'get_time', arguments: '{}' },
      ],
    });
  });

  it('streams a tool call without arguments as "{}", as the non-streamed answer gives it', async () => {
    const ctx = await setup((_seen, res) =>
      sendEvents(res, [messageStart(), ...toolBlock(0, 'toolu_a', 'get_time', []), ...toolBlock(1, 'toolu_b', 'get_weather', ['{"city": "Rome"}']), ...messageEnd('tool_use')]),
    );
    const { chunks, error } = await stream(anthropicAdapter, ctx, { messages: [{ role: 'user', content: 'a' }], tools: [weatherTool] });
    expect(error).toBeUndefined();
    expect(assemble(chunks).toolCalls.map((call) => call.arguments)).toEqual(['{}', '{"city": "Rome"}']);
  });

  it('streams a tool call whose input came whole in content_block_start with that input', async () => {
    const start = { event: 'content_block_start', data: { type: 'content_block_start', index: 0, content_block: { type: 'tool_use', id: 'toolu_a', name: 'get_weather', input: { city: 'Paris' } } } };
    const ctx = await setup((_seen, res) =>
      sendEvents(res, [messageStart(), start, { event: 'content_block_stop', data: { type: 'content_block_stop', index: 0 } }, ...toolBlock(1, 'toolu_b', 'get_weather', ['{"city": "Rome"}']), ...messageEnd('tool_use')]),
    );
    const { chunks, error } = await stream(anthropicAdapter, ctx, { messages: [{ role: 'user', content: 'a' }], tools: [weatherTool] });
    expect(error).toBeUndefined();
    expect(assemble(chunks).toolCalls.map((call) => call.arguments)).toEqual(['{"city":"Paris"}', '{"city": "Rome"}']);
  });

  it('streams past server tool blocks (web search asked for in providerOptions), whose input streams as input_json_delta too, as the whole answer reads past them', async () => {
    const events = [
      messageStart(),
      { event: 'content_block_start', data: { type: 'content_block_start', index: 0, content_block: { type: 'server_tool_use', id: 'srvtoolu_1', name: 'web_search', input: {} } } },
      { event: 'content_block_delta', data: { type: 'content_block_delta', index: 0, delta: { type: 'input_json_delta', partial_json: '{"query": "weather Paris"}' } } },
      { event: 'content_block_stop', data: { type: 'content_block_stop', index: 0 } },
      { event: 'content_block_start', data: { type: 'content_block_start', index: 1, content_block: { type: 'web_search_tool_result', tool_use_id: 'srvtoolu_1', content: [] } } },
      { event: 'content_block_stop', data: { type: 'content_block_stop', index: 1 } },
      ...textBlock(2, ['Sunny.']),
      ...toolBlock(3, 'toolu_a', 'get_weather', ['{"city": "Paris"}']),
      ...messageEnd('tool_use'),
    ];
    const ctx = await setup((_seen, res) => sendEvents(res, events));
    const { chunks, error } = await stream(anthropicAdapter, ctx, { messages: [{ role: 'user', content: 'a' }], tools: [weatherTool] });
    expect(error).toBeUndefined();
    expect(assemble(chunks)).toMatchObject({ text: 'Sunny.', finish: 'tool_calls', toolCalls: [{ id: 'toolu_a', name: 'get_weather', arguments: '{"city": "Paris"}' }] });
  });

  it('streams a structured answer given without input_json_delta as the non-streamed answer gives it: "{}", or the input of content_block_start', async () => {
    const format = { type: 'json_schema' as const, json_schema: { name: 'answer', schema: { type: 'object' } } };
    const wholeStart = [
      { event: 'content_block_start', data: { type: 'content_block_start', index: 0, content_block: { type: 'tool_use', id: 'toolu_s', name: 'sluice_structured_output', input: { a: 1 } } } },
      { event: 'content_block_stop', data: { type: 'content_block_stop', index: 0 } },
    ];
    const cases = [
      { blocks: toolBlock(0, 'toolu_s', 'sluice_structured_output', []), text: '{}' },
      { blocks: wholeStart, text: '{"a":1}' },
    ];
    for (const { blocks, text } of cases) {
      const ctx = await setup((_seen, res) => sendEvents(res, [messageStart(), ...blocks, ...messageEnd('tool_use')]));
      const { chunks, error } = await stream(anthropicAdapter, ctx, { messages: [{ role: 'user', content: 'a' }], response_format: format });
      expect(error).toBeUndefined();
      expect(assemble(chunks)).toMatchObject({ text, toolCalls: [], finish: 'stop' });
      await fake?.close();
    }
  });

  it('maps each streamed stop reason', async () => {
    for (const [stopReason, finish] of [['max_tokens', 'length'], ['stop_sequence', 'stop'], ['end_turn', 'stop']] as const) {
      const ctx = await setup((_seen, res) => sendEvents(res, [messageStart(), ...textBlock(0, ['x']), ...messageEnd(stopReason)]));
      const { chunks } = await stream(anthropicAdapter, ctx, { messages: [{ role: 'user', content: 'a' }] });
      expect(assemble(chunks).finish).toBe(finish);
      await fake?.close();
    }
  });

  it('throws UpstreamStreamError for an in-band error event, before any chunk when it comes first', async () => {
    const ctx = await setup((_seen, res) => sendEvents(res, [messageStart(), { event: 'error', data: { type: 'error', error: { type: 'overloaded_error', message: 'Overloaded' } } }]));
    const { chunks, error } = await stream(anthropicAdapter, ctx, { messages: [{ role: 'user', content: 'a' }] });
    expect(chunks).toEqual([]);
    expect(error).toBeInstanceOf(UpstreamStreamError);
    expect((error as UpstreamStreamError).message).toBe('Overloaded');
  });

  it('fails the stream when the connection is cut mid-stream', async () => {
    const ctx = await setup((_seen, res) => sendEvents(res, [messageStart(), ...textBlock(0, ['partial'])], { cut: true }));
    const { chunks, error } = await stream(anthropicAdapter, ctx, { messages: [{ role: 'user', content: 'a' }] });
    expect(assemble(chunks).text).toBe('partial');
    expect(error).toBeInstanceOf(Error);
  });

  it('throws UpstreamStreamError when the stream ends cleanly but before message_stop', async () => {
    const ctx = await setup((_seen, res) => sendEvents(res, [messageStart(), ...textBlock(0, ['partial'])]));
    const { error } = await stream(anthropicAdapter, ctx, { messages: [{ role: 'user', content: 'a' }] });
    expect(error).toBeInstanceOf(UpstreamStreamError);
  });

  it('classifies 529 overloaded_error as a fallback-worthy 503 and 400 as the request\'s fault', async () => {
    let status = 529;
    const ctx = await setup((_seen, res) =>
      json(res, status, { type: 'error', error: status === 529 ? { type: 'overloaded_error', message: 'Overloaded' } : { type: 'invalid_request_error', message: 'messages: field required' } }),
    );
    expect(await complete(anthropicAdapter, ctx, { messages: [{ role: 'user', content: 'a' }] })).toEqual({
      ok: false,
      error: { status: 503, message: 'Overloaded', type: 'api_error', code: 'overloaded_error', param: null, fallback: true },
    });
    status = 400;
    expect(await complete(anthropicAdapter, ctx, { messages: [{ role: 'user', content: 'a' }] })).toMatchObject({ ok: false, error: { status: 400, type: 'invalid_request_error', fallback: false } });
  });

  it.each([
    [401, 'authentication_error', true],
    [402, 'billing_error', true],
    [403, 'permission_error', true],
    [404, 'not_found_error', false],
    [413, 'request_too_large', false],
    [429, 'rate_limit_error', true],
    [500, 'api_error', true],
  ] as const)('classifies HTTP %i %s (fallback %s)', (status, type, fallback) => {
    const info = anthropicAdapter.classifyError(status, new TextEncoder().encode(JSON.stringify({ type: 'error', error: { type, message: 'm' } })), {});
    expect(info).toMatchObject({ status, fallback, code: type });
  });

  it('parses a documented response example, thinking as reasoning with its signature', () => {
    const ctx = context(anthropicAdapter, { type: 'anthropic', api_key: 'k' }, 'claude-test');
    const body = new TextEncoder().encode(JSON.stringify(message([{ type: 'thinking', thinking: '...', signature: 's' }, { type: 'text', text: 'Hi' }], 'end_turn')));
    expect(anthropicAdapter.parseResponse(body, ctx, { model: 'claude-test', messages: [{ role: 'user', content: 'Hi' }] }).choices[0]?.message).toEqual({
      role: 'assistant',
      content: 'Hi',
      reasoning: '...',
      reasoning_details: [{ type: 'reasoning.text', text: '...', signature: 's', format: 'anthropic-claude-v1', index: 0 }],
    });
    expect(ctx.provider.base_url).toBe('https://api.anthropic.com');
  });
});
