import { afterEach, describe, expect, it } from 'vitest';
import { startSilentServer } from '../../../../helpers/silent-server.js';
import { googleAdapter } from '../../../../../src/receivers/gateway/providers/google/index.js';
import { ProviderRequestError } from '../../../../../src/receivers/gateway/providers/shared/inputs.js';
import { UpstreamStreamError } from '../../../../../src/receivers/gateway/providers/shared/types.js';
import { assemble, complete, context, json, JPEG_BASE64, PNG_BASE64, PNG_DATA_URL, servePng, startFake, stream, type FakeUpstream, type Handler, type Seen } from '../shared/fake-upstream.js';
import { response, sendResponse, sendStream, usageMetadata } from './fixtures.js';
import { generateContentRequest, validateGemini, type GenerateContentRequest } from './wire-schema.js';
import { OPENAI_ONLY, OPENAI_ONLY_NEUTRAL } from '../shared/openai-only.js';

let fake: FakeUpstream | undefined;

afterEach(async () => {
  const problems = fake?.problems ?? [];
  await fake?.close();
  fake = undefined;
  expect(problems).toEqual([]);
});

async function setup(handler: Handler, extra: Record<string, unknown> = {}) {
  fake = await startFake(validateGemini, handler);
  return context(googleAdapter, { type: 'google', base_url: fake.url, api_key: 'gm-test-key', ...extra }, 'gemini-test');
}

function sent(index = 0): GenerateContentRequest {
  return generateContentRequest.parse(fake?.requests.filter((r) => !r.path.startsWith('/images/'))[index]?.body);
}

const weatherTool = { type: 'function' as const, function: { name: 'get_weather', description: 'Weather for a city', parameters: { type: 'object', properties: { city: { type: 'string' } }, required: ['city'] } } };
const SIGNATURE = 'c2lnbmF0dXJlLW9mLXRoZS10aG91Z2h0cw==';
const GIF_BASE64 = 'R0lGODlhAQABAIAAAP///wAAACH5BAEAAAAALAAAAAABAAEAAAICRAEAOw==';


