import { afterEach, describe, expect, it } from 'vitest';
import { API_KEY, attr, openaiProvider, sendJson, startGateway, startUpstream, type Gateway, type Upstream } from '../harness.js';
import { json, startFake, type FakeUpstream } from '../providers/shared/fake-upstream.js';
import { aiClients, type AiClient } from './clients.js';

let gateway: Gateway | undefined;
const upstreams: Array<Upstream | FakeUpstream> = [];

afterEach(async () => {
  await gateway?.close();
  gateway = undefined;
  await Promise.all(upstreams.splice(0).map((u) => u.close()));
});

async function setup(client: AiClient) {
  const up = await startUpstream((body, res) => {
    const input = body['input'] as string[];
    sendJson(res, 200, { object: 'list', data: input.map((text, i) => ({ object: 'embedding', index: i, embedding: [text.length, i] })), model: 'e-up', usage: { prompt_tokens: 3 * input.length, total_tokens: 3 * input.length } });
  });
  upstreams.push(up);
  gateway = await startGateway({
    providers: { oa: openaiProvider(up) },
    models: [
      { id: 'acme/embed', type: 'embedding', endpoints: [{ provider: 'oa', model: 'e-up' }] },
      { id: 'acme/chat', endpoints: [{ provider: 'oa', model: 'c-up' }] },
    ],
  });
  return { gw: client.ai.createGateway({ baseURL: `${gateway.baseURL}/ai`, apiKey: API_KEY }), up };
}

