import { afterEach, describe, expect, it } from 'vitest';
import { z } from 'zod';
import { API_KEY, attr, chunk, completion, openaiProvider, sendJson, sendStream, startGateway, startUpstream, textStream, usageChunk, type Gateway, type SeenRequest, type Upstream, type UpstreamHandler } from '../harness.js';
import { PNG_BASE64 } from '../providers/shared/fake-upstream.js';
import { aiClients, type AiClient } from './clients.js';

let gateway: Gateway | undefined;
const upstreams: Upstream[] = [];

afterEach(async () => {
  await gateway?.close();
  gateway = undefined;
  await Promise.all(upstreams.splice(0).map((u) => u.close()));
});

async function setup(client: AiClient, first: UpstreamHandler, second: UpstreamHandler = first, overrides: Record<string, unknown> = {}) {
  const a = await startUpstream(first);
  const b = await startUpstream(second);
  upstreams.push(a, b);
  gateway = await startGateway({
    providers: { alpha: openaiProvider(a), beta: openaiProvider(b) },
    models: [
      { id: 'acme/chat', name: 'Acme Chat', description: 'A test model', pricing: { input: '0.000001', output: '0.000002', input_cache_read: '0.0000005' }, endpoints: [{ provider: 'alpha', model: 'up-alpha' }, { provider: 'beta', model: 'up-beta' }] },
      // Priced by input only, as embedding models are: its output is charged as 0.
      { id: 'acme/embed', type: 'embedding', pricing: { input: '0.0000001' }, endpoints: [{ provider: 'alpha', model: 'up-embed' }] },
    ],
    ...overrides,
  });
  const gw = client.ai.createGateway({ baseURL: `${gateway.baseURL}/ai`, apiKey: API_KEY });
  return { gw, a, b };
}

function messagesOf(seen: SeenRequest | undefined): Array<Record<string, unknown>> {
  return (seen?.body['messages'] ?? []) as Array<Record<string, unknown>>;
}

const toolCallCompletion = (id: string, name: string, args: string) => ({
  ...completion(''),
  choices: [{ index: 0, message: { role: 'assistant', content: null, tool_calls: [{ id, type: 'function', function: { name, arguments: args } }] }, finish_reason: 'tool_calls' }],
});

