// temperature beside top_p, as OpenAI clients send them, to Claude models that
// take only one of the two (Sonnet 4.5 and later), on anthropic and bedrock.
import OpenAI from 'openai';
import { afterEach, describe, expect, it } from 'vitest';
import { API_KEY, completion, openaiProvider, sendJson, startGateway, startUpstream, type Gateway, type Upstream } from '../harness.js';
import { sendMessage } from '../providers/anthropic/fixtures.js';
import { messagesRequest, validateAnthropic } from '../providers/anthropic/wire-schema.js';
import { sendConverse, sendError } from '../providers/bedrock/fixtures.js';
import { converseRequest, CREDENTIALS, REGION, requestProblems } from '../providers/bedrock/wire-schema.js';
import { json, startFake, type FakeUpstream } from '../providers/shared/fake-upstream.js';

let gateway: Gateway | undefined;
let upstream: Upstream | undefined;
const fakes: FakeUpstream[] = [];

afterEach(async () => {
  const problems = fakes.flatMap((fake) => fake.problems);
  await gateway?.close();
  await upstream?.close();
  for (const fake of fakes.splice(0)) await fake.close();
  gateway = undefined;
  upstream = undefined;
  expect(problems).toEqual([]);
});

async function setup(): Promise<{ client: OpenAI; anthropic: FakeUpstream; bedrock: FakeUpstream }> {
  const anthropic = await startFake(validateAnthropic, (_seen, res) => sendMessage(res, [{ type: 'text', text: 'hi' }]));
  const bedrock = await startFake(requestProblems, (_seen, res) => sendConverse(res, [{ text: 'hi' }]));
  fakes.push(anthropic, bedrock);
  gateway = await startGateway({
    providers: {
      claude: { type: 'anthropic', base_url: anthropic.url, api_key: 'sk-ant-test' },
      converse: { type: 'bedrock', base_url: bedrock.url, region: REGION, access_key_id: CREDENTIALS.accessKeyId, secret_access_key: CREDENTIALS.secretAccessKey },
    },
    models: [
      { id: 'acme/claude', endpoints: [{ provider: 'claude', model: 'claude-sonnet-4-5' }] },
      { id: 'acme/converse', endpoints: [{ provider: 'converse', model: 'us.anthropic.claude-sonnet-4-5-20250929-v1:0' }] },
    ],
  });
  return { client: new OpenAI({ baseURL: gateway.baseURL, apiKey: API_KEY, maxRetries: 0 }), anthropic, bedrock };
}

describe('temperature and top_p together, for a Claude model that takes only one', () => {
  it.each([
    { given: { temperature: 0.2, top_p: 1 }, sent: { temperature: 0.2 } },
    { given: { temperature: 1, top_p: 0.9 }, sent: { top_p: 0.9 } },
  ])('leaves out the one at its default: $given sends $sent', async ({ given, sent }) => {
    const { client, anthropic, bedrock } = await setup();
    const messages: OpenAI.ChatCompletionMessageParam[] = [{ role: 'user', content: 'Hello' }];

    const fromClaude = await client.chat.completions.create({ model: 'acme/claude', messages, ...given });
    expect(fromClaude.choices[0]?.message.content).toBe('hi');
    const body = messagesRequest.parse(anthropic.requests[0]?.body);
    expect({ temperature: body.temperature, top_p: body.top_p }).toEqual({ temperature: undefined, top_p: undefined, ...sent });

    const fromConverse = await client.chat.completions.create({ model: 'acme/converse', messages, ...given });
    expect(fromConverse.choices[0]?.message.content).toBe('hi');
    const config = converseRequest.parse(bedrock.requests[0]?.body).inferenceConfig;
    expect({ temperature: config?.temperature, top_p: config?.topP }).toEqual({ temperature: undefined, top_p: undefined, ...sent });
  });
});

