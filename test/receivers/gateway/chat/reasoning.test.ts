// Reasoning, structured output and prompt caching through the official openai
// SDK to each provider type's fake; every fake checks the provider's
// documented request fields (the wire schemas under providers/).
import OpenAI from 'openai';
import type { ServerResponse } from 'node:http';
import { afterEach, describe, expect, it } from 'vitest';
import { API_KEY, attr, completion, sendJson, sendStream, chunk, startGateway, startUpstream, type Gateway, type Upstream } from '../harness.js';
import { message as anthropicMessage, messageEnd, messageStart, sendEvents, textBlock } from '../providers/anthropic/fixtures.js';
import { validateAnthropic } from '../providers/anthropic/wire-schema.js';
import { endFrames, frame, sendConverse, sendFrames, textFrames } from '../providers/bedrock/fixtures.js';
import { requestProblems } from '../providers/bedrock/wire-schema.js';
import { sendResponse, sendStream as sendGeminiStream } from '../providers/google/fixtures.js';
import { validateGemini } from '../providers/google/wire-schema.js';
import { json, startFake, type FakeUpstream, type Handler, type Seen } from '../providers/shared/fake-upstream.js';

let gateway: Gateway | undefined;
let fake: FakeUpstream | undefined;
let upstream: Upstream | undefined;

afterEach(async () => {
  const problems = fake?.problems ?? [];
  await gateway?.close();
  await fake?.close();
  await upstream?.close();
  gateway = undefined;
  fake = undefined;
  upstream = undefined;
  expect(problems).toEqual([]);
});

type ProviderType = 'anthropic' | 'bedrock' | 'google';

const VALIDATORS: Record<ProviderType, (seen: Seen) => string[] | Promise<string[]>> = { anthropic: validateAnthropic, bedrock: requestProblems, google: validateGemini };

async function setup(type: ProviderType, handler: Handler): Promise<OpenAI> {
  fake = await startFake(VALIDATORS[type], handler);
  const provider =
    type === 'anthropic'
      ? { type, base_url: fake.url, api_key: 'sk-ant-test' }
      : type === 'google'
        ? { type, base_url: fake.url, api_key: 'gm-test-key' }
        : { type, base_url: fake.url, region: 'us-east-1', api_key: 'bedrock-key' };
  gateway = await startGateway({ providers: { [type]: provider } });
  return new OpenAI({ baseURL: gateway.baseURL, apiKey: API_KEY, maxRetries: 0 });
}

function body(index = 0): Record<string, unknown> {
  return fake?.requests[index]?.body as Record<string, unknown>;
}

/** The fields the SDK's types do not know yet: OpenRouter's reasoning extensions. */
type ReasoningMessage = OpenAI.Chat.Completions.ChatCompletionMessage & { reasoning?: string; reasoning_details?: unknown[] };
type ReasoningDelta = { reasoning?: string; reasoning_details?: Array<Record<string, unknown>> };

const weatherTool = { type: 'function' as const, function: { name: 'get_weather', parameters: { type: 'object', properties: { city: { type: 'string' } }, required: ['city'] } } };
const personSchema = { type: 'json_schema' as const, json_schema: { name: 'person', schema: { type: 'object', properties: { name: { type: 'string' } }, required: ['name'] } } };
const SIGNATURE = 'EqQBCkYIBxgCKkDsignature==';

