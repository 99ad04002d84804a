import { afterEach, describe, expect, it } from 'vitest';
import { bedrockAdapter } from '../../../../../src/receivers/gateway/providers/bedrock/index.js';
import { ProviderNotConfiguredError } from '../../../../../src/receivers/gateway/providers/shared/types.js';
import { ProviderRequestError } from '../../../../../src/receivers/gateway/providers/shared/inputs.js';
import { UpstreamStreamError } from '../../../../../src/receivers/gateway/providers/shared/types.js';
import { assemble, complete, context, PNG_BASE64, PNG_DATA_URL, servePng, startFake, stream, type FakeUpstream, type Handler, type Seen } from '../shared/fake-upstream.js';
import { endFrames, exceptionFrame, frame, sendConverse, sendError, sendFrames, textFrames, toolFrames } from './fixtures.js';
import { converseRequest, CREDENTIALS, REGION, requestProblems, sigV4Problems, type ConverseRequest } from './wire-schema.js';
import { OPENAI_ONLY, OPENAI_ONLY_NEUTRAL } from '../shared/openai-only.js';

const MODEL = 'anthropic.claude-3-5-sonnet-20240620-v1:0';
const ENCODED_MODEL = 'anthropic.claude-3-5-sonnet-20240620-v1%3A0';

let fake: FakeUpstream | undefined;

afterEach(async () => {
  const problems = fake?.problems ?? [];
  await fake?.close();
  fake = undefined;
  expect(problems).toEqual([]);
});

async function validate(seen: Seen): Promise<string[]> {
  return [...requestProblems(seen), ...(await sigV4Problems(seen))];
}

async function setup(handler: Handler, extra: Record<string, unknown> = {}, maxTokens?: number) {
  fake = await startFake(validate, handler);
  return context(bedrockAdapter, { type: 'bedrock', base_url: fake.url, region: REGION, access_key_id: CREDENTIALS.accessKeyId, secret_access_key: CREDENTIALS.secretAccessKey, ...extra }, MODEL, maxTokens);
}

function sent(index = 0): ConverseRequest {
  return converseRequest.parse(fake?.requests.filter((r) => !r.path.startsWith('/images/'))[index]?.body);
}

const weatherTool = { type: 'function' as const, function: { name: 'get_weather', description: 'Weather for a city', parameters: { type: 'object', properties: { city: { type: 'string' } }, required: ['city'] } } };
// A Gemini thought signature (base64), as the google adapter appends it to the tool call ids it mints.
const SIGNATURE = 'c2lnbmF0dXJlLW9mLXRoZS10aG91Z2h0cw==';


