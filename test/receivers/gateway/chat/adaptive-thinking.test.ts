// reasoning_effort through the openai SDK to Claude models with adaptive
// thinking (4.6 and later, Mythos, Fable), on anthropic and bedrock: the fakes
// refuse what those models refuse (a budget or `disabled` on the ones that take
// adaptive thinking only, xhigh where the model has none).
import OpenAI from 'openai';
import { afterEach, describe, expect, it } from 'vitest';
import { API_KEY, startGateway, type Gateway } from '../harness.js';
import { messageEnd, messageStart, sendEvents, sendMessage, textBlock } from '../providers/anthropic/fixtures.js';
import { validateAnthropic } from '../providers/anthropic/wire-schema.js';
import { endFrames, frame, sendConverse, sendFrames, textFrames } from '../providers/bedrock/fixtures.js';
import { CREDENTIALS, REGION, requestProblems } from '../providers/bedrock/wire-schema.js';
import { startFake, type FakeUpstream } from '../providers/shared/fake-upstream.js';

let gateway: Gateway | undefined;
const fakes: FakeUpstream[] = [];

afterEach(async () => {
  const problems = fakes.flatMap((fake) => fake.problems);
  await gateway?.close();
  for (const fake of fakes.splice(0)) await fake.close();
  gateway = undefined;
  expect(problems).toEqual([]);
});

const SIGNATURE = 'EqQBCkYIBxgCKkDsignature==';
const THINKING = { type: 'thinking', thinking: 'Two and two.', signature: SIGNATURE };

type ReasoningMessage = OpenAI.Chat.Completions.ChatCompletionMessage & { reasoning?: string };
type ReasoningDelta = { reasoning?: string; content?: string | null };

/** The gateway's models: claude/<model id> and converse/<model id>, each on its one endpoint. */
async function setup(anthropicModels: string[], bedrockModels: string[]): Promise<{ client: OpenAI; anthropic: FakeUpstream; bedrock: FakeUpstream }> {
  const anthropic = await startFake(validateAnthropic, (seen, res) => {
    if ((seen.body as { stream?: boolean }).stream !== true) return sendMessage(res, [THINKING, { type: 'text', text: 'Four.' }]);
    sendEvents(res, [
      messageStart(),
      { event: 'content_block_start', data: { type: 'content_block_start', index: 0, content_block: { type: 'thinking', thinking: '' } } },
      { event: 'content_block_delta', data: { type: 'content_block_delta', index: 0, delta: { type: 'thinking_delta', thinking: 'Two and two.' } } },
      { event: 'content_block_delta', data: { type: 'content_block_delta', index: 0, delta: { type: 'signature_delta', signature: SIGNATURE } } },
      { event: 'content_block_stop', data: { type: 'content_block_stop', index: 0 } },
      ...textBlock(1, ['Four.']),
      ...messageEnd('end_turn'),
    ]);
  });
  const bedrock = await startFake(requestProblems, (seen, res) => {
    const reasoning = { reasoningContent: { reasoningText: { text: 'Two and two.', signature: SIGNATURE } } };
    if (!seen.path.endsWith('/converse-stream')) return sendConverse(res, [reasoning, { text: 'Four.' }]);
    void sendFrames(res, [frame('messageStart', { role: 'assistant' }), frame('contentBlockDelta', { contentBlockIndex: 0, delta: { reasoningContent: { text: 'Two and two.' } } }), frame('contentBlockDelta', { contentBlockIndex: 0, delta: { reasoningContent: { signature: SIGNATURE } } }), frame('contentBlockStop', { contentBlockIndex: 0 }), ...textFrames(1, ['Four.']), ...endFrames('end_turn')]);
  });
  fakes.push(anthropic, bedrock);
  gateway = await startGateway({
    providers: {
      claude: { type: 'anthropic', base_url: anthropic.url, api_key: 'sk-ant-test' },
      converse: { type: 'bedrock', base_url: bedrock.url, region: REGION, access_key_id: CREDENTIALS.accessKeyId, secret_access_key: CREDENTIALS.secretAccessKey },
    },
    models: [
      ...anthropicModels.map((model) => ({ id: `claude/${model}`, endpoints: [{ provider: 'claude', model }] })),
      ...bedrockModels.map((model) => ({ id: `converse/${model}`, endpoints: [{ provider: 'converse', model }] })),
    ],
  });
  return { client: new OpenAI({ baseURL: gateway.baseURL, apiKey: API_KEY, maxRetries: 0 }), anthropic, bedrock };
}

function sent(fake: FakeUpstream, index: number): Record<string, unknown> {
  return fake.requests[index]?.body as Record<string, unknown>;
}

async function streamed(stream: AsyncIterable<OpenAI.Chat.Completions.ChatCompletionChunk>): Promise<{ reasoning: string; text: string }> {
  let reasoning = '';
  let text = '';
  for await (const part of stream) {
    const delta = part.choices[0]?.delta as ReasoningDelta | undefined;
    reasoning += delta?.reasoning ?? '';
    text += delta?.content ?? '';
  }
  return { reasoning, text };
}

