// The AI SDK protocol against fakes of each non-OpenAI provider type: each
// fake checks its provider's documented request shape, so what the AI SDK
// sends (system prompt, image bytes, tool loops, reasoning) is proven to map
// onto every type.
import type { ServerResponse } from 'node:http';
import { afterEach, describe, expect, it } from 'vitest';
import { z } from 'zod';
import { API_KEY, startGateway, type Gateway } from '../harness.js';
import { message as anthropicMessage, messageEnd, messageStart, sendEvents, textBlock, toolBlock } from '../providers/anthropic/fixtures.js';
import { validateAnthropic } from '../providers/anthropic/wire-schema.js';
import { endFrames, frame, sendConverse, sendFrames, textFrames, toolFrames } from '../providers/bedrock/fixtures.js';
import { requestProblems } from '../providers/bedrock/wire-schema.js';
import { sendResponse, sendStream as sendGeminiStream } from '../providers/google/fixtures.js';
import { validateGemini } from '../providers/google/wire-schema.js';
import { json, PNG_BASE64, startFake, type FakeUpstream, type Seen } from '../providers/shared/fake-upstream.js';
import { aiClients, type AiClient } from './clients.js';

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

type ProviderType = 'anthropic' | 'bedrock' | 'google';

/** What each fake answers: a text turn, a tool call turn, each plain or streamed. */
interface Script {
  text(res: ServerResponse, text: string, stream: boolean): void | Promise<void>;
  toolCall(res: ServerResponse, id: string, name: string, input: Record<string, unknown>, stream: boolean): void | Promise<void>;
  /** The tool result the gateway sent back on this request, if any. */
  toolResult(seen: Seen): string | undefined;
}

const SCRIPTS: Record<ProviderType, Script> = {
  anthropic: {
    text: (res, text, stream) => (stream ? sendEvents(res, [messageStart(), ...textBlock(0, [text.slice(0, 3), text.slice(3)]), ...messageEnd('end_turn')]) : json(res, 200, anthropicMessage([{ type: 'text', text }], 'end_turn'))),
    toolCall: (res, id, name, input, stream) =>
      stream ? sendEvents(res, [messageStart(), ...toolBlock(0, id, name, [JSON.stringify(input)]), ...messageEnd('tool_use')]) : json(res, 200, anthropicMessage([{ type: 'tool_use', id, name, input }], 'tool_use')),
    toolResult: (seen) => {
      const messages = (seen.body as { messages: Array<{ content: unknown }> }).messages;
      const last = messages.at(-1)?.content as Array<{ type: string; content?: unknown }> | undefined;
      const result = last?.find((b) => b.type === 'tool_result');
      return result === undefined ? undefined : typeof result.content === 'string' ? result.content : JSON.stringify(result.content);
    },
  },
  google: {
    text: (res, text, stream) => (stream ? sendGeminiStream(res, [{ candidates: [{ content: { role: 'model', parts: [{ text: text.slice(0, 3) }] }, index: 0 }] }, { candidates: [{ content: { role: 'model', parts: [{ text: text.slice(3) }] }, finishReason: 'STOP', index: 0 }], usageMetadata: { promptTokenCount: 5, candidatesTokenCount: 2, totalTokenCount: 7 } }]) : sendResponse(res, [{ text }])),
    toolCall: (res, _id, name, input, stream) =>
      stream ? sendGeminiStream(res, [{ candidates: [{ content: { role: 'model', parts: [{ functionCall: { name, args: input } }] }, finishReason: 'STOP', index: 0 }], usageMetadata: { promptTokenCount: 5, candidatesTokenCount: 2, totalTokenCount: 7 } }]) : sendResponse(res, [{ functionCall: { name, args: input } }]),
    toolResult: (seen) => {
      const contents = (seen.body as { contents: Array<{ parts: Array<{ functionResponse?: { response: unknown } }> }> }).contents;
      const response = contents.at(-1)?.parts.find((p) => p.functionResponse !== undefined)?.functionResponse?.response;
      return response === undefined ? undefined : JSON.stringify(response);
    },
  },
  bedrock: {
    text: (res, text, stream) => (stream ? sendFrames(res, [frame('messageStart', { role: 'assistant' }), ...textFrames(0, [text.slice(0, 3), text.slice(3)]), ...endFrames('end_turn')]) : sendConverse(res, [{ text }])),
    toolCall: (res, id, name, input, stream) =>
      stream ? sendFrames(res, [frame('messageStart', { role: 'assistant' }), ...toolFrames(0, id, name, [JSON.stringify(input)]), ...endFrames('tool_use')]) : sendConverse(res, [{ toolUse: { toolUseId: id, name, input } }], 'tool_use'),
    toolResult: (seen) => {
      const messages = (seen.body as { messages: Array<{ content: Array<{ toolResult?: { content: unknown } }> }> }).messages;
      const result = messages.at(-1)?.content.find((b) => b.toolResult !== undefined)?.toolResult?.content;
      return result === undefined ? undefined : JSON.stringify(result);
    },
  },
};