describe('bedrock adapter', () => {
  it('signs and maps a plain text Converse exchange', async () => {
    const ctx = await setup((_seen, res) => sendConverse(res, [{ text: 'Hello there' }]), {}, 2048);
    const out = await complete(bedrockAdapter, ctx, {
      messages: [
        { role: 'system', content: 'Be brief.' },
        { role: 'user', content: 'Hi' },
      ],
      temperature: 0.2,
      top_p: 0.8,
      stop: ['END'],
    });
    expect(fake?.requests[0]?.path).toBe(`/model/${ENCODED_MODEL}/converse`);
    expect(out).toMatchObject({ ok: true, completion: { object: 'chat.completion', model: MODEL, choices: [{ message: { role: 'assistant', content: 'Hello there' }, finish_reason: 'stop' }], usage: { prompt_tokens: 30, completion_tokens: 12, total_tokens: 42 } } });
    expect(sent()).toEqual({
      messages: [{ role: 'user', content: [{ text: 'Hi' }] }],
      system: [{ text: 'Be brief.' }],
      inferenceConfig: { temperature: 0.2, topP: 0.8, maxTokens: 2048, stopSequences: ['END'] },
      // Claude names the stop sequence that ended its answer only when asked.
      additionalModelResponseFieldPaths: ['/delta/stop_sequence'],
    });
  });

  it('passes over blocks that are not objects and text that is not a string, and counts usage that is not a non-negative integer as 0', async () => {
    const ctx = await setup((_seen, res) => sendConverse(res, [null, { text: 5 }, { toolUse: null }, { text: 'ok' }], 'end_turn', { usage: { inputTokens: -1, outputTokens: 'many' } }));
    const out = await complete(bedrockAdapter, ctx, { messages: [{ role: 'user', content: 'Hi' }] });
    expect(out).toMatchObject({ ok: true, completion: { choices: [{ message: { content: 'ok' }, finish_reason: 'stop' }], usage: { prompt_tokens: 0, completion_tokens: 0, total_tokens: 0 } } });
  });

  it('is caught by the fake when signed with the wrong secret (the SigV4 check is real)', async () => {
    const ctx = await setup(() => undefined, { secret_access_key: 'not-the-secret' });
    const out = await complete(bedrockAdapter, ctx, { messages: [{ role: 'user', content: 'a' }] });
    expect(out).toMatchObject({ ok: false, error: { status: 400 } });
    expect(fake?.problems).toEqual(['SigV4 signature does not verify']);
    fake?.problems.splice(0);
  });

  it('reads credentials and the session token from the AWS environment variables', async () => {
    const saved = { ...process.env };
    Object.assign(process.env, { AWS_ACCESS_KEY_ID: 'AKIDENV', AWS_SECRET_ACCESS_KEY: 'env-secret', AWS_SESSION_TOKEN: 'env-session-token', AWS_REGION: REGION });
    try {
      fake = await startFake((seen) => sigV4Problems(seen, { accessKeyId: 'AKIDENV', secretAccessKey: 'env-secret', sessionToken: 'env-session-token' }), (_seen, res) => sendConverse(res, [{ text: 'ok' }]));
      const ctx = context(bedrockAdapter, { type: 'bedrock', base_url: fake.url }, MODEL);
      expect(ctx.provider.region).toBe(REGION);
      expect(await complete(bedrockAdapter, ctx, { messages: [{ role: 'user', content: 'a' }] })).toMatchObject({ ok: true });
    } finally {
      process.env = saved;
    }
  });

  it('defaults base_url from the region, refuses a config without region, and takes one without credentials', async () => {
    const parsed = bedrockAdapter.configSchema.parse({ type: 'bedrock', region: 'eu-west-3', access_key_id: 'a', secret_access_key: 'b' });
    expect(parsed.base_url).toBe('https://bedrock-runtime.eu-west-3.amazonaws.com');
    const saved = { ...process.env };
    for (const key of ['AWS_REGION', 'AWS_DEFAULT_REGION', 'AWS_ACCESS_KEY_ID']) delete process.env[key];
    try {
      expect(bedrockAdapter.configSchema.safeParse({ type: 'bedrock', access_key_id: 'a', secret_access_key: 'b' }).error?.issues[0]?.path).toEqual(['region']);
      // Without credentials the provider is configured but each attempt answers provider_not_configured.
      const keyless = bedrockAdapter.configSchema.parse({ type: 'bedrock', region: 'us-east-1' });
      const attempt = bedrockAdapter.buildRequest(
        { model: 'm', messages: [{ role: 'user', content: 'hi' }] },
        { slug: 'bedrock', provider: keyless, model: 'm', maxTokens: 10, signal: new AbortController().signal },
      );
      await expect(attempt).rejects.toBeInstanceOf(ProviderNotConfiguredError);
      expect(bedrockAdapter.configSchema.safeParse({ type: 'bedrock', region: 'us-east-1', access_key_id: 'a' }).success).toBe(false);
    } finally {
      process.env = saved;
    }
  });

  it('counts cache reads and writes into prompt_tokens', async () => {
    const ctx = await setup((_seen, res) => sendConverse(res, [{ text: 'ok' }], 'end_turn', { usage: { inputTokens: 5, outputTokens: 2, totalTokens: 57, cacheReadInputTokens: 40, cacheWriteInputTokens: 10 } }));
    const out = await complete(bedrockAdapter, ctx, { messages: [{ role: 'user', content: 'a' }] });
    expect(out.ok && out.completion.usage).toEqual({ prompt_tokens: 55, completion_tokens: 2, total_tokens: 57, prompt_tokens_details: { cached_tokens: 40, cache_creation_tokens: 10 } });
  });

  it.each([
    ['end_turn', 'stop'],
    ['stop_sequence', 'stop'],
    ['max_tokens', 'length'],
    ['tool_use', 'tool_calls'],
    ['guardrail_intervened', 'content_filter'],
    ['content_filtered', 'content_filter'],
  ])('maps stopReason %s to %s', async (stopReason, finish) => {
    const call = { toolUse: { toolUseId: 'tooluse_1', name: 'get_weather', input: {} } };
    const ctx = await setup((_seen, res) => sendConverse(res, [{ text: 'x' }, ...(stopReason === 'tool_use' ? [call] : [])], stopReason));
    const out = await complete(bedrockAdapter, ctx, { messages: [{ role: 'user', content: 'a' }] });
    expect(out.ok && out.completion.choices[0]?.finish_reason).toBe(finish);
  });

  it('maps tools, tool_choice and parallel toolUse answers', async () => {
    const ctx = await setup((_seen, res) =>
      sendConverse(res, [{ text: 'Checking.' }, { toolUse: { toolUseId: 'tooluse_a', name: 'get_weather', input: { city: 'Paris' } } }, { toolUse: { toolUseId: 'tooluse_b', name: 'get_weather', input: { city: 'Rome' } } }], 'tool_use'),
    );
    const out = await complete(bedrockAdapter, ctx, { messages: [{ role: 'user', content: 'Weather?' }], tools: [weatherTool], tool_choice: 'required' });
    expect(out).toMatchObject({
      ok: true,
      completion: {
        choices: [
          {
            message: {
              content: 'Checking.',
              tool_calls: [
                { id: 'tooluse_a', type: 'function', function: { name: 'get_weather', arguments: '{"city":"Paris"}' } },
                { id: 'tooluse_b', type: 'function', function: { name: 'get_weather', arguments: '{"city":"Rome"}' } },
              ],
            },
            finish_reason: 'tool_calls',
          },
        ],
      },
    });
    expect(sent().toolConfig).toEqual({ tools: [{ toolSpec: { name: 'get_weather', description: 'Weather for a city', inputSchema: { json: weatherTool.function.parameters } } }], toolChoice: { any: {} } });
  });

  it.each([
    ['auto', { auto: {} }],
    [{ type: 'function', function: { name: 'get_weather' } }, { tool: { name: 'get_weather' } }],
  ] as const)('maps tool_choice %j', async (choice, expected) => {
    const ctx = await setup((_seen, res) => sendConverse(res, [{ text: 'x' }]));
    await complete(bedrockAdapter, ctx, { messages: [{ role: 'user', content: 'a' }], tools: [weatherTool], tool_choice: choice });
    expect(sent().toolConfig?.toolChoice).toEqual(expected);
  });

  it('gives a tool whose parameters leave out type the object schema Converse requires', async () => {
    const ctx = await setup((_seen, res) => sendConverse(res, [{ text: 'ok' }]));
    const tools = [
      { type: 'function' as const, function: { name: 'now', parameters: {} } },
      { type: 'function' as const, function: { name: 'get_weather', parameters: { properties: { city: { type: 'string' } } } } },
    ];
    await complete(bedrockAdapter, ctx, { messages: [{ role: 'user', content: 'a' }], tools });
    expect(sent().toolConfig?.tools).toEqual([{ toolSpec: { name: 'now', inputSchema: { json: { type: 'object' } } } }, { toolSpec: { name: 'get_weather', inputSchema: { json: { type: 'object', properties: { city: { type: 'string' } } } } } }]);
  });

  it('leaves the tools out for tool_choice none, unless the history needs them', async () => {
    const ctx = await setup((_seen, res) => sendConverse(res, [{ text: 'x' }]));
    await complete(bedrockAdapter, ctx, { messages: [{ role: 'user', content: 'a' }], tools: [weatherTool], tool_choice: 'none' });
    expect(sent().toolConfig).toBeUndefined();
  });

  it('declares the tools a history called when the request sends none (a summary of a tool loop), since Converse refuses tool blocks without a toolConfig', async () => {
    const ctx = await setup((_seen, res) => sendConverse(res, [{ text: 'Sunny.' }]));
    const out = await complete(bedrockAdapter, ctx, {
      messages: [
        { role: 'user', content: 'Weather in Paris?' },
        { role: 'assistant', content: null, tool_calls: [{ id: 'tooluse_a', type: 'function', function: { name: 'get_weather', arguments: '{"city":"Paris"}' } }] },
        { role: 'tool', tool_call_id: 'tooluse_a', content: '18C' },
        { role: 'user', content: 'Summarize.' },
      ],
    });
    expect(out.ok).toBe(true);
    expect(sent().toolConfig).toEqual({ tools: [{ toolSpec: { name: 'get_weather', inputSchema: { json: { type: 'object' } } } }] });
  });

  it('sends tool calls and consecutive tool results as toolUse and one merged toolResult turn', async () => {
    const ctx = await setup((_seen, res) => sendConverse(res, [{ text: 'Sunny in both.' }]));
    await complete(bedrockAdapter, ctx, {
      messages: [
        { role: 'user', content: 'Weather in Paris and Rome?' },
        {
          role: 'assistant',
          content: 'Checking.',
          tool_calls: [
            { id: 'tooluse_a', type: 'function', function: { name: 'get_weather', arguments: '{"city":"Paris"}' } },
            { id: 'tooluse_b', type: 'function', function: { name: 'get_weather', arguments: '{"city":"Rome"}' } },
          ],
        },
        { role: 'tool', tool_call_id: 'tooluse_a', content: '18C' },
        { role: 'tool', tool_call_id: 'tooluse_b', content: '21C' },
      ],
      tools: [weatherTool],
      tool_choice: 'none',
    });
    expect(sent().messages).toEqual([
      { role: 'user', content: [{ text: 'Weather in Paris and Rome?' }] },
      {
        role: 'assistant',
        content: [{ text: 'Checking.' }, { toolUse: { toolUseId: 'tooluse_a', name: 'get_weather', input: { city: 'Paris' } } }, { toolUse: { toolUseId: 'tooluse_b', name: 'get_weather', input: { city: 'Rome' } } }],
      },
      { role: 'user', content: [{ toolResult: { toolUseId: 'tooluse_a', content: [{ text: '18C' }] } }, { toolResult: { toolUseId: 'tooluse_b', content: [{ text: '21C' }] } }] },
    ]);
    expect(sent().toolConfig?.tools).toHaveLength(1);
  });

  it('sends Gemini-minted tool call ids without their thought signature, the same in the call and its result', async () => {
    const ctx = await setup((_seen, res) => sendConverse(res, [{ text: 'Mild.' }]));
    const out = await complete(bedrockAdapter, ctx, {
      messages: [
        { role: 'user', content: 'Weather in Paris?' },
        { role: 'assistant', content: null, tool_calls: [{ id: `gemini_0123456789abcdef.${SIGNATURE}`, type: 'function', function: { name: 'get_weather', arguments: '{"city":"Paris"}' } }] },
        { role: 'tool', tool_call_id: `gemini_0123456789abcdef.${SIGNATURE}`, content: '18C' },
      ],
      tools: [weatherTool],
    });
    expect(out.ok).toBe(true);
    expect(sent().messages.flatMap((m) => m.content.flatMap((b) => [b.toolUse?.toolUseId, b.toolResult?.toolUseId].filter((id) => id !== undefined)))).toEqual(['gemini_0123456789abcdef', 'gemini_0123456789abcdef']);
  });

  it('sends tool call ids Converse refuses (other characters, over 64) as valid ones, the same in the call and its result', async () => {
    const ctx = await setup((_seen, res) => sendConverse(res, [{ text: 'Mild.' }]));
    const long = `call_${'x'.repeat(70)}`;
    const call = (id: string) => ({ id, type: 'function' as const, function: { name: 'get_weather', arguments: '{"city":"Paris"}' } });
    const out = await complete(bedrockAdapter, ctx, {
      messages: [
        { role: 'user', content: 'Weather?' },
        { role: 'assistant', content: null, tool_calls: [call('functions.get_weather:0'), call(long)] },
        { role: 'tool', tool_call_id: 'functions.get_weather:0', content: '18C' },
        { role: 'tool', tool_call_id: long, content: '21C' },
      ],
      tools: [weatherTool],
    });
    expect(out.ok).toBe(true);
    const [calls, results] = sent().messages.slice(1).map((m) => m.content.map((b) => b.toolUse?.toolUseId ?? b.toolResult?.toolUseId));
    expect(results).toEqual(calls);
    expect(calls?.[0]).toMatch(/^functions_get_weather_0_[0-9a-f]{8}$/);
    expect(calls?.[1]).toHaveLength(64);
  });

  it('sends a data URL image as bytes and fetches an http URL image', async () => {
    const ctx = await setup((seen, res) => (seen.path.startsWith('/images/') ? servePng(res) : sendConverse(res, [{ text: 'Two pixels.' }])), { image_fetch: { allow_private_addresses: true } });
    await complete(bedrockAdapter, ctx, {
      messages: [{ role: 'user', content: [{ type: 'text', text: 'Compare' }, { type: 'image_url', image_url: { url: PNG_DATA_URL } }, { type: 'image_url', image_url: { url: `${fake?.url}/images/dot.png` } }] }],
    });
    expect(sent().messages[0]?.content).toEqual([{ text: 'Compare' }, { image: { format: 'png', source: { bytes: PNG_BASE64 } } }, { image: { format: 'png', source: { bytes: PNG_BASE64 } } }]);
  });

  it('refuses to fetch an image from a private address by default', async () => {
    const ctx = await setup(() => undefined);
    await expect(bedrockAdapter.buildRequest({ model: 'm', messages: [{ role: 'user', content: [{ type: 'image_url', image_url: { url: 'http://10.0.0.1/cat.png' } }] }] }, ctx)).rejects.toThrow(ProviderRequestError);
  });

  it('rejects values Converse cannot take instead of clamping them', async () => {
    const ctx = await setup(() => undefined);
    const build = (body: Record<string, unknown>) => bedrockAdapter.buildRequest({ model: 'm', messages: [{ role: 'user', content: 'a' }], ...body }, ctx);
    await expect(build({ temperature: 1.2 })).rejects.toThrow(/temperature/);
    await expect(build({ n: 3 })).rejects.toThrow(/n: /);
    await expect(build({ messages: [{ role: 'user', content: [{ type: 'image_url', image_url: { url: 'data:image/tiff;base64,AAAA' } }] }] })).rejects.toThrow(/image\/tiff/);
  });

  it('sends a final assistant turn (a prefill) without the trailing whitespace Claude refuses there, past its cache point, and earlier turns as they are', async () => {
    const ctx = await setup((_seen, res) => sendConverse(res, [{ text: ' {"a": 1}' }]));
    const out = await complete(bedrockAdapter, ctx, {
      messages: [
        { role: 'user', content: 'Say hi.' },
        { role: 'assistant', content: 'Hi! \n' },
        { role: 'user', content: 'Now JSON.' },
        { role: 'assistant', content: [{ type: 'text', text: 'Sure.' }, { type: 'text', text: 'Answer: \n', cache_control: { type: 'ephemeral' } }] },
      ],
    });
    expect(out.ok).toBe(true);
    expect(sent().messages.map((m) => m.content)).toEqual([[{ text: 'Say hi.' }], [{ text: 'Hi! \n' }], [{ text: 'Now JSON.' }], [{ text: 'Sure.' }, { text: 'Answer:' }, { cachePoint: { type: 'default' } }]]);
  });

  it('refuses an empty user message instead of leaving it out and changing the conversation', async () => {
    const ctx = await setup(() => undefined);
    const build = (messages: unknown[]) => bedrockAdapter.buildRequest({ model: 'm', messages } as never, ctx);
    const history = [{ role: 'user', content: 'hi' }, { role: 'assistant', content: 'Hello!' }];
    await expect(build([...history, { role: 'user', content: '' }])).rejects.toThrow(/^messages\[2\]\.content: /);
    await expect(build([...history, { role: 'user', content: [{ type: 'text', text: '', cache_control: { type: 'ephemeral' } }] }])).rejects.toThrow(ProviderRequestError);
    await expect(build([{ role: 'system', content: 'Be brief.' }])).rejects.toThrow(/^messages: /);
  });

  it('refuses for a Claude model a stop sequence of whitespace only, which Claude cannot take, and sends it to other models', async () => {
    const ctx = await setup((_seen, res) => sendConverse(res, [{ text: 'ok' }]));
    const build = (stop: string | string[]) => bedrockAdapter.buildRequest({ model: 'm', messages: [{ role: 'user', content: 'a' }], stop }, ctx);
    await expect(build('\n')).rejects.toThrow(/^stop: /);
    await expect(build(['END', ' '])).rejects.toThrow(ProviderRequestError);
    expect(fake?.requests).toHaveLength(0);
    await complete(bedrockAdapter, ctx, { messages: [{ role: 'user', content: 'a' }], stop: ['\nUser:', 'END'] });
    await complete(bedrockAdapter, { ...ctx, model: 'meta.llama3-3-70b-instruct-v1:0' }, { messages: [{ role: 'user', content: 'a' }], stop: '\n' });
    expect([sent(0).inferenceConfig?.stopSequences, sent(1).inferenceConfig?.stopSequences]).toEqual([['\nUser:', 'END'], ['\n']]);
  });

  it('refuses with reasoning on a Claude model the sampling settings and forced tool calls extended thinking cannot take, and lets the ones it can through', async () => {
    const ctx = await setup((_seen, res) => sendConverse(res, [{ text: 'ok' }]));
    const thinking = { messages: [{ role: 'user' as const, content: 'a' }], reasoning_effort: 'low' as const, max_tokens: 8000, tools: [weatherTool] };
    const build = (body: Record<string, unknown>) => bedrockAdapter.buildRequest({ model: 'm', ...thinking, ...body }, ctx);
    await expect(build({ temperature: 0.2 })).rejects.toThrow(/^temperature: /);
    await expect(build({ top_p: 0.9 })).rejects.toThrow(/^top_p: /);
    await expect(build({ tool_choice: 'required' })).rejects.toThrow(/^tool_choice: /);
    await expect(build({ tool_choice: { type: 'function', function: { name: 'get_weather' } } })).rejects.toThrow(ProviderRequestError);
    expect(fake?.requests).toHaveLength(0);
    await complete(bedrockAdapter, ctx, { ...thinking, temperature: 1, top_p: 0.95, tool_choice: 'auto' });
    expect(sent()).toMatchObject({ additionalModelRequestFields: { thinking: { type: 'enabled', budget_tokens: 1600 } }, inferenceConfig: { topP: 0.95 }, toolConfig: { toolChoice: { auto: {} } } });
    // temperature 1 is Claude's default, left out beside a top_p (claude-sampling.test.ts).
    expect(sent().inferenceConfig?.temperature).toBeUndefined();
    await complete(bedrockAdapter, ctx, { ...thinking, reasoning_effort: 'none', temperature: 0.2, top_p: 0.5, tool_choice: 'required' });
    expect(sent(1)).toMatchObject({ inferenceConfig: { temperature: 0.2, topP: 0.5 }, toolConfig: { toolChoice: { any: {} } } });
    expect(sent(1).additionalModelRequestFields).toBeUndefined();
  });

  it('refuses penalties, token biases and a seed, which Converse has no setting for, and lets their neutral values through', async () => {
    const ctx = await setup((_seen, res) => sendConverse(res, [{ text: 'ok' }]));
    const build = (body: Record<string, unknown>) => bedrockAdapter.buildRequest({ model: 'm', messages: [{ role: 'user', content: 'a' }], ...body }, ctx);
    await expect(build({ frequency_penalty: 0.5 })).rejects.toThrow(/^frequency_penalty: /);
    await expect(build({ presence_penalty: 1 })).rejects.toThrow(/^presence_penalty: /);
    await expect(build({ logit_bias: { '50256': -100 } })).rejects.toThrow(/^logit_bias: /);
    await expect(build({ seed: 7 })).rejects.toThrow(ProviderRequestError);
    const out = await complete(bedrockAdapter, ctx, { messages: [{ role: 'user', content: 'a' }], frequency_penalty: 0, presence_penalty: 0, logit_bias: { '50256': 0 } });
    expect(out.ok).toBe(true);
    expect(sent()).toEqual({ messages: [{ role: 'user', content: [{ text: 'a' }] }] });
  });

  it('refuses OpenAI-only parameters that change the answer and lets their neutral values through', async () => {
    const ctx = await setup((_seen, res) => sendConverse(res, [{ text: 'ok' }]));
    for (const params of OPENAI_ONLY) {
      await expect(bedrockAdapter.buildRequest({ model: 'm', messages: [{ role: 'user', content: 'a' }], ...params }, ctx)).rejects.toThrow(new RegExp(`^${Object.keys(params)[0]}: `));
    }
    expect((await complete(bedrockAdapter, ctx, { messages: [{ role: 'user', content: 'a' }], ...OPENAI_ONLY_NEUTRAL })).ok).toBe(true);
    expect(sent()).toEqual({ messages: [{ role: 'user', content: [{ text: 'a' }] }] });
  });

  it('sends a Bedrock API key as a bearer token instead of signing', async () => {
    fake = await startFake(
      (seen) => [...requestProblems(seen), ...(seen.headers['authorization'] === 'Bearer bedrock-api-key' && seen.headers['x-amz-date'] === undefined ? [] : ['expected a bearer token and no SigV4'])],
      (_seen, res) => sendConverse(res, [{ text: 'ok' }]),
    );
    const ctx = context(bedrockAdapter, { type: 'bedrock', base_url: fake.url, region: REGION, api_key: 'bedrock-api-key' }, MODEL);
    expect(await complete(bedrockAdapter, ctx, { messages: [{ role: 'user', content: 'a' }] })).toMatchObject({ ok: true });
  });

  it('sends a Bedrock API key from AWS_BEARER_TOKEN_BEDROCK, as AWS SDKs take it, when no access keys are configured', async () => {
    const saved = { ...process.env };
    for (const key of ['AWS_ACCESS_KEY_ID', 'AWS_SECRET_ACCESS_KEY', 'AWS_SESSION_TOKEN']) delete process.env[key];
    process.env['AWS_BEARER_TOKEN_BEDROCK'] = 'bedrock-api-key-from-env';
    try {
      fake = await startFake(
        (seen) => [...requestProblems(seen), ...(seen.headers['authorization'] === 'Bearer bedrock-api-key-from-env' && seen.headers['x-amz-date'] === undefined ? [] : ['expected the bearer token and no SigV4'])],
        (_seen, res) => sendConverse(res, [{ text: 'ok' }]),
      );
      const ctx = context(bedrockAdapter, { type: 'bedrock', base_url: fake.url, region: REGION }, MODEL);
      expect(await complete(bedrockAdapter, ctx, { messages: [{ role: 'user', content: 'a' }] })).toMatchObject({ ok: true });
      // Access keys in the config are what the operator chose for this provider: they sign.
      const signed = context(bedrockAdapter, { type: 'bedrock', base_url: fake.url, region: REGION, access_key_id: CREDENTIALS.accessKeyId, secret_access_key: CREDENTIALS.secretAccessKey }, MODEL);
      const request = await bedrockAdapter.buildRequest({ model: MODEL, messages: [{ role: 'user', content: 'a' }] }, signed);
      expect(request.headers['authorization']).toMatch(/^AWS4-HMAC-SHA256 /);
    } finally {
      process.env = saved;
    }
  });

  it('refuses a conversation that starts with an assistant message, which Converse refuses, as a value it cannot take', async () => {
    const ctx = await setup((_seen, res) => sendConverse(res, [{ text: 'unused' }]));
    const greeting = { messages: [{ role: 'system' as const, content: 'Be kind.' }, { role: 'assistant' as const, content: 'Hi! How can I help?' }, { role: 'user' as const, content: 'Hello' }] };
    await expect(bedrockAdapter.buildRequest({ model: MODEL, ...greeting }, ctx)).rejects.toThrow(new ProviderRequestError('messages[1].role', 'provider type bedrock needs the conversation to start with a user message (after any system messages)'));
    expect(fake?.requests).toHaveLength(0);
  });

  it('leaves out a tool description that is empty, which Converse refuses (at least 1 character)', async () => {
    const ctx = await setup((_seen, res) => sendConverse(res, [{ text: 'ok' }]));
    const tool = { type: 'function' as const, function: { name: 'lookup', description: '', parameters: { type: 'object', properties: {} } } };
    expect(await complete(bedrockAdapter, ctx, { messages: [{ role: 'user', content: 'a' }], tools: [tool] })).toMatchObject({ ok: true });
    expect(sent().toolConfig?.tools).toEqual([{ toolSpec: { name: 'lookup', inputSchema: { json: { type: 'object', properties: {} } } } }]);
  });

  it('decodes a ConverseStream of event-stream frames split across writes', async () => {
    const ctx = await setup((_seen, res) =>
      sendFrames(res, [frame('messageStart', { role: 'assistant' }), ...textFrames(0, ['Hel', 'lo']), ...endFrames('end_turn')], { splitEvery: 7 }),
    );
    const { chunks, error } = await stream(bedrockAdapter, ctx, { messages: [{ role: 'user', content: 'Hi' }] });
    expect(error).toBeUndefined();
    expect(fake?.requests[0]?.path).toBe(`/model/${ENCODED_MODEL}/converse-stream`);
    expect(assemble(chunks)).toEqual({ role: 'assistant', text: 'Hello', toolCalls: [], finish: 'stop', usage: { prompt_tokens: 30, completion_tokens: 12, total_tokens: 42 } });
    expect(chunks.at(-1)).toMatchObject({ choices: [], usage: { total_tokens: 42 } });
  });

  it('decodes a frame of many MiB that arrives in many parts, and the small frames around it', async () => {
    const large = 'x'.repeat(12 * 1024 * 1024);
    const ctx = await setup((_seen, res) => sendFrames(res, [frame('messageStart', { role: 'assistant' }), ...textFrames(0, ['a', large, 'b']), ...endFrames('end_turn')]));
    const { chunks, error } = await stream(bedrockAdapter, ctx, { messages: [{ role: 'user', content: 'Hi' }] });
    expect(error).toBeUndefined();
    expect(assemble(chunks).text).toBe(`a${large}b`);
  });

  it('numbers parallel streamed tool calls 0, 1 whatever their content block index', async () => {
    const ctx = await setup((_seen, res) =>
      sendFrames(res, [
        frame('messageStart', { role: 'assistant' }),
        ...textFrames(0, ['Checking.']),
        ...toolFrames(1, 'tooluse_a', 'get_weather', ['{"city":', '"Paris"}']),
        ...toolFrames(2, 'tooluse_b', 'get_weather', ['{"city":"Rome"}']),
        ...endFrames('tool_use'),
      ]),
    );
    const { chunks, error } = await stream(bedrockAdapter, ctx, { messages: [{ role: 'user', content: 'a' }], tools: [weatherTool] });
    expect(error).toBeUndefined();
    const indexes = chunks.flatMap((c) => c.choices.flatMap((ch) => (ch.delta.tool_calls ?? []).map((t) => t.index)));
    expect([...new Set(indexes)]).toEqual([0, 1]);
    expect(assemble(chunks)).toMatchObject({
      text: 'Checking.',
      finish: 'tool_calls',
      toolCalls: [
        { id: 'tooluse_a', name: 'get_weather', arguments: '{"city":"Paris"}' },
        { id: 'tooluse_b', name: 'get_weather', arguments: '{"city":"Rome"}' },
      ],
    });
  });

  it('streams a tool call without arguments as "{}", as the non-streamed answer gives it', async () => {
    const ctx = await setup((_seen, res) =>
      sendFrames(res, [
        frame('messageStart', { role: 'assistant' }),
        ...toolFrames(0, 'tooluse_a', 'get_time', []),
        ...toolFrames(1, 'tooluse_b', 'get_date', ['']),
        ...toolFrames(2, 'tooluse_c', 'get_weather', ['{"city":"Rome"}']),
        ...endFrames('tool_use'),
      ]),
    );
    const { chunks, error } = await stream(bedrockAdapter, ctx, { messages: [{ role: 'user', content: 'a' }], tools: [weatherTool] });
    expect(error).toBeUndefined();
    expect(assemble(chunks).toolCalls.map((call) => call.arguments)).toEqual(['{}', '{}', '{"city":"Rome"}']);
  });

  it('maps a streamed max_tokens stop to length', async () => {
    const ctx = await setup((_seen, res) => sendFrames(res, [frame('messageStart', { role: 'assistant' }), ...textFrames(0, ['Long']), ...endFrames('max_tokens')]));
    const { chunks } = await stream(bedrockAdapter, ctx, { messages: [{ role: 'user', content: 'a' }] });
    expect(assemble(chunks).finish).toBe('length');
  });

  it('throws UpstreamStreamError for an exception frame, before any chunk when it comes first', async () => {
    const ctx = await setup((_seen, res) => sendFrames(res, [frame('messageStart', { role: 'assistant' }), exceptionFrame('throttlingException', 'Too many requests, please wait.')]));
    const { chunks, error } = await stream(bedrockAdapter, ctx, { messages: [{ role: 'user', content: 'a' }] });
    expect(chunks).toEqual([]);
    expect(error).toBeInstanceOf(UpstreamStreamError);
    expect(error).toMatchObject({ message: 'Too many requests, please wait.', errorType: 'rate_limit_error' });
  });

  it('throws UpstreamStreamError when the stream ends inside a frame or before messageStop', async () => {
    const whole = Buffer.concat([frame('messageStart', { role: 'assistant' }), ...textFrames(0, ['partial'])]);
    let truncate = true;
    const ctx = await setup((_seen, res) => sendFrames(res, [truncate ? whole.subarray(0, whole.length - 5) : whole]));
    const inside = await stream(bedrockAdapter, ctx, { messages: [{ role: 'user', content: 'a' }] });
    expect(inside.error).toBeInstanceOf(UpstreamStreamError);
    truncate = false;
    const before = await stream(bedrockAdapter, ctx, { messages: [{ role: 'user', content: 'a' }] });
    expect(assemble(before.chunks).text).toBe('partial');
    expect((before.error as Error).message).toMatch(/messageStop/);
  });

  it('fails the stream when the connection is cut', async () => {
    const ctx = await setup((_seen, res) => sendFrames(res, [frame('messageStart', { role: 'assistant' }), ...textFrames(0, ['partial'])], { cut: true }));
    const { error } = await stream(bedrockAdapter, ctx, { messages: [{ role: 'user', content: 'a' }] });
    expect(error).toBeInstanceOf(Error);
  });

  it('ends a turn that called tools with tool_calls, and one that called none with stop, whatever the stop reason says', async () => {
    const call = { toolUse: { toolUseId: 'tooluse_1', name: 'get_weather', input: { city: 'Paris' } } };
    let reply: { content: unknown[]; stop: string; frames: Uint8Array[] } = { content: [call], stop: 'end_turn', frames: [] };
    const ctx = await setup((seen, res) => (seen.path.endsWith('/converse-stream') ? sendFrames(res, reply.frames) : sendConverse(res, reply.content, reply.stop)));
    const body = { messages: [{ role: 'user' as const, content: 'Weather?' }], tools: [weatherTool] };

    // Llama on Converse says end_turn after a tool call at times; clients run tools on tool_calls.
    reply = { content: [call], stop: 'end_turn', frames: [frame('messageStart', { role: 'assistant' }), ...toolFrames(0, 'tooluse_1', 'get_weather', ['{"city":"Paris"}']), ...endFrames('end_turn')] };
    expect(await complete(bedrockAdapter, ctx, body)).toMatchObject({ ok: true, completion: { choices: [{ message: { tool_calls: [{ id: 'tooluse_1' }] }, finish_reason: 'tool_calls' }] } });
    expect(assemble((await stream(bedrockAdapter, ctx, body)).chunks)).toMatchObject({ toolCalls: [{ id: 'tooluse_1', arguments: '{"city":"Paris"}' }], finish: 'tool_calls' });

    // And tool_use after text alone: no call to run.
    reply = { content: [{ text: 'Sunny.' }], stop: 'tool_use', frames: [frame('messageStart', { role: 'assistant' }), ...textFrames(0, ['Sunny.']), ...endFrames('tool_use')] };
    expect(await complete(bedrockAdapter, ctx, body)).toMatchObject({ ok: true, completion: { choices: [{ message: { content: 'Sunny.' }, finish_reason: 'stop' }] } });
    expect(assemble((await stream(bedrockAdapter, ctx, body)).chunks)).toMatchObject({ text: 'Sunny.', toolCalls: [], finish: 'stop' });
  });

  it('fails at once on a frame whose length is corrupt, rather than wait for the rest of the stream as that frame', async () => {
    const frames = [frame('messageStart', { role: 'assistant' }), ...textFrames(0, ['Hello']), ...endFrames('end_turn')];
    const bad = Buffer.from(frames[0] ?? new Uint8Array());
    bad.writeUInt32BE(bad.readUInt32BE(0) + 5000, 0);
    // The connection stays open, as a proxy's would: only the prelude's own CRC can tell.
    const ctx = await setup((_seen, res) => sendFrames(res, [bad, ...frames.slice(1)], { hold: true }));
    const { chunks, error } = await stream(bedrockAdapter, ctx, { messages: [{ role: 'user', content: 'a' }] });
    expect(chunks).toEqual([]);
    expect((error as Error).message).toMatch(/malformed event-stream frame: its prelude checksum does not match/);
  });

  it('rejects a frame whose CRC does not match', async () => {
    const bad = Buffer.from(frame('messageStart', { role: 'assistant' }));
    bad[bad.length - 1] = (bad[bad.length - 1] ?? 0) ^ 0xff;
    const ctx = await setup((_seen, res) => sendFrames(res, [bad]));
    const { error } = await stream(bedrockAdapter, ctx, { messages: [{ role: 'user', content: 'a' }] });
    expect((error as Error).message).toMatch(/malformed event-stream frame/);
  });

  it.each([
    [400, 'ValidationException', 'invalid_request_error', false],
    [403, 'AccessDeniedException', 'permission_error', true],
    // SigV4 failures (wrong secret, clock skew, missing signature) come from AWS's front end, not Bedrock's list.
    [403, 'InvalidSignatureException', 'authentication_error', true],
    [403, 'IncompleteSignatureException', 'authentication_error', true],
    [403, 'MissingAuthenticationTokenException', 'authentication_error', true],
    [403, 'UnrecognizedClientException', 'authentication_error', true],
    [404, 'ResourceNotFoundException', 'not_found_error', false],
    [424, 'ModelErrorException', 'api_error', true],
    [424, 'ModelStreamErrorException', 'api_error', true],
    [429, 'ThrottlingException', 'rate_limit_error', true],
    [500, 'InternalServerException', 'api_error', true],
    [503, 'ServiceUnavailableException', 'api_error', true],
  ] as const)('classifies HTTP %i %s', async (status, exception, type, fallback) => {
    const ctx = await setup((_seen, res) => sendError(res, status, exception, `${exception} happened`));
    const out = await complete(bedrockAdapter, ctx, { messages: [{ role: 'user', content: 'a' }] });
    expect(out).toEqual({ ok: false, error: { status, message: `${exception} happened`, type, code: exception, param: null, fallback } });
  });

  it.each([
    "This model doesn't support system messages. Try again without system messages.",
    "This model doesn't support the toolConfig.toolChoice.tool field. Remove toolConfig.toolChoice.tool and try again.",
    'Invocation of model ID meta.llama3-3-70b-instruct-v1:0 with on-demand throughput isn\u2019t supported. Retry your request with the ID or ARN of an inference profile that contains this model.',
    'Malformed input request: #: extraneous key [reasoningConfig] is not permitted, please reformat your input and try again.',
    'messages.2.content: Conversation blocks and tool result blocks cannot be provided in the same turn.',
  ])('answers a ValidationException saying the model does not support something as unsupported_value, which falls back: %s', async (message) => {
    const ctx = await setup((_seen, res) => sendError(res, 400, 'ValidationException', message));
    const out = await complete(bedrockAdapter, ctx, { messages: [{ role: 'user', content: 'a' }] });
    expect(out).toEqual({ ok: false, error: { status: 400, message, type: 'invalid_request_error', code: 'unsupported_value', param: null, fallback: true } });
  });
});
