// `n` on a google provider, through the gateway with the openai SDK: Gemini's
// candidateCount, each candidate a choice under its index, whole and streamed,
// with the usage Gemini reports for all of them on the answer, the span and
// the generation record.
import OpenAI from 'openai';
import { afterEach, describe, expect, it } from 'vitest';
import { API_KEY, attr, startGateway, type Gateway } from '../harness.js';
import { json, sse, startFake, type FakeUpstream, type Handler } from '../providers/shared/fake-upstream.js';
import { generateContentRequest, validateGemini } from '../providers/google/wire-schema.js';

let gateway: Gateway | undefined;
let fake: FakeUpstream | undefined;

afterEach(async () => {
  const problems = fake?.problems ?? [];
  await gateway?.close();
  await fake?.close();
  gateway = undefined;
  fake = undefined;
  expect(problems).toEqual([]);
});

// USD per token.
const models = [{ id: 'acme/gemini', pricing: { input: '0.000001', output: '0.000002' }, endpoints: [{ provider: 'gemini', model: 'gemini-test' }] }];

async function setup(handler: Handler): Promise<OpenAI> {
  fake = await startFake(validateGemini, handler);
  gateway = await startGateway({ capture_content: true, providers: { gemini: { type: 'google', base_url: fake.url, api_key: 'gm-test-key' } }, models });
  return new OpenAI({ baseURL: gateway.baseURL, apiKey: API_KEY, maxRetries: 0 });
}

async function generation(id: string): Promise<Record<string, unknown>> {
  const response = await fetch(`http://127.0.0.1:${(gateway as Gateway).port}/v1/generation?id=${id}`, { headers: { authorization: `Bearer ${API_KEY}` } });
  expect(response.status).toBe(200);
  return ((await response.json()) as { data: Record<string, unknown> }).data;
}

function sentConfig(): unknown {
  return generateContentRequest.parse(fake?.requests[0]?.body).generationConfig;
}

const weatherTool = { type: 'function' as const, function: { name: 'get_weather', parameters: { type: 'object', properties: { city: { type: 'string' } }, required: ['city'] } } };

