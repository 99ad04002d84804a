// The anthropic, google and bedrock adapters driven through the gateway by the
// official openai SDK, against fakes that check each provider's documented
// request shape (and Bedrock's SigV4 signature).
import type { ServerResponse } from 'node:http';
import OpenAI from 'openai';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { SpanKind } from '../../src/otlp/model.js';
import { API_KEY, attr, startGateway, type Gateway } from '../receivers/gateway/harness.js';
import { message, messageEnd, messageStart, sendEvents, sendMessage, textBlock, toolBlock } from '../receivers/gateway/providers/anthropic/fixtures.js';
import { validateAnthropic } from '../receivers/gateway/providers/anthropic/wire-schema.js';
import { endFrames, exceptionFrame, frame, sendConverse, sendError, sendFrames, textFrames } from '../receivers/gateway/providers/bedrock/fixtures.js';
import { CREDENTIALS, REGION, requestProblems, sigV4Problems } from '../receivers/gateway/providers/bedrock/wire-schema.js';
import { json, PNG_BASE64, PNG_DATA_URL, servePng, startFake, type FakeUpstream, type Seen } from '../receivers/gateway/providers/shared/fake-upstream.js';
import { response, sendResponse, sendStream } from '../receivers/gateway/providers/google/fixtures.js';
import { validateGemini } from '../receivers/gateway/providers/google/wire-schema.js';

const BEDROCK_MODEL = 'anthropic.claude-sonnet-4-5-20250929-v1:0';
const SIGNATURE = 'c2lnbmF0dXJlLW9mLXRoZS10aG91Z2h0cw==';

type Reply = (seen: Seen, res: ServerResponse) => void | Promise<void>;

let anthropic: FakeUpstream;
let google: FakeUpstream;
let bedrock: FakeUpstream;
let gateway: Gateway;
let client: OpenAI;
const replies: { anthropic: Reply; google: Reply; bedrock: Reply } = { anthropic: () => undefined, google: () => undefined, bedrock: () => undefined };

beforeEach(async () => {
  anthropic = await startFake(validateAnthropic, (seen, res) => replies.anthropic(seen, res));
  google = await startFake(validateGemini, (seen, res) => (seen.path.startsWith('/images/') ? servePng(res) : replies.google(seen, res)));
  bedrock = await startFake(async (seen) => [...requestProblems(seen), ...(await sigV4Problems(seen))], (seen, res) => replies.bedrock(seen, res));
  gateway = await startGateway({
    providers: {
      anthropic: { type: 'anthropic', base_url: anthropic.url, api_key: 'sk-ant-test' },
      google: { type: 'google', base_url: google.url, api_key: 'gm-test-key', image_fetch: { allow_private_addresses: true, timeout: '5s', max_size: '1MiB' } },
      bedrock: { type: 'bedrock', base_url: bedrock.url, region: REGION, access_key_id: CREDENTIALS.accessKeyId, secret_access_key: CREDENTIALS.secretAccessKey },
    },
    models: [
      {
        id: 'anthropic/claude-sonnet-4.5',
        max_tokens: 64000,
        endpoints: [
          { provider: 'anthropic', model: 'claude-sonnet-4-5' },
          { provider: 'bedrock', model: BEDROCK_MODEL },
        ],
      },
      { id: 'google/gemini-2.5-flash', endpoints: [{ provider: 'google', model: 'gemini-2.5-flash' }] },
      {
        id: 'meta/llama-3.3-70b',
        endpoints: [
          { provider: 'bedrock', model: 'meta.llama3-3-70b-instruct-v1:0' },
          { provider: 'anthropic', model: 'claude-sonnet-4-5' },
        ],
      },
    ],
  });
  client = new OpenAI({ baseURL: gateway.baseURL, apiKey: API_KEY, maxRetries: 0 });
});

afterEach(async () => {
  await gateway.close();
  const problems = [...anthropic.problems, ...google.problems, ...bedrock.problems];
  await Promise.all([anthropic.close(), google.close(), bedrock.close()]);
  replies.anthropic = replies.google = replies.bedrock = () => undefined;
  expect(problems).toEqual([]);
});