describe('temperature and top_p together, neither at its default, for a Claude model that takes only one', () => {
  const refusal = '`temperature` and `top_p` cannot both be specified for this model. Please use only one.';

  it('are refused by the model as what it cannot do, and the next endpoint answers', async () => {
    // The models' own answers, as Anthropic and Bedrock give them.
    const anthropic = await startFake(() => [], (_seen, res) => json(res, 400, { type: 'error', error: { type: 'invalid_request_error', message: refusal } }));
    const bedrock = await startFake(() => [], (_seen, res) => sendError(res, 400, 'ValidationException', `The model returned the following errors: ${refusal}`));
    fakes.push(anthropic, bedrock);
    upstream = await startUpstream((_body, res) => sendJson(res, 200, completion('from openai')));
    gateway = await startGateway({
      providers: {
        claude: { type: 'anthropic', base_url: anthropic.url, api_key: 'sk-ant-test' },
        converse: { type: 'bedrock', base_url: bedrock.url, region: REGION, access_key_id: CREDENTIALS.accessKeyId, secret_access_key: CREDENTIALS.secretAccessKey },
        oa: openaiProvider(upstream),
      },
      models: [
        {
          id: 'acme/claude',
          endpoints: [
            { provider: 'claude', model: 'claude-sonnet-4-5' },
            { provider: 'converse', model: 'us.anthropic.claude-sonnet-4-5-20250929-v1:0' },
            { provider: 'oa', model: 'gpt' },
          ],
        },
        { id: 'acme/only-claude', endpoints: [{ provider: 'claude', model: 'claude-sonnet-4-5' }] },
      ],
    });
    const client = new OpenAI({ baseURL: gateway.baseURL, apiKey: API_KEY, maxRetries: 0 });
    const messages: OpenAI.ChatCompletionMessageParam[] = [{ role: 'user', content: 'Hello' }];

    const response = await client.chat.completions.create({ model: 'acme/claude', messages, temperature: 0.2, top_p: 0.9 }).withResponse();
    expect(response.data.choices[0]?.message.content).toBe('from openai');
    expect(response.response.headers.get('x-sluice-provider')).toBe('oa');
    expect([anthropic.requests.length, bedrock.requests.length]).toEqual([1, 1]);

    const error = await client.chat.completions.create({ model: 'acme/only-claude', messages, temperature: 0.2, top_p: 0.9 }).catch((err: unknown) => err);
    expect(error).toBeInstanceOf(OpenAI.BadRequestError);
    expect((error as InstanceType<typeof OpenAI.BadRequestError>).error).toMatchObject({ code: 'unsupported_value' });
    expect((error as InstanceType<typeof OpenAI.BadRequestError>).message).toContain(refusal);
  });
});

describe('reasoning for a Claude model without extended thinking', () => {
  it.each(["'claude-3-5-haiku-20241022' does not support thinking.", '"thinking.type.enabled" is not supported for this model. Use "thinking.type.adaptive" and "output_config.effort" to control thinking behavior.'])(
    'is refused by the model as what it cannot do, and the next endpoint answers (%s)',
    async (refusal) => {
      const anthropic = await startFake(() => [], (_seen, res) => json(res, 400, { type: 'error', error: { type: 'invalid_request_error', message: refusal } }));
      fakes.push(anthropic);
      upstream = await startUpstream((_body, res) => sendJson(res, 200, completion('from openai')));
      gateway = await startGateway({
        providers: { claude: { type: 'anthropic', base_url: anthropic.url, api_key: 'sk-ant-test' }, oa: openaiProvider(upstream) },
        models: [{ id: 'acme/claude', endpoints: [{ provider: 'claude', model: 'claude-3-5-haiku-20241022' }, { provider: 'oa', model: 'gpt' }] }],
      });
      const client = new OpenAI({ baseURL: gateway.baseURL, apiKey: API_KEY, maxRetries: 0 });
      const response = await client.chat.completions.create({ model: 'acme/claude', messages: [{ role: 'user', content: 'Hello' }], reasoning_effort: 'low' }).withResponse();
      expect(response.data.choices[0]?.message.content).toBe('from openai');
      expect(response.response.headers.get('x-sluice-provider')).toBe('oa');
    },
  );
});