describe.each(aiClients)('POST /v1/ai/embedding-model with $name', (client) => {
  const { ai } = client;

  it('answers embed and embedMany with vectors in input order, usage and gateway metadata', async () => {
    const { gw, up } = await setup(client);
    const one = await ai.embed({ model: gw.embeddingModel('acme/embed'), value: 'sunny day', maxRetries: 0 });
    expect(one.embedding).toEqual([9, 0]);
    expect(one.usage.tokens).toBe(3);
    const many = await ai.embedMany({ model: gw.embeddingModel('acme/embed'), values: ['a', 'bb', 'ccc'], maxRetries: 0 });
    expect(many.embeddings).toEqual([
      [1, 0],
      [2, 1],
      [3, 2],
    ]);
    expect(many.usage.tokens).toBe(9);
    expect(up.requests[1]?.body).toEqual({ model: 'e-up', input: ['a', 'bb', 'ccc'], encoding_format: 'float' });
    const spans = await (gateway as Gateway).spans(4);
    expect(attr(spans.find((s) => s.name === 'embeddings e-up'), 'gen_ai.operation.name')).toBe('embeddings');
    expect(spans.some((s) => s.name === 'POST /v1/ai/embedding-model')).toBe(true);
  });

  it('sends the requested dimensions upstream', async () => {
    const { gw, up } = await setup(client);
    await ai.embed({ model: gw.embeddingModel('acme/embed'), value: 'x', maxRetries: 0, providerOptions: { openai: { dimensions: 64 } } });
    expect(up.requests[0]?.body['dimensions']).toBe(64);
  });

  it("sends @ai-sdk/openai's user option upstream as the end user", async () => {
    const { gw, up } = await setup(client);
    await ai.embed({ model: gw.embeddingModel('acme/embed'), value: 'x', maxRetries: 0, providerOptions: { openai: { user: 'user-42' } } });
    expect(up.requests[0]?.body['user']).toBe('user-42');
  });

  it("sends @ai-sdk/google's taskType to Gemini with each text", async () => {
    const fake = await startFake(
      () => [],
      (seen, res) => json(res, 200, { embeddings: (seen.body as { requests: unknown[] }).requests.map(() => ({ values: [1, 2] })) }),
    );
    upstreams.push(fake);
    gateway = await startGateway({ providers: { g: { type: 'google', base_url: fake.url, api_key: 'g-key' } }, models: [{ id: 'google/embed', type: 'embedding', endpoints: [{ provider: 'g', model: 'gemini-embedding-001' }] }] });
    const gw = ai.createGateway({ baseURL: `${gateway.baseURL}/ai`, apiKey: API_KEY });
    await ai.embedMany({ model: gw.embeddingModel('google/embed'), values: ['a', 'b'], maxRetries: 0, providerOptions: { google: { taskType: 'RETRIEVAL_QUERY', outputDimensionality: 256 } } });
    expect((fake.requests[0]?.body as { requests: unknown[] }).requests).toEqual([
      { model: 'models/gemini-embedding-001', content: { parts: [{ text: 'a' }] }, outputDimensionality: 256, taskType: 'RETRIEVAL_QUERY' },
      { model: 'models/gemini-embedding-001', content: { parts: [{ text: 'b' }] }, outputDimensionality: 256, taskType: 'RETRIEVAL_QUERY' },
    ]);
  });

  it("sends @ai-sdk/amazon-bedrock's options to Bedrock: Cohere's inputType and truncate, Titan's dimensions", async () => {
    const fake = await startFake(
      () => [],
      (seen, res) => {
        const body = seen.body as { texts?: string[] };
        if (body.texts !== undefined) return json(res, 200, { id: 'c1', response_type: 'embeddings_floats', texts: body.texts, embeddings: body.texts.map(() => [1, 2]) });
        json(res, 200, { embedding: [1, 2], inputTextTokenCount: 1 });
      },
    );
    upstreams.push(fake);
    gateway = await startGateway({
      providers: { br: { type: 'bedrock', region: 'us-east-1', base_url: fake.url, access_key_id: 'AKIDEXAMPLE', secret_access_key: 'secret' } },
      models: [
        { id: 'cohere/embed', type: 'embedding', endpoints: [{ provider: 'br', model: 'cohere.embed-english-v3' }] },
        { id: 'amazon/titan-embed', type: 'embedding', endpoints: [{ provider: 'br', model: 'amazon.titan-embed-text-v2:0' }] },
      ],
    });
    const gw = ai.createGateway({ baseURL: `${gateway.baseURL}/ai`, apiKey: API_KEY });
    await ai.embed({ model: gw.embeddingModel('cohere/embed'), value: 'where is it?', maxRetries: 0, providerOptions: { bedrock: { inputType: 'search_query', truncate: 'END' } } });
    await ai.embedMany({ model: gw.embeddingModel('cohere/embed'), values: ['a', 'b'], maxRetries: 0 });
    await ai.embed({ model: gw.embeddingModel('amazon/titan-embed'), value: 'x', maxRetries: 0, providerOptions: { bedrock: { dimensions: 256 } } });
    expect(fake.requests.map((r) => r.body)).toEqual([
      { texts: ['where is it?'], input_type: 'search_query', truncate: 'END' },
      { texts: ['a', 'b'], input_type: 'search_document' },
      { inputText: 'x', dimensions: 256 },
    ]);
  });

  it("sends @ai-sdk/amazon-bedrock's normalize to Titan Text Embeddings v2, and refuses it before any call for a Titan model that does not take it", async () => {
    // Bedrock refuses a key a Titan model does not take; Titan Text v2 takes inputText, dimensions and normalize.
    const accepted: Record<string, readonly string[]> = { 'amazon.titan-embed-text-v1': ['inputText'], 'amazon.titan-embed-text-v2:0': ['inputText', 'dimensions', 'normalize'] };
    const fake = await startFake(
      (seen) => {
        const model = decodeURIComponent(seen.path.split('/')[2] ?? '');
        return Object.keys(seen.body as object).filter((key) => !(accepted[model] ?? []).includes(key)).map((key) => `extraneous key [${key}] is not permitted`);
      },
      (_seen, res) => json(res, 200, { embedding: [1, 2], inputTextTokenCount: 1 }),
    );
    upstreams.push(fake);
    gateway = await startGateway({
      providers: { br: { type: 'bedrock', region: 'us-east-1', base_url: fake.url, access_key_id: 'AKIDEXAMPLE', secret_access_key: 'secret' } },
      models: [
        { id: 'amazon/titan-v2', type: 'embedding', endpoints: [{ provider: 'br', model: 'amazon.titan-embed-text-v2:0' }] },
        { id: 'amazon/titan-v1', type: 'embedding', endpoints: [{ provider: 'br', model: 'amazon.titan-embed-text-v1' }] },
      ],
    });
    const gw = ai.createGateway({ baseURL: `${gateway.baseURL}/ai`, apiKey: API_KEY });
    await ai.embed({ model: gw.embeddingModel('amazon/titan-v2'), value: 'x', maxRetries: 0, providerOptions: { bedrock: { normalize: false, dimensions: 256 } } });
    await ai.embed({ model: gw.embeddingModel('amazon/titan-v2'), value: 'y', maxRetries: 0, providerOptions: { bedrock: { normalize: true } } });
    expect(fake.requests.map((r) => r.body)).toEqual([
      { inputText: 'x', dimensions: 256, normalize: false },
      { inputText: 'y', normalize: true },
    ]);
    const refused = await ai.embed({ model: gw.embeddingModel('amazon/titan-v1'), value: 'z', maxRetries: 0, providerOptions: { bedrock: { normalize: true } } }).catch((err: unknown) => err);
    expect(refused).toMatchObject({ name: 'GatewayInvalidRequestError', statusCode: 400, message: expect.stringContaining('providerOptions.bedrock.normalize: only Titan Text Embeddings v2 takes normalize') });
    expect(fake.requests).toHaveLength(2);
    expect(fake.problems).toEqual([]);
  });

  it("sends @ai-sdk/amazon-bedrock's Nova options to Amazon Nova in its SINGLE_EMBEDDING body: embeddingPurpose, truncate, embeddingDimension", async () => {
    const fake = await startFake(
      () => [],
      (_seen, res) => json(res, 200, { embeddings: [{ embeddingType: 'TEXT', embedding: [1, 2] }] }, { 'X-Amzn-Bedrock-Input-Token-Count': '2' }),
    );
    upstreams.push(fake);
    gateway = await startGateway({
      providers: { br: { type: 'bedrock', region: 'us-east-1', base_url: fake.url, access_key_id: 'AKIDEXAMPLE', secret_access_key: 'secret' } },
      models: [{ id: 'amazon/nova-embed', type: 'embedding', endpoints: [{ provider: 'br', model: 'amazon.nova-2-multimodal-embeddings-v1:0' }] }],
    });
    const gw = ai.createGateway({ baseURL: `${gateway.baseURL}/ai`, apiKey: API_KEY });
    const out = await ai.embed({ model: gw.embeddingModel('amazon/nova-embed'), value: 'where is it?', maxRetries: 0, providerOptions: { bedrock: { embeddingPurpose: 'TEXT_RETRIEVAL', truncate: 'NONE', embeddingDimension: 256 } } });
    expect(out.embedding).toEqual([1, 2]);
    expect(out.usage.tokens).toBe(2);
    expect(fake.requests.map((r) => r.body)).toEqual([
      { taskType: 'SINGLE_EMBEDDING', singleEmbeddingParams: { embeddingPurpose: 'TEXT_RETRIEVAL', embeddingDimension: 256, text: { truncationMode: 'NONE', value: 'where is it?' } } },
    ]);
  });

  it("sends @ai-sdk/amazon-bedrock's Cohere outputDimension to Cohere Embed v4 as output_dimension, and refuses it before any call for Embed v3", async () => {
    const fake = await startFake(
      () => [],
      (seen, res) => {
        const texts = (seen.body as { texts: string[] }).texts;
        json(res, 200, { id: 'c1', response_type: 'embeddings_floats', texts, embeddings: texts.map(() => [1, 2]) });
      },
    );
    upstreams.push(fake);
    gateway = await startGateway({
      providers: { br: { type: 'bedrock', region: 'us-east-1', base_url: fake.url, access_key_id: 'AKIDEXAMPLE', secret_access_key: 'secret' } },
      models: [
        { id: 'cohere/embed-v4', type: 'embedding', endpoints: [{ provider: 'br', model: 'cohere.embed-v4:0' }] },
        { id: 'cohere/embed-v3', type: 'embedding', endpoints: [{ provider: 'br', model: 'cohere.embed-english-v3' }] },
      ],
    });
    const gw = ai.createGateway({ baseURL: `${gateway.baseURL}/ai`, apiKey: API_KEY });
    await ai.embed({ model: gw.embeddingModel('cohere/embed-v4'), value: 'x', maxRetries: 0, providerOptions: { bedrock: { outputDimension: 256 } } });
    expect(fake.requests.map((r) => r.body)).toEqual([{ texts: ['x'], input_type: 'search_document', output_dimension: 256 }]);
    const refused = await ai.embed({ model: gw.embeddingModel('cohere/embed-v3'), value: 'y', maxRetries: 0, providerOptions: { bedrock: { outputDimension: 256 } } }).catch((err: unknown) => err);
    expect(refused).toMatchObject({ name: 'GatewayInvalidRequestError', statusCode: 400, message: expect.stringContaining('Cohere Embed v3 on Bedrock has fixed dimensions') });
    expect(fake.requests).toHaveLength(1);
  });

  it('embeds more values than Gemini takes in one batchEmbedContents call, in order', async () => {
    const fake = await startFake(
      () => [],
      (seen, res) => {
        const requests = (seen.body as { requests: Array<{ content: { parts: Array<{ text: string }> } }> }).requests;
        // Gemini's own limit: more than 100 entries in one call is a 400.
        if (requests.length > 100) return json(res, 400, { error: { code: 400, message: 'BatchEmbedContentsRequest.requests: at most 100 requests can be in one batch', status: 'INVALID_ARGUMENT' } });
        json(res, 200, { embeddings: requests.map((r) => ({ values: [Number(r.content.parts[0]?.text)] })) });
      },
    );
    upstreams.push(fake);
    gateway = await startGateway({ providers: { g: { type: 'google', base_url: fake.url, api_key: 'g-key' } }, models: [{ id: 'google/embed', type: 'embedding', endpoints: [{ provider: 'g', model: 'text-embedding-004' }] }] });
    const gw = ai.createGateway({ baseURL: `${gateway.baseURL}/ai`, apiKey: API_KEY });
    const values = Array.from({ length: 250 }, (_v, i) => String(i));
    const out = await ai.embedMany({ model: gw.embeddingModel('google/embed'), values, maxRetries: 0 });
    expect(out.embeddings).toEqual(values.map((v) => [Number(v)]));
    expect(fake.requests.map((r) => (r.body as { requests: unknown[] }).requests.length)).toEqual([100, 100, 50]);
  });

  it('names in providerMetadata.gateway.routing each attempt and the provider that answered after a fallback', async () => {
    const down = await startUpstream((_b, res) => sendJson(res, 503, { error: { message: 'overloaded', type: 'api_error' } }));
    const up = await startUpstream((_b, res) => sendJson(res, 200, { object: 'list', data: [{ object: 'embedding', index: 0, embedding: [1, 2] }], model: 'e-up', usage: { prompt_tokens: 1, total_tokens: 1 } }));
    upstreams.push(down, up);
    gateway = await startGateway({ providers: { first: openaiProvider(down), second: openaiProvider(up) }, models: [{ id: 'acme/embed', type: 'embedding', endpoints: [{ provider: 'first', model: 'e-down' }, { provider: 'second', model: 'e-up' }] }] });
    const gw = ai.createGateway({ baseURL: `${gateway.baseURL}/ai`, apiKey: API_KEY });
    const out = await ai.embed({ model: gw.embeddingModel('acme/embed'), value: 'x', maxRetries: 0 });
    expect(out.providerMetadata?.['gateway']).toMatchObject({
      modelId: 'acme/embed',
      provider: 'second',
      attempts: 2,
      routing: {
        originalModelId: 'acme/embed',
        finalProvider: 'second',
        finalModelId: 'acme/embed',
        attempts: [
          { provider: 'first', modelId: 'acme/embed', providerApiModelId: 'e-down', success: false, statusCode: 503 },
          { provider: 'second', modelId: 'acme/embed', providerApiModelId: 'e-up', success: true },
        ],
      },
    });
  });

  it('maps a provider refusing the gateway credentials to GatewayFailedDependencyError', async () => {
    const up = await startUpstream((_b, res) => sendJson(res, 401, { error: { message: 'Incorrect API key provided', type: 'invalid_request_error', code: 'invalid_api_key' } }));
    upstreams.push(up);
    gateway = await startGateway({ providers: { oa: openaiProvider(up) }, models: [{ id: 'acme/embed', type: 'embedding', endpoints: [{ provider: 'oa', model: 'e-up' }] }] });
    const gw = ai.createGateway({ baseURL: `${gateway.baseURL}/ai`, apiKey: API_KEY });
    const error = await ai.embed({ model: gw.embeddingModel('acme/embed'), value: 'x', maxRetries: 0 }).catch((err: unknown) => err);
    expect(error).toMatchObject({ name: 'GatewayFailedDependencyError', statusCode: 424, message: expect.stringMatching(/^Provider oa refused this gateway's credentials \(HTTP 401\): Incorrect API key provided \[gen_\w+\]$/) });
  });

  it('refuses an empty text with GatewayInvalidRequestError before any upstream call', async () => {
    const { gw, up } = await setup(client);
    const one = await ai.embed({ model: gw.embeddingModel('acme/embed'), value: '', maxRetries: 0 }).catch((err: unknown) => err);
    expect(one).toMatchObject({ name: 'GatewayInvalidRequestError', statusCode: 400, message: expect.stringMatching(/^values\[0\]: must not be empty/) });
    const many = await ai.embedMany({ model: gw.embeddingModel('acme/embed'), values: ['a', ''], maxRetries: 0 }).catch((err: unknown) => err);
    expect(many).toMatchObject({ name: 'GatewayInvalidRequestError', statusCode: 400, message: expect.stringMatching(/^values\[1\]: must not be empty/) });
    expect(up.requests).toHaveLength(0);
  });

  it('maps an unknown model and a language model to the client error classes', async () => {
    const { gw, up } = await setup(client);
    const missing = await ai.embed({ model: gw.embeddingModel('acme/nope'), value: 'x', maxRetries: 0 }).catch((err: unknown) => err);
    expect(missing).toMatchObject({ name: 'GatewayModelNotFoundError', modelId: 'acme/nope' });
    const wrong = await ai.embed({ model: gw.embeddingModel('acme/chat'), value: 'x', maxRetries: 0 }).catch((err: unknown) => err);
    expect(wrong).toMatchObject({ name: 'GatewayInvalidRequestError', statusCode: 400 });
    expect(up.requests).toHaveLength(0);
  });
});