const CLAUDE = 'anthropic/claude-sonnet-4.5';
const GEMINI = 'google/gemini-2.5-flash';
const weatherTool: OpenAI.ChatCompletionTool = { type: 'function', function: { name: 'get_weather', description: 'Weather for a city', parameters: { type: 'object', properties: { city: { type: 'string' } }, required: ['city'], additionalProperties: false } } };

function withGateway(body: OpenAI.ChatCompletionCreateParamsNonStreaming, gatewayOptions: Record<string, unknown>): OpenAI.ChatCompletionCreateParamsNonStreaming {
  return { ...body, providerOptions: { gateway: gatewayOptions } } as OpenAI.ChatCompletionCreateParamsNonStreaming;
}

async function collect(stream: AsyncIterable<OpenAI.ChatCompletionChunk>): Promise<{ text: string; finish: string | null; usage: OpenAI.CompletionUsage | null | undefined }> {
  let text = '';
  let finish: string | null = null;
  let usage: OpenAI.CompletionUsage | null | undefined;
  for await (const chunk of stream) {
    text += chunk.choices[0]?.delta.content ?? '';
    finish = chunk.choices[0]?.finish_reason ?? finish;
    if (chunk.usage != null) usage = chunk.usage;
  }
  return { text, finish, usage };
}