describe('reasoning through the openai SDK', () => {
  it("anthropic: the openai SDK's top efforts, xhigh and max, are taken as high", async () => {
    const client = await setup('anthropic', (_seen, res) => json(res, 200, anthropicMessage([{ type: 'text', text: 'Done.' }], 'end_turn')));
    for (const effort of ['xhigh', 'max'] as const) {
      const answer = await client.chat.completions.create({ model: 'anthropic/claude-test', max_tokens: 10_000, reasoning_effort: effort, messages: [{ role: 'user', content: 'Think hard.' }] });
      expect(answer.choices[0]?.message.content).toBe('Done.');
    }
    expect([body(0), body(1)]).toMatchObject([{ thinking: { type: 'enabled', budget_tokens: 8000 } }, { thinking: { type: 'enabled', budget_tokens: 8000 } }]);
  });

  it('anthropic: reasoning_effort becomes a thinking budget, and the signed thinking survives a tool loop', async () => {
    const client = await setup('anthropic', (seen, res) => {
      const thinking = { type: 'thinking', thinking: 'The user wants weather.', signature: SIGNATURE };
      if (fake?.requests.length === 1) json(res, 200, anthropicMessage([thinking, { type: 'tool_use', id: 'toolu_1', name: 'get_weather', input: { city: 'Paris' } }], 'tool_use'));
      else json(res, 200, anthropicMessage([{ type: 'text', text: 'Sunny.' }], 'end_turn'));
    });
    const first = await client.chat.completions.create({ model: 'anthropic/claude-test', max_tokens: 10_000, reasoning_effort: 'high', tools: [weatherTool], messages: [{ role: 'user', content: 'Weather in Paris?' }] });
    expect(body(0)).toMatchObject({ max_tokens: 10_000, thinking: { type: 'enabled', budget_tokens: 8000 } });
    const assistant = first.choices[0]?.message as ReasoningMessage;
    expect(assistant.reasoning).toBe('The user wants weather.');
    expect(assistant.reasoning_details).toEqual([{ type: 'reasoning.text', text: 'The user wants weather.', signature: SIGNATURE, format: 'anthropic-claude-v1', index: 0 }]);

    const second = await client.chat.completions.create({
      model: 'anthropic/claude-test',
      max_tokens: 10_000,
      reasoning_effort: 'high',
      tools: [weatherTool],
      messages: [{ role: 'user', content: 'Weather in Paris?' }, assistant as OpenAI.Chat.Completions.ChatCompletionAssistantMessageParam, { role: 'tool', tool_call_id: 'toolu_1', content: '{"sky":"clear"}' }],
    });
    expect(second.choices[0]?.message.content).toBe('Sunny.');
    expect((body(1)['messages'] as Array<{ content: unknown[] }>)[1]?.content).toEqual([
      { type: 'thinking', thinking: 'The user wants weather.', signature: SIGNATURE },
      { type: 'tool_use', id: 'toolu_1', name: 'get_weather', input: { city: 'Paris' } },
    ]);
  });

  it('anthropic: streamed thinking arrives as delta.reasoning, and its pieces replay as one signed block', async () => {
    const client = await setup('anthropic', (seen, res) => {
      if ((seen.body as { stream?: boolean }).stream !== true) return json(res, 200, anthropicMessage([{ type: 'text', text: 'Again.' }], 'end_turn'));
      sendEvents(res, [
        messageStart(),
        { event: 'content_block_start', data: { type: 'content_block_start', index: 0, content_block: { type: 'thinking', thinking: '' } } },
        { event: 'content_block_delta', data: { type: 'content_block_delta', index: 0, delta: { type: 'thinking_delta', thinking: 'Let me ' } } },
        { event: 'content_block_delta', data: { type: 'content_block_delta', index: 0, delta: { type: 'thinking_delta', thinking: 'think.' } } },
        { event: 'content_block_delta', data: { type: 'content_block_delta', index: 0, delta: { type: 'signature_delta', signature: SIGNATURE } } },
        { event: 'content_block_stop', data: { type: 'content_block_stop', index: 0 } },
        ...textBlock(1, ['Done.']),
        ...messageEnd('end_turn'),
      ]);
    });
    const stream = await client.chat.completions.create({ model: 'anthropic/claude-test', reasoning_effort: 'low', stream: true, messages: [{ role: 'user', content: 'Think.' }] });
    let reasoning = '';
    let text = '';
    const details: Array<Record<string, unknown>> = [];
    for await (const part of stream) {
      const delta = part.choices[0]?.delta as ReasoningDelta & { content?: string | null } | undefined;
      reasoning += delta?.reasoning ?? '';
      text += delta?.content ?? '';
      details.push(...(delta?.reasoning_details ?? []));
    }
    expect(body(0)).toMatchObject({ max_tokens: 4096, thinking: { type: 'enabled', budget_tokens: 1024 } });
    expect([reasoning, text]).toEqual(['Let me think.', 'Done.']);

    // The client sends the streamed pieces back as they came; the gateway joins them.
    await client.chat.completions.create({
      model: 'anthropic/claude-test',
      reasoning_effort: 'low',
      messages: [{ role: 'user', content: 'Think.' }, { role: 'assistant', content: 'Done.', reasoning_details: details } as OpenAI.Chat.Completions.ChatCompletionAssistantMessageParam, { role: 'user', content: 'Again.' }],
    });
    expect((body(1)['messages'] as Array<{ content: unknown[] }>)[1]?.content).toEqual([
      { type: 'thinking', thinking: 'Let me think.', signature: SIGNATURE },
      { type: 'text', text: 'Done.' },
    ]);
  });

  it('bedrock: reasoning.max_tokens becomes Claude thinking in additionalModelRequestFields, reasoningContent replays first', async () => {
    const client = await setup('bedrock', (_seen, res) => {
      if (fake?.requests.length === 1) sendConverse(res, [{ reasoningContent: { reasoningText: { text: 'Weather tool.', signature: SIGNATURE } } }, { toolUse: { toolUseId: 'tu_1', name: 'get_weather', input: { city: 'Oslo' } } }], 'tool_use');
      else sendConverse(res, [{ text: 'Cold.' }]);
    });
    const request = { model: 'bedrock/anthropic.claude-sonnet-4-5-v1:0', reasoning: { max_tokens: 2048 }, tools: [weatherTool] };
    const first = await client.chat.completions.create({ ...request, messages: [{ role: 'user', content: 'Oslo?' }] } as OpenAI.Chat.Completions.ChatCompletionCreateParamsNonStreaming);
    expect(body(0)).toMatchObject({ additionalModelRequestFields: { thinking: { type: 'enabled', budget_tokens: 2048 } }, inferenceConfig: { maxTokens: 16_384 } });
    const assistant = first.choices[0]?.message as ReasoningMessage;
    expect(assistant.reasoning).toBe('Weather tool.');
    await client.chat.completions.create({ ...request, messages: [{ role: 'user', content: 'Oslo?' }, assistant, { role: 'tool', tool_call_id: 'tu_1', content: 'minus 5' }] } as OpenAI.Chat.Completions.ChatCompletionCreateParamsNonStreaming);
    expect((body(1)['messages'] as Array<{ content: unknown[] }>)[1]?.content[0]).toEqual({ reasoningContent: { reasoningText: { text: 'Weather tool.', signature: SIGNATURE } } });
  });

  it('bedrock: reasoning_effort for a Nova model becomes reasoningConfig, streamed reasoning comes back as delta.reasoning', async () => {
    const client = await setup('bedrock', (_seen, res) => {
      void sendFrames(res, [frame('messageStart', { role: 'assistant' }), frame('contentBlockDelta', { contentBlockIndex: 0, delta: { reasoningContent: { text: 'Hmm.' } } }), frame('contentBlockStop', { contentBlockIndex: 0 }), ...textFrames(1, ['Yes.']), ...endFrames('end_turn')]);
    });
    const stream = await client.chat.completions.create({ model: 'bedrock/amazon.nova-2-lite-v1:0', reasoning_effort: 'minimal', stream: true, messages: [{ role: 'user', content: 'Sure?' }] });
    let reasoning = '';
    for await (const part of stream) reasoning += (part.choices[0]?.delta as ReasoningDelta | undefined)?.reasoning ?? '';
    expect(body(0)['additionalModelRequestFields']).toEqual({ reasoningConfig: { type: 'enabled', maxReasoningEffort: 'low' } });
    expect(reasoning).toBe('Hmm.');
  });

  it('google: reasoning_effort becomes thinkingConfig, thought summaries come back as reasoning', async () => {
    const client = await setup('google', (seen, res) => {
      if (seen.path.includes('stream')) sendGeminiStream(res, [{ candidates: [{ content: { role: 'model', parts: [{ text: 'Pondering.', thought: true }] } }] }, { candidates: [{ content: { role: 'model', parts: [{ text: '42' }] }, finishReason: 'STOP' }] }]);
      else sendResponse(res, [{ text: 'Pondering.', thought: true }, { text: '42' }]);
    });
    const answer = await client.chat.completions.create({ model: 'google/gemini-2.5-flash', reasoning_effort: 'medium', messages: [{ role: 'user', content: 'Meaning?' }] });
    expect(body(0)['generationConfig']).toEqual({ thinkingConfig: { thinkingBudget: 8192, includeThoughts: true } });
    expect(answer.choices[0]?.message).toMatchObject({ content: '42', reasoning: 'Pondering.' });

    const stream = await client.chat.completions.create({ model: 'google/gemini-2.5-flash', reasoning: { effort: 'none' }, stream: true, messages: [{ role: 'user', content: 'Meaning?' }] } as OpenAI.Chat.Completions.ChatCompletionCreateParamsStreaming);
    let reasoning = '';
    for await (const part of stream) reasoning += (part.choices[0]?.delta as ReasoningDelta | undefined)?.reasoning ?? '';
    expect(body(1)['generationConfig']).toEqual({ thinkingConfig: { thinkingBudget: 0 } });
    expect(reasoning).toBe('Pondering.');
  });

  it('openai: reasoning.effort is sent as reasoning_effort; a token budget is a 400 naming reasoning.max_tokens', async () => {
    upstream = await startUpstream((_body, res) => sendJson(res, 200, completion('ok')));
    gateway = await startGateway({ providers: { openai: { type: 'openai', base_url: upstream.url, api_key: 'sk-up' } } });
    const client = new OpenAI({ baseURL: gateway.baseURL, apiKey: API_KEY, maxRetries: 0 });
    await client.chat.completions.create({ model: 'openai/o4-mini', reasoning: { effort: 'low' }, messages: [{ role: 'user', content: 'a' }] } as OpenAI.Chat.Completions.ChatCompletionCreateParamsNonStreaming);
    expect(upstream.requests[0]?.body).toEqual({ model: 'o4-mini', messages: [{ role: 'user', content: 'a' }], reasoning_effort: 'low' });
    const error = await client.chat.completions.create({ model: 'openai/o4-mini', reasoning: { max_tokens: 2000 }, messages: [{ role: 'user', content: 'a' }] } as OpenAI.Chat.Completions.ChatCompletionCreateParamsNonStreaming).catch((err: unknown) => err);
    expect(error).toBeInstanceOf(OpenAI.BadRequestError);
    expect((error as InstanceType<typeof OpenAI.BadRequestError>).error).toMatchObject({ code: 'unsupported_value', param: 'reasoning.max_tokens' });
    expect(upstream.requests).toHaveLength(1);
  });
});