describe('n on a google provider', () => {
  it('asks Gemini for n candidates and answers each as the choice of its index, with the usage of all of them', async () => {
    // Listed out of order: the choices follow each candidate's index.
    const client = await setup((_seen, res) =>
      json(res, 200, {
        candidates: [
          { content: { role: 'model', parts: [{ functionCall: { name: 'get_weather', args: { city: 'Oslo' } } }] }, finishReason: 'STOP', index: 1 },
          { content: { role: 'model', parts: [{ text: 'It is sunny.' }] }, finishReason: 'STOP', index: 0 },
        ],
        usageMetadata: { promptTokenCount: 10, candidatesTokenCount: 30, thoughtsTokenCount: 4, totalTokenCount: 44 },
        modelVersion: 'gemini-test-001',
        responseId: 'resp-n',
      }),
    );
    const { data, response } = await client.chat.completions.create({ model: 'acme/gemini', messages: [{ role: 'user', content: 'Weather in Oslo?' }], tools: [weatherTool], n: 2 }).withResponse();
    expect(sentConfig()).toEqual({ candidateCount: 2 });
    expect(data.choices.map((c) => [c.index, c.message.content, c.finish_reason])).toEqual([
      [0, 'It is sunny.', 'stop'],
      [1, null, 'tool_calls'],
    ]);
    expect(data.choices[1]?.message.tool_calls?.map((call) => call.type === 'function' && [call.function.name, call.function.arguments])).toEqual([['get_weather', '{"city":"Oslo"}']]);
    expect(data.choices[0]?.message.tool_calls).toBeUndefined();
    expect(data.usage).toMatchObject({ prompt_tokens: 10, completion_tokens: 34, total_tokens: 44, completion_tokens_details: { reasoning_tokens: 4 } });
    const cost = (10 * 1000 + 34 * 2000) / 1e9;
    expect((data.usage as { cost?: unknown } | undefined)?.cost).toBe(cost);

    const span = (await gateway!.spans(2)).find((s) => s.name === 'chat gemini-test');
    expect(attr(span, 'gen_ai.response.finish_reasons')).toEqual(['stop', 'tool_calls']);
    expect(attr(span, 'gen_ai.usage.output_tokens')).toBe(34);
    expect(attr(span, 'sluice.usage.cost')).toBe(cost);
    const output = JSON.parse(String(attr(span, 'gen_ai.output.messages'))) as Array<{ parts: Array<{ type: string; content?: string; name?: string }>; finish_reason: string }>;
    expect(output.map((m) => [m.parts.map((p) => p.content ?? p.name), m.finish_reason])).toEqual([
      [['It is sunny.'], 'stop'],
      [['get_weather'], 'tool_calls'],
    ]);

    const record = await generation(response.headers.get('x-sluice-generation-id') ?? '');
    expect(record).toMatchObject({ streamed: false, native_tokens_prompt: 10, native_tokens_completion: 34, native_tokens_reasoning: 4, finish_reason: 'stop', total_cost: cost });
  });

  it('streams each candidate under its index with its own finish_reason, and the usage once, after the last finish', async () => {
    const client = await setup((_seen, res) =>
      sse(
        res,
        [
          // Candidate 0 without an index, as proto3 JSON leaves out a 0.
          { candidates: [{ content: { role: 'model', parts: [{ text: 'Red ' }] } }, { content: { role: 'model', parts: [{ text: 'Blue ' }] }, index: 1 }], usageMetadata: { promptTokenCount: 10, candidatesTokenCount: 4, totalTokenCount: 14 }, modelVersion: 'gemini-test-001', responseId: 'resp-s' },
          { candidates: [{ content: { role: 'model', parts: [{ text: 'sky' }] }, finishReason: 'STOP', index: 1 }], usageMetadata: { promptTokenCount: 10, candidatesTokenCount: 12, totalTokenCount: 22 } },
          { candidates: [{ content: { role: 'model', parts: [{ text: 'rose' }] }, finishReason: 'MAX_TOKENS' }], usageMetadata: { promptTokenCount: 10, candidatesTokenCount: 30, totalTokenCount: 40 } },
        ].map((data) => ({ data })),
      ),
    );
    const { data, response } = await client.chat.completions.create({ model: 'acme/gemini', messages: [{ role: 'user', content: 'A colour and a thing' }], n: 2, stream: true, stream_options: { include_usage: true } }).withResponse();
    const texts: string[] = [];
    const finishes: Array<string | null> = [];
    const roles: string[] = [];
    const usages: unknown[] = [];
    for await (const chunk of data) {
      if (chunk.usage) usages.push(chunk.usage);
      for (const choice of chunk.choices) {
        texts[choice.index] = (texts[choice.index] ?? '') + (choice.delta.content ?? '');
        if (choice.delta.role !== undefined) roles.push(`${choice.index}:${choice.delta.role}`);
        if (choice.finish_reason !== null) finishes[choice.index] = choice.finish_reason;
      }
    }
    expect(sentConfig()).toEqual({ candidateCount: 2 });
    expect(texts).toEqual(['Red rose', 'Blue sky']);
    expect(finishes).toEqual(['length', 'stop']);
    expect(roles).toEqual(['0:assistant', '1:assistant']);
    const cost = (10 * 1000 + 30 * 2000) / 1e9;
    expect(usages).toEqual([{ prompt_tokens: 10, completion_tokens: 30, total_tokens: 40, cost }]);

    const span = (await gateway!.spans(2)).find((s) => s.name === 'chat gemini-test');
    expect(attr(span, 'gen_ai.response.finish_reasons')).toEqual(['length', 'stop']);
    expect(attr(span, 'gen_ai.usage.output_tokens')).toBe(30);
    const output = JSON.parse(String(attr(span, 'gen_ai.output.messages'))) as Array<{ parts: Array<{ content?: string }> }>;
    expect(output.map((m) => m.parts.map((p) => p.content))).toEqual([['Red rose'], ['Blue sky']]);

    const record = await generation(response.headers.get('x-sluice-generation-id') ?? '');
    expect(record).toMatchObject({ streamed: true, native_tokens_prompt: 10, native_tokens_completion: 30, finish_reason: 'length', total_cost: cost });
  });
});