describe('provider adapters through the gateway with the openai SDK', () => {
  it('answers from Anthropic, with the catalog max_tokens sent upstream', async () => {
    replies.anthropic = (_seen, res) => sendMessage(res, [{ type: 'text', text: 'Hello from Claude' }]);
    const { data, response: res } = await client.chat.completions.create({ model: CLAUDE, messages: [{ role: 'system', content: 'Be brief.' }, { role: 'user', content: 'Hi' }] }).withResponse();
    expect(data.choices[0]?.message.content).toBe('Hello from Claude');
    expect(data.usage).toMatchObject({ prompt_tokens: 12, completion_tokens: 6, total_tokens: 18 });
    expect(res.headers.get('x-sluice-provider')).toBe('anthropic');
    expect(anthropic.requests[0]?.body).toMatchObject({ model: 'claude-sonnet-4-5', max_tokens: 64000, system: 'Be brief.' });
  });

  it('falls back from Anthropic answering 529 to Bedrock, and the client sees one normal completion', async () => {
    replies.anthropic = (_seen, res) => json(res, 529, { type: 'error', error: { type: 'overloaded_error', message: 'Overloaded' } });
    replies.bedrock = (_seen, res) => sendConverse(res, [{ text: 'Hello from Bedrock' }]);
    const { data, response: res } = await client.chat.completions.create({ model: CLAUDE, messages: [{ role: 'user', content: 'Hi' }] }).withResponse();
    expect(data).toMatchObject({ object: 'chat.completion', model: BEDROCK_MODEL, choices: [{ index: 0, message: { role: 'assistant', content: 'Hello from Bedrock' }, finish_reason: 'stop' }], usage: { prompt_tokens: 30, completion_tokens: 12, total_tokens: 42 } });
    expect(res.headers.get('x-sluice-provider')).toBe('bedrock');
    expect(res.headers.get('x-sluice-attempts')).toBe('2');
    expect(anthropic.requests).toHaveLength(1);
    expect(bedrock.requests[0]?.path).toBe(`/model/${encodeURIComponent(BEDROCK_MODEL)}/converse`);

    const clients = (await gateway.spans(3)).filter((s) => s.kind === SpanKind.CLIENT);
    expect(clients.map((s) => [attr(s, 'gen_ai.provider.name'), attr(s, 'sluice.provider'), attr(s, 'gen_ai.request.model')])).toEqual([
      ['anthropic', 'anthropic', 'claude-sonnet-4-5'],
      ['aws.bedrock', 'bedrock', BEDROCK_MODEL],
    ]);
    expect(attr(clients[0], 'error.type')).toBe('529');
    expect(attr(clients[1], 'gen_ai.usage.input_tokens')).toBe(30);
  });

  it('switches the serving provider with providerOptions.gateway.order', async () => {
    replies.anthropic = (_seen, res) => sendMessage(res, [{ type: 'text', text: 'Claude' }]);
    replies.bedrock = (_seen, res) => sendConverse(res, [{ text: 'Bedrock' }]);
    const first = await client.chat.completions.create(withGateway({ model: CLAUDE, messages: [{ role: 'user', content: 'Hi' }] }, { order: ['bedrock'] })).withResponse();
    expect([first.data.choices[0]?.message.content, first.response.headers.get('x-sluice-provider')]).toEqual(['Bedrock', 'bedrock']);
    const second = await client.chat.completions.create(withGateway({ model: CLAUDE, messages: [{ role: 'user', content: 'Hi' }] }, { order: ['anthropic', 'bedrock'] })).withResponse();
    expect([second.data.choices[0]?.message.content, second.response.headers.get('x-sluice-provider')]).toEqual(['Claude', 'anthropic']);
  });

  it('falls back in a stream when Anthropic reports overloaded before any content', async () => {
    replies.anthropic = (_seen, res) => sendEvents(res, [messageStart(), { event: 'error', data: { type: 'error', error: { type: 'overloaded_error', message: 'Overloaded' } } }]);
    replies.bedrock = (_seen, res) => sendFrames(res, [frame('messageStart', { role: 'assistant' }), ...textFrames(0, ['Hi ', 'from ', 'Bedrock']), ...endFrames('end_turn')]);
    const stream = await client.chat.completions.create({ model: CLAUDE, messages: [{ role: 'user', content: 'Hi' }], stream: true, stream_options: { include_usage: true } });
    expect(await collect(stream)).toEqual({ text: 'Hi from Bedrock', finish: 'stop', usage: { prompt_tokens: 30, completion_tokens: 12, total_tokens: 42 } });
  });

  it("falls back when Bedrock says its model does not support part of the request, or its stream failed before any content", async () => {
    const LLAMA = 'meta/llama-3.3-70b';
    replies.anthropic = (_seen, res) => sendMessage(res, [{ type: 'text', text: 'From Claude' }]);
    // Converse refuses what the model cannot do with a ValidationException saying so (Llama takes no forced tool choice).
    replies.bedrock = (_seen, res) => sendError(res, 400, 'ValidationException', "This model doesn't support the toolConfig.toolChoice.any field. Remove toolConfig.toolChoice.any and try again.");
    const forced = await client.chat.completions.create({ model: LLAMA, messages: [{ role: 'user', content: 'Hi' }], tools: [weatherTool], tool_choice: 'required' }).withResponse();
    expect([forced.data.choices[0]?.message.content, forced.response.headers.get('x-sluice-provider'), forced.response.headers.get('x-sluice-attempts')]).toEqual(['From Claude', 'anthropic', '2']);

    // With no other endpoint the client gets Bedrock's words as a 400 unsupported_value.
    const alone = await client.chat.completions.create(withGateway({ model: LLAMA, messages: [{ role: 'user', content: 'Hi' }], tools: [weatherTool], tool_choice: 'required' }, { order: ['bedrock'], only: ['bedrock'] })).then(
      () => undefined,
      (e: unknown) => e as InstanceType<typeof OpenAI.APIError>,
    );
    expect([alone?.status, alone?.code, alone?.message]).toEqual([400, 'unsupported_value', "400 This model doesn't support the toolConfig.toolChoice.any field. Remove toolConfig.toolChoice.any and try again."]);

    // The same refusal as a stream's first frame, and a modelStreamErrorException (the model failed while streaming, a 424 as ModelErrorException is).
    replies.anthropic = (_seen, res) => sendEvents(res, [messageStart(), ...textBlock(0, ['From Claude']), ...messageEnd('end_turn')]);
    for (const [exception, message] of [
      ['validationException', "This model doesn't support tool use in streaming mode."],
      ['modelStreamErrorException', 'An error occurred while streaming the response. Retry your request.'],
    ]) {
      replies.bedrock = (_seen, res) => sendFrames(res, [exceptionFrame(exception ?? '', message ?? '')]);
      const streamed = await client.chat.completions.create({ model: LLAMA, messages: [{ role: 'user', content: 'Hi' }], tools: [weatherTool], stream: true });
      expect((await collect(streamed)).text, exception).toBe('From Claude');
    }
    expect(bedrock.requests).toHaveLength(4);
  });

  it('falls back when Bedrock stops with malformed_tool_use or malformed_model_output, whole or streamed, rather than answer a failed turn as finished', async () => {
    const LLAMA = 'meta/llama-3.3-70b';
    replies.anthropic = (seen, res) =>
      (seen.body as { stream?: boolean }).stream === true ? sendEvents(res, [messageStart(), ...textBlock(0, ['From Claude']), ...messageEnd('end_turn')]) : sendMessage(res, [{ type: 'text', text: 'From Claude' }]);
    for (const stopReason of ['malformed_tool_use', 'malformed_model_output']) {
      replies.bedrock = (_seen, res) => sendConverse(res, [{ text: 'I will call get_weather(' }], stopReason);
      const whole = await client.chat.completions.create({ model: LLAMA, messages: [{ role: 'user', content: 'Hi' }], tools: [weatherTool] }).withResponse();
      expect([whole.data.choices[0]?.message.content, whole.response.headers.get('x-sluice-attempts')], stopReason).toEqual(['From Claude', '2']);
      replies.bedrock = (_seen, res) => sendFrames(res, [frame('messageStart', { role: 'assistant' }), frame('contentBlockStop', { contentBlockIndex: 0 }), ...endFrames(stopReason)]);
      const streamed = await client.chat.completions.create({ model: LLAMA, messages: [{ role: 'user', content: 'Hi' }], tools: [weatherTool], stream: true });
      expect((await collect(streamed)).text, stopReason).toBe('From Claude');
    }
  });

  it('judges an in-band error before any content as the HTTP answer it stands for: a refused request is not tried elsewhere', async () => {
    const stream = (model: string, order?: string[]) =>
      client.chat.completions.create({ model, messages: [{ role: 'user', content: 'Hi' }], stream: true, ...(order === undefined ? {} : { providerOptions: { gateway: { order } } }) } as OpenAI.ChatCompletionCreateParamsStreaming);
    const refusal = async (model: string, order?: string[]) => {
      const err = await stream(model, order).then(collect).then((r) => r, (e: unknown) => e);
      expect(err, JSON.stringify(err)).toBeInstanceOf(OpenAI.APIError);
      return err as InstanceType<typeof OpenAI.APIError>;
    };

    // Anthropic's invalid_request_error event: a 400, and Bedrock (the second endpoint) is not asked.
    replies.anthropic = (_seen, res) => sendEvents(res, [{ event: 'error', data: { type: 'error', error: { type: 'invalid_request_error', message: 'prompt is too long' } } }]);
    replies.bedrock = (_seen, res) => sendFrames(res, [frame('messageStart', { role: 'assistant' }), ...textFrames(0, ['unused']), ...endFrames('end_turn')]);
    const fromAnthropic = await refusal(CLAUDE);
    expect([fromAnthropic.status, fromAnthropic.type]).toEqual([400, 'invalid_request_error']);
    expect(fromAnthropic.message).toContain('prompt is too long');
    expect(bedrock.requests).toHaveLength(0);

    // Bedrock's validationException frame, with Bedrock first: a 400 too.
    replies.bedrock = (_seen, res) => sendFrames(res, [exceptionFrame('validationException', 'Input is too long for requested model.')]);
    const fromBedrock = await refusal(CLAUDE, ['bedrock', 'anthropic']);
    expect([fromBedrock.status, fromBedrock.type]).toEqual([400, 'invalid_request_error']);
    expect(fromBedrock.message).toContain('Input is too long');
    expect(anthropic.requests).toHaveLength(1);

    // A throttlingException frame is a 429, and the next endpoint is tried.
    replies.bedrock = (_seen, res) => sendFrames(res, [exceptionFrame('throttlingException', 'Too many requests')]);
    replies.anthropic = (_seen, res) => sendEvents(res, [messageStart(), ...textBlock(0, ['From Claude']), ...messageEnd('end_turn')]);
    expect((await collect(await stream(CLAUDE, ['bedrock', 'anthropic']))).text).toBe('From Claude');

    // Gemini's google.rpc.Status in the stream: its code is the status.
    replies.google = (_seen, res) => sendStream(res, [{ error: { code: 400, message: 'Request contains an invalid argument.', status: 'INVALID_ARGUMENT' } }]);
    const fromGoogle = await refusal(GEMINI);
    expect([fromGoogle.status, fromGoogle.type, fromGoogle.code]).toEqual([400, 'invalid_request_error', 'INVALID_ARGUMENT']);

    const attempts = (await gateway.spans(10)).filter((s) => s.kind === SpanKind.CLIENT);
    // Each failed attempt records the status its in-band error stands for, as an HTTP answer's span does.
    expect(attempts.map((s) => [attr(s, 'sluice.provider'), attr(s, 'error.type')])).toEqual([
      ['anthropic', '400'],
      ['bedrock', '400'],
      ['bedrock', '429'],
      ['anthropic', undefined],
      ['google', '400'],
    ]);
  });

  it('ends a Gemini or Bedrock stream whole once its last event came, though the upstream holds the body open or then drops the connection', async () => {
    replies.google = (_seen, res) => sendStream(res, [response([{ text: 'Hi from ' }]), response([{ text: 'Gemini' }], 'STOP')], { hold: true });
    const fromGoogle = await collect(await client.chat.completions.create({ model: GEMINI, messages: [{ role: 'user', content: 'Hi' }], stream: true, stream_options: { include_usage: true } }));
    expect(fromGoogle).toEqual({ text: 'Hi from Gemini', finish: 'stop', usage: { prompt_tokens: 20, completion_tokens: 8, total_tokens: 28 } });

    const frames = [frame('messageStart', { role: 'assistant' }), ...textFrames(0, ['Hi from ', 'Bedrock']), ...endFrames('end_turn')];
    for (const options of [{ hold: true }, { cut: true }]) {
      replies.bedrock = (_seen, res) => void sendFrames(res, frames, options);
      const stream = await client.chat.completions.create({ model: CLAUDE, messages: [{ role: 'user', content: 'Hi' }], stream: true, providerOptions: { gateway: { order: ['bedrock'] } } } as OpenAI.ChatCompletionCreateParamsStreaming);
      expect(await collect(stream), JSON.stringify(options)).toMatchObject({ text: 'Hi from Bedrock', finish: 'stop' });
    }
    const attempts = (await gateway.spans(6)).filter((s) => s.kind === SpanKind.CLIENT);
    expect(attempts.map((s) => attr(s, 'error.type'))).toEqual([undefined, undefined, undefined]);
  });

  it('refuses parallel_tool_calls: false on Gemini and Bedrock, which have no setting for one call a turn, unless no tool can be called', async () => {
    replies.google = (_seen, res) => sendResponse(res, [{ text: 'No tools needed.' }]);
    const oneCall = { model: GEMINI, messages: [{ role: 'user' as const, content: 'Weather in Paris and Rome?' }], tools: [weatherTool], parallel_tool_calls: false };
    const refused = await client.chat.completions.create(oneCall).catch((err: unknown) => err);
    expect(refused).toBeInstanceOf(OpenAI.BadRequestError);
    expect((refused as InstanceType<typeof OpenAI.BadRequestError>).error).toMatchObject({ code: 'unsupported_value', param: 'parallel_tool_calls' });
    const onBedrock = await client.chat.completions.create(withGateway({ ...oneCall, model: CLAUDE }, { order: ['bedrock'], only: ['bedrock'] })).catch((err: unknown) => err);
    expect((onBedrock as InstanceType<typeof OpenAI.BadRequestError>).error).toMatchObject({ code: 'unsupported_value', param: 'parallel_tool_calls' });
    expect([google.requests.length, bedrock.requests.length]).toEqual([0, 0]);

    const noToolCalled = await client.chat.completions.create({ ...oneCall, tool_choice: 'none' });
    expect(noToolCalled.choices[0]?.message.content).toBe('No tools needed.');
  });

  it("passes the images Gemini makes on in OpenRouter's shape, message.images and delta.images", async () => {
    const parts = [{ text: 'A pixel:' }, { inlineData: { mimeType: 'image/png', data: PNG_BASE64 } }];
    replies.google = (seen, res) => (seen.path.includes('stream') ? sendStream(res, [response(parts, 'STOP')]) : sendResponse(res, parts));
    const image = { type: 'image_url', image_url: { url: PNG_DATA_URL } };
    const whole = await client.chat.completions.create({ model: GEMINI, messages: [{ role: 'user', content: 'Draw a pixel.' }] });
    expect(whole.choices[0]?.message).toMatchObject({ content: 'A pixel:', images: [image] });
    const images: unknown[] = [];
    for await (const chunk of await client.chat.completions.create({ model: GEMINI, messages: [{ role: 'user', content: 'Draw a pixel.' }], stream: true })) {
      images.push(...((chunk.choices[0]?.delta as { images?: unknown[] } | undefined)?.images ?? []));
    }
    expect(images).toEqual([image]);
  });

  it('streams from Anthropic with async iteration', async () => {
    replies.anthropic = (_seen, res) => sendEvents(res, [messageStart(), ...textBlock(0, ['Hel', 'lo']), ...messageEnd('end_turn')]);
    const stream = await client.chat.completions.create({ model: CLAUDE, messages: [{ role: 'user', content: 'Hi' }], stream: true });
    expect(await collect(stream)).toEqual({ text: 'Hello', finish: 'stop', usage: undefined });
  });

  it('streams parallel Anthropic tool calls that the SDK reassembles by index', async () => {
    replies.anthropic = (_seen, res) =>
      sendEvents(res, [messageStart(), ...textBlock(0, ['Checking.']), ...toolBlock(1, 'toolu_a', 'get_weather', ['{"city":', '"Paris"}']), ...toolBlock(2, 'toolu_b', 'get_weather', ['{"city":"Rome"}']), ...messageEnd('tool_use')]);
    const runner = client.chat.completions.stream({ model: CLAUDE, messages: [{ role: 'user', content: 'Weather in Paris and Rome?' }], tools: [weatherTool] });
    const final = await runner.finalChatCompletion();
    expect(final.choices[0]?.finish_reason).toBe('tool_calls');
    expect(final.choices[0]?.message.tool_calls?.map((c) => (c.type === 'function' ? [c.id, c.function.arguments] : []))).toEqual([
      ['toolu_a', '{"city":"Paris"}'],
      ['toolu_b', '{"city":"Rome"}'],
    ]);
  });

  it('does a Gemini tool-call round trip that carries the thoughtSignature back', async () => {
    replies.google = (seen, res) => {
      const body = seen.body as { contents: unknown[] };
      if (body.contents.length === 1) sendResponse(res, [{ functionCall: { name: 'get_weather', args: { city: 'Paris' } }, thoughtSignature: SIGNATURE }]);
      else sendResponse(res, [{ text: 'It is 18C in Paris.' }]);
    };
    const messages: OpenAI.ChatCompletionMessageParam[] = [{ role: 'user', content: 'Weather in Paris?' }];
    const first = await client.chat.completions.create({ model: GEMINI, messages, tools: [weatherTool] });
    const call = first.choices[0]?.message.tool_calls?.[0];
    expect(first.choices[0]?.finish_reason).toBe('tool_calls');
    if (call?.type !== 'function') throw new Error('expected a function call');
    expect(JSON.parse(call.function.arguments)).toEqual({ city: 'Paris' });
    messages.push(first.choices[0]?.message as OpenAI.ChatCompletionMessageParam, { role: 'tool', tool_call_id: call.id, content: '18C' });
    const second = await client.chat.completions.create({ model: GEMINI, messages, tools: [weatherTool] });
    expect(second.choices[0]?.message.content).toBe('It is 18C in Paris.');
    expect((google.requests[1]?.body as { contents: unknown[] }).contents).toEqual([
      { role: 'user', parts: [{ text: 'Weather in Paris?' }] },
      { role: 'model', parts: [{ functionCall: { name: 'get_weather', args: { city: 'Paris' } }, thoughtSignature: SIGNATURE }] },
      { role: 'user', parts: [{ functionResponse: { name: 'get_weather', response: { output: '18C' } } }] },
    ]);
  });

  it('streams from Gemini and sends images given as a data URL and as an http URL', async () => {
    replies.google = (_seen, res) => sendStream(res, [response([{ text: 'Two ' }]), response([{ text: 'dots.' }], 'STOP')]);
    const stream = await client.chat.completions.create({
      model: GEMINI,
      stream: true,
      stream_options: { include_usage: true },
      messages: [{ role: 'user', content: [{ type: 'text', text: 'What are these?' }, { type: 'image_url', image_url: { url: PNG_DATA_URL } }, { type: 'image_url', image_url: { url: `${google.url}/images/dot.png` } }] }],
    });
    expect(await collect(stream)).toEqual({ text: 'Two dots.', finish: 'stop', usage: { prompt_tokens: 20, completion_tokens: 8, total_tokens: 28 } });
    const parts = (google.requests.find((r) => !r.path.startsWith('/images/'))?.body as { contents: Array<{ parts: unknown[] }> }).contents[0]?.parts;
    expect(parts).toEqual([{ text: 'What are these?' }, { inlineData: { mimeType: 'image/png', data: PNG_BASE64 } }, { inlineData: { mimeType: 'image/png', data: PNG_BASE64 } }]);
  });

  it('passes an Anthropic 400 back as the SDK BadRequestError without trying Bedrock', async () => {
    replies.anthropic = (_seen, res) => json(res, 400, { type: 'error', error: { type: 'invalid_request_error', message: 'prompt is too long' } });
    const error = await client.chat.completions.create({ model: CLAUDE, messages: [{ role: 'user', content: 'Hi' }] }).catch((err: unknown) => err);
    expect(error).toBeInstanceOf(OpenAI.BadRequestError);
    expect((error as InstanceType<typeof OpenAI.BadRequestError>).message).toContain('prompt is too long');
    expect(bedrock.requests).toHaveLength(0);
  });

  it('surfaces the last provider failure when Anthropic and Bedrock both fail', async () => {
    replies.anthropic = (_seen, res) => json(res, 529, { type: 'error', error: { type: 'overloaded_error', message: 'Overloaded' } });
    replies.bedrock = (_seen, res) => json(res, 429, { message: 'Too many requests' }, { 'x-amzn-errortype': 'ThrottlingException:http://internal.amazon.com/coral/com.amazon.bedrock/' });
    const error = await client.chat.completions.create({ model: CLAUDE, messages: [{ role: 'user', content: 'Hi' }] }).catch((err: unknown) => err);
    expect(error).toBeInstanceOf(OpenAI.RateLimitError);
  });

  it('tells the client the wait a Gemini 429 asks for in its RetryInfo as Retry-After, whole and in a stream, so SDKs do not retry at once', async () => {
    const quota = { error: { code: 429, message: 'You exceeded your current quota.', status: 'RESOURCE_EXHAUSTED', details: [{ '@type': 'type.googleapis.com/google.rpc.QuotaFailure', violations: [] }, { '@type': 'type.googleapis.com/google.rpc.RetryInfo', retryDelay: '37.2s' }] } };
    replies.google = (seen, res) => (seen.path.includes('stream') ? sendStream(res, [quota]) : json(res, 429, quota));
    const whole = await client.chat.completions.create({ model: GEMINI, messages: [{ role: 'user', content: 'Hi' }] }).catch((err: unknown) => err);
    expect(whole).toBeInstanceOf(OpenAI.RateLimitError);
    expect((whole as InstanceType<typeof OpenAI.RateLimitError>).headers?.get('retry-after')).toBe('38');
    const streamed = await client.chat.completions.create({ model: GEMINI, messages: [{ role: 'user', content: 'Hi' }], stream: true }).catch((err: unknown) => err);
    expect(streamed).toBeInstanceOf(OpenAI.RateLimitError);
    expect((streamed as InstanceType<typeof OpenAI.RateLimitError>).headers?.get('retry-after')).toBe('38');
  });

  it('sends a documented Anthropic message shape back as an OpenAI completion with tool calls', async () => {
    replies.anthropic = (_seen, res) => json(res, 200, message([{ type: 'tool_use', id: 'toolu_1', name: 'get_weather', input: { city: 'Oslo' } }], 'tool_use'));
    const data = await client.chat.completions.create({ model: CLAUDE, messages: [{ role: 'user', content: 'Weather in Oslo?' }], tools: [weatherTool], tool_choice: 'required' });
    expect(data.choices[0]).toMatchObject({ finish_reason: 'tool_calls', message: { content: null, tool_calls: [{ id: 'toolu_1', type: 'function', function: { name: 'get_weather', arguments: '{"city":"Oslo"}' } }] } });
    expect(anthropic.requests[0]?.body).toMatchObject({ tool_choice: { type: 'any' } });
  });

it('answers 400 naming the param when no provider can take a value (temperature 1.5 for Anthropic and Bedrock)', async () => {
    const error = await client.chat.completions.create({ model: CLAUDE, messages: [{ role: 'user', content: 'Hi' }], temperature: 1.5 }).catch((err: unknown) => err);
    expect(error).toBeInstanceOf(OpenAI.BadRequestError);
    expect((error as InstanceType<typeof OpenAI.BadRequestError>).param).toBe('temperature');
    expect(anthropic.requests).toHaveLength(0);
    expect(bedrock.requests).toHaveLength(0);
  });

  it('names the stop sequence that ended a Claude answer on Bedrock, whole and streamed, from where Converse puts it (additionalModelResponseFields.delta)', async () => {
    const matched = { additionalModelResponseFields: { delta: { stop_sequence: 'END' } } };
    replies.bedrock = (seen, res) =>
      seen.path.endsWith('/converse')
        ? sendConverse(res, [{ text: 'Counted' }], 'stop_sequence', matched)
        : sendFrames(res, [frame('messageStart', { role: 'assistant' }), ...textFrames(0, ['Counted']), frame('messageStop', { stopReason: 'stop_sequence', ...matched }), ...endFrames('end_turn').slice(1)]);
    const request = withGateway({ model: CLAUDE, messages: [{ role: 'user', content: 'Count.' }], stop: ['STOP', 'END'] }, { order: ['bedrock'] });
    const whole = await client.chat.completions.create(request);
    expect(whole.choices[0]).toMatchObject({ finish_reason: 'stop', stop_reason: 'END' });
    expect(bedrock.requests[0]?.body).toMatchObject({ additionalModelResponseFieldPaths: ['/delta/stop_sequence'] });
    const streamed = await client.chat.completions.create({ ...request, stream: true } as OpenAI.ChatCompletionCreateParamsStreaming);
    const finals: unknown[] = [];
    for await (const chunk of streamed) if (chunk.choices[0]?.finish_reason != null) finals.push(chunk.choices[0]);
    expect(finals).toMatchObject([{ finish_reason: 'stop', stop_reason: 'END' }]);
  });

  it('takes the Bedrock region from AWS_DEFAULT_REGION when AWS_REGION is set but empty (as a compose file passing an unset variable sets it)', async () => {
    const saved = { ...process.env };
    Object.assign(process.env, { AWS_REGION: '', AWS_DEFAULT_REGION: REGION });
    let regional: Gateway | undefined;
    try {
      replies.bedrock = (_seen, res) => sendConverse(res, [{ text: 'From the default region' }]);
      regional = await startGateway({
        providers: { bedrock: { type: 'bedrock', base_url: bedrock.url, access_key_id: CREDENTIALS.accessKeyId, secret_access_key: CREDENTIALS.secretAccessKey } },
        models: [{ id: 'anthropic/claude-sonnet-4.5', endpoints: [{ provider: 'bedrock', model: BEDROCK_MODEL }] }],
      });
      const regionalClient = new OpenAI({ baseURL: regional.baseURL, apiKey: API_KEY, maxRetries: 0 });
      const answer = await regionalClient.chat.completions.create({ model: CLAUDE, messages: [{ role: 'user', content: 'Hi' }] });
      expect(answer.choices[0]?.message.content).toBe('From the default region');
      // The fake checks the signature's credential scope names REGION.
      expect(bedrock.requests).toHaveLength(1);
    } finally {
      await regional?.close();
      process.env = saved;
    }
  });

  it('falls back to a provider type that takes the value when an adapter refuses it', async () => {
    replies.google = (_seen, res) => sendResponse(res, [{ text: 'warm answer' }], 'STOP');
    const data = await client.chat.completions.create(
      withGateway({ model: CLAUDE, messages: [{ role: 'user', content: 'Hi' }], temperature: 1.5 }, { models: [GEMINI] }),
    );
    expect(data.choices[0]?.message.content).toBe('warm answer');
    expect(google.requests[0]?.body).toMatchObject({ generationConfig: { temperature: 1.5 } });
  });
});