describe('structured output through the openai SDK', () => {
  it('anthropic: json_schema is a forced tool whose input comes back as the content', async () => {
    const client = await setup('anthropic', (_seen, res) => json(res, 200, anthropicMessage([{ type: 'tool_use', id: 'toolu_9', name: 'sluice_structured_output', input: { name: 'Ada' } }], 'tool_use')));
    const answer = await client.chat.completions.create({ model: 'anthropic/claude-test', response_format: personSchema, messages: [{ role: 'user', content: 'Who?' }] });
    expect(answer.choices[0]).toMatchObject({ message: { content: '{"name":"Ada"}' }, finish_reason: 'stop' });
    expect(answer.choices[0]?.message.tool_calls).toBeUndefined();
    expect(body(0)).toMatchObject({ tools: [{ name: 'sluice_structured_output', input_schema: personSchema.json_schema.schema }], tool_choice: { type: 'tool', name: 'sluice_structured_output' } });
  });

  it('anthropic: a streamed structured answer arrives as content deltas', async () => {
    const client = await setup('anthropic', (_seen, res) =>
      sendEvents(res, [
        messageStart(),
        { event: 'content_block_start', data: { type: 'content_block_start', index: 0, content_block: { type: 'tool_use', id: 'toolu_9', name: 'sluice_structured_output', input: {} } } },
        { event: 'content_block_delta', data: { type: 'content_block_delta', index: 0, delta: { type: 'input_json_delta', partial_json: '{"name":' } } },
        { event: 'content_block_delta', data: { type: 'content_block_delta', index: 0, delta: { type: 'input_json_delta', partial_json: '"Ada"}' } } },
        { event: 'content_block_stop', data: { type: 'content_block_stop', index: 0 } },
        ...messageEnd('tool_use'),
      ]),
    );
    const stream = await client.chat.completions.create({ model: 'anthropic/claude-test', response_format: personSchema, stream: true, messages: [{ role: 'user', content: 'Who?' }] });
    let text = '';
    let finish: string | null = null;
    for await (const part of stream) {
      text += part.choices[0]?.delta.content ?? '';
      finish = part.choices[0]?.finish_reason ?? finish;
      expect(part.choices[0]?.delta.tool_calls).toBeUndefined();
    }
    expect([JSON.parse(text), finish]).toEqual([{ name: 'Ada' }, 'stop']);
  });

  it('bedrock: json_schema is a forced toolSpec; json_schema with tools is a 400 naming response_format', async () => {
    const client = await setup('bedrock', (_seen, res) => sendConverse(res, [{ toolUse: { toolUseId: 'tu_1', name: 'sluice_structured_output', input: { name: 'Grace' } } }], 'tool_use'));
    const answer = await client.chat.completions.create({ model: 'bedrock/amazon.nova-pro-v1:0', response_format: personSchema, messages: [{ role: 'user', content: 'Who?' }] });
    expect(answer.choices[0]).toMatchObject({ message: { content: '{"name":"Grace"}' }, finish_reason: 'stop' });
    expect(body(0)['toolConfig']).toMatchObject({ tools: [{ toolSpec: { name: 'sluice_structured_output', inputSchema: { json: personSchema.json_schema.schema } } }], toolChoice: { tool: { name: 'sluice_structured_output' } } });
    const error = await client.chat.completions.create({ model: 'bedrock/amazon.nova-pro-v1:0', response_format: personSchema, tools: [weatherTool], messages: [{ role: 'user', content: 'Who?' }] }).catch((err: unknown) => err);
    expect((error as InstanceType<typeof OpenAI.BadRequestError>).error).toMatchObject({ code: 'unsupported_value', param: 'response_format' });
    // An empty schema description, which Converse refuses in a toolSpec, is as good as none.
    const undescribed = { ...personSchema, json_schema: { ...personSchema.json_schema, description: '' } };
    await client.chat.completions.create({ model: 'bedrock/amazon.nova-pro-v1:0', response_format: undescribed, messages: [{ role: 'user', content: 'Who?' }] });
    expect(body(1)['toolConfig']).toMatchObject({ tools: [{ toolSpec: { description: expect.stringMatching(/^Answer by calling this tool once/) } }] });
  });

  it('google: json_schema becomes responseMimeType and responseSchema', async () => {
    const client = await setup('google', (_seen, res) => sendResponse(res, [{ text: '{"name":"Lin"}' }]));
    const answer = await client.chat.completions.create({ model: 'google/gemini-2.5-flash', response_format: personSchema, messages: [{ role: 'user', content: 'Who?' }] });
    expect(answer.choices[0]?.message.content).toBe('{"name":"Lin"}');
    expect(body(0)['generationConfig']).toEqual({ responseMimeType: 'application/json', responseSchema: { type: 'OBJECT', properties: { name: { type: 'STRING' } }, required: ['name'] } });
  });

  it('openai: json_schema passes through as it came', async () => {
    upstream = await startUpstream((_body, res) => sendStream(res, [chunk({ role: 'assistant', content: '{"name":"Bo"}' }), chunk({}, 'stop')]));
    gateway = await startGateway({ providers: { openai: { type: 'openai', base_url: upstream.url, api_key: 'sk-up' } } });
    const client = new OpenAI({ baseURL: gateway.baseURL, apiKey: API_KEY, maxRetries: 0 });
    const stream = await client.chat.completions.create({ model: 'openai/gpt-test', response_format: personSchema, stream: true, messages: [{ role: 'user', content: 'Who?' }] });
    let text = '';
    for await (const part of stream) text += part.choices[0]?.delta.content ?? '';
    expect(text).toBe('{"name":"Bo"}');
    expect(upstream.requests[0]?.body['response_format']).toEqual(personSchema);
  });

  it('anthropic: json_object has no counterpart and is a 400 naming response_format', async () => {
    const client = await setup('anthropic', (_seen, res) => json(res, 500, {}));
    const error = await client.chat.completions.create({ model: 'anthropic/claude-test', response_format: { type: 'json_object' }, messages: [{ role: 'user', content: 'x' }] }).catch((err: unknown) => err);
    expect(error).toBeInstanceOf(OpenAI.BadRequestError);
    expect((error as InstanceType<typeof OpenAI.BadRequestError>).error).toMatchObject({ type: 'invalid_request_error', code: 'unsupported_value', param: 'response_format' });
    expect(fake?.requests).toHaveLength(0);
  });
});

