// Issue 12 end to end: unmodified `ai` 6 and `ai` 7 reach the built daemon
// through createGateway() aimed at /v1/ai, with the string model ids of an
// app that sets AI_SDK_DEFAULT_PROVIDER, and the openai SDK embeds on
// /v1/embeddings, all against one fake OpenAI-compatible upstream.
import OpenAI from 'openai';
import { afterEach, describe, expect, it } from 'vitest';
import { startGatewayDaemon } from '../helpers/gateway-daemon.js';
import { completion, sendJson, startUpstream, textStream } from '../receivers/gateway/harness.js';
import { aiClients } from '../receivers/gateway/aisdk/clients.js';

const cleanups: Array<() => Promise<unknown>> = [];
afterEach(async () => {
  for (const c of cleanups.splice(0).reverse()) await c();
  delete (globalThis as { AI_SDK_DEFAULT_PROVIDER?: unknown }).AI_SDK_DEFAULT_PROVIDER;
});

describe('AI SDK gateway protocol end to end', () => {
  it('serves ai 6 and ai 7 with string model ids, and embeddings, from the built daemon', async () => {
    const upstream = await startUpstream((body, res) => {
      if (Array.isArray(body['input'])) {
        const input = body['input'] as string[];
        return sendJson(res, 200, { object: 'list', data: input.map((_t, i) => ({ object: 'embedding', index: i, embedding: [0.25, i] })), model: 'e', usage: { prompt_tokens: 2, total_tokens: 2 } });
      }
      return body['stream'] === true ? textStream(res, ['e2e ', 'stream']) : sendJson(res, 200, completion('e2e hello'));
    });
    cleanups.push(() => upstream.close());
    const daemon = await startGatewayDaemon(
      `
    environment: e2e
    api_keys: [sk-e2e]
    providers:
      fake: { type: openai, base_url: ${upstream.url}, api_key: sk-upstream }
    models:
      - id: fake/chat
        endpoints: [{ provider: fake, model: upstream-chat }]
      - id: fake/embed
        type: embedding
        endpoints: [{ provider: fake, model: upstream-embed }]
`,
      { exporter: 'debug' },
    );
    const port = daemon.port;
    cleanups.push(() => daemon.cleanup());

    for (const { ai, specVersion } of aiClients) {
      const gateway = ai.createGateway({ baseURL: `http://127.0.0.1:${port}/v1/ai`, apiKey: 'sk-e2e' });
      (globalThis as { AI_SDK_DEFAULT_PROVIDER?: unknown }).AI_SDK_DEFAULT_PROVIDER = gateway;
      expect((await ai.generateText({ model: 'fake/chat', prompt: 'hi', maxRetries: 0 })).text).toBe('e2e hello');
      expect(await ai.streamText({ model: 'fake/chat', prompt: 'hi', maxRetries: 0 }).text).toBe('e2e stream');
      expect((await ai.embed({ model: gateway.embeddingModel('fake/embed'), value: 'x', maxRetries: 0 })).embedding).toEqual([0.25, 0]);
      const { models } = await gateway.getAvailableModels();
      expect(models.map((m) => [m.id, m.modelType, m.specification.specificationVersion])).toEqual([
        ['fake/chat', 'language', `v${specVersion}`],
        ['fake/embed', 'embedding', `v${specVersion}`],
      ]);
    }
    const openai = new OpenAI({ baseURL: `http://127.0.0.1:${port}/v1`, apiKey: 'sk-e2e', maxRetries: 0 });
    const floats = await openai.embeddings.create({ model: 'fake/embed', input: ['a', 'b'], encoding_format: 'float' });
    expect(floats.data.map((d) => d.embedding)).toEqual([
      [0.25, 0],
      [0.25, 1],
    ]);
    const decoded = await openai.embeddings.create({ model: 'fake/embed', input: 'a' });
    expect(decoded.data[0]?.embedding).toEqual([0.25, 0]);
  });
});