const messages: OpenAI.ChatCompletionMessageParam[] = [{ role: 'user', content: 'Two and two?' }];

describe('reasoning_effort on Claude models with adaptive thinking', () => {
  it('anthropic: becomes adaptive thinking with output_config.effort on Opus 4.7, whose thinking comes back whole and streamed', async () => {
    const { client, anthropic } = await setup(['claude-opus-4-7'], []);
    const answer = await client.chat.completions.create({ model: 'claude/claude-opus-4-7', messages, max_tokens: 2000, reasoning_effort: 'high' });
    const message = answer.choices[0]?.message as ReasoningMessage;
    expect([message.reasoning, message.content]).toEqual(['Two and two.', 'Four.']);
    // Opus 4.7 leaves the thinking text out unless asked to summarize it.
    expect(sent(anthropic, 0)).toMatchObject({ max_tokens: 2000, thinking: { type: 'adaptive', display: 'summarized' }, output_config: { effort: 'high' } });

    const stream = await client.chat.completions.create({ model: 'claude/claude-opus-4-7', messages, reasoning_effort: 'low', stream: true });
    expect(await streamed(stream)).toEqual({ reasoning: 'Two and two.', text: 'Four.' });
    expect(sent(anthropic, 1)).toMatchObject({ thinking: { type: 'adaptive', display: 'summarized' }, output_config: { effort: 'low' } });
  });

  it('anthropic: minimal is low; xhigh and max go as they are where the model takes them, xhigh as high where it does not', async () => {
    const { client, anthropic } = await setup(['claude-opus-4-7', 'claude-sonnet-4-6'], []);
    const asked = [
      ['claude-opus-4-7', 'minimal'],
      ['claude-opus-4-7', 'xhigh'],
      ['claude-opus-4-7', 'max'],
      ['claude-sonnet-4-6', 'xhigh'],
      ['claude-sonnet-4-6', 'max'],
      ['claude-sonnet-4-6', 'medium'],
    ] as const;
    for (const [model, effort] of asked) await client.chat.completions.create({ model: `claude/${model}`, messages, reasoning_effort: effort });
    expect(anthropic.requests.map((request) => (request.body as { output_config?: unknown }).output_config)).toEqual(['low', 'xhigh', 'max', 'high', 'max', 'medium'].map((effort) => ({ effort })));
    expect(anthropic.requests.every((request) => (request.body as { thinking?: { type: string } }).thinking?.type === 'adaptive')).toBe(true);
  });

  it('anthropic: none leaves thinking out (a model with adaptive thinking only refuses disabled), and a budget keeps enabled on Sonnet 4.6', async () => {
    const { client, anthropic } = await setup(['claude-opus-4-7', 'claude-sonnet-4-6'], []);
    await client.chat.completions.create({ model: 'claude/claude-opus-4-7', messages, reasoning_effort: 'none' });
    expect(sent(anthropic, 0)).not.toHaveProperty('thinking');
    expect(sent(anthropic, 0)).not.toHaveProperty('output_config');
    await client.chat.completions.create({ model: 'claude/claude-sonnet-4-6', messages, max_tokens: 4000, reasoning: { max_tokens: 2048 } } as OpenAI.Chat.Completions.ChatCompletionCreateParamsNonStreaming);
    expect(sent(anthropic, 1)).toMatchObject({ thinking: { type: 'enabled', budget_tokens: 2048 } });
    expect(sent(anthropic, 1)).not.toHaveProperty('output_config');
  });

  it('none is disabled on Opus 5 and Sonnet 5, which think by default and take it, on anthropic and bedrock; Opus 5.5 and Fable 5.1, which refuse it, get no thinking field', async () => {
    const { client, anthropic, bedrock } = await setup(['claude-opus-5', 'claude-sonnet-5', 'claude-opus-5-5', 'claude-fable-5-1'], ['anthropic.claude-opus-5', 'anthropic.claude-fable-5']);
    for (const model of ['claude-opus-5', 'claude-sonnet-5', 'claude-opus-5-5', 'claude-fable-5-1']) await client.chat.completions.create({ model: `claude/${model}`, messages, reasoning_effort: 'none' });
    expect(anthropic.requests.map((request) => (request.body as { thinking?: unknown }).thinking)).toEqual([{ type: 'disabled' }, { type: 'disabled' }, undefined, undefined]);
    expect(anthropic.requests.every((request) => !('output_config' in (request.body as object)))).toBe(true);
    for (const model of ['anthropic.claude-opus-5', 'anthropic.claude-fable-5']) await client.chat.completions.create({ model: `converse/${model}`, messages, reasoning_effort: 'none' });
    expect(sent(bedrock, 0)['additionalModelRequestFields']).toEqual({ thinking: { type: 'disabled' } });
    expect(sent(bedrock, 1)).not.toHaveProperty('additionalModelRequestFields');
  });

  it('anthropic: with adaptive thinking, a temperature other than 1 is refused as with a budget, and 1 goes through', async () => {
    const { client, anthropic } = await setup(['claude-sonnet-4-6'], []);
    const error = await client.chat.completions.create({ model: 'claude/claude-sonnet-4-6', messages, reasoning_effort: 'low', temperature: 0.3 }).catch((err: unknown) => err);
    expect(error).toBeInstanceOf(OpenAI.BadRequestError);
    expect((error as InstanceType<typeof OpenAI.BadRequestError>).error).toMatchObject({ code: 'unsupported_value', param: 'temperature' });
    await client.chat.completions.create({ model: 'claude/claude-sonnet-4-6', messages, reasoning_effort: 'low', temperature: 1 });
    expect(sent(anthropic, 0)).toMatchObject({ temperature: 1, thinking: { type: 'adaptive' } });
  });

  it('bedrock: Claude models get adaptive thinking and output_config in additionalModelRequestFields, with their thinking back whole and streamed', async () => {
    const { client, bedrock } = await setup([], ['us.anthropic.claude-opus-4-7', 'anthropic.claude-mythos-preview', 'anthropic.claude-opus-4-6-v1:0']);
    const answer = await client.chat.completions.create({ model: 'converse/us.anthropic.claude-opus-4-7', messages, reasoning_effort: 'xhigh' });
    expect((answer.choices[0]?.message as ReasoningMessage).reasoning).toBe('Two and two.');
    expect(sent(bedrock, 0)).toMatchObject({ additionalModelRequestFields: { thinking: { type: 'adaptive', display: 'summarized' }, output_config: { effort: 'xhigh' } }, inferenceConfig: { maxTokens: 16_384 } });

    const stream = await client.chat.completions.create({ model: 'converse/anthropic.claude-mythos-preview', messages, reasoning_effort: 'xhigh', stream: true });
    expect(await streamed(stream)).toEqual({ reasoning: 'Two and two.', text: 'Four.' });
    expect(sent(bedrock, 1)['additionalModelRequestFields']).toEqual({ thinking: { type: 'adaptive', display: 'summarized' }, output_config: { effort: 'high' } });

    await client.chat.completions.create({ model: 'converse/anthropic.claude-opus-4-6-v1:0', messages, reasoning: { max_tokens: 2048 } } as OpenAI.Chat.Completions.ChatCompletionCreateParamsNonStreaming);
    expect(sent(bedrock, 2)['additionalModelRequestFields']).toEqual({ thinking: { type: 'enabled', budget_tokens: 2048 } });
  });
});