const VALIDATORS: Record<ProviderType, (seen: Seen) => string[] | Promise<string[]>> = { anthropic: validateAnthropic, bedrock: requestProblems, google: validateGemini };

async function setup(client: AiClient, type: ProviderType, handler: (seen: Seen, res: ServerResponse) => void | Promise<void>, model = `${type}-model`) {
  fake = await startFake(VALIDATORS[type], handler);
  const provider =
    type === 'anthropic'
      ? { type, base_url: fake.url, api_key: 'sk-ant-test' }
      : type === 'google'
        ? { type, base_url: fake.url, api_key: 'gm-test-key' }
        : { type, base_url: fake.url, region: 'us-east-1', api_key: 'bedrock-key' };
  gateway = await startGateway({ providers: { [type]: provider }, models: [{ id: 'acme/model', endpoints: [{ provider: type, model }] }] });
  return client.ai.createGateway({ baseURL: `${gateway.baseURL}/ai`, apiKey: API_KEY });
}

function isStream(seen: Seen): boolean {
  return (seen.body as { stream?: boolean } | undefined)?.stream === true || seen.path.includes('stream');
}

const cases = aiClients.flatMap((client) => (['anthropic', 'google', 'bedrock'] as const).map((type) => ({ client, type, name: `${client.name} -> ${type}` })));

describe.each(cases)('the AI SDK protocol, $name', ({ client, type }) => {
  const { ai } = client;
  const script = SCRIPTS[type];

  it('generates from a system prompt and an image given as bytes', async () => {
    const gw = await setup(client, type, (seen, res) => script.text(res, 'A red pixel.', isStream(seen)));
    const out = await ai.generateText({
      model: gw('acme/model'),
      system: 'Describe images briefly.',
      messages: [{ role: 'user', content: [{ type: 'text', text: 'What is this?' }, { type: 'image', image: Buffer.from(PNG_BASE64, 'base64') }] }],
      maxRetries: 0,
    });
    expect(out.text).toBe('A red pixel.');
    expect(out.finishReason).toBe('stop');
    expect(out.usage.inputTokens).toBeGreaterThan(0);
    expect(JSON.stringify(fake?.requests[0]?.body)).toContain(PNG_BASE64);
    expect(JSON.stringify(fake?.requests[0]?.body)).toContain('Describe images briefly.');
  });

  it('streams a tool loop over several steps with stopWhen', async () => {
    const gw = await setup(client, type, (seen, res) => {
      const result = script.toolResult(seen);
      if (result === undefined) return script.toolCall(res, 'call_1', 'weather', { city: 'Paris' }, isStream(seen));
      return script.text(res, `Got ${result.includes('sunny') ? 'sunny' : 'nothing'}`, isStream(seen));
    });
    const result = ai.streamText({
      model: gw('acme/model'),
      prompt: 'Weather in Paris?',
      tools: { weather: ai.tool({ inputSchema: z.object({ city: z.string() }), execute: async ({ city }) => ({ city, sky: 'sunny' }) }) },
      stopWhen: ai.stepCountIs(3),
      maxRetries: 0,
    });
    expect(await result.text).toBe('Got sunny');
    expect((await result.steps).length).toBe(2);
    expect(fake?.requests).toHaveLength(2);
  });
});

