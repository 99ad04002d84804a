// What one Gemini model cannot do (penalties on 2.5, system messages on
// Gemma), refused by Gemini with an INVALID_ARGUMENT that says so: another
// endpoint may take the request, as for a provider type's own refusal.
import OpenAI from 'openai';
import { afterEach, describe, expect, it } from 'vitest';
import { API_KEY, completion, openaiProvider, sendJson, startGateway, startUpstream, type Gateway, type Upstream } from '../harness.js';
import { validateGemini } from '../providers/google/wire-schema.js';
import { json, startFake, type FakeUpstream } from '../providers/shared/fake-upstream.js';

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

async function setup(message: string, endpoints: Array<{ provider: string; model: string }>): Promise<OpenAI> {
  fake = await startFake(validateGemini, (_seen, res) => json(res, 400, { error: { code: 400, message, status: 'INVALID_ARGUMENT' } }));
  upstream = await startUpstream((_body, res) => sendJson(res, 200, completion('from openai')));
  gateway = await startGateway({
    providers: { gemini: { type: 'google', base_url: fake.url, api_key: 'gm-test-key' }, oa: openaiProvider(upstream) },
    models: [{ id: 'acme/chat', endpoints }],
  });
  return new OpenAI({ baseURL: gateway.baseURL, apiKey: API_KEY, maxRetries: 0 });
}

describe('a Gemini model refusing what it cannot do', () => {
  it.each<[string, Pick<OpenAI.ChatCompletionCreateParamsNonStreaming, 'frequency_penalty' | 'reasoning_effort'>]>([
    ['Penalty is not enabled for models/gemini-2.5-flash', { frequency_penalty: 0.5 }],
    ['Developer instruction is not enabled for models/gemma-3-27b-it', {}],
    ["Function calling with a response mime type: 'application/json' is unsupported", {}],
    ['Budget 0 is invalid. This model only works in thinking mode.', { reasoning_effort: 'none' }],
    ['The model does not support setting thinking_budget to 0.', { reasoning_effort: 'none' }],
    ["The model gemini-2.0-flash-lite doesn't support thinking.", { reasoning_effort: 'high' }],
  ])('lets the next endpoint answer (%s)', async (message, params) => {
    const client = await setup(message, [
      { provider: 'gemini', model: 'gemini-2.5-flash' },
      { provider: 'oa', model: 'gpt' },
    ]);
    const response = await client.chat.completions.create({ model: 'acme/chat', messages: [{ role: 'system', content: 'Be brief.' }, { role: 'user', content: 'a' }], ...params }).withResponse();
    expect(response.data.choices[0]?.message.content).toBe('from openai');
    expect(response.response.headers.get('x-sluice-provider')).toBe('oa');
    expect(fake?.requests).toHaveLength(1);
  });

  it('answers 400 unsupported_value with Gemini\'s message when no other endpoint can take it', async () => {
    const client = await setup('Penalty is not enabled for models/gemini-2.5-flash', [{ provider: 'gemini', model: 'gemini-2.5-flash' }]);
    const error = await client.chat.completions.create({ model: 'acme/chat', messages: [{ role: 'user', content: 'a' }], presence_penalty: 0.5 }).catch((err: unknown) => err);
    expect(error).toBeInstanceOf(OpenAI.BadRequestError);
    expect((error as InstanceType<typeof OpenAI.BadRequestError>).error).toMatchObject({ code: 'unsupported_value' });
    expect((error as InstanceType<typeof OpenAI.BadRequestError>).message).toContain('Penalty is not enabled for models/gemini-2.5-flash');
  });

  it('keeps any other INVALID_ARGUMENT the request\'s own fault, answered as it came', async () => {
    const client = await setup('* GenerateContentRequest.contents[0].parts: contents.parts must not be empty.', [
      { provider: 'gemini', model: 'gemini-2.5-flash' },
      { provider: 'oa', model: 'gpt' },
    ]);
    const error = await client.chat.completions.create({ model: 'acme/chat', messages: [{ role: 'user', content: 'a' }] }).catch((err: unknown) => err);
    expect(error).toBeInstanceOf(OpenAI.BadRequestError);
    expect((error as InstanceType<typeof OpenAI.BadRequestError>).error).toMatchObject({ code: 'INVALID_ARGUMENT' });
    expect(upstream?.requests).toHaveLength(0);
  });
});