describe.each(aiClients)('POST /v1/ai/language-model with $name', (client) => {
  const { ai } = client;

  it('generates text from a system prompt and sends the call settings upstream', async () => {
    const { gw, a } = await setup(client, (_b, res) => sendJson(res, 200, completion('Hello!')));
    const out = await ai.generateText({ model: gw('acme/chat'), system: 'Be terse.', prompt: 'Hi', temperature: 0.3, topP: 0.9, topK: 40, maxOutputTokens: 64, seed: 7, stopSequences: ['END'], presencePenalty: 0.5, frequencyPenalty: 0.25, maxRetries: 0 });
    expect(out.text).toBe('Hello!');
    expect(out.finishReason).toBe('stop');
    expect(out.usage).toMatchObject({ inputTokens: 11, outputTokens: 7, totalTokens: 18 });
    expect(out.providerMetadata?.['gateway']).toMatchObject({ modelId: 'acme/chat', provider: 'alpha', attempts: 1, generationId: expect.stringMatching(/^gen_/) });
    // Every setting reached the provider as asked: nothing to warn of.
    expect(out.warnings).toEqual([]);
    expect(a.requests[0]?.headers['authorization']).toBe('Bearer sk-upstream');
    expect(a.requests[0]?.body).toEqual({
      model: 'up-alpha',
      messages: [
        { role: 'system', content: 'Be terse.' },
        { role: 'user', content: [{ type: 'text', text: 'Hi' }] },
      ],
      max_tokens: 64,
      temperature: 0.3,
      top_p: 0.9,
      top_k: 40,
      presence_penalty: 0.5,
      frequency_penalty: 0.25,
      seed: 7,
      stop: ['END'],
    });
  });

  it('gives the usage counts an upstream got wrong (negative, not a number) as 0, as they are billed', async () => {
    const { gw } = await setup(client, (_b, res) => sendJson(res, 200, completion('Hi.', { usage: { prompt_tokens: -5, completion_tokens: 'many', total_tokens: 1e308 } })));
    const out = await ai.generateText({ model: gw('acme/chat'), prompt: 'Hi', maxRetries: 0 });
    expect(out.text).toBe('Hi.');
    expect(out.usage).toMatchObject({ inputTokens: 0, outputTokens: 0 });
  });

  it.each([false, true])('gives an answer (streamed: %s) from an upstream that reported no usage the estimate it was charged, as the CLIENT span says', async (stream) => {
    const text = 'Bonjour tout le monde, comment allez-vous ?';
    const { gw } = await setup(client, (body, res) => {
      if (body['stream'] === true) sendStream(res, [chunk({ role: 'assistant', content: text }), chunk({}, 'stop')]);
      else sendJson(res, 200, completion(text, { usage: null }));
    });
    const call = { model: gw('acme/chat'), prompt: 'Say hello in French, politely, to everyone.', maxRetries: 0 };
    const usage = stream ? await ai.streamText(call).usage : (await ai.generateText(call)).usage;
    const attempt = ((await gateway?.spans(2)) ?? []).find((s) => s.name === 'chat up-alpha');
    expect(attr(attempt, 'sluice.usage.source')).toBe('estimate');
    expect(usage.inputTokens).toBeGreaterThan(0);
    expect(usage.outputTokens).toBeGreaterThan(0);
    expect([usage.inputTokens, usage.outputTokens]).toEqual([attr(attempt, 'gen_ai.usage.input_tokens'), attr(attempt, 'gen_ai.usage.output_tokens')]);
  });

  it('streams text parts in order, with usage and the gateway metadata on finish', async () => {
    const { gw } = await setup(client, (_b, res) => textStream(res, ['Hel', 'lo', '!']));
    const result = ai.streamText({ model: gw('acme/chat'), system: 'Be terse.', prompt: 'Hi', maxRetries: 0 });
    const parts: string[] = [];
    for await (const part of result.fullStream) parts.push(part.type);
    expect(await result.text).toBe('Hello!');
    expect(parts.filter((p) => p.startsWith('text'))).toEqual(['text-start', 'text-delta', 'text-delta', 'text-delta', 'text-end']);
    expect(await result.finishReason).toBe('stop');
    expect((await result.usage).outputTokens).toBe(3);
    expect((await result.providerMetadata)?.['gateway']).toMatchObject({ modelId: 'acme/chat', provider: 'alpha', attempts: 1, generationId: expect.stringMatching(/^gen_/) });
  });

  it('streams each upstream chunk as a raw part when the call asks for includeRawChunks', async () => {
    const { gw } = await setup(client, (_b, res) => textStream(res, ['Hel', 'lo']));
    const result = ai.streamText({ model: gw('acme/chat'), prompt: 'Hi', includeRawChunks: true, maxRetries: 0 });
    const raw: unknown[] = [];
    for await (const part of result.fullStream) if (part.type === 'raw') raw.push(part.rawValue);
    expect(await result.text).toBe('Hello');
    expect(raw).toMatchObject([
      { choices: [{ delta: { role: 'assistant', content: '' } }] },
      { choices: [{ delta: { content: 'Hel' } }] },
      { choices: [{ delta: { content: 'lo' } }] },
      { choices: [{ delta: {}, finish_reason: 'stop' }] },
      { choices: [], usage: { prompt_tokens: 5, completion_tokens: 3 } },
    ]);
  });

  it('sends images given as bytes, as a URL and as base64 to the upstream as image_url parts', async () => {
    const { gw, a } = await setup(client, (_b, res) => sendJson(res, 200, completion('three images')));
    const out = await ai.generateText({
      model: gw('acme/chat'),
      maxRetries: 0,
      messages: [
        {
          role: 'user',
          content: [
            { type: 'text', text: 'What are these?' },
            { type: 'image', image: Buffer.from(PNG_BASE64, 'base64') },
            { type: 'image', image: new URL('https://example.com/cat.jpg') },
            { type: 'image', image: PNG_BASE64 },
          ],
        },
      ],
    });
    expect(out.text).toBe('three images');
    expect(messagesOf(a.requests[0])).toEqual([
      {
        role: 'user',
        content: [
          { type: 'text', text: 'What are these?' },
          { type: 'image_url', image_url: { url: `data:image/png;base64,${PNG_BASE64}` } },
          { type: 'image_url', image_url: { url: 'https://example.com/cat.jpg' } },
          { type: 'image_url', image_url: { url: `data:image/png;base64,${PNG_BASE64}` } },
        ],
      },
    ]);
  });

  it("sends an image part's providerOptions.openai.imageDetail as the image_url's detail, as @ai-sdk/openai does", async () => {
    const { gw, a } = await setup(client, (_b, res) => sendJson(res, 200, completion('two images')));
    await ai.generateText({
      model: gw('acme/chat'),
      maxRetries: 0,
      messages: [
        {
          role: 'user',
          content: [
            { type: 'image', image: new URL('https://example.com/cat.jpg'), providerOptions: { openai: { imageDetail: 'low' } } },
            { type: 'image', image: Buffer.from(PNG_BASE64, 'base64'), providerOptions: { openai: { imageDetail: 'high' } } },
          ],
        },
      ],
    });
    expect(messagesOf(a.requests[0])).toEqual([
      {
        role: 'user',
        content: [
          { type: 'image_url', image_url: { url: 'https://example.com/cat.jpg', detail: 'low' } },
          { type: 'image_url', image_url: { url: `data:image/png;base64,${PNG_BASE64}`, detail: 'high' } },
        ],
      },
    ]);
  });

  it('runs a multi-step tool loop with stopWhen, sending calls and results back', async () => {
    const { gw, a } = await setup(client, (body, res) => {
      const messages = body['messages'] as Array<Record<string, unknown>>;
      const results = messages.filter((m) => m['role'] === 'tool').length;
      if (results === 0) return sendJson(res, 200, toolCallCompletion('call_1', 'add', '{"a":2,"b":3}'));
      if (results === 1) return sendJson(res, 200, toolCallCompletion('call_2', 'add', '{"a":5,"b":10}'));
      sendJson(res, 200, completion(`The sum is ${String(messages.at(-1)?.['content'])}`));
    });
    const out = await ai.generateText({
      model: gw('acme/chat'),
      prompt: 'add 2 and 3, then add 10',
      tools: { add: ai.tool({ description: 'Adds two numbers', inputSchema: z.object({ a: z.number(), b: z.number() }), execute: async ({ a: x, b: y }) => x + y }) },
      stopWhen: ai.stepCountIs(5),
      maxRetries: 0,
    });
    expect(out.text).toBe('The sum is 15');
    expect(out.steps).toHaveLength(3);
    const last = messagesOf(a.requests[2]);
    expect(last.slice(1)).toEqual([
      { role: 'assistant', content: null, tool_calls: [{ id: 'call_1', type: 'function', function: { name: 'add', arguments: '{"a":2,"b":3}' } }] },
      { role: 'tool', tool_call_id: 'call_1', content: '5' },
      { role: 'assistant', content: null, tool_calls: [{ id: 'call_2', type: 'function', function: { name: 'add', arguments: '{"a":5,"b":10}' } }] },
      { role: 'tool', tool_call_id: 'call_2', content: '15' },
    ]);
    const tools = a.requests[0]?.body['tools'] as Array<{ function: { name: string; parameters: Record<string, unknown> } }>;
    expect(tools[0]?.function).toMatchObject({ name: 'add', description: 'Adds two numbers', parameters: { type: 'object', required: ['a', 'b'] } });
    expect(a.requests[0]?.body['tool_choice']).toBe('auto');
  });

  it('sends the images of parallel tool results after all the tool messages, so every call is answered right after its turn', async () => {
    const { gw, a } = await setup(client, (body, res) => {
      if ((body['messages'] as unknown[]).length > 1) return sendJson(res, 200, completion('two screenshots'));
      sendJson(res, 200, {
        ...completion(''),
        choices: [{ index: 0, message: { role: 'assistant', content: null, tool_calls: [1, 2].map((n) => ({ id: `call_${n}`, type: 'function', function: { name: 'screenshot', arguments: `{"screen":${n}}` } })) }, finish_reason: 'tool_calls' }],
      });
    });
    const screenshot = ai.tool({
      inputSchema: z.object({ screen: z.number() }),
      execute: async ({ screen }) => screen,
      toModelOutput: ({ output }) => ({ type: 'content', value: [{ type: 'text', text: `screen ${output}` }, { type: 'image-data', data: PNG_BASE64, mediaType: 'image/png' }] }),
    });
    const out = await ai.generateText({ model: gw('acme/chat'), prompt: 'capture both screens', tools: { screenshot }, stopWhen: ai.stepCountIs(3), maxRetries: 0 });
    expect(out.text).toBe('two screenshots');
    const png = { type: 'image_url', image_url: { url: `data:image/png;base64,${PNG_BASE64}` } };
    expect(messagesOf(a.requests[1]).slice(2)).toEqual([
      { role: 'tool', tool_call_id: 'call_1', content: 'screen 1' },
      { role: 'tool', tool_call_id: 'call_2', content: 'screen 2' },
      { role: 'user', content: [png, png] },
    ]);
  });

  it('streams a tool loop: tool-input parts, then one tool-call per call, then the next step', async () => {
    const { gw, a } = await setup(client, (body, res) => {
      const messages = body['messages'] as Array<Record<string, unknown>>;
      if (messages.at(-1)?.['role'] === 'tool') return textStream(res, ['It is ', String(messages.at(-1)?.['content'])]);
      sendStream(res, [
        chunk({ role: 'assistant', content: null, tool_calls: [{ index: 0, id: 'call_w', type: 'function', function: { name: 'weather', arguments: '' } }] }),
        chunk({ tool_calls: [{ index: 0, function: { arguments: '{"city":' } }] }),
        chunk({ tool_calls: [{ index: 0, function: { arguments: '"Paris"}' } }] }),
        chunk({}, 'tool_calls'),
        usageChunk,
      ]);
    });
    const result = ai.streamText({
      model: gw('acme/chat'),
      prompt: 'weather in Paris?',
      tools: { weather: ai.tool({ inputSchema: z.object({ city: z.string() }), execute: async ({ city }) => `sunny in ${city}` }) },
      stopWhen: ai.stepCountIs(3),
      maxRetries: 0,
    });
    const types: string[] = [];
    for await (const part of result.fullStream) types.push(part.type);
    expect(await result.text).toBe('It is sunny in Paris');
    expect(types).toContain('tool-input-start');
    expect(types).toContain('tool-input-delta');
    expect(types.filter((t) => t === 'tool-call')).toHaveLength(1);
    expect(types.filter((t) => t === 'tool-result')).toHaveLength(1);
    expect(messagesOf(a.requests[1]).at(-1)).toEqual({ role: 'tool', tool_call_id: 'call_w', content: 'sunny in Paris' });
  });

  it('streams the tool calls of an upstream that leaves their index out, told apart by id', async () => {
    const { gw } = await setup(client, (_b, res) =>
      sendStream(res, [
        chunk({ role: 'assistant', tool_calls: [{ id: 'call_a', type: 'function', function: { name: 'weather', arguments: '{"ci' } }] }),
        chunk({ tool_calls: [{ function: { arguments: 'ty":"Paris"}' } }] }),
        chunk({ tool_calls: [{ id: 'call_b', type: 'function', function: { name: 'weather', arguments: '{"city":"Rome"}' } }] }),
        chunk({}, 'tool_calls'),
        usageChunk,
      ]),
    );
    const result = ai.streamText({ model: gw('acme/chat'), prompt: 'weather in Paris and Rome?', tools: { weather: ai.tool({ inputSchema: z.object({ city: z.string() }) }) }, maxRetries: 0 });
    const calls = (await result.toolCalls).map((call) => [call.toolCallId, call.input]);
    expect(calls).toEqual([
      ['call_a', { city: 'Paris' }],
      ['call_b', { city: 'Rome' }],
    ]);
  });

  it('keeps parallel tool calls apart when an upstream streams them all at index 0, each with its own id (Ollama), and a call whose id changes after its first delta whole (Poolside)', async () => {
    const ollama = [
      chunk({ role: 'assistant', tool_calls: [{ index: 0, id: 'call_a', type: 'function', function: { name: 'weather', arguments: '{"city":' } }] }),
      chunk({ tool_calls: [{ index: 0, function: { arguments: '"Paris"}' } }] }),
      chunk({ tool_calls: [{ index: 0, id: 'call_t', type: 'function', function: { name: 'time', arguments: '' } }] }),
      chunk({ tool_calls: [{ index: 0, id: 'call_b', type: 'function', function: { name: 'weather', arguments: '{"city":' } }] }),
      chunk({ tool_calls: [{ index: 0, function: { arguments: '"Oslo"}' } }] }),
      chunk({}, 'tool_calls'),
      usageChunk,
    ];
    const poolside = [
      chunk({ role: 'assistant', tool_calls: [{ index: 0, id: 'call_1', type: 'function', function: { name: 'weather', arguments: '' } }] }),
      chunk({ tool_calls: [{ index: 0, id: 'call_2', function: { arguments: '{"city":' } }] }),
      chunk({ tool_calls: [{ index: 0, id: 'call_2', function: { arguments: '"Rome"}' } }] }),
      chunk({}, 'tool_calls'),
      usageChunk,
    ];
    const { gw } = await setup(client, (body, res) => sendStream(res, JSON.stringify(body['messages']).includes('Rome') ? poolside : ollama));
    const calls = async (prompt: string) =>
      (await ai.streamText({ model: gw('acme/chat'), prompt, tools: { weather: ai.tool({ inputSchema: z.object({ city: z.string() }) }), time: ai.tool({ inputSchema: z.object({}) }) }, maxRetries: 0 }).toolCalls).map((call) => [call.toolCallId, call.toolName, call.input]);
    expect(await calls('weather in Paris and Oslo, and the time?')).toEqual([
      ['call_a', 'weather', { city: 'Paris' }],
      ['call_t', 'time', {}],
      ['call_b', 'weather', { city: 'Oslo' }],
    ]);
    expect(await calls('weather in Rome?')).toEqual([['call_1', 'weather', { city: 'Rome' }]]);
  });

  it('answers Output.object through a json_schema response format', async () => {
    const { gw, a } = await setup(client, (_b, res) => sendJson(res, 200, completion('{"city":"Paris","tempC":21}')));
    const out = await ai.generateText({
      model: gw('acme/chat'),
      prompt: 'Weather in Paris as JSON',
      output: ai.Output.object({ schema: z.object({ city: z.string(), tempC: z.number() }) }),
      maxRetries: 0,
    });
    expect(out.output).toEqual({ city: 'Paris', tempC: 21 });
    const format = a.requests[0]?.body['response_format'] as { type: string; json_schema: { name: string; schema: Record<string, unknown> } };
    expect(format.type).toBe('json_schema');
    expect(format.json_schema.schema).toMatchObject({ type: 'object', properties: { city: { type: 'string' }, tempC: { type: 'number' } } });
  });

  it('reads an answer that gives its absent fields as null, generated and streamed', async () => {
    const absent = { reasoning: null, reasoning_details: null, tool_calls: null, images: null, refusal: null };
    const { gw } = await setup(client, (body, res) => {
      if (body['stream'] !== true) return sendJson(res, 200, { ...completion(''), choices: [{ index: 0, message: { role: 'assistant', content: 'fine', ...absent }, finish_reason: 'stop' }] });
      sendStream(res, [chunk({ role: 'assistant', content: 'fine', ...absent }), chunk({}, 'stop'), usageChunk]);
    });
    expect((await ai.generateText({ model: gw('acme/chat'), prompt: 'Hi', maxRetries: 0 })).text).toBe('fine');
    expect(await ai.streamText({ model: gw('acme/chat'), prompt: 'Hi', maxRetries: 0 }).text).toBe('fine');
  });

  it('gives an OpenAI refusal as the text with finish reason content-filter, generated and streamed', async () => {
    const refusal = "I'm sorry, I can't help with that.";
    const { gw } = await setup(client, (body, res) => {
      if (body['stream'] !== true) return sendJson(res, 200, { ...completion(''), choices: [{ index: 0, message: { role: 'assistant', content: null, refusal }, finish_reason: 'stop' }] });
      sendStream(res, [chunk({ role: 'assistant', content: null, refusal: '' }), chunk({ refusal: refusal.slice(0, 8) }), chunk({ refusal: refusal.slice(8) }), chunk({}, 'stop'), usageChunk]);
    });
    const generated = await ai.generateText({ model: gw('acme/chat'), prompt: 'Something bad', maxRetries: 0 });
    expect(generated.text).toBe(refusal);
    expect(generated.finishReason).toBe('content-filter');
    const streamed = ai.streamText({ model: gw('acme/chat'), prompt: 'Something bad', maxRetries: 0 });
    expect(await streamed.text).toBe(refusal);
    expect(await streamed.finishReason).toBe('content-filter');
  });

  it("returns the URL citations of OpenAI's search models as sources, generated and streamed", async () => {
    const citation = { type: 'url_citation', url_citation: { url: 'https://example.com/paris', title: 'Paris weather', start_index: 0, end_index: 5 } };
    const { gw } = await setup(client, (body, res) => {
      if (body['stream'] === true) return sendStream(res, [chunk({ role: 'assistant', content: 'Sunny.' }), chunk({ annotations: [citation] }), chunk({}, 'stop'), usageChunk]);
      sendJson(res, 200, { ...completion(''), choices: [{ index: 0, message: { role: 'assistant', content: 'Sunny.', annotations: [citation] }, finish_reason: 'stop' }] });
    });
    const expected = [{ type: 'source', sourceType: 'url', url: 'https://example.com/paris', title: 'Paris weather' }];
    const generated = await ai.generateText({ model: gw('acme/chat'), prompt: 'Weather in Paris?', maxRetries: 0 });
    expect(generated.text).toBe('Sunny.');
    expect(generated.sources).toMatchObject(expected);
    const streamed = ai.streamText({ model: gw('acme/chat'), prompt: 'Weather in Paris?', maxRetries: 0 });
    expect(await streamed.text).toBe('Sunny.');
    expect(await streamed.sources).toMatchObject(expected);
  });

  it('returns reasoning as reasoning parts, generated and streamed', async () => {
    const { gw } = await setup(client, (body, res) => {
      if (body['stream'] !== true) {
        return sendJson(res, 200, { ...completion('42'), choices: [{ index: 0, message: { role: 'assistant', content: '42', reasoning: 'Six times seven.' }, finish_reason: 'stop' }] });
      }
      sendStream(res, [chunk({ role: 'assistant', reasoning: 'Six ' }), chunk({ reasoning: 'times seven.' }), chunk({ content: '42' }), chunk({}, 'stop'), usageChunk]);
    });
    const generated = await ai.generateText({ model: gw('acme/chat'), prompt: '6*7?', maxRetries: 0 });
    expect(generated.reasoningText).toBe('Six times seven.');
    expect(generated.text).toBe('42');
    const streamed = ai.streamText({ model: gw('acme/chat'), prompt: '6*7?', maxRetries: 0 });
    const types: string[] = [];
    for await (const part of streamed.fullStream) types.push(part.type);
    expect(await streamed.reasoningText).toBe('Six times seven.');
    expect(await streamed.text).toBe('42');
    expect(types.indexOf('reasoning-end')).toBeLessThan(types.indexOf('text-start'));
  });

  it('reads reasoning_content (DeepSeek, vLLM) as reasoning and text given as content parts (Mistral), generated and streamed', async () => {
    const { gw } = await setup(client, (body, res) => {
      if (body['stream'] !== true) {
        return sendJson(res, 200, { ...completion(''), choices: [{ index: 0, message: { role: 'assistant', content: [{ type: 'text', text: '4' }, { type: 'text', text: '2' }], reasoning_content: 'Six times seven.' }, finish_reason: 'stop' }] });
      }
      sendStream(res, [chunk({ role: 'assistant', content: null, reasoning_content: 'Six ' }), chunk({ reasoning_content: 'times seven.' }), chunk({ content: [{ type: 'text', text: '4' }] }), chunk({ content: '2' }), chunk({}, 'stop'), usageChunk]);
    });
    const generated = await ai.generateText({ model: gw('acme/chat'), prompt: '6*7?', maxRetries: 0 });
    expect(generated.reasoningText).toBe('Six times seven.');
    expect(generated.text).toBe('42');
    const streamed = ai.streamText({ model: gw('acme/chat'), prompt: '6*7?', maxRetries: 0 });
    expect(await streamed.reasoningText).toBe('Six times seven.');
    expect(await streamed.text).toBe('42');
  });

  it('sends the reasoning of a turn that called tools back as its reasoning_content to DeepSeek and Kimi models, which require it, and to no other', async () => {
    const { gw, a } = await setup(client, (_b, res) => sendJson(res, 200, completion('Sunny.')));
    const ask = (model: string) =>
      ai.generateText({
        model: gw(model),
        messages: [
          { role: 'user', content: 'Hi' },
          { role: 'assistant', content: [{ type: 'reasoning', text: 'A greeting.' }, { type: 'text', text: 'Hello.' }] },
          { role: 'user', content: 'Weather in Oslo?' },
          { role: 'assistant', content: [{ type: 'reasoning', text: 'I need the weather for Oslo.' }, { type: 'tool-call', toolCallId: 'call_1', toolName: 'get_weather', input: { city: 'Oslo' } }] },
          { role: 'tool', content: [{ type: 'tool-result', toolCallId: 'call_1', toolName: 'get_weather', output: { type: 'text', value: 'sunny' } }] },
        ],
        maxRetries: 0,
      });
    const call = { id: 'call_1', type: 'function', function: { name: 'get_weather', arguments: '{"city":"Oslo"}' } };
    await ask('alpha/Kimi-K2-Thinking');
    expect(messagesOf(a.requests[0]).slice(1, 4)).toEqual([
      { role: 'assistant', content: 'Hello.' },
      { role: 'user', content: [{ type: 'text', text: 'Weather in Oslo?' }] },
      { role: 'assistant', content: null, reasoning_content: 'I need the weather for Oslo.', tool_calls: [call] },
    ]);
    // Other servers may refuse the field: a model not known to need it goes without.
    await ask('acme/chat');
    expect(messagesOf(a.requests[1])[3]).toEqual({ role: 'assistant', content: null, tool_calls: [call] });
  });

  it('turns provider reasoning options into the reasoning request and passes other provider options on', async () => {
    const { gw, a } = await setup(client, (_b, res) => sendJson(res, 200, completion('ok')));
    await ai.generateText({ model: gw('acme/chat'), prompt: 'Hi', providerOptions: { openai: { reasoningEffort: 'low', parallelToolCalls: false, user: 'u-1' } }, maxRetries: 0 });
    expect(a.requests[0]?.body).toMatchObject({ reasoning_effort: 'low', parallel_tool_calls: false, user: 'u-1' });
    expect(a.requests[0]?.body['reasoningEffort']).toBeUndefined();
    expect(a.requests[0]?.body['providerOptions']).toBeUndefined();
  });

  it("sends @ai-sdk/openai's chat options under the names Chat Completions takes", async () => {
    const { gw, a } = await setup(client, (_b, res) => sendJson(res, 200, completion('ok')));
    const openai = { textVerbosity: 'low', logprobs: 3, structuredOutputs: true, strictJsonSchema: true, promptCacheKey: 'k-1' };
    await ai.generateText({ model: gw('acme/chat'), prompt: 'Hi', providerOptions: { openai }, maxRetries: 0 });
    const body = a.requests[0]?.body ?? {};
    expect(body).toMatchObject({ verbosity: 'low', logprobs: true, top_logprobs: 3, prompt_cache_key: 'k-1' });
    for (const unknown of ['text_verbosity', 'structured_outputs', 'strict_json_schema']) expect(body[unknown]).toBeUndefined();
  });

  it("leaves out @ai-sdk/openai's Responses-only reasoning summary and include, which Chat Completions refuses", async () => {
    const { gw, a } = await setup(client, (_b, res) => sendJson(res, 200, completion('ok')));
    const openai = { reasoningEffort: 'high', reasoningSummary: 'detailed', include: ['reasoning.encrypted_content'], store: false };
    await ai.generateText({ model: gw('acme/chat'), prompt: 'Hi', providerOptions: { openai }, maxRetries: 0 });
    const body = a.requests[0]?.body ?? {};
    expect(body).toMatchObject({ reasoning_effort: 'high', store: false });
    expect(body['reasoning_summary']).toBeUndefined();
    expect(body['include']).toBeUndefined();
  });

  it('returns the logprobs an app asked for in providerMetadata.openai.logprobs, as @ai-sdk/openai does, generated and streamed', async () => {
    const hi = { token: 'Hi', logprob: -0.25, bytes: [72, 105], top_logprobs: [{ token: 'Hi', logprob: -0.25, bytes: [72, 105] }] };
    const there = { token: ' there', logprob: -1.5, bytes: [32], top_logprobs: [] };
    const { gw, a } = await setup(client, (body, res) => {
      if (body['stream'] === true) {
        return sendStream(res, [
          chunk({ role: 'assistant', content: 'Hi' }, null, { choices: [{ index: 0, delta: { role: 'assistant', content: 'Hi' }, finish_reason: null, logprobs: { content: [hi] } }] }),
          chunk({ content: ' there' }, null, { choices: [{ index: 0, delta: { content: ' there' }, finish_reason: null, logprobs: { content: [there] } }] }),
          chunk({}, 'stop'),
          usageChunk,
        ]);
      }
      sendJson(res, 200, { ...completion(''), choices: [{ index: 0, message: { role: 'assistant', content: 'Hi there' }, finish_reason: 'stop', logprobs: { content: [hi, there] } }] });
    });
    const providerOptions = { openai: { logprobs: 1 } };
    const generated = await ai.generateText({ model: gw('acme/chat'), prompt: 'Hi', providerOptions, maxRetries: 0 });
    expect(a.requests[0]?.body).toMatchObject({ logprobs: true, top_logprobs: 1 });
    expect(generated.providerMetadata?.['openai']).toEqual({ logprobs: [hi, there] });
    const streamed = ai.streamText({ model: gw('acme/chat'), prompt: 'Hi', providerOptions, maxRetries: 0 });
    expect(await streamed.text).toBe('Hi there');
    expect((await streamed.providerMetadata)?.['openai']).toEqual({ logprobs: [hi, there] });
  });

  it('routes with providerOptions.gateway.order and reports the provider that answered', async () => {
    const { gw, a, b } = await setup(
      client,
      (_b, res) => sendJson(res, 200, completion('from alpha')),
      (_b, res) => sendJson(res, 200, completion('from beta')),
    );
    const out = await ai.generateText({ model: gw('acme/chat'), prompt: 'Hi', providerOptions: { gateway: { order: ['beta'] } }, maxRetries: 0 });
    expect(out.text).toBe('from beta');
    expect(out.providerMetadata?.['gateway']).toMatchObject({ provider: 'beta', attempts: 1 });
    expect(a.requests).toHaveLength(0);
    expect(b.requests[0]?.body['model']).toBe('up-beta');
    expect(b.requests[0]?.body['providerOptions']).toBeUndefined();
  });

  it('names in providerMetadata.gateway.routing each attempt and the provider and model that answered after a fallback, generated and streamed', async () => {
    const { gw } = await setup(
      client,
      (_b, res) => sendJson(res, 503, { error: { message: 'overloaded', type: 'api_error' } }),
      (body, res) => (body['stream'] === true ? textStream(res, ['from beta']) : sendJson(res, 200, completion('from beta'))),
    );
    const routing = {
      originalModelId: 'acme/chat',
      finalProvider: 'beta',
      finalModelId: 'acme/chat',
      attempts: [
        { provider: 'alpha', modelId: 'acme/chat', providerApiModelId: 'up-alpha', success: false, statusCode: 503 },
        { provider: 'beta', modelId: 'acme/chat', providerApiModelId: 'up-beta', success: true },
      ],
    };
    const generated = await ai.generateText({ model: gw('acme/chat'), prompt: 'Hi', maxRetries: 0 });
    expect(generated.providerMetadata?.['gateway']).toMatchObject({ modelId: 'acme/chat', provider: 'beta', attempts: 2, routing });
    const streamed = ai.streamText({ model: gw('acme/chat'), prompt: 'Hi', maxRetries: 0 });
    expect(await streamed.text).toBe('from beta');
    expect((await streamed.providerMetadata)?.['gateway']).toMatchObject({ provider: 'beta', attempts: 2, routing });
  });

  it('names the fallback model that answered in providerMetadata.gateway.routing', async () => {
    const { gw } = await setup(
      client,
      (_b, res) => sendJson(res, 500, { error: { message: 'down', type: 'api_error' } }),
      (_b, res) => sendJson(res, 200, completion('from backup')),
      { models: [{ id: 'acme/chat', endpoints: [{ provider: 'alpha', model: 'up-alpha' }] }, { id: 'acme/backup', endpoints: [{ provider: 'beta', model: 'up-backup' }] }] },
    );
    const out = await ai.generateText({ model: gw('acme/chat'), prompt: 'Hi', providerOptions: { gateway: { models: ['acme/backup'] } }, maxRetries: 0 });
    expect(out.text).toBe('from backup');
    expect(out.providerMetadata?.['gateway']).toMatchObject({
      modelId: 'acme/chat',
      provider: 'beta',
      routing: {
        originalModelId: 'acme/chat',
        finalProvider: 'beta',
        finalModelId: 'acme/backup',
        attempts: [
          { provider: 'alpha', modelId: 'acme/chat', providerApiModelId: 'up-alpha', success: false, statusCode: 500 },
          { provider: 'beta', modelId: 'acme/backup', providerApiModelId: 'up-backup', success: true },
        ],
      },
    });
  });

  it("warns of the provider options the answering provider did not get, the provider that answered after a fallback, generated and streamed", async () => {
    const { gw, b } = await setup(
      client,
      (_b, res) => sendJson(res, 503, { error: { message: 'overloaded', type: 'api_error' } }),
      (body, res) => (body['stream'] === true ? textStream(res, ['ok']) : sendJson(res, 200, completion('ok'))),
    );
    // alpha's own options, and Anthropic's, are not beta's; beta reads its own (by slug) and not openai's (by type).
    const providerOptions = { alpha: { user: 'u-alpha' }, beta: { user: 'u-beta' }, openai: { user: 'u-openai' }, anthropic: { effort: 'low' as const } };
    const warnings = ['alpha', 'openai', 'anthropic'].map((key) => ({ type: 'unsupported', feature: `providerOptions.${key}`, details: `provider beta (type openai) answered; the options for ${key} were not sent to it` }));
    const generated = await ai.generateText({ model: gw('acme/chat'), prompt: 'Hi', providerOptions, maxRetries: 0 });
    // In no particular order.
    expect(generated.warnings).toHaveLength(3);
    expect(generated.warnings).toEqual(expect.arrayContaining(warnings));
    expect(b.requests[0]?.body['user']).toBe('u-beta');
    const streamed = ai.streamText({ model: gw('acme/chat'), prompt: 'Hi', providerOptions, maxRetries: 0 });
    expect(await streamed.text).toBe('ok');
    expect(await streamed.warnings).toHaveLength(3);
    expect(await streamed.warnings).toEqual(expect.arrayContaining(warnings));
  });

  it('warns that prompt-caching breakpoints were left out for a provider that caches by itself, and not of reasoning options every provider maps', async () => {
    const { gw, a } = await setup(client, (_b, res) => sendJson(res, 200, completion('ok')));
    const out = await ai.generateText({
      model: gw('acme/chat'),
      messages: [{ role: 'user', content: 'Hi', providerOptions: { anthropic: { cacheControl: { type: 'ephemeral' } } } }],
      providerOptions: { google: { thinkingConfig: { thinkingLevel: 'low' } } },
      maxRetries: 0,
    });
    expect(a.requests[0]?.body['reasoning_effort']).toBe('low');
    expect(out.warnings).toEqual([{ type: 'unsupported', feature: 'cacheControl', details: 'provider alpha (type openai) caches prompts by itself; the prompt-caching breakpoints were left out' }]);
    expect(JSON.stringify(a.requests[0]?.body)).not.toContain('cache_control');
  });

  it.runIf(client.specVersion === '4')('warns that reasoning xhigh and max were sent as high', async () => {
    const { gw, a } = await setup(client, (_b, res) => sendJson(res, 200, completion('ok')));
    const out = await ai.generateText({ model: gw('acme/chat'), prompt: 'Hi', ...({ reasoning: 'max' } as object), maxRetries: 0 });
    expect(a.requests[0]?.body['reasoning_effort']).toBe('high');
    expect(out.warnings).toEqual([{ type: 'unsupported', feature: 'reasoning', details: 'reasoning max was sent as high, the highest effort this gateway asks of a provider' }]);
  });

  it('falls back to the next endpoint before the first stream part', async () => {
    const { gw, a, b } = await setup(
      client,
      (_b, res) => sendJson(res, 503, { error: { message: 'overloaded', type: 'api_error' } }),
      (_b, res) => textStream(res, ['from ', 'beta']),
    );
    const result = ai.streamText({ model: gw('acme/chat'), prompt: 'Hi', maxRetries: 0 });
    expect(await result.text).toBe('from beta');
    expect((await result.providerMetadata)?.['gateway']).toMatchObject({ provider: 'beta', attempts: 2 });
    expect(a.requests).toHaveLength(1);
    expect(b.requests).toHaveLength(1);
  });

  it('ends a stream cut after its first part with an error part', async () => {
    const { gw } = await setup(client, (_b, res) => {
      res.writeHead(200, { 'content-type': 'text/event-stream' });
      res.write(`data: ${JSON.stringify(chunk({ role: 'assistant', content: 'partial' }))}\n\n`);
      setTimeout(() => res.socket?.destroy(), 30);
    });
    const errors: unknown[] = [];
    const result = ai.streamText({ model: gw('acme/chat'), prompt: 'Hi', maxRetries: 0, onError: ({ error }) => void errors.push(error) });
    const parts: Array<{ type: string; error?: unknown }> = [];
    for await (const part of result.fullStream) parts.push(part);
    const failed = parts.find((p) => p.type === 'error');
    expect(failed?.error).toMatchObject({ type: 'internal_server_error', statusCode: 502 });
    expect(parts.some((p) => p.type === 'text-delta')).toBe(true);
  });

  it('records a SERVER span for the route and a CLIENT span per attempt', async () => {
    const { gw } = await setup(client, (_b, res) => sendJson(res, 200, completion('ok')));
    await ai.generateText({ model: gw('acme/chat'), prompt: 'Hi', maxRetries: 0 });
    const spans = await (gateway as Gateway).spans(2);
    const server = spans.find((s) => s.name === 'POST /v1/ai/language-model');
    const attempt = spans.find((s) => s.name === 'chat up-alpha');
    expect(attr(server, 'sluice.model')).toBe('acme/chat');
    expect(attr(server, 'sluice.provider')).toBe('alpha');
    expect(attr(attempt, 'gen_ai.operation.name')).toBe('chat');
    expect(attr(attempt, 'gen_ai.usage.input_tokens')).toBe(11);
  });

  it('lists the catalog through getAvailableModels with pricing and model types', async () => {
    const { gw } = await setup(client, (_b, res) => sendJson(res, 200, completion('unused')));
    const { models } = await gw.getAvailableModels();
    expect(models).toEqual([
      {
        id: 'acme/chat',
        name: 'Acme Chat',
        description: 'A test model',
        pricing: { input: '0.000001', output: '0.000002', cachedInputTokens: '0.0000005' },
        specification: { specificationVersion: client.specVersion === '3' ? 'v3' : 'v4', provider: 'acme', modelId: 'chat' },
        modelType: 'language',
      },
      { id: 'acme/embed', name: 'acme/embed', description: null, pricing: { input: '0.0000001', output: '0' }, specification: { specificationVersion: client.specVersion === '3' ? 'v3' : 'v4', provider: 'acme', modelId: 'embed' }, modelType: 'embedding' },
    ]);
  });

  describe('errors', () => {
    it('maps a wrong key to GatewayAuthenticationError', async () => {
      const { a } = await setup(client, (_b, res) => sendJson(res, 200, completion('unused')));
      const gw = ai.createGateway({ baseURL: `${(gateway as Gateway).baseURL}/ai`, apiKey: 'sk-wrong' });
      const error = await ai.generateText({ model: gw('acme/chat'), prompt: 'Hi', maxRetries: 0 }).catch((err: unknown) => err);
      expect(error).toMatchObject({ name: 'GatewayAuthenticationError' });
      expect(a.requests).toHaveLength(0);
    });

    it('maps every provider refusing the gateway credentials to GatewayFailedDependencyError with their message, not to an authentication error', async () => {
      const { gw } = await setup(
        client,
        (_b, res) => sendJson(res, 401, { error: { message: 'Incorrect API key provided: sk-up***', type: 'invalid_request_error', code: 'invalid_api_key' } }),
        (_b, res) => sendJson(res, 403, { error: { message: 'Your key has no access to up-beta', type: 'permission_error' } }),
      );
      const generated = await ai.generateText({ model: gw('acme/chat'), prompt: 'Hi', maxRetries: 0 }).catch((err: unknown) => err);
      expect(generated).toMatchObject({ name: 'GatewayFailedDependencyError', statusCode: 424 });
      expect((generated as Error).message).toBe(`Provider beta refused this gateway's credentials (HTTP 403): Your key has no access to up-beta [${(generated as { generationId: string }).generationId}]`);
      const streamed = await ai.streamText({ model: gw('acme/chat'), prompt: 'Hi', maxRetries: 0, providerOptions: { gateway: { only: ['alpha'] } }, onError: () => {} }).fullStream;
      const errors: unknown[] = [];
      for await (const part of streamed) if (part.type === 'error') errors.push(part.error);
      expect(errors).toMatchObject([{ name: 'GatewayFailedDependencyError', statusCode: 424, message: expect.stringMatching(/^Provider alpha refused this gateway's credentials \(HTTP 401\): Incorrect API key provided: sk-up\*\*\* \[gen_\w+\]$/) }]);
    });

    it('maps an unknown model to GatewayModelNotFoundError with its id', async () => {
      const { gw } = await setup(client, (_b, res) => sendJson(res, 200, completion('unused')));
      const error = await ai.generateText({ model: gw('acme/nope'), prompt: 'Hi', maxRetries: 0 }).catch((err: unknown) => err);
      expect(error).toMatchObject({ name: 'GatewayModelNotFoundError', modelId: 'acme/nope', statusCode: 404 });
    });

    it('maps a key over its rate to GatewayRateLimitError', async () => {
      const { gw } = await setup(client, (_b, res) => sendJson(res, 200, completion('ok')), undefined, { api_keys: [{ key: API_KEY, requests_per_minute: 1 }] });
      await ai.generateText({ model: gw('acme/chat'), prompt: 'Hi', maxRetries: 0 });
      const error = await ai.generateText({ model: gw('acme/chat'), prompt: 'Hi', maxRetries: 0 }).catch((err: unknown) => err);
      expect(error).toMatchObject({ name: 'GatewayRateLimitError', statusCode: 429 });
    });

    it('maps a part no provider can take to GatewayInvalidRequestError naming it', async () => {
      const { gw, a } = await setup(client, (_b, res) => sendJson(res, 200, completion('unused')));
      const error = await ai
        .generateText({ model: gw('acme/chat'), maxRetries: 0, messages: [{ role: 'user', content: [{ type: 'file', data: Buffer.from('%PDF-1.4'), mediaType: 'application/pdf' }] }] })
        .catch((err: unknown) => err);
      expect(error).toMatchObject({ name: 'GatewayInvalidRequestError', statusCode: 400 });
      expect((error as Error).message).toContain('prompt[0].content[0]');
      expect(a.requests).toHaveLength(0);
    });

    it('maps an embedding model asked for text to GatewayInvalidRequestError', async () => {
      const { gw } = await setup(client, (_b, res) => sendJson(res, 200, completion('unused')));
      const error = await ai.generateText({ model: gw('acme/embed'), prompt: 'Hi', maxRetries: 0 }).catch((err: unknown) => err);
      expect(error).toMatchObject({ name: 'GatewayInvalidRequestError' });
    });

    it('maps an upstream that does not know the model to GatewayModelNotFoundError with the requested id', async () => {
      const { gw } = await setup(client, (_b, res) => sendJson(res, 404, { error: { message: 'The model up-alpha does not exist', type: 'invalid_request_error', code: 'model_not_found', param: null } }));
      const error = await ai.generateText({ model: gw('acme/chat'), prompt: 'Hi', maxRetries: 0 }).catch((err: unknown) => err);
      expect(error).toMatchObject({ name: 'GatewayModelNotFoundError', modelId: 'acme/chat', statusCode: 404 });
    });

    it('refuses model kinds it does not serve with GatewayInvalidRequestError', async () => {
      const { gw } = await setup(client, (_b, res) => sendJson(res, 200, completion('unused')));
      const error = await ai.generateImage({ model: gw.imageModel('acme/image'), prompt: 'a cat', maxRetries: 0 }).catch((err: unknown) => err);
      expect(error).toMatchObject({ name: 'GatewayInvalidRequestError', statusCode: 404 });
    });

    it('names the failed generation in the error body, where the client reads generationId, and /v1/generation knows it', async () => {
      const { gw } = await setup(client, (_b, res) => sendJson(res, 500, { error: { message: 'boom', type: 'server_error' } }));
      const error = await ai.generateText({ model: gw('acme/chat'), prompt: 'Hi', maxRetries: 0 }).catch((err: unknown) => err);
      const generationId = (error as { generationId?: string }).generationId;
      expect(generationId).toMatch(/^gen_/);
      expect(error).toMatchObject({ name: 'GatewayInternalServerError', message: `boom [${generationId}]` });
      expect(await gw.getGenerationInfo({ id: generationId ?? '' })).toMatchObject({ id: generationId, model: 'acme/chat', providerName: 'beta' });
    });

    it('maps every endpoint failing to an internal server error with the upstream status', async () => {
      const { gw } = await setup(client, (_b, res) => sendJson(res, 500, { error: { message: 'boom', type: 'server_error' } }));
      const error = await ai.generateText({ model: gw('acme/chat'), prompt: 'Hi', maxRetries: 0 }).catch((err: unknown) => err);
      expect(error).toMatchObject({ name: 'GatewayInternalServerError', statusCode: 500 });
    });
  });
});