describe('prompt caching through the openai SDK', () => {
  const cached = { type: 'ephemeral' as const };
  const messages = [
    { role: 'system' as const, content: [{ type: 'text' as const, text: 'A long system prompt.', cache_control: cached }] },
    { role: 'user' as const, content: [{ type: 'text' as const, text: 'A long document.', cache_control: { type: 'ephemeral' as const, ttl: '1h' as const } }, { type: 'text' as const, text: 'The question.' }] },
  ] as unknown as OpenAI.Chat.Completions.ChatCompletionMessageParam[];

  it('anthropic: cache_control stays on its blocks; cache reads and writes reach usage and the CLIENT span', async () => {
    const client = await setup('anthropic', (_seen, res) => json(res, 200, anthropicMessage([{ type: 'text', text: 'ok' }], 'end_turn', { input_tokens: 10, output_tokens: 3, cache_read_input_tokens: 900, cache_creation_input_tokens: 50 })));
    const answer = await client.chat.completions.create({ model: 'anthropic/claude-test', messages });
    expect(body(0)).toMatchObject({
      system: [{ type: 'text', text: 'A long system prompt.', cache_control: cached }],
      messages: [{ role: 'user', content: [{ type: 'text', text: 'A long document.', cache_control: { type: 'ephemeral', ttl: '1h' } }, { type: 'text', text: 'The question.' }] }],
    });
    expect(answer.usage).toMatchObject({ prompt_tokens: 960, completion_tokens: 3, prompt_tokens_details: { cached_tokens: 900 } });
    const span = (await gateway?.spans(2))?.find((s) => s.kind === 3);
    expect([attr(span, 'gen_ai.usage.input_tokens'), attr(span, 'gen_ai.usage.cache_read.input_tokens'), attr(span, 'gen_ai.usage.cache_creation.input_tokens')]).toEqual([960, 900, 50]);
  });

  it('bedrock: cache_control becomes a cachePoint after its block; cacheReadInputTokens reach usage', async () => {
    const client = await setup('bedrock', (_seen, res) => sendConverse(res, [{ text: 'ok' }], 'end_turn', { usage: { inputTokens: 10, outputTokens: 3, totalTokens: 513, cacheReadInputTokens: 500 } }));
    const answer = await client.chat.completions.create({ model: 'bedrock/anthropic.claude-sonnet-4-5-v1:0', messages });
    expect(body(0)).toMatchObject({
      system: [{ text: 'A long system prompt.' }, { cachePoint: { type: 'default' } }],
      messages: [{ role: 'user', content: [{ text: 'A long document.' }, { cachePoint: { type: 'default' } }, { text: 'The question.' }] }],
    });
    expect(answer.usage).toMatchObject({ prompt_tokens: 510, prompt_tokens_details: { cached_tokens: 500 } });
  });

  it('openai: cache_control is left out of the parts sent upstream (OpenAI caches by itself)', async () => {
    upstream = await startUpstream((_body, res: ServerResponse) => sendJson(res, 200, completion('ok')));
    gateway = await startGateway({ providers: { openai: { type: 'openai', base_url: upstream.url, api_key: 'sk-up' } } });
    const client = new OpenAI({ baseURL: gateway.baseURL, apiKey: API_KEY, maxRetries: 0 });
    await client.chat.completions.create({ model: 'openai/gpt-test', messages });
    expect(JSON.stringify(upstream.requests[0]?.body)).not.toContain('cache_control');
    expect(upstream.requests[0]?.body['messages']).toEqual([
      { role: 'system', content: [{ type: 'text', text: 'A long system prompt.' }] },
      { role: 'user', content: [{ type: 'text', text: 'A long document.' }, { type: 'text', text: 'The question.' }] },
    ]);
  });
});
