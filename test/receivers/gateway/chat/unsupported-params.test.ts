// Sampling parameters a provider type has no setting for, through the gateway:
// a 400 unsupported_value naming the param, and the next endpoint tried.
import OpenAI from 'openai';
import { afterEach, describe, expect, it } from 'vitest';
import { API_KEY, completion, openaiProvider, sendJson, startGateway, startUpstream, type Gateway, type Upstream, type UpstreamHandler } from '../harness.js';
import { sendMessage } from '../providers/anthropic/fixtures.js';
import { validateAnthropic } from '../providers/anthropic/wire-schema.js';
import { startFake, type FakeUpstream } from '../providers/shared/fake-upstream.js';
import { OPENAI_ONLY, OPENAI_ONLY_NEUTRAL } from '../providers/shared/openai-only.js';

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

async function setup(endpoints: Array<{ provider: string; model: string }>, openai: UpstreamHandler = (_body, res) => sendJson(res, 200, completion('from openai'))): Promise<OpenAI> {
  fake = await startFake(validateAnthropic, (_seen, res) => sendMessage(res, [{ type: 'text', text: 'from anthropic' }]));
  upstream = await startUpstream(openai);
  gateway = await startGateway({
    providers: { claude: { type: 'anthropic', base_url: fake.url, api_key: 'sk-ant-test' }, oa: openaiProvider(upstream) },
    models: [{ id: 'acme/chat', endpoints }],
  });
  return new OpenAI({ baseURL: gateway.baseURL, apiKey: API_KEY, maxRetries: 0 });
}


describe('sampling parameters a provider type has no setting for', () => {
  it('answers 400 unsupported_value naming the param when no endpoint can take it', async () => {
    const client = await setup([{ provider: 'claude', model: 'claude-test' }]);
    const error = await client.chat.completions.create({ model: 'acme/chat', messages: [{ role: 'user', content: 'a' }], frequency_penalty: 0.5 }).catch((err: unknown) => err);
    expect(error).toBeInstanceOf(OpenAI.BadRequestError);
    expect((error as InstanceType<typeof OpenAI.BadRequestError>).error).toMatchObject({ code: 'unsupported_value', param: 'frequency_penalty' });
    expect(fake?.requests).toHaveLength(0);
  });

  it.each(OPENAI_ONLY)('refuses OpenAI-only parameters that change the answer (%o), naming the first, and lets their neutral values through', async (params) => {
    const client = await setup([{ provider: 'claude', model: 'claude-test' }]);
    const error = await client.chat.completions.create({ model: 'acme/chat', messages: [{ role: 'user', content: 'a' }], ...params } as never).catch((err: unknown) => err);
    expect(error).toBeInstanceOf(OpenAI.BadRequestError);
    expect((error as InstanceType<typeof OpenAI.BadRequestError>).error).toMatchObject({ code: 'unsupported_value', param: Object.keys(params)[0] });
    const out = await client.chat.completions.create({ model: 'acme/chat', messages: [{ role: 'user', content: 'a' }], ...OPENAI_ONLY_NEUTRAL, store: true, metadata: { a: 'b' }, service_tier: 'auto' } as never);
    expect(out.choices[0]?.message.content).toBe('from anthropic');
    expect(fake?.requests).toHaveLength(1);
  });

  it('tries the next endpoint when one provider type cannot take a seed', async () => {
    const client = await setup([
      { provider: 'claude', model: 'claude-test' },
      { provider: 'oa', model: 'gpt' },
    ]);
    const response = await client.chat.completions.create({ model: 'acme/chat', messages: [{ role: 'user', content: 'a' }], seed: 7 }).withResponse();
    expect(response.data.choices[0]?.message.content).toBe('from openai');
    expect(response.response.headers.get('x-sluice-provider')).toBe('oa');
    expect(upstream?.requests[0]?.body['seed']).toBe(7);
    expect(fake?.requests).toHaveLength(0);
  });

  it("answers the failure of an endpoint that took the request, not the 400 of a later one whose provider type cannot", async () => {
    const client = await setup(
      [
        { provider: 'oa', model: 'gpt' },
        { provider: 'claude', model: 'claude-test' },
      ],
      (_body, res) => sendJson(res, 429, { error: { message: 'Slow down.', type: 'rate_limit_error', code: null } }),
    );
    const error = await client.chat.completions.create({ model: 'acme/chat', messages: [{ role: 'user', content: 'a' }], seed: 7 }).catch((err: unknown) => err);
    expect(error).toBeInstanceOf(OpenAI.RateLimitError);
    expect((error as InstanceType<typeof OpenAI.RateLimitError>).error).toMatchObject({ message: 'Slow down.' });
    expect((error as InstanceType<typeof OpenAI.RateLimitError>).headers?.get('x-sluice-provider')).toBe('oa');
    expect(fake?.requests).toHaveLength(0);
  });

  it('refuses an empty user message for Anthropic and lets the next endpoint answer the conversation unchanged', async () => {
    const client = await setup([
      { provider: 'claude', model: 'claude-test' },
      { provider: 'oa', model: 'gpt' },
    ]);
    const messages = [
      { role: 'user' as const, content: 'hi' },
      { role: 'assistant' as const, content: 'Hello!' },
      { role: 'user' as const, content: '' },
    ];
    const response = await client.chat.completions.create({ model: 'acme/chat', messages }).withResponse();
    expect(response.response.headers.get('x-sluice-provider')).toBe('oa');
    expect(upstream?.requests[0]?.body['messages']).toEqual(messages);
    expect(fake?.requests).toHaveLength(0);
    const error = await client.chat.completions.create({ model: 'claude/claude-test', messages }).catch((err: unknown) => err);
    expect(error).toBeInstanceOf(OpenAI.BadRequestError);
    expect((error as InstanceType<typeof OpenAI.BadRequestError>).error).toMatchObject({ code: 'unsupported_value', param: 'messages[2].content' });
  });

  it('sends neutral values on to a provider type without the setting', async () => {
    const client = await setup([{ provider: 'claude', model: 'claude-test' }]);
    const out = await client.chat.completions.create({ model: 'acme/chat', messages: [{ role: 'user', content: 'a' }], frequency_penalty: 0, presence_penalty: 0, logit_bias: {} });
    expect(out.choices[0]?.message.content).toBe('from anthropic');
  });
});