describe('google adapter', () => {
  it('maps a plain text exchange, system text and generation settings', async () => {
    const ctx = await setup((_seen, res) => sendResponse(res, [{ text: 'Hello ' }, { text: 'there' }]));
    const out = await complete(googleAdapter, ctx, {
      messages: [
        { role: 'system', content: 'Be brief.' },
        { role: 'user', content: 'Hi' },
        { role: 'user', content: 'Anyone there?' },
      ],
      temperature: 1.5,
      top_p: 0.9,
      max_tokens: 100,
      stop: ['END'],
      seed: 7,
    });
    expect(fake?.requests[0]?.path).toBe('/v1beta/models/gemini-test:generateContent');
    expect(out).toMatchObject({ ok: true, completion: { id: 'resp-1', model: 'gemini-test-001', choices: [{ message: { role: 'assistant', content: 'Hello there' }, finish_reason: 'stop' }], usage: { prompt_tokens: 20, completion_tokens: 8, total_tokens: 28 } } });
    expect(sent()).toEqual({
      contents: [{ role: 'user', parts: [{ text: 'Hi' }, { text: 'Anyone there?' }] }],
      systemInstruction: { parts: [{ text: 'Be brief.' }] },
      generationConfig: { temperature: 1.5, topP: 0.9, seed: 7, maxOutputTokens: 100, stopSequences: ['END'] },
    });
  });

  it('maps both penalties to generationConfig and refuses token biases, which Gemini has no setting for', async () => {
    const ctx = await setup((_seen, res) => sendResponse(res, [{ text: 'ok' }]));
    await complete(googleAdapter, ctx, { messages: [{ role: 'user', content: 'a' }], presence_penalty: 0.5, frequency_penalty: -0.5, seed: 3, logit_bias: {} });
    expect(sent().generationConfig).toEqual({ presencePenalty: 0.5, frequencyPenalty: -0.5, seed: 3 });
    await expect(googleAdapter.buildRequest({ model: 'm', messages: [{ role: 'user', content: 'a' }], logit_bias: { '50256': 5 } }, ctx)).rejects.toThrow(/^logit_bias: /);
    expect(fake?.requests).toHaveLength(1);
  });

  it('passes over parts that are not objects, text that is not a string and calls without a name, and counts usage that is not a non-negative integer as 0', async () => {
    const ctx = await setup((_seen, res) => sendResponse(res, [null, { text: 5 }, { functionCall: { name: 7 } }, { text: 'ok' }], 'STOP', { usageMetadata: { promptTokenCount: -1, candidatesTokenCount: 'many', totalTokenCount: 2.5 } }));
    const out = await complete(googleAdapter, ctx, { messages: [{ role: 'user', content: 'Hi' }] });
    expect(out).toMatchObject({ ok: true, completion: { choices: [{ message: { content: 'ok' }, finish_reason: 'stop' }], usage: { prompt_tokens: 0, completion_tokens: 0, total_tokens: 0 } } });
  });

  it('maps usageMetadata with cached and thinking tokens', async () => {
    const ctx = await setup((_seen, res) => sendResponse(res, [{ text: 'ok' }], 'STOP', { usageMetadata: { promptTokenCount: 100, cachedContentTokenCount: 60, candidatesTokenCount: 10, thoughtsTokenCount: 30, totalTokenCount: 140 } }));
    const out = await complete(googleAdapter, ctx, { messages: [{ role: 'user', content: 'a' }] });
    expect(out.ok && out.completion.usage).toEqual({ prompt_tokens: 100, completion_tokens: 40, total_tokens: 140, prompt_tokens_details: { cached_tokens: 60 }, completion_tokens_details: { reasoning_tokens: 30 } });
  });

  it.each([
    ['STOP', 'stop'],
    ['MAX_TOKENS', 'length'],
    ['SAFETY', 'content_filter'],
    ['RECITATION', 'content_filter'],
    ['PROHIBITED_CONTENT', 'content_filter'],
    ['IMAGE_PROHIBITED_CONTENT', 'content_filter'],
    ['IMAGE_RECITATION', 'content_filter'],
    ['OTHER', 'stop'],
  ])('maps finishReason %s to %s', async (reason, finish) => {
    const ctx = await setup((_seen, res) => sendResponse(res, [{ text: 'x' }], reason));
    const out = await complete(googleAdapter, ctx, { messages: [{ role: 'user', content: 'a' }] });
    expect(out.ok && out.completion.choices[0]?.finish_reason).toBe(finish);
  });

  it('answers a blocked prompt (no candidates) with content_filter', async () => {
    const ctx = await setup((_seen, res) => json(res, 200, { promptFeedback: { blockReason: 'SAFETY' }, usageMetadata }));
    const out = await complete(googleAdapter, ctx, { messages: [{ role: 'user', content: 'a' }] });
    expect(out.ok && out.completion.choices[0]).toMatchObject({ message: { content: '' }, finish_reason: 'content_filter' });
  });

  it('answers a blocked prompt with one content_filter choice per candidate asked for, whole and streamed', async () => {
    const blocked = { promptFeedback: { blockReason: 'SAFETY' }, usageMetadata };
    const ctx = await setup((seen, res) => (seen.path.includes('stream') ? sendStream(res, [blocked]) : json(res, 200, blocked)));
    const out = await complete(googleAdapter, ctx, { messages: [{ role: 'user', content: 'a' }], n: 3 });
    expect(out.ok && out.completion.choices.map((choice) => [choice.index, choice.message.content, choice.finish_reason])).toEqual([
      [0, '', 'content_filter'],
      [1, '', 'content_filter'],
      [2, '', 'content_filter'],
    ]);
    const { chunks, error } = await stream(googleAdapter, ctx, { messages: [{ role: 'user', content: 'a' }], n: 3 });
    expect(error).toBeUndefined();
    expect(chunks.flatMap((c) => c.choices.map((choice) => [choice.index, choice.finish_reason]))).toEqual([
      [0, 'content_filter'],
      [1, 'content_filter'],
      [2, 'content_filter'],
    ]);
    expect(chunks.at(-1)).toMatchObject({ choices: [], usage: { total_tokens: 28 } });
  });

  it('maps tools, cleans their schemas for Gemini and maps tool_choice', async () => {
    const ctx = await setup((_seen, res) => sendResponse(res, [{ text: 'x' }]));
    const parameters = {
      $schema: 'http://json-schema.org/draft-07/schema#',
      type: 'object',
      additionalProperties: false,
      properties: {
        city: { type: 'string', description: 'City', default: 'Paris', format: 'email', examples: ['Rome'] },
        unit: { type: ['string', 'null'], enum: ['C', 'F'] },
        mode: { const: 'fast' },
        days: { type: 'integer', minimum: 1, maximum: 7, format: 'int32' },
        place: { $ref: '#/$defs/place', description: 'Where' },
        tags: { type: 'array', items: { anyOf: [{ type: 'string' }, { type: 'number' }] } },
      },
      required: ['city', 'ghost'],
      $defs: { place: { type: 'object', properties: { lat: { type: 'number' } }, additionalProperties: false } },
    };
    await complete(googleAdapter, ctx, {
      messages: [{ role: 'user', content: 'a' }],
      tools: [{ type: 'function', function: { name: 'get_weather', description: 'Weather', parameters } }, { type: 'function', function: { name: 'now', parameters: { type: 'object', properties: {} } } }],
      tool_choice: { type: 'function', function: { name: 'get_weather' } },
    });
    expect(sent().tools).toEqual([
      {
        functionDeclarations: [
          {
            name: 'get_weather',
            description: 'Weather',
            parameters: {
              type: 'OBJECT',
              properties: {
                city: { type: 'STRING', description: 'City' },
                unit: { type: 'STRING', nullable: true, enum: ['C', 'F'] },
                mode: { type: 'STRING', enum: ['fast'] },
                days: { type: 'INTEGER', minimum: 1, maximum: 7, format: 'int32' },
                place: { type: 'OBJECT', description: 'Where', properties: { lat: { type: 'NUMBER' } } },
                tags: { type: 'ARRAY', items: { anyOf: [{ type: 'STRING' }, { type: 'NUMBER' }] } },
              },
              required: ['city'],
            },
          },
          { name: 'now' },
        ],
      },
    ]);
    expect(sent().toolConfig).toEqual({ functionCallingConfig: { mode: 'ANY', allowedFunctionNames: ['get_weather'] } });
  });

  it('sends a schema holding an object without properties (a map, a cycle), which the OpenAPI subset cannot say, as JSON Schema', async () => {
    const ctx = await setup((_seen, res) => sendResponse(res, [{ text: '{}' }]));
    const parameters = {
      type: 'object',
      properties: {
        labels: { type: 'object', additionalProperties: { type: 'string' }, description: 'Free-form labels' },
        place: { $ref: '#/definitions/place', description: 'Where' },
      },
      required: ['labels'],
      definitions: { place: { type: 'object', properties: { lat: { type: 'number' }, next: { $ref: '#/definitions/place' } } } },
    };
    const jsonSchema = {
      type: 'object',
      properties: {
        labels: { type: 'object', additionalProperties: { type: 'string' }, description: 'Free-form labels' },
        place: { $ref: '#/$defs/place' },
      },
      required: ['labels'],
      $defs: { place: { type: 'object', properties: { lat: { type: 'number' }, next: { $ref: '#/$defs/place' } } } },
    };
    await complete(googleAdapter, ctx, { messages: [{ role: 'user', content: 'a' }], tools: [{ type: 'function', function: { name: 'tag', parameters } }, weatherTool] });
    await complete(googleAdapter, ctx, { messages: [{ role: 'user', content: 'a' }], response_format: { type: 'json_schema', json_schema: { name: 'x', schema: parameters } } });
    expect(sent(0).tools?.[0]?.functionDeclarations).toEqual([
      { name: 'tag', parametersJsonSchema: jsonSchema },
      { name: 'get_weather', description: 'Weather for a city', parameters: { type: 'OBJECT', properties: { city: { type: 'STRING' } }, required: ['city'] } },
    ]);
    expect(sent(1).generationConfig).toEqual({ responseMimeType: 'application/json', responseJsonSchema: jsonSchema });
  });

  it('maps the null variant of anyOf (Pydantic Optional) to nullable, inlining the one variant left', async () => {
    const ctx = await setup((_seen, res) => sendResponse(res, [{ text: 'x' }]));
    const parameters = {
      type: 'object',
      properties: {
        note: { anyOf: [{ type: 'string' }, { type: 'null' }], default: null, description: 'A note' },
        place: { anyOf: [{ $ref: '#/$defs/place' }, { type: 'null' }] },
        value: { anyOf: [{ type: 'string' }, { type: 'number' }, { type: 'null' }] },
        nothing: { type: 'null' },
      },
      $defs: { place: { type: 'object', properties: { lat: { type: 'number' } } } },
    };
    await complete(googleAdapter, ctx, { messages: [{ role: 'user', content: 'a' }], tools: [{ type: 'function', function: { name: 'save', parameters } }] });
    expect(sent().tools?.[0]?.functionDeclarations[0]?.parameters).toEqual({
      type: 'OBJECT',
      properties: {
        note: { type: 'STRING', nullable: true, description: 'A note' },
        place: { type: 'OBJECT', nullable: true, properties: { lat: { type: 'NUMBER' } } },
        value: { nullable: true, anyOf: [{ type: 'STRING' }, { type: 'NUMBER' }] },
        nothing: { type: 'STRING', nullable: true },
      },
    });
  });

  it('gives every schema node the type Gemini requires, merging allOf and inferring the rest, rather than send one it refuses', async () => {
    const ctx = await setup((_seen, res) => sendResponse(res, [{ text: 'x' }]));
    const parameters = {
      type: 'object',
      properties: {
        value: { description: 'Any JSON value' },
        flag: true,
        target: { allOf: [{ $ref: '#/$defs/place' }, { type: 'object', properties: { name: { type: 'string' } }, required: ['name'] }], description: 'Where' },
        filter: { properties: { q: { type: 'string' } }, required: ['q'] },
        ids: { items: { type: 'integer' } },
        anything: { type: 'array' },
        level: { enum: [1, 2, 3] },
        ratio: { enum: [0.5, 1] },
        strict: { const: true },
        color: { enum: ['red', 'green', null] },
        size: { type: 'string', properties: { x: { type: 'string' } } },
      },
      anyOf: [{ required: ['value'] }, { required: ['filter'] }],
      $defs: { place: { type: 'object', properties: { lat: { type: 'number' } }, required: ['lat'] } },
    };
    const out = await complete(googleAdapter, ctx, { messages: [{ role: 'user', content: 'a' }], tools: [{ type: 'function', function: { name: 'find', parameters } }] });
    expect(out.ok).toBe(true);
    expect(sent().tools?.[0]?.functionDeclarations[0]?.parameters).toEqual({
      type: 'OBJECT',
      properties: {
        value: { type: 'STRING', description: 'Any JSON value' },
        flag: { type: 'STRING' },
        target: { type: 'OBJECT', description: 'Where', properties: { lat: { type: 'NUMBER' }, name: { type: 'STRING' } }, required: ['lat', 'name'] },
        filter: { type: 'OBJECT', properties: { q: { type: 'STRING' } }, required: ['q'] },
        ids: { type: 'ARRAY', items: { type: 'INTEGER' } },
        anything: { type: 'ARRAY', items: { type: 'STRING' } },
        level: { type: 'INTEGER' },
        ratio: { type: 'NUMBER' },
        strict: { type: 'BOOLEAN' },
        color: { type: 'STRING', enum: ['red', 'green'], nullable: true },
        size: { type: 'STRING' },
      },
    });
  });

  it.each([
    ['auto', 'AUTO'],
    ['none', 'NONE'],
    ['required', 'ANY'],
  ] as const)('maps tool_choice %s to %s', async (choice, mode) => {
    const ctx = await setup((_seen, res) => sendResponse(res, [{ text: 'x' }]));
    await complete(googleAdapter, ctx, { messages: [{ role: 'user', content: 'a' }], tools: [weatherTool], tool_choice: choice });
    expect(sent().toolConfig).toEqual({ functionCallingConfig: { mode } });
  });

  it('maps parallel function calls to tool_calls and echoes their thoughtSignature in the next request', async () => {
    const ctx = await setup((seen, res) => {
      if (sentCount(seen) === 1) {
        sendResponse(res, [
          { functionCall: { name: 'get_weather', args: { city: 'Paris' } }, thoughtSignature: SIGNATURE },
          { functionCall: { name: 'get_weather', args: { city: 'Rome' } } },
        ]);
      } else sendResponse(res, [{ text: 'Sunny in both.' }]);
    });
    const first = await complete(googleAdapter, ctx, { messages: [{ role: 'user', content: 'Weather in Paris and Rome?' }], tools: [weatherTool] });
    if (!first.ok) throw new Error('expected a completion');
    const choice = first.completion.choices[0];
    expect(choice?.finish_reason).toBe('tool_calls');
    expect(choice?.message.content).toBeNull();
    const calls = choice?.message.tool_calls ?? [];
    expect(calls.map((c) => (c.type === 'function' ? [c.function.name, c.function.arguments] : c))).toEqual([['get_weather', '{"city":"Paris"}'], ['get_weather', '{"city":"Rome"}']]);
    expect(new Set(calls.map((c) => c.id)).size).toBe(2);

    await complete(googleAdapter, ctx, {
      messages: [
        { role: 'user', content: 'Weather in Paris and Rome?' },
        { role: 'assistant', content: null, tool_calls: calls },
        { role: 'tool', tool_call_id: calls[0]?.id ?? '', content: '{"temp": 18}' },
        { role: 'tool', tool_call_id: calls[1]?.id ?? '', content: '21C' },
      ],
      tools: [weatherTool],
    });
    expect(sent(1).contents).toEqual([
      { role: 'user', parts: [{ text: 'Weather in Paris and Rome?' }] },
      {
        role: 'model',
        parts: [
          { functionCall: { name: 'get_weather', args: { city: 'Paris' } }, thoughtSignature: SIGNATURE },
          { functionCall: { name: 'get_weather', args: { city: 'Rome' } } },
        ],
      },
      {
        role: 'user',
        parts: [{ functionResponse: { name: 'get_weather', response: { temp: 18 } } }, { functionResponse: { name: 'get_weather', response: { output: '21C' } } }],
      },
    ]);
  });

  it('echoes the id Gemini 3 gives each function call on the call and on its functionResponse, in whatever order the results come', async () => {
    const ctx = await setup((seen, res) => {
      if (sentCount(seen) > 1) return sendResponse(res, [{ text: 'Sunny in both.' }]);
      sendResponse(res, [
        { functionCall: { id: 'fc-paris', name: 'get_weather', args: { city: 'Paris' } }, thoughtSignature: SIGNATURE },
        { functionCall: { id: 'fc-rome', name: 'get_weather', args: { city: 'Rome' } } },
      ]);
    });
    const first = await complete(googleAdapter, { ...ctx, model: 'gemini-3-pro-preview' }, { messages: [{ role: 'user', content: 'Weather in Paris and Rome?' }], tools: [weatherTool] });
    if (!first.ok) throw new Error('expected a completion');
    const calls = first.completion.choices[0]?.message.tool_calls ?? [];
    expect(calls.every((c) => /^[\w-]+(\.[\w+/=]+)?$/.test(c.id))).toBe(true);

    const out = await complete(googleAdapter, { ...ctx, model: 'gemini-3-pro-preview' }, {
      messages: [
        { role: 'user', content: 'Weather in Paris and Rome?' },
        { role: 'assistant', content: null, tool_calls: calls },
        { role: 'tool', tool_call_id: calls[1]?.id ?? '', content: '21C' },
        { role: 'tool', tool_call_id: calls[0]?.id ?? '', content: '18C' },
      ],
      tools: [weatherTool],
    });
    expect(out.ok).toBe(true);
    expect(sent(1).contents.slice(1)).toEqual([
      {
        role: 'model',
        parts: [
          { functionCall: { id: 'fc-paris', name: 'get_weather', args: { city: 'Paris' } }, thoughtSignature: SIGNATURE },
          { functionCall: { id: 'fc-rome', name: 'get_weather', args: { city: 'Rome' } } },
        ],
      },
      {
        role: 'user',
        parts: [
          { functionResponse: { id: 'fc-rome', name: 'get_weather', response: { output: '21C' } } },
          { functionResponse: { id: 'fc-paris', name: 'get_weather', response: { output: '18C' } } },
        ],
      },
    ]);
  });

  it('signs replayed tool calls another provider minted with the documented placeholder, for Gemini 3 only', async () => {
    const ctx = await setup((_seen, res) => sendResponse(res, [{ text: 'ok' }]));
    const messages = [
      { role: 'user' as const, content: 'Weather?' },
      {
        role: 'assistant' as const,
        content: null,
        tool_calls: [
          { id: 'toolu_a', type: 'function' as const, function: { name: 'get_weather', arguments: '{"city":"Paris"}' } },
          { id: 'toolu_b', type: 'function' as const, function: { name: 'get_weather', arguments: '{"city":"Rome"}' } },
        ],
      },
      { role: 'tool' as const, tool_call_id: 'toolu_a', content: '18C' },
      { role: 'tool' as const, tool_call_id: 'toolu_b', content: '21C' },
    ];
    await complete(googleAdapter, { ...ctx, model: 'gemini-3-pro-preview' }, { messages, tools: [weatherTool] });
    await complete(googleAdapter, { ...ctx, model: 'gemini-2.5-flash' }, { messages, tools: [weatherTool] });
    expect(sent(0).contents[1]?.parts.map((p) => p.thoughtSignature)).toEqual(['skip_thought_signature_validator', undefined]);
    expect(sent(1).contents[1]?.parts.map((p) => p.thoughtSignature)).toEqual([undefined, undefined]);
  });

  it('refuses a request with none but system messages, which Gemini cannot take without contents, naming messages', async () => {
    const ctx = await setup((_seen, res) => sendResponse(res, [{ text: 'x' }]));
    await expect(googleAdapter.buildRequest({ model: 'm', messages: [{ role: 'system', content: 'Write a title.' }, { role: 'user', content: '' }] }, ctx)).rejects.toThrow(/^messages: provider type google needs a user or assistant message/);
  });

  it('rejects a tool result whose tool_call_id no assistant message issued', async () => {
    const ctx = await setup(() => undefined);
    await expect(googleAdapter.buildRequest({ model: 'm', messages: [{ role: 'user', content: 'a' }, { role: 'tool', tool_call_id: 'nope', content: 'x' }] }, ctx)).rejects.toThrow(/messages\[1\]\.tool_call_id/);
  });

  it('inlines a data URL image and fetches an http URL image', async () => {
    const ctx = await setup((seen, res) => (seen.path.startsWith('/images/') ? servePng(res) : sendResponse(res, [{ text: 'Two pixels.' }])), { image_fetch: { allow_private_addresses: true } });
    await complete(googleAdapter, ctx, {
      messages: [{ role: 'user', content: [{ type: 'text', text: 'Compare' }, { type: 'image_url', image_url: { url: PNG_DATA_URL } }, { type: 'image_url', image_url: { url: `${fake?.url}/images/dot.png` } }] }],
    });
    expect(sent().contents[0]?.parts).toEqual([{ text: 'Compare' }, { inlineData: { mimeType: 'image/png', data: PNG_BASE64 } }, { inlineData: { mimeType: 'image/png', data: PNG_BASE64 } }]);
  });

  it('sends image/jpg, from a data URL or an image server, as image/jpeg, the type Gemini takes', async () => {
    const ctx = await setup(
      (seen, res) => {
        if (!seen.path.startsWith('/images/')) return sendResponse(res, [{ text: 'Two photos.' }]);
        res.writeHead(200, { 'content-type': 'image/jpg' });
        res.end(Buffer.from(JPEG_BASE64, 'base64'));
      },
      { image_fetch: { allow_private_addresses: true } },
    );
    const out = await complete(googleAdapter, ctx, {
      messages: [{ role: 'user', content: [{ type: 'image_url', image_url: { url: `data:image/JPG;base64,${JPEG_BASE64}` } }, { type: 'image_url', image_url: { url: `${fake?.url}/images/photo.jpg` } }] }],
    });
    expect(out.ok).toBe(true);
    expect(sent().contents[0]?.parts).toEqual([{ inlineData: { mimeType: 'image/jpeg', data: JPEG_BASE64 } }, { inlineData: { mimeType: 'image/jpeg', data: JPEG_BASE64 } }]);
  });

  it('refuses a GIF, which Gemini cannot read, naming the image, so that another provider type may take it', async () => {
    const ctx = await setup(
      (seen, res) => {
        if (!seen.path.startsWith('/images/')) return sendResponse(res, [{ text: 'x' }]);
        res.writeHead(200, { 'content-type': 'image/gif' });
        res.end(Buffer.from(GIF_BASE64, 'base64'));
      },
      { image_fetch: { allow_private_addresses: true } },
    );
    for (const url of [`data:image/gif;base64,${GIF_BASE64}`, `${fake?.url}/images/dot.gif`]) {
      const request = { model: 'm', messages: [{ role: 'user' as const, content: [{ type: 'text' as const, text: 'What is this?' }, { type: 'image_url' as const, image_url: { url } }] }] };
      const refusal = googleAdapter.buildRequest(request, ctx);
      await expect(refusal).rejects.toBeInstanceOf(ProviderRequestError);
      await expect(refusal).rejects.toThrow('messages[0].content[1].image_url.url: image/gif is not supported by provider type google');
    }
    expect(fake?.requests.filter((r) => !r.path.startsWith('/images/'))).toEqual([]);
  });

  it('refuses OpenAI-only parameters that change the answer and lets their neutral values through', async () => {
    const ctx = await setup((_seen, res) => json(res, 200, { candidates: [{ content: { role: 'model', parts: [{ text: 'ok' }] }, finishReason: 'STOP' }] }));
    for (const params of OPENAI_ONLY) {
      await expect(googleAdapter.buildRequest({ model: 'm', messages: [{ role: 'user', content: 'a' }], ...params }, ctx)).rejects.toThrow(new RegExp(`^${Object.keys(params)[0]}: `));
    }
    expect((await complete(googleAdapter, ctx, { messages: [{ role: 'user', content: 'a' }], ...OPENAI_ONLY_NEUTRAL })).ok).toBe(true);
  });

  it('refuses to fetch images from loopback addresses, by IP or by name, unless allowed', async () => {
    const ctx = await setup((seen, res) => (seen.path.startsWith('/images/') ? servePng(res) : sendResponse(res, [{ text: 'x' }])));
    const port = new URL(fake?.url ?? '').port;
    for (const host of ['127.0.0.1', 'localhost', '[::1]']) {
      const request = { model: 'm', messages: [{ role: 'user' as const, content: [{ type: 'image_url' as const, image_url: { url: `http://${host}:${port}/images/dot.png` } }] }] };
      await expect(googleAdapter.buildRequest(request, ctx)).rejects.toThrow(ProviderRequestError);
    }
    expect(fake?.requests).toHaveLength(0);
  });

  it('does not tell the client which non-public address a host name resolves to', async () => {
    // The gateway's resolver answers for its own network: what it says of internal names maps that network.
    const ctx = await setup(() => undefined);
    const request = { model: 'm', messages: [{ role: 'user' as const, content: [{ type: 'image_url' as const, image_url: { url: 'http://localhost:1/dot.png' } }] }] };
    const err = await Promise.resolve(googleAdapter.buildRequest(request, ctx)).catch((e: unknown) => e);
    expect(err).toBeInstanceOf(ProviderRequestError);
    expect((err as Error).message).toContain('localhost resolves to a non-public address');
    expect((err as Error).message).not.toMatch(/127\.0\.0\.1|::1/);
  });

  it('refuses images over image_fetch.max_size and slower than image_fetch.timeout', async () => {
    const ctx = await setup(
      (seen, res) => {
        if (seen.path === '/images/big.png') {
          res.writeHead(200, { 'content-type': 'image/png' });
          res.end(Buffer.alloc(4096));
        } else if (seen.path === '/images/slow.png') setTimeout(() => servePng(res), 2_000);
        else if (seen.path === '/images/stalls.png') {
          // The headers come at once; the body stops after its first byte.
          res.writeHead(200, { 'content-type': 'image/png' });
          res.write(Buffer.alloc(1));
          setTimeout(() => res.end(), 2_000);
        } else if (seen.path === '/images/cut.png') {
          res.writeHead(200, { 'content-type': 'image/png', 'content-length': '512' });
          res.write(Buffer.alloc(1), () => res.socket?.destroy());
        } else if (seen.path === '/images/page.html') json(res, 200, {});
      },
      { image_fetch: { allow_private_addresses: true, max_size: '1KiB', timeout: '200ms' } },
    );
    const build = (path: string) => googleAdapter.buildRequest({ model: 'm', messages: [{ role: 'user', content: [{ type: 'image_url', image_url: { url: `${fake?.url}${path}` } }] }] }, ctx);
    await expect(build('/images/big.png')).rejects.toThrow(/max_size/);
    await expect(build('/images/slow.png')).rejects.toThrow(ProviderRequestError);
    // A body that fails after the headers is the image's failure too (a 400 naming the part), not the provider's.
    await expect(build('/images/stalls.png')).rejects.toThrow(ProviderRequestError);
    await expect(build('/images/stalls.png')).rejects.toThrow(/image could not be fetched/);
    await expect(build('/images/cut.png')).rejects.toThrow(/image could not be fetched/);
    await expect(build('/images/page.html')).rejects.toThrow(/not image/);
  });

  it('refuses a request whose images pass image_fetch.max_total_size together, each of them under max_size', async () => {
    const ctx = await setup(
      (seen, res) => {
        if (!seen.path.startsWith('/images/')) return sendResponse(res, [{ text: 'ok' }]);
        res.writeHead(200, { 'content-type': 'image/png' });
        res.end(Buffer.alloc(1000));
      },
      { image_fetch: { allow_private_addresses: true, max_size: '1KiB', max_total_size: '2KiB' } },
    );
    const images = (count: number) => Array.from({ length: count }, (_, i) => ({ type: 'image_url' as const, image_url: { url: `${fake?.url}/images/${i}.png` } }));
    const build = (count: number) => googleAdapter.buildRequest({ model: 'm', messages: [{ role: 'user', content: images(count) }] }, ctx);
    await expect(build(2)).resolves.toBeDefined();
    await expect(build(3)).rejects.toThrow(/image_fetch\.max_total_size \(2048\)/);
  });

  it('fetches at most four images of a request at once', async () => {
    // Images are answered four at a time, a moment after the fourth arrives: without the bound
    // the other eight were on their way meanwhile; with it, none can come before an answer.
    const held: Array<() => void> = [];
    let open = 0;
    let mostOpen = 0;
    const ctx = await setup(
      (seen, res) => {
        if (!seen.path.startsWith('/images/')) return sendResponse(res, [{ text: 'ok' }]);
        open += 1;
        mostOpen = Math.max(mostOpen, open);
        held.push(() => {
          open -= 1;
          servePng(res);
        });
        if (open === 4) setTimeout(() => held.splice(0).forEach((answer) => answer()), 50);
      },
      { image_fetch: { allow_private_addresses: true } },
    );
    const content = Array.from({ length: 12 }, (_, i) => ({ type: 'image_url' as const, image_url: { url: `${fake?.url}/images/${i}.png` } }));
    await googleAdapter.buildRequest({ model: 'm', messages: [{ role: 'user', content }] }, ctx);
    expect(fake?.requests.filter((r) => r.path.startsWith('/images/'))).toHaveLength(12);
    expect(mostOpen).toBe(4);
  });

  it('refuses an image whose server never answers its TLS handshake at image_fetch.timeout, not at the connect timeout', async () => {
    // undici hears no abort while a connection is being made: the handshake would run to its connect timeout (10 s).
    const silent = await startSilentServer();
    try {
      const ctx = await setup(() => undefined, { image_fetch: { allow_private_addresses: true, timeout: '200ms' } });
      const url = `https://127.0.0.1:${silent.port}/dot.png`;
      await expect(googleAdapter.buildRequest({ model: 'm', messages: [{ role: 'user', content: [{ type: 'image_url', image_url: { url } }] }] }, ctx)).rejects.toThrow(/image could not be fetched/);
      await new Promise((resolve) => setTimeout(resolve, 100));
      expect(silent.open()).toBe(1);
    } finally {
      await silent.close();
    }
  });

  it('streams text, a function call and usage as OpenAI chunks', async () => {
    const ctx = await setup((_seen, res) =>
      sendStream(res, [
        response([{ text: 'Let me ' }]),
        response([{ text: 'check.' }]),
        response([{ functionCall: { name: 'get_weather', args: { city: 'Paris' } }, thoughtSignature: SIGNATURE }, { functionCall: { name: 'get_time', args: {} } }], 'STOP'),
      ]),
    );
    const { chunks, error } = await stream(googleAdapter, ctx, { messages: [{ role: 'user', content: 'a' }], tools: [weatherTool] });
    expect(error).toBeUndefined();
    expect(fake?.requests[0]?.path).toBe('/v1beta/models/gemini-test:streamGenerateContent?alt=sse');
    const result = assemble(chunks);
    expect(result).toMatchObject({ role: 'assistant', text: 'Let me check.', finish: 'tool_calls', usage: { prompt_tokens: 20, completion_tokens: 8, total_tokens: 28 } });
    expect(result.toolCalls.map((c) => [c.name, c.arguments])).toEqual([['get_weather', '{"city":"Paris"}'], ['get_time', '{}']]);
    expect(result.toolCalls[0]?.id.endsWith(`.${SIGNATURE}`)).toBe(true);
    expect(chunks.at(-1)).toMatchObject({ choices: [], usage: { total_tokens: 28 } });
  });

  it('maps a streamed MAX_TOKENS finish to length', async () => {
    const ctx = await setup((_seen, res) => sendStream(res, [response([{ text: 'Long' }]), response([{ text: '...' }], 'MAX_TOKENS')]));
    const { chunks } = await stream(googleAdapter, ctx, { messages: [{ role: 'user', content: 'a' }] });
    expect(assemble(chunks)).toMatchObject({ text: 'Long...', finish: 'length' });
  });

  it('throws UpstreamStreamError when the stream ends without a finishReason', async () => {
    const ctx = await setup((_seen, res) => sendStream(res, [response([{ text: 'partial' }])]));
    const { chunks, error } = await stream(googleAdapter, ctx, { messages: [{ role: 'user', content: 'a' }] });
    expect(assemble(chunks).text).toBe('partial');
    expect(error).toBeInstanceOf(UpstreamStreamError);
  });

  it('ends a stream of several candidates whole when the body ends after each candidate it held has finished, fewer than n', async () => {
    const ctx = await setup((_seen, res) => sendStream(res, [response([{ text: 'only one' }], 'STOP')]));
    const { chunks, error } = await stream(googleAdapter, ctx, { messages: [{ role: 'user', content: 'a' }], n: 3 });
    expect(sent().generationConfig).toEqual({ candidateCount: 3 });
    expect(error).toBeUndefined();
    expect(assemble(chunks)).toMatchObject({ text: 'only one', finish: 'stop', usage: { total_tokens: 28 } });
  });

  it('fails a stream of several candidates that ends with one of them unfinished, and counts each candidate\'s tool calls from 0', async () => {
    const ctx = await setup((_seen, res) =>
      sendStream(res, [
        { ...response([{ functionCall: { name: 'get_weather', args: { city: 'Paris' } } }], 'STOP'), candidates: [{ content: { role: 'model', parts: [{ functionCall: { name: 'get_weather', args: { city: 'Paris' } } }] }, finishReason: 'STOP' }, { content: { role: 'model', parts: [{ functionCall: { name: 'get_weather', args: { city: 'Rome' } } }] }, index: 1 }] },
      ]),
    );
    const { chunks, error } = await stream(googleAdapter, ctx, { messages: [{ role: 'user', content: 'a' }], tools: [weatherTool], n: 2 });
    expect(error).toBeInstanceOf(UpstreamStreamError);
    expect(chunks.flatMap((c) => c.choices.flatMap((choice) => (choice.delta.tool_calls ?? []).map((call) => [choice.index, call.index, call.function?.arguments])))).toEqual([
      [0, 0, '{"city":"Paris"}'],
      [1, 0, '{"city":"Rome"}'],
    ]);
    expect(chunks.flatMap((c) => c.choices.filter((choice) => choice.finish_reason !== null).map((choice) => [choice.index, choice.finish_reason]))).toEqual([[0, 'tool_calls']]);
  });

  it('fails the stream when the connection is cut', async () => {
    const ctx = await setup((_seen, res) => sendStream(res, [response([{ text: 'partial' }])], { cut: true }));
    const { error } = await stream(googleAdapter, ctx, { messages: [{ role: 'user', content: 'a' }] });
    expect(error).toBeInstanceOf(Error);
  });

  it('throws UpstreamStreamError for an in-band error event', async () => {
    const ctx = await setup((_seen, res) => sendStream(res, [{ error: { code: 503, message: 'The model is overloaded.', status: 'UNAVAILABLE' } }]));
    const { chunks, error } = await stream(googleAdapter, ctx, { messages: [{ role: 'user', content: 'a' }] });
    expect(chunks).toEqual([]);
    expect((error as Error).message).toBe('The model is overloaded.');
  });

  it('fails the attempt on a finish that says the model could not make its tool calls, whole and streamed, rather than answer an empty stop', async () => {
    const malformed = { candidates: [{ content: { role: 'model', parts: [] }, finishReason: 'MALFORMED_FUNCTION_CALL', finishMessage: 'Malformed function call: print(default_api.get_weather(city=))', index: 0 }], usageMetadata, modelVersion: 'gemini-test-001' };
    const ctx = await setup((seen, res) => (seen.path.includes('stream') ? sendStream(res, [response([{ text: 'Let me check.' }]), malformed]) : json(res, 200, malformed)));
    await expect(complete(googleAdapter, ctx, { messages: [{ role: 'user', content: 'a' }], tools: [weatherTool] })).rejects.toThrow(UpstreamStreamError);
    await expect(complete(googleAdapter, ctx, { messages: [{ role: 'user', content: 'a' }], tools: [weatherTool] })).rejects.toThrow(/MALFORMED_FUNCTION_CALL: Malformed function call/);
    const { chunks, error } = await stream(googleAdapter, ctx, { messages: [{ role: 'user', content: 'a' }], tools: [weatherTool] });
    expect(assemble(chunks).text).toBe('Let me check.');
    expect(error).toBeInstanceOf(UpstreamStreamError);
  });

  it('fails the attempt of several candidates when one of them ends in a failure finish, whole and streamed, so that a fallback gives a whole answer', async () => {
    const mixed = {
      candidates: [
        { content: { role: 'model', parts: [{ text: 'Sunny.' }] }, finishReason: 'STOP', index: 0 },
        { content: { role: 'model', parts: [] }, finishReason: 'MALFORMED_FUNCTION_CALL', finishMessage: 'Malformed function call: get_weather(city=)', index: 1 },
      ],
      usageMetadata,
      modelVersion: 'gemini-test-001',
    };
    const ctx = await setup((seen, res) => (seen.path.includes('stream') ? sendStream(res, [mixed]) : json(res, 200, mixed)));
    await expect(complete(googleAdapter, ctx, { messages: [{ role: 'user', content: 'a' }], tools: [weatherTool], n: 2 })).rejects.toThrow(/MALFORMED_FUNCTION_CALL: Malformed function call/);
    const { chunks, error } = await stream(googleAdapter, ctx, { messages: [{ role: 'user', content: 'a' }], tools: [weatherTool], n: 2 });
    expect(error).toBeInstanceOf(UpstreamStreamError);
    // What came before the failing candidate in the event has gone out; the stream then ends with the error.
    expect(chunks.flatMap((c) => c.choices.filter((choice) => choice.finish_reason !== null).map((choice) => [choice.index, choice.finish_reason]))).toEqual([[0, 'stop']]);
  });

  it.each(['MISSING_THOUGHT_SIGNATURE', 'MALFORMED_RESPONSE'])('fails the attempt on a %s finish, whole and streamed, rather than answer an empty stop', async (reason) => {
    const failed = { candidates: [{ finishReason: reason, index: 0 }], usageMetadata, modelVersion: 'gemini-test-001' };
    const ctx = await setup((seen, res) => (seen.path.includes('stream') ? sendStream(res, [failed]) : json(res, 200, failed)));
    await expect(complete(googleAdapter, ctx, { messages: [{ role: 'user', content: 'a' }] })).rejects.toThrow(`google finished with ${reason}`);
    const { chunks, error } = await stream(googleAdapter, ctx, { messages: [{ role: 'user', content: 'a' }] });
    expect(chunks).toEqual([]);
    expect(error).toBeInstanceOf(UpstreamStreamError);
  });

  it.each([
    [400, 'INVALID_ARGUMENT', 'invalid_request_error', false],
    [403, 'PERMISSION_DENIED', 'permission_error', true],
    [404, 'NOT_FOUND', 'not_found_error', false],
    [429, 'RESOURCE_EXHAUSTED', 'rate_limit_error', true],
    [500, 'INTERNAL', 'api_error', true],
    [503, 'UNAVAILABLE', 'api_error', true],
  ] as const)('classifies HTTP %i %s', async (status, rpcStatus, type, fallback) => {
    const ctx = await setup((_seen, res) => json(res, status, { error: { code: status, message: `failed: ${rpcStatus}`, status: rpcStatus } }));
    const out = await complete(googleAdapter, ctx, { messages: [{ role: 'user', content: 'a' }] });
    expect(out).toEqual({ ok: false, error: { status, message: `failed: ${rpcStatus}`, type, code: rpcStatus, param: null, fallback } });
  });

  it('treats an invalid API key (400 API_KEY_INVALID) as a 401 that may fall back', () => {
    const body = { error: { code: 400, message: 'API key not valid.', status: 'INVALID_ARGUMENT', details: [{ '@type': 'type.googleapis.com/google.rpc.ErrorInfo', reason: 'API_KEY_INVALID' }] } };
    expect(googleAdapter.classifyError(400, new TextEncoder().encode(JSON.stringify(body)), {})).toMatchObject({ status: 401, type: 'authentication_error', fallback: true });
  });

  it('maps response_format json_schema to responseMimeType and responseSchema', async () => {
    const ctx = await setup((_seen, res) => sendResponse(res, [{ text: '{}' }]));
    await complete(googleAdapter, ctx, { messages: [{ role: 'user', content: 'a' }], response_format: { type: 'json_schema', json_schema: { name: 'x', schema: { type: 'object', properties: { a: { type: 'string' } }, additionalProperties: false } } } });
    expect(sent().generationConfig).toEqual({ responseMimeType: 'application/json', responseSchema: { type: 'OBJECT', properties: { a: { type: 'STRING' } } } });
  });

  it('asks for JSON without a responseSchema when the json_schema allows any object, as Gemini refuses an OBJECT without properties', async () => {
    const ctx = await setup((_seen, res) => sendResponse(res, [{ text: '{}' }]));
    for (const schema of [{ type: 'object', additionalProperties: { type: 'string' } }, { type: 'object', properties: {} }]) {
      await complete(googleAdapter, ctx, { messages: [{ role: 'user', content: 'a' }], response_format: { type: 'json_schema', json_schema: { name: 'x', schema } } });
    }
    expect([sent(0).generationConfig, sent(1).generationConfig]).toEqual([{ responseMimeType: 'application/json' }, { responseMimeType: 'application/json' }]);
  });
});

function sentCount(_seen: Seen): number {
  return fake?.requests.filter((r) => !r.path.startsWith('/images/')).length ?? 0;
}