describe.each(aiClients)('signed reasoning through the AI SDK protocol, $name', (client) => {
  const { ai } = client;
  const SIGNATURE = 'EqQBCkYIBxgCKkDsignature==';

  it('anthropic: a thinking budget from providerOptions, and the signed thinking replayed in the tool loop', async () => {
    const gw = await setup(client, 'anthropic', (seen, res) => {
      if (SCRIPTS.anthropic.toolResult(seen) === undefined) {
        return json(res, 200, anthropicMessage([{ type: 'thinking', thinking: 'Need the weather.', signature: SIGNATURE }, { type: 'tool_use', id: 'toolu_1', name: 'weather', input: { city: 'Paris' } }], 'tool_use'));
      }
      json(res, 200, anthropicMessage([{ type: 'text', text: 'Sunny.' }], 'end_turn'));
    });
    const out = await ai.generateText({
      model: gw('acme/model'),
      prompt: 'Weather in Paris?',
      maxOutputTokens: 8000,
      providerOptions: { anthropic: { thinking: { type: 'enabled', budgetTokens: 2048 } } },
      tools: { weather: ai.tool({ inputSchema: z.object({ city: z.string() }), execute: async () => 'sunny' }) },
      stopWhen: ai.stepCountIs(3),
      maxRetries: 0,
    });
    expect(out.text).toBe('Sunny.');
    expect(out.steps[0]?.reasoningText).toBe('Need the weather.');
    expect(fake?.requests[0]?.body).toMatchObject({ max_tokens: 8000, thinking: { type: 'enabled', budget_tokens: 2048 } });
    const replayed = (fake?.requests[1]?.body as { messages: Array<{ role: string; content: unknown[] }> }).messages[1];
    expect(replayed?.content).toEqual([
      { type: 'thinking', thinking: 'Need the weather.', signature: SIGNATURE },
      { type: 'tool_use', id: 'toolu_1', name: 'weather', input: { city: 'Paris' } },
    ]);
  });

  it("anthropic: adaptive thinking from providerOptions with @ai-sdk/anthropic's effort, on Opus 4.7, is that effort, and the thinking comes back", async () => {
    const gw = await setup(client, 'anthropic', (_seen, res) => json(res, 200, anthropicMessage([{ type: 'thinking', thinking: 'Easy.', signature: SIGNATURE }, { type: 'text', text: 'Four.' }], 'end_turn')), 'claude-opus-4-7');
    const out = await ai.generateText({ model: gw('acme/model'), prompt: 'Two and two?', providerOptions: { anthropic: { thinking: { type: 'adaptive' }, effort: 'max' } }, maxRetries: 0 });
    expect([out.reasoningText, out.text]).toEqual(['Easy.', 'Four.']);
    expect(fake?.requests[0]?.body).toMatchObject({ thinking: { type: 'adaptive', display: 'summarized' }, output_config: { effort: 'max' } });
  });

  it.runIf(client.specVersion === '4')('reasoning xhigh and max go as they are, without a warning, to a Claude model whose adaptive thinking takes them, and as high with one where it does not', async () => {
    const reply = (_seen: Seen, res: ServerResponse) => json(res, 200, anthropicMessage([{ type: 'text', text: 'Four.' }], 'end_turn'));
    const restart = async () => {
      expect(fake?.problems).toEqual([]);
      await gateway?.close();
      await fake?.close();
    };
    let gw = await setup(client, 'anthropic', reply, 'claude-opus-4-7');
    for (const reasoning of ['xhigh', 'max']) {
      const out = await ai.generateText({ model: gw('acme/model'), prompt: 'Two and two?', ...({ reasoning } as object), maxRetries: 0 });
      expect(out.warnings).toEqual([]);
    }
    expect(fake?.requests.map((seen) => (seen.body as { output_config?: unknown }).output_config)).toEqual([{ effort: 'xhigh' }, { effort: 'max' }]);

    // Sonnet 4.6 has no xhigh (max it takes); Sonnet 4.5 thinks on a budget.
    for (const [model, reasoning, effort] of [['claude-sonnet-4-6', 'xhigh', { effort: 'high' }], ['claude-sonnet-4-6', 'max', { effort: 'max' }], ['claude-sonnet-4-5', 'max', undefined]] as const) {
      await restart();
      gw = await setup(client, 'anthropic', reply, model);
      const out = await ai.generateText({ model: gw('acme/model'), prompt: 'Two and two?', ...({ reasoning } as object), maxRetries: 0 });
      expect((fake?.requests[0]?.body as { output_config?: unknown }).output_config).toEqual(effort);
      expect(out.warnings).toEqual(effort?.effort === reasoning ? [] : [{ type: 'unsupported', feature: 'reasoning', details: `reasoning ${reasoning} was sent as high, the highest effort this gateway asks of a provider` }]);
    }

    await restart();
    gw = await setup(client, 'bedrock', (_seen, res) => SCRIPTS.bedrock.text(res, 'Four.', false), 'us.anthropic.claude-opus-4-7');
    const out = await ai.generateText({ model: gw('acme/model'), prompt: 'Two and two?', ...({ reasoning: 'xhigh' } as object), maxRetries: 0 });
    expect(out.warnings).toEqual([]);
    expect((fake?.requests[0]?.body as { additionalModelRequestFields?: unknown }).additionalModelRequestFields).toEqual({ thinking: { type: 'adaptive', display: 'summarized' }, output_config: { effort: 'xhigh' } });
  });

  it("anthropic: @ai-sdk/anthropic's disableParallelToolUse is the tool choice's, and its client-side switches stay out of the Messages body", async () => {
    const gw = await setup(client, 'anthropic', (_seen, res) => json(res, 200, anthropicMessage([{ type: 'text', text: 'ok' }], 'end_turn')));
    const out = await ai.generateText({
      model: gw('acme/model'),
      prompt: 'Weather in Paris and Rome?',
      tools: { weather: ai.tool({ inputSchema: z.object({ city: z.string() }) }) },
      providerOptions: { anthropic: { disableParallelToolUse: true, sendReasoning: false, structuredOutputMode: 'auto', toolStreaming: false } },
      maxRetries: 0,
    });
    expect(out.text).toBe('ok');
    const body = fake?.requests[0]?.body as Record<string, unknown>;
    expect(body['tool_choice']).toEqual({ type: 'auto', disable_parallel_tool_use: true });
  });

  it("anthropic: @ai-sdk/anthropic's effort goes as the Messages API's output_config.effort, as that provider sends it", async () => {
    const gw = await setup(client, 'anthropic', (_seen, res) => json(res, 200, anthropicMessage([{ type: 'text', text: 'ok' }], 'end_turn')));
    const out = await ai.generateText({ model: gw('acme/model'), prompt: 'Hi', providerOptions: { anthropic: { effort: 'low' } }, maxRetries: 0 });
    expect(out.text).toBe('ok');
    expect(out.warnings).toEqual([]);
    const body = fake?.requests[0]?.body as Record<string, unknown>;
    expect(body['output_config']).toEqual({ effort: 'low' });
    expect(body['effort']).toBeUndefined();
  });

  it("anthropic: an effort @ai-sdk/anthropic does not know is GatewayInvalidRequestError naming the option, and nothing goes upstream", async () => {
    const gw = await setup(client, 'anthropic', (_seen, res) => json(res, 200, anthropicMessage([{ type: 'text', text: 'unused' }], 'end_turn')));
    const error = await ai.generateText({ model: gw('acme/model'), prompt: 'Hi', providerOptions: { anthropic: { effort: 'extreme' } }, maxRetries: 0 }).catch((err: unknown) => err);
    expect(error).toMatchObject({ name: 'GatewayInvalidRequestError', statusCode: 400 });
    expect((error as Error).message).toContain('providerOptions.anthropic.effort: must be one of "low", "medium", "high", "xhigh", "max"');
    expect(fake?.requests).toHaveLength(0);
  });

  it('anthropic: penalties of 0, which Anthropic has no setting for and the gateway leaves out, come back as warnings, generated and streamed', async () => {
    const gw = await setup(client, 'anthropic', (seen, res) => SCRIPTS.anthropic.text(res, 'Hello', isStream(seen)));
    const warnings = [
      { type: 'unsupported', feature: 'presencePenalty', details: 'provider anthropic (type anthropic) has no presencePenalty; 0 was left out' },
      { type: 'unsupported', feature: 'frequencyPenalty', details: 'provider anthropic (type anthropic) has no frequencyPenalty; 0 was left out' },
    ];
    const generated = await ai.generateText({ model: gw('acme/model'), prompt: 'Hi', presencePenalty: 0, frequencyPenalty: 0, maxRetries: 0 });
    expect(generated.warnings).toEqual(warnings);
    const streamed = ai.streamText({ model: gw('acme/model'), prompt: 'Hi', presencePenalty: 0, frequencyPenalty: 0, maxRetries: 0 });
    expect(await streamed.text).toBe('Hello');
    expect(await streamed.warnings).toEqual(warnings);
  });

  it("google: @ai-sdk/google's imageConfig goes under generationConfig, and its client-side structuredOutputs stays out of the body", async () => {
    const gw = await setup(client, 'google', (_seen, res) => sendResponse(res, [{ text: 'ok' }]));
    const out = await ai.generateText({
      model: gw('acme/model'),
      prompt: 'Draw a cat',
      providerOptions: { google: { responseModalities: ['TEXT', 'IMAGE'], imageConfig: { aspectRatio: '16:9' }, structuredOutputs: false } },
      maxRetries: 0,
    });
    expect(out.text).toBe('ok');
    const body = fake?.requests[0]?.body as Record<string, unknown>;
    expect(body['generationConfig']).toEqual({ responseModalities: ['TEXT', 'IMAGE'], imageConfig: { aspectRatio: '16:9' } });
  });

  it('google and bedrock: thinkingConfig and reasoningConfig mean what they say upstream', async () => {
    const gemini = await setup(client, 'google', (_seen, res) => sendResponse(res, [{ text: 'ok' }]));
    const ask = (providerOptions: Record<string, Record<string, unknown>>, model = gemini) => ai.generateText({ model: model('acme/model'), prompt: 'Hi', providerOptions: providerOptions as never, maxRetries: 0 });
    await ask({ google: { thinkingConfig: { thinkingBudget: 2048, includeThoughts: false } } });
    await ask({ google: { thinkingConfig: { thinkingBudget: 0 } } });
    await ask({ google: { thinkingConfig: { thinkingBudget: -1, includeThoughts: true } } });
    const sent = (fake?.requests ?? []).map((r) => (r.body as { generationConfig?: { thinkingConfig?: unknown } }).generationConfig?.thinkingConfig);
    // The app's opt-out of thoughts stays an opt-out; a budget of 0 is thinking off, not a budget.
    expect(sent.slice(0, 2)).toEqual([{ thinkingBudget: 2048, includeThoughts: false }, { thinkingBudget: 0 }]);
    expect(sent[2]).toMatchObject({ includeThoughts: true });
    await fake?.close();
    await gateway?.close();

    const nova = await setup(client, 'bedrock', (_seen, res) => sendConverse(res, [{ text: 'ok' }]));
    await ask({ bedrock: { reasoningConfig: { type: 'enabled', maxReasoningEffort: 'medium' } } }, nova);
    const body = fake?.requests[0]?.body as Record<string, unknown>;
    // Nova's effort goes where Converse takes it, not at the body's top level, where Converse has no such field.
    expect(body['reasoningConfig']).toBeUndefined();
    expect(body['additionalModelRequestFields']).toEqual({ reasoningConfig: { type: 'enabled', maxReasoningEffort: 'medium' } });

    // The app's own model fields join the reasoning ones rather than being dropped for them.
    await ask({ bedrock: { reasoningConfig: { type: 'enabled', maxReasoningEffort: 'low' }, additionalModelRequestFields: { inferenceConfig: { topK: 20 } } } }, nova);
    expect((fake?.requests[1]?.body as Record<string, unknown>)['additionalModelRequestFields']).toEqual({ inferenceConfig: { topK: 20 }, reasoningConfig: { type: 'enabled', maxReasoningEffort: 'low' } });

    // @ai-sdk/amazon-bedrock's adaptive thinking (Claude 4.6) with its top efforts: thinking at the gateway's top effort, not a field Converse does not know.
    await ask({ bedrock: { reasoningConfig: { type: 'adaptive', maxReasoningEffort: 'max' } } }, nova);
    const adaptive = fake?.requests[2]?.body as Record<string, unknown>;
    expect(adaptive['reasoningConfig']).toBeUndefined();
    expect(adaptive['additionalModelRequestFields']).toEqual({ reasoningConfig: { type: 'enabled', maxReasoningEffort: 'high' } });

    // @ai-sdk/amazon-bedrock's anthropicBeta and serviceTier in the shapes Converse takes, not as top-level keys it has no field for.
    await ask({ bedrock: { anthropicBeta: ['context-1m-2025-08-07'], serviceTier: 'flex', additionalModelRequestFields: { top_k: 5 } } }, nova);
    const options = fake?.requests[3]?.body as Record<string, unknown>;
    expect(options['anthropicBeta']).toBeUndefined();
    expect(options['additionalModelRequestFields']).toEqual({ top_k: 5, anthropic_beta: ['context-1m-2025-08-07'] });
    expect(options['serviceTier']).toEqual({ type: 'flex' });
  });

  it('google: images the model makes (responseModalities IMAGE) come back as files, whole and streamed', async () => {
    const parts = [{ text: 'Here is a pixel.' }, { inlineData: { mimeType: 'image/png', data: PNG_BASE64 } }];
    const gw = await setup(client, 'google', (seen, res) => (isStream(seen) ? sendGeminiStream(res, [{ candidates: [{ content: { role: 'model', parts }, finishReason: 'STOP', index: 0 }] }]) : sendResponse(res, parts)));
    const providerOptions = { google: { responseModalities: ['TEXT', 'IMAGE'] } };
    const whole = await ai.generateText({ model: gw('acme/model'), prompt: 'Draw a pixel.', providerOptions, maxRetries: 0 });
    expect(whole.text).toBe('Here is a pixel.');
    expect(whole.files.map((f) => [f.mediaType, f.base64])).toEqual([['image/png', PNG_BASE64]]);
    expect((fake?.requests[0]?.body as { generationConfig?: unknown }).generationConfig).toMatchObject({ responseModalities: ['TEXT', 'IMAGE'] });
    const streamed = ai.streamText({ model: gw('acme/model'), prompt: 'Draw a pixel.', providerOptions, maxRetries: 0 });
    expect(await streamed.text).toBe('Here is a pixel.');
    expect((await streamed.files).map((f) => [f.mediaType, f.base64])).toEqual([['image/png', PNG_BASE64]]);
  });

  it('google: candidateCount from providerOptions answers with the first candidate, whole and streamed, without the others mixed in', async () => {
    const candidates = [
      { content: { role: 'model', parts: [{ text: 'Second.' }] }, finishReason: 'STOP', index: 1 },
      { content: { role: 'model', parts: [{ text: 'First.' }] }, finishReason: 'STOP', index: 0 },
    ];
    const usageMetadata = { promptTokenCount: 5, candidatesTokenCount: 6, totalTokenCount: 11 };
    const gw = await setup(client, 'google', (seen, res) => (isStream(seen) ? sendGeminiStream(res, [{ candidates, usageMetadata }]) : json(res, 200, { candidates, usageMetadata })));
    const providerOptions = { google: { candidateCount: 2 } };
    const whole = await ai.generateText({ model: gw('acme/model'), prompt: 'Say something.', providerOptions, maxRetries: 0 });
    expect(whole.text).toBe('First.');
    expect(whole.usage.outputTokens).toBe(6);
    expect((fake?.requests[0]?.body as { generationConfig?: unknown }).generationConfig).toEqual({ candidateCount: 2 });
    const streamed = ai.streamText({ model: gw('acme/model'), prompt: 'Say something.', providerOptions, maxRetries: 0 });
    expect(await streamed.text).toBe('First.');
    expect((await streamed.usage).outputTokens).toBe(6);
  });

  it('google: the images the model made go back with its turn, so the next turn can edit them', async () => {
    const parts = [{ text: 'Here is a pixel.' }, { inlineData: { mimeType: 'image/png', data: PNG_BASE64 } }];
    const gw = await setup(client, 'google', (_seen, res) => sendResponse(res, parts));
    const providerOptions = { google: { responseModalities: ['TEXT', 'IMAGE'] } };
    const first = await ai.generateText({ model: gw('acme/model'), prompt: 'Draw a pixel.', providerOptions, maxRetries: 0 });
    const messages = [{ role: 'user' as const, content: 'Draw a pixel.' }, ...first.response.messages, { role: 'user' as const, content: 'Make it blue.' }];
    const second = await ai.generateText({ model: gw('acme/model'), messages, providerOptions, maxRetries: 0 });
    expect(second.text).toBe('Here is a pixel.');
    const contents = (fake?.requests[1]?.body as { contents: unknown[] }).contents;
    expect(contents).toEqual([
      { role: 'user', parts: [{ text: 'Draw a pixel.' }] },
      { role: 'model', parts },
      { role: 'user', parts: [{ text: 'Make it blue.' }] },
    ]);
  });

  it('bedrock: names the prompt part a provider cannot take as the app sent it', async () => {
    const gw = await setup(client, 'bedrock', (_seen, res) => sendConverse(res, [{ text: 'unused' }]));
    const failure = await ai
      .generateText({
        model: gw('acme/model'),
        system: 'Be brief.',
        messages: [{ role: 'user', content: [{ type: 'text', text: 'What is this?' }, { type: 'file', mediaType: 'image/bmp', data: 'Qk0=' }] }],
        maxRetries: 0,
      })
      .then(() => 'answered', (err: unknown) => String((err as Error).message));
    // The translated request had the system prompt as messages[0]: the adapter saw messages[1].content[1].image_url.url.
    expect(failure).toContain('prompt[1].content[1]: image/bmp is not supported by provider type bedrock');
    expect(fake?.requests).toHaveLength(0);
  });

  it('anthropic and bedrock: prompt-caching breakpoints set on messages and parts reach the upstream', async () => {
    const ephemeral = { anthropic: { cacheControl: { type: 'ephemeral' } } };
    const system = { role: 'system', content: 'A long, stable system prompt.', providerOptions: { anthropic: { cacheControl: { type: 'ephemeral', ttl: '1h' } } } } as const;
    const messages = [
      { role: 'user', content: [{ type: 'text', text: 'A long document.', providerOptions: ephemeral }, { type: 'text', text: 'What is it about?' }] },
      { role: 'assistant', content: [{ type: 'tool-call', toolCallId: 'toolu_1', toolName: 'read', input: {} }] },
      { role: 'tool', content: [{ type: 'tool-result', toolCallId: 'toolu_1', toolName: 'read', output: { type: 'text', value: 'A long tool result.' } }], providerOptions: ephemeral },
    ] as const;
    const claude = await setup(client, 'anthropic', (_seen, res) => json(res, 200, anthropicMessage([{ type: 'text', text: 'ok' }], 'end_turn')));
    await ai.generateText({ model: claude('acme/model'), system, messages: messages as never, maxRetries: 0 });
    const sent = fake?.requests[0]?.body as { system: unknown; messages: Array<{ content: unknown }> };
    expect(sent.system).toEqual([{ type: 'text', text: 'A long, stable system prompt.', cache_control: { type: 'ephemeral', ttl: '1h' } }]);
    expect(sent.messages[0]?.content).toEqual([
      { type: 'text', text: 'A long document.', cache_control: { type: 'ephemeral' } },
      { type: 'text', text: 'What is it about?' },
    ]);
    expect(sent.messages[2]?.content).toEqual([{ type: 'tool_result', tool_use_id: 'toolu_1', content: 'A long tool result.', cache_control: { type: 'ephemeral' } }]);
    await fake?.close();
    await gateway?.close();

    const nova = await setup(client, 'bedrock', (_seen, res) => sendConverse(res, [{ text: 'ok' }]));
    await ai.generateText({ model: nova('acme/model'), messages: [{ role: 'user', content: 'A long document.', providerOptions: { bedrock: { cachePoint: { type: 'default' } } } }], maxRetries: 0 });
    expect((fake?.requests[0]?.body as { messages: Array<{ content: unknown }> }).messages[0]?.content).toEqual([{ text: 'A long document.' }, { cachePoint: { type: 'default' } }]);
  });

  it('anthropic and bedrock: a prompt-caching breakpoint set on a tool reaches the upstream', async () => {
    const tools = {
      search: ai.tool({ description: 'Searches', inputSchema: z.object({ q: z.string() }), execute: async () => 'found' }),
      read: ai.tool({ description: 'Reads', inputSchema: z.object({ id: z.string() }), execute: async () => 'read', providerOptions: { anthropic: { cacheControl: { type: 'ephemeral' } }, bedrock: { cachePoint: { type: 'default' } } } }),
    };
    const claude = await setup(client, 'anthropic', (_seen, res) => json(res, 200, anthropicMessage([{ type: 'text', text: 'ok' }], 'end_turn')));
    await ai.generateText({ model: claude('acme/model'), prompt: 'Hi', tools, maxRetries: 0 });
    const sent = (fake?.requests[0]?.body as { tools: Array<Record<string, unknown>> }).tools;
    expect(sent.map((tool) => [tool['name'], tool['cache_control']])).toEqual([
      ['search', undefined],
      ['read', { type: 'ephemeral' }],
    ]);
    await fake?.close();
    await gateway?.close();

    const nova = await setup(client, 'bedrock', (_seen, res) => sendConverse(res, [{ text: 'ok' }]));
    await ai.generateText({ model: nova('acme/model'), prompt: 'Hi', tools, maxRetries: 0 });
    const config = (fake?.requests[0]?.body as { toolConfig: { tools: Array<Record<string, unknown>> } }).toolConfig;
    expect(config.tools.map((tool) => Object.keys(tool)[0])).toEqual(['toolSpec', 'toolSpec', 'cachePoint']);
  });

  it('anthropic: streamed thinking comes back as reasoning parts with its signature', async () => {
    const gw = await setup(client, 'anthropic', (_seen, res) =>
      sendEvents(res, [
        messageStart(),
        { event: 'content_block_start', data: { type: 'content_block_start', index: 0, content_block: { type: 'thinking', thinking: '' } } },
        { event: 'content_block_delta', data: { type: 'content_block_delta', index: 0, delta: { type: 'thinking_delta', thinking: 'Let me ' } } },
        { event: 'content_block_delta', data: { type: 'content_block_delta', index: 0, delta: { type: 'thinking_delta', thinking: 'think.' } } },
        { event: 'content_block_delta', data: { type: 'content_block_delta', index: 0, delta: { type: 'signature_delta', signature: SIGNATURE } } },
        { event: 'content_block_stop', data: { type: 'content_block_stop', index: 0 } },
        ...textBlock(1, ['Done.']),
        ...messageEnd('end_turn'),
      ]),
    );
    const result = ai.streamText({ model: gw('acme/model'), prompt: 'Think.', providerOptions: { anthropic: { thinking: { type: 'enabled', budgetTokens: 1024 } } }, maxRetries: 0 });
    expect(await result.reasoningText).toBe('Let me think.');
    expect(await result.text).toBe('Done.');
    const reasoning = (await result.reasoning)[0];
    expect(JSON.stringify(reasoning?.providerMetadata)).toContain(SIGNATURE);
  });
});