describe('a thinking budget for a Claude model that takes adaptive thinking only', () => {
  it('is a 400 unsupported_value naming reasoning.max_tokens, and the next endpoint answers', async () => {
    const { anthropic, bedrock } = await setup([], []);
    await gateway?.close();
    gateway = await startGateway({
      providers: {
        claude: { type: 'anthropic', base_url: anthropic.url, api_key: 'sk-ant-test' },
        converse: { type: 'bedrock', base_url: bedrock.url, region: REGION, access_key_id: CREDENTIALS.accessKeyId, secret_access_key: CREDENTIALS.secretAccessKey },
      },
      models: [
        { id: 'acme/opus', endpoints: [{ provider: 'claude', model: 'claude-opus-4-7' }, { provider: 'converse', model: 'anthropic.claude-fable-5' }, { provider: 'converse', model: 'anthropic.claude-sonnet-4-5-20250929-v1:0' }] },
        { id: 'acme/only-opus', endpoints: [{ provider: 'claude', model: 'claude-opus-4-7' }] },
      ],
    });
    const client = new OpenAI({ baseURL: gateway.baseURL, apiKey: API_KEY, maxRetries: 0 });
    const request = { messages, reasoning: { max_tokens: 4096 } } as unknown as OpenAI.Chat.Completions.ChatCompletionCreateParamsNonStreaming;

    const response = await client.chat.completions.create({ ...request, model: 'acme/opus' }).withResponse();
    expect(response.data.choices[0]?.message.content).toBe('Four.');
    // Refused before sending to the two that take adaptive thinking only; Sonnet 4.5 takes the budget.
    expect(anthropic.requests.length).toBe(0);
    expect(bedrock.requests.map((seen) => decodeURIComponent(seen.path))).toEqual(['/model/anthropic.claude-sonnet-4-5-20250929-v1:0/converse']);
    expect(sent(bedrock, 0)['additionalModelRequestFields']).toEqual({ thinking: { type: 'enabled', budget_tokens: 4096 } });

    const error = await client.chat.completions.create({ ...request, model: 'acme/only-opus' }).catch((err: unknown) => err);
    expect(error).toBeInstanceOf(OpenAI.BadRequestError);
    expect((error as InstanceType<typeof OpenAI.BadRequestError>).error).toMatchObject({ code: 'unsupported_value', param: 'reasoning.max_tokens' });
    expect((error as InstanceType<typeof OpenAI.BadRequestError>).message).toContain('claude-opus-4-7 takes adaptive thinking only');
  });
});
