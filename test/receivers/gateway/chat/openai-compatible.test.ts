import { createOpenAICompatible } from '@ai-sdk/openai-compatible';
import { generateText, stepCountIs, streamText, tool } from 'ai';
import { afterEach, describe, expect, it } from 'vitest';
import { z } from 'zod';
import { API_KEY, chunk, completion, openaiProvider, sendJson, sendStream, startGateway, startUpstream, textStream, type Gateway, type Upstream, type UpstreamHandler } from '../harness.js';

let gateway: Gateway | undefined;
const upstreams: Upstream[] = [];

afterEach(async () => {
  await gateway?.close();
  gateway = undefined;
  await Promise.all(upstreams.splice(0).map((u) => u.close()));
});

async function setup(first: UpstreamHandler, second: UpstreamHandler = first) {
  const a = await startUpstream(first);
  const b = await startUpstream(second);
  upstreams.push(a, b);
  gateway = await startGateway({
    providers: { alpha: openaiProvider(a), beta: openaiProvider(b) },
    models: [{ id: 'acme/model', endpoints: [{ provider: 'alpha', model: 'm-alpha' }, { provider: 'beta', model: 'm-beta' }] }],
  });
  // Named `gateway`, the provider spreads providerOptions.gateway into the request body.
  return createOpenAICompatible({ name: 'gateway', baseURL: gateway.baseURL, apiKey: API_KEY, includeUsage: true });
}

describe('gateway with the Vercel ai SDK through @ai-sdk/openai-compatible', () => {
  it('answers generateText', async () => {
    const provider = await setup((_b, res) => sendJson(res, 200, completion('generated')));
    const result = await generateText({ model: provider('acme/model'), prompt: 'hi' });
    expect(result.text).toBe('generated');
    expect(result.usage.inputTokens).toBe(11);
  });

  it('streams streamText', async () => {
    const provider = await setup((_b, res) => textStream(res, ['str', 'eamed']));
    const result = streamText({ model: provider('acme/model'), prompt: 'hi' });
    let text = '';
    for await (const delta of result.textStream) text += delta;
    expect(text).toBe('streamed');
    expect((await result.usage).outputTokens).toBe(3);
  });

  it('runs a tool call and sends the result back', async () => {
    const provider = await setup((body, res) => {
      const messages = body['messages'] as Array<Record<string, unknown>>;
      if (messages.at(-1)?.['role'] === 'tool') return sendJson(res, 200, completion(`Result: ${String(messages.at(-1)?.['content'])}`));
      sendJson(res, 200, {
        ...completion(''),
        choices: [{ index: 0, message: { role: 'assistant', content: null, tool_calls: [{ id: 'call_1', type: 'function', function: { name: 'add', arguments: '{"a":2,"b":3}' } }] }, finish_reason: 'tool_calls' }],
      });
    });
    const result = await generateText({
      model: provider('acme/model'),
      prompt: 'add 2 and 3',
      tools: { add: tool({ description: 'Adds', inputSchema: z.object({ a: z.number(), b: z.number() }), execute: async ({ a, b }) => a + b }) },
      stopWhen: stepCountIs(3),
    });
    expect(result.text).toBe('Result: 5');
    expect(result.steps[0]?.toolCalls[0]?.input).toEqual({ a: 2, b: 3 });
  });

  it('streams tool calls that streamText assembles', async () => {
    const provider = await setup((_b, res) =>
      sendStream(res, [
        chunk({ role: 'assistant', tool_calls: [{ index: 0, id: 'call_x', type: 'function', function: { name: 'add', arguments: '{"a":1,' } }] }),
        chunk({ tool_calls: [{ index: 0, function: { arguments: '"b":4}' } }] }),
        chunk({}, 'tool_calls'),
      ]),
    );
    const result = streamText({ model: provider('acme/model'), prompt: 'x', tools: { add: tool({ inputSchema: z.object({ a: z.number(), b: z.number() }) }) } });
    const calls = await result.toolCalls;
    expect(calls[0]?.input).toEqual({ a: 1, b: 4 });
  });

  it('routes with providerOptions.gateway.order', async () => {
    const provider = await setup((_b, res) => sendJson(res, 200, completion('from alpha')), (_b, res) => sendJson(res, 200, completion('from beta')));
    const result = await generateText({ model: provider('acme/model'), prompt: 'hi', providerOptions: { gateway: { order: ['beta'] } } });
    expect(result.text).toBe('from beta');
    expect(upstreams[1]?.requests[0]?.body['order']).toBeUndefined();
  });
});
