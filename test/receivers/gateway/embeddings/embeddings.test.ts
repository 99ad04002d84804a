import OpenAI from 'openai';
import { afterEach, describe, expect, it, vi } from 'vitest';
import { z } from 'zod';
import { API_KEY, attr, openaiProvider, sendJson, startGateway, startUpstream, type Gateway, type Upstream } from '../harness.js';
import { json, startFake, type FakeUpstream, type Seen } from '../providers/shared/fake-upstream.js';

let gateway: Gateway | undefined;
const upstreams: Array<Upstream | FakeUpstream> = [];

afterEach(async () => {
  vi.useRealTimers();
  await gateway?.close();
  gateway = undefined;
  await Promise.all(upstreams.splice(0).map((u) => u.close()));
});

/** Deterministic vectors: input i gets [i + 0.5, -(i + 0.25), 1 / 3]. */
function vectorFor(i: number): number[] {
  return [i + 0.5, -(i + 0.25), 1 / 3];
}

function openaiEmbeddingsUpstream(): Promise<Upstream> {
  return startUpstream((body, res) => {
    const input = body['input'] as unknown[];
    sendJson(res, 200, { object: 'list', data: input.map((_v, i) => ({ object: 'embedding', index: i, embedding: vectorFor(i) })), model: 'text-embedding-up', usage: { prompt_tokens: 4 * input.length, total_tokens: 4 * input.length } });
  });
}

function client(): OpenAI {
  return new OpenAI({ baseURL: (gateway as Gateway).baseURL, apiKey: API_KEY, maxRetries: 0 });
}

const noProblems = () => [];

/** Nova Multimodal Embeddings' synchronous InvokeModel body for a text, as AWS documents it (Bedrock refuses other keys). */
const novaTextRequest = z.strictObject({
  schemaVersion: z.literal('nova-multimodal-embed-v1').optional(),
  taskType: z.literal('SINGLE_EMBEDDING'),
  singleEmbeddingParams: z.strictObject({
    embeddingPurpose: z.enum(['GENERIC_INDEX', 'GENERIC_RETRIEVAL', 'TEXT_RETRIEVAL', 'IMAGE_RETRIEVAL', 'VIDEO_RETRIEVAL', 'DOCUMENT_RETRIEVAL', 'AUDIO_RETRIEVAL', 'CLASSIFICATION', 'CLUSTERING']),
    embeddingDimension: z.union([z.literal(256), z.literal(384), z.literal(1024), z.literal(3072)]).optional(),
    text: z.strictObject({ truncationMode: z.enum(['START', 'END', 'NONE']), value: z.string().min(1).max(8192) }),
  }),
});

/** A fake Bedrock that answers Nova's documented shape (one TEXT embedding, tokens in the InvokeModel header) and refuses any other body. */
function startNovaFake(): Promise<FakeUpstream> {
  return startFake(
    (seen: Seen) => novaTextRequest.safeParse(seen.body).error?.issues.map((issue) => `${issue.path.join('.')}: ${issue.message}`) ?? [],
    (seen: Seen, res) => {
      const params = (seen.body as z.infer<typeof novaTextRequest>).singleEmbeddingParams;
      json(res, 200, { embeddings: [{ embeddingType: 'TEXT', embedding: vectorFor(params.text.value === 'x' ? 0 : 1) }] }, { 'X-Amzn-Bedrock-Input-Token-Count': '3' });
    },
  );
}

describe('POST /v1/embeddings', () => {
  it('answers the openai SDK in float and in base64, from an OpenAI-compatible upstream', async () => {
    const up = await openaiEmbeddingsUpstream();
    upstreams.push(up);
    gateway = await startGateway({ providers: { oa: openaiProvider(up) }, models: [{ id: 'acme/embed', type: 'embedding', endpoints: [{ provider: 'oa', model: 'text-embedding-up' }] }] });
    const floats = await client().embeddings.create({ model: 'acme/embed', input: ['a', 'b'], encoding_format: 'float', dimensions: 3 });
    expect(floats.data.map((d) => d.embedding)).toEqual([vectorFor(0), vectorFor(1)]);
    expect(floats.model).toBe('acme/embed');
    expect(floats.usage).toEqual({ prompt_tokens: 8, total_tokens: 8 });
    expect(up.requests[0]?.body).toEqual({ model: 'text-embedding-up', input: ['a', 'b'], encoding_format: 'float', dimensions: 3 });

    // The SDK asks for base64 by default and decodes the float32 bytes itself.
    const decoded = await client().embeddings.create({ model: 'acme/embed', input: 'one text' });
    expect(decoded.data[0]?.embedding).toEqual(vectorFor(0).map((n) => Math.fround(n)));
    const raw = await client().embeddings.create({ model: 'acme/embed', input: 'one text', encoding_format: 'base64' });
    const bytes = Buffer.from(raw.data[0]?.embedding as unknown as string, 'base64');
    expect([0, 1, 2].map((i) => bytes.readFloatLE(i * 4))).toEqual(vectorFor(0).map((n) => Math.fround(n)));
  });

  it('refuses an upstream list that is not one vector per input (holes, a wrong count, not numbers) with a 502 saying what is wrong', async () => {
    const answers: Record<string, unknown[]> = {
      hole: [{ index: 1, embedding: [0.5] }, { index: 1, embedding: [0.5] }],
      short: [{ index: 0, embedding: [0.5] }],
      words: [{ index: 0, embedding: ['x'] }, { index: 1, embedding: [0.5] }],
    };
    const up = await startUpstream((body, res) => sendJson(res, 200, { object: 'list', data: answers[(body['input'] as string[])[0] ?? ''], model: 'e', usage: { prompt_tokens: 1, total_tokens: 1 } }));
    upstreams.push(up);
    gateway = await startGateway({ providers: { oa: openaiProvider(up) }, models: [{ id: 'acme/embed', type: 'embedding', endpoints: [{ provider: 'oa', model: 'e' }] }] });
    for (const [input, problem] of [
      ['hole', 'no embedding at index 0'],
      ['short', '1 embeddings for 2 inputs'],
      ['words', 'data[0].embedding is not a list of numbers'],
    ] as const) {
      const error = await client().embeddings.create({ model: 'acme/embed', input: [input, 'b'], encoding_format: 'float' }).catch((err: unknown) => err);
      expect(error).toMatchObject({ status: 502, code: 'upstream_error', error: { message: `Provider oa answered with an invalid response: ${problem}.` } });
    }
  });

  it('bills and answers token counts an upstream got wrong (fractional, negative, not a number) as 0, priced', async () => {
    const counts: Record<string, unknown> = { half: 2.5, negative: -5, words: 'many' };
    const up = await startUpstream((body, res) => {
      const text = (body['input'] as string[])[0] ?? '';
      sendJson(res, 200, { object: 'list', data: [{ object: 'embedding', index: 0, embedding: [0.5] }], model: 'e', usage: { prompt_tokens: counts[text], total_tokens: counts[text] } });
    });
    upstreams.push(up);
    gateway = await startGateway({ providers: { oa: openaiProvider(up) }, models: [{ id: 'acme/embed', type: 'embedding', pricing: { input: '0.0000001' }, endpoints: [{ provider: 'oa', model: 'e' }] }] });
    for (const input of Object.keys(counts)) {
      const answer = await client().embeddings.create({ model: 'acme/embed', input: [input], encoding_format: 'float' });
      expect(answer.usage, input).toMatchObject({ prompt_tokens: 0, total_tokens: 0 });
    }
  });

  it('counts usage.total_tokens as the input tokens of an upstream that reports no prompt_tokens, priced and on the span', async () => {
    const up = await startUpstream((body, res) => {
      const input = body['input'] as string[];
      sendJson(res, 200, { object: 'list', data: input.map((_v, i) => ({ object: 'embedding', index: i, embedding: vectorFor(i) })), model: 'e', usage: { total_tokens: 5 * input.length } });
    });
    upstreams.push(up);
    gateway = await startGateway({ providers: { oa: openaiProvider(up) }, models: [{ id: 'acme/embed', type: 'embedding', pricing: { input: '0.0000001' }, endpoints: [{ provider: 'oa', model: 'e' }] }] });
    const out = await client().embeddings.create({ model: 'acme/embed', input: ['a', 'b'], encoding_format: 'float' }).withResponse();
    expect(out.data.usage).toEqual({ prompt_tokens: 10, total_tokens: 10, cost: 0.000001 });
    const id = out.response.headers.get('x-sluice-generation-id');
    const record = await fetch(`${(gateway as Gateway).baseURL}/generation?id=${id}`, { headers: { authorization: `Bearer ${API_KEY}` } });
    expect(((await record.json()) as { data: unknown }).data).toMatchObject({ native_tokens_prompt: 10, total_cost: 0.000001 });
    const spans = await (gateway as Gateway).spans(2);
    expect(attr(spans.find((s) => s.name === 'embeddings e'), 'gen_ai.usage.input_tokens')).toBe(10);
  });

  it('shows the cost of a priced model as usage.cost, in float and base64 answers, and none for an unpriced one', async () => {
    const up = await openaiEmbeddingsUpstream();
    upstreams.push(up);
    gateway = await startGateway({
      providers: { oa: openaiProvider(up) },
      models: [
        { id: 'acme/priced', type: 'embedding', pricing: { input: '0.0000001' }, endpoints: [{ provider: 'oa', model: 'e' }] },
        { id: 'acme/free', type: 'embedding', endpoints: [{ provider: 'oa', model: 'e' }] },
      ],
    });
    // 2 inputs, 4 tokens each, at 1e-7 USD a token.
    const floats = await client().embeddings.create({ model: 'acme/priced', input: ['a', 'b'], encoding_format: 'float' });
    expect(floats.usage).toEqual({ prompt_tokens: 8, total_tokens: 8, cost: 0.0000008 });
    const decoded = await client().embeddings.create({ model: 'acme/priced', input: ['a', 'b'] });
    expect(decoded.usage).toEqual({ prompt_tokens: 8, total_tokens: 8, cost: 0.0000008 });
    const free = await client().embeddings.create({ model: 'acme/free', input: ['a', 'b'], encoding_format: 'float' });
    expect(free.usage).toEqual({ prompt_tokens: 8, total_tokens: 8 });
  });

  it('takes null encoding_format, dimensions and user as not given (LiteLLM sends encoding_format: null), answering floats', async () => {
    const up = await openaiEmbeddingsUpstream();
    upstreams.push(up);
    gateway = await startGateway({ providers: { oa: openaiProvider(up) }, models: [{ id: 'acme/embed', type: 'embedding', endpoints: [{ provider: 'oa', model: 'e' }] }] });
    const response = await fetch(`${(gateway as Gateway).baseURL}/embeddings`, {
      method: 'POST',
      headers: { authorization: `Bearer ${API_KEY}`, 'content-type': 'application/json' },
      body: JSON.stringify({ model: 'acme/embed', input: ['a'], encoding_format: null, dimensions: null, user: null }),
    });
    expect(response.status).toBe(200);
    expect(((await response.json()) as { data: Array<{ embedding: unknown }> }).data[0]?.embedding).toEqual(vectorFor(0));
    expect(up.requests[0]?.body).toEqual({ model: 'e', input: ['a'], encoding_format: 'float' });
  });

  it('passes token arrays to an OpenAI-compatible upstream', async () => {
    const up = await openaiEmbeddingsUpstream();
    upstreams.push(up);
    gateway = await startGateway({ providers: { oa: openaiProvider(up) }, models: [{ id: 'acme/embed', type: 'embedding', endpoints: [{ provider: 'oa', model: 'e' }] }] });
    const out = await client().embeddings.create({ model: 'acme/embed', input: [[1, 2, 3], [4]], encoding_format: 'float' });
    expect(out.data).toHaveLength(2);
    expect(up.requests[0]?.body['input']).toEqual([[1, 2, 3], [4]]);
  });

  it('embeds through google batchEmbedContents', async () => {
    const fake = await startFake(noProblems, (seen: Seen, res) => {
      const requests = (seen.body as { requests: unknown[] }).requests;
      json(res, 200, { embeddings: requests.map((_r, i) => ({ values: vectorFor(i) })) });
    });
    upstreams.push(fake);
    gateway = await startGateway({ providers: { g: { type: 'google', base_url: fake.url, api_key: 'g-key' } }, models: [{ id: 'google/embed', type: 'embedding', endpoints: [{ provider: 'g', model: 'text-embedding-004' }] }] });
    const out = await client().embeddings.create({ model: 'google/embed', input: ['x', 'y'], dimensions: 3, encoding_format: 'float' });
    expect(out.data.map((d) => d.embedding)).toEqual([vectorFor(0), vectorFor(1)]);
    const seen = fake.requests[0];
    expect(seen?.path).toBe('/v1beta/models/text-embedding-004:batchEmbedContents');
    expect(seen?.headers['x-goog-api-key']).toBe('g-key');
    expect(seen?.body).toEqual({
      requests: [
        { model: 'models/text-embedding-004', content: { parts: [{ text: 'x' }] }, outputDimensionality: 3 },
        { model: 'models/text-embedding-004', content: { parts: [{ text: 'y' }] }, outputDimensionality: 3 },
      ],
    });
  });

  it("counts and prices the tokens Gemini reports in usageMetadata.promptTokenCount, summed over batchEmbedContents calls", async () => {
    const fake = await startFake(noProblems, (seen: Seen, res) => {
      const requests = (seen.body as { requests: unknown[] }).requests;
      json(res, 200, { embeddings: requests.map((_r, i) => ({ values: vectorFor(i) })), usageMetadata: { promptTokenCount: 2 * requests.length, promptTokenDetails: [{ modality: 'TEXT', tokenCount: 2 * requests.length }] } });
    });
    upstreams.push(fake);
    gateway = await startGateway({ providers: { g: { type: 'google', base_url: fake.url, api_key: 'g-key' } }, models: [{ id: 'google/embed', type: 'embedding', pricing: { input: '0.00000015' }, endpoints: [{ provider: 'g', model: 'gemini-embedding-001' }] }] });
    const out = await client().embeddings.create({ model: 'google/embed', input: Array.from({ length: 150 }, (_v, i) => `t${i}`) });
    expect(fake.requests).toHaveLength(2);
    expect(out.usage).toEqual({ prompt_tokens: 300, total_tokens: 300, cost: 0.000045 });
    const spans = await (gateway as Gateway).spans(2);
    expect(attr(spans.find((s) => s.name === 'embeddings gemini-embedding-001'), 'gen_ai.usage.input_tokens')).toBe(300);
  });

  it('splits more texts than an upstream takes in one call (Gemini 100, Cohere on Bedrock 96) into calls one after another, vectors in input order', async () => {
    const inputs = Array.from({ length: 250 }, (_v, i) => `t${i}`);
    // Each vector holds its text's number, so the order can be checked across calls.
    const fake = await startFake(noProblems, (seen: Seen, res) => {
      const body = seen.body as { requests?: Array<{ content: { parts: Array<{ text: string }> } }>; texts?: string[] };
      const texts = body.texts ?? (body.requests ?? []).map((r) => r.content.parts[0]?.text ?? '');
      if (texts.length > (body.texts !== undefined ? 96 : 100)) return json(res, 400, { error: { code: 400, message: 'too many in one batch', status: 'INVALID_ARGUMENT' } });
      const vectors = texts.map((t) => [Number(t.slice(1))]);
      if (body.texts !== undefined) return json(res, 200, { id: 'c1', response_type: 'embeddings_floats', texts, embeddings: vectors }, { 'X-Amzn-Bedrock-Input-Token-Count': String(texts.length) });
      json(res, 200, { embeddings: vectors.map((values) => ({ values })) });
    });
    upstreams.push(fake);
    gateway = await startGateway({
      providers: { g: { type: 'google', base_url: fake.url, api_key: 'g-key' }, br: { type: 'bedrock', region: 'us-east-1', base_url: fake.url, access_key_id: 'AKIDEXAMPLE', secret_access_key: 'secret' } },
      models: [
        { id: 'google/embed', type: 'embedding', endpoints: [{ provider: 'g', model: 'text-embedding-004' }] },
        { id: 'cohere/embed', type: 'embedding', endpoints: [{ provider: 'br', model: 'cohere.embed-english-v3' }] },
      ],
    });
    const expected = inputs.map((_t, i) => [i]);
    const google = await client().embeddings.create({ model: 'google/embed', input: inputs, encoding_format: 'float' });
    expect(google.data.map((d) => d.embedding)).toEqual(expected);
    expect(fake.requests.map((r) => (r.body as { requests: unknown[] }).requests.length)).toEqual([100, 100, 50]);
    const cohere = await client().embeddings.create({ model: 'cohere/embed', input: inputs, encoding_format: 'float' });
    expect(cohere.data.map((d) => d.embedding)).toEqual(expected);
    expect(fake.requests.slice(3).map((r) => (r.body as { texts: unknown[] }).texts.length)).toEqual([96, 96, 58]);
    expect(cohere.usage.prompt_tokens).toBe(250);
  });

  it('embeds through bedrock InvokeModel with Titan (one call per text) and Cohere (one batch), signed', async () => {
    const fake = await startFake(noProblems, (seen: Seen, res) => {
      const body = seen.body as { inputText?: string; texts?: string[] };
      if (body.texts !== undefined) return json(res, 200, { id: 'c1', response_type: 'embeddings_floats', texts: body.texts, embeddings: body.texts.map((_t, i) => vectorFor(i)) });
      json(res, 200, { embedding: vectorFor(body.inputText === 'x' ? 0 : 1), inputTextTokenCount: 2 });
    });
    upstreams.push(fake);
    gateway = await startGateway({
      providers: { br: { type: 'bedrock', region: 'us-east-1', base_url: fake.url, access_key_id: 'AKIDEXAMPLE', secret_access_key: 'secret' } },
      models: [
        { id: 'amazon/titan-embed', type: 'embedding', endpoints: [{ provider: 'br', model: 'amazon.titan-embed-text-v2:0' }] },
        { id: 'cohere/embed', type: 'embedding', endpoints: [{ provider: 'br', model: 'cohere.embed-english-v3' }] },
      ],
    });
    const titan = await client().embeddings.create({ model: 'amazon/titan-embed', input: ['x', 'y'], dimensions: 256, encoding_format: 'float' });
    expect(titan.data.map((d) => d.embedding)).toEqual([vectorFor(0), vectorFor(1)]);
    expect(titan.usage.prompt_tokens).toBe(4);
    expect(fake.requests.map((r) => r.path)).toEqual(['/model/amazon.titan-embed-text-v2%3A0/invoke', '/model/amazon.titan-embed-text-v2%3A0/invoke']);
    expect(fake.requests.map((r) => r.body)).toEqual([
      { inputText: 'x', dimensions: 256 },
      { inputText: 'y', dimensions: 256 },
    ]);
    expect(String(fake.requests[0]?.headers['authorization'])).toMatch(/^AWS4-HMAC-SHA256 Credential=AKIDEXAMPLE\/\d{8}\/us-east-1\/bedrock\/aws4_request/);
    // One attempt span for both calls, each attribute key once (OTLP wants keys unique).
    const attempt = (await (gateway as Gateway).spans(2)).find((s) => s.name === 'embeddings amazon.titan-embed-text-v2:0');
    const keys = attempt?.attributes?.map((a) => a.key) ?? [];
    expect(keys).toContain('http.response.status_code');
    expect(keys.length).toBe(new Set(keys).size);
    const cohere = await client().embeddings.create({ model: 'cohere/embed', input: ['p', 'q', 'r'], encoding_format: 'float' });
    expect(cohere.data.map((d) => d.embedding)).toEqual([vectorFor(0), vectorFor(1), vectorFor(2)]);
    expect(fake.requests[2]?.body).toEqual({ texts: ['p', 'q', 'r'], input_type: 'search_document' });
  });

  it("maps dimensions to each Titan model's own field: embeddingConfig.outputEmbeddingLength for Titan Multimodal, refused before any call for Titan Text v1 (which takes inputText alone), so the next endpoint serves it", async () => {
    // Bedrock's InvokeModel refuses a key a model does not take, as a ValidationException.
    const accepted: Record<string, readonly string[]> = { 'amazon.titan-embed-text-v1': ['inputText'], 'amazon.titan-embed-image-v1': ['inputText', 'embeddingConfig'], 'amazon.titan-embed-text-v2:0': ['inputText', 'dimensions'] };
    const fake = await startFake(noProblems, (seen: Seen, res) => {
      const model = decodeURIComponent(seen.path.split('/')[2] ?? '');
      const extra = Object.keys(seen.body as object).find((key) => !(accepted[model] ?? []).includes(key));
      if (extra !== undefined) return json(res, 400, { message: `Malformed input request: #: extraneous key [${extra}] is not permitted, please reformat your input and try again.` }, { 'x-amzn-ErrorType': 'ValidationException:http://internal.amazon.com/coral/com.amazon.bedrock/' });
      json(res, 200, { embedding: vectorFor(0), inputTextTokenCount: 1 });
    });
    upstreams.push(fake);
    gateway = await startGateway({
      providers: { br: { type: 'bedrock', region: 'us-east-1', base_url: fake.url, access_key_id: 'AKIDEXAMPLE', secret_access_key: 'secret' } },
      models: [
        { id: 'amazon/titan-image', type: 'embedding', endpoints: [{ provider: 'br', model: 'amazon.titan-embed-image-v1' }] },
        { id: 'amazon/titan-v1', type: 'embedding', endpoints: [{ provider: 'br', model: 'amazon.titan-embed-text-v1' }, { provider: 'br', model: 'amazon.titan-embed-text-v2:0' }] },
      ],
    });
    const image = await client().embeddings.create({ model: 'amazon/titan-image', input: 'x', dimensions: 384, encoding_format: 'float' });
    expect(image.data[0]?.embedding).toEqual(vectorFor(0));
    expect(fake.requests.map((r) => r.body)).toEqual([{ inputText: 'x', embeddingConfig: { outputEmbeddingLength: 384 } }]);
    const shortened = await client().embeddings.create({ model: 'amazon/titan-v1', input: 'y', dimensions: 256, encoding_format: 'float' });
    expect(shortened.data[0]?.embedding).toEqual(vectorFor(0));
    expect(fake.requests.slice(1).map((r) => [r.path, r.body])).toEqual([['/model/amazon.titan-embed-text-v2%3A0/invoke', { inputText: 'y', dimensions: 256 }]]);
    await client().embeddings.create({ model: 'amazon/titan-v1', input: 'z', encoding_format: 'float' });
    expect(fake.requests.slice(2).map((r) => [r.path, r.body])).toEqual([['/model/amazon.titan-embed-text-v1/invoke', { inputText: 'z' }]]);
  });

  it('signs each Titan call when it is sent, so a long run of calls one after another is not sent with signatures minutes old', async () => {
    // SigV4 signatures are good for five minutes; the clock moves six minutes on at every call.
    vi.useFakeTimers({ toFake: ['Date'] });
    vi.setSystemTime(new Date('2026-03-02T10:00:00Z'));
    const fake = await startFake(noProblems, (_seen: Seen, res) => {
      vi.setSystemTime(Date.now() + 6 * 60_000);
      json(res, 200, { embedding: vectorFor(0), inputTextTokenCount: 1 });
    });
    upstreams.push(fake);
    gateway = await startGateway({
      providers: { br: { type: 'bedrock', region: 'us-east-1', base_url: fake.url, access_key_id: 'AKIDEXAMPLE', secret_access_key: 'secret' } },
      models: [{ id: 'amazon/titan-embed', type: 'embedding', endpoints: [{ provider: 'br', model: 'amazon.titan-embed-text-v2:0' }] }],
    });
    await client().embeddings.create({ model: 'amazon/titan-embed', input: ['x', 'y', 'z'], encoding_format: 'float' });
    expect(fake.requests.map((r) => r.headers['x-amz-date'])).toEqual(['20260302T100000Z', '20260302T100600Z', '20260302T101200Z']);
  });

  it("embeds through Amazon Nova on bedrock with Nova's own SINGLE_EMBEDDING body, one call per text, reading its embeddings list and the header's token count", async () => {
    const fake = await startNovaFake();
    upstreams.push(fake);
    gateway = await startGateway({
      providers: { br: { type: 'bedrock', region: 'us-east-1', base_url: fake.url, access_key_id: 'AKIDEXAMPLE', secret_access_key: 'secret' } },
      models: [{ id: 'amazon/nova-embed', type: 'embedding', pricing: { input: '0.0000001' }, endpoints: [{ provider: 'br', model: 'amazon.nova-2-multimodal-embeddings-v1:0' }] }],
    });
    const out = await client().embeddings.create({ model: 'amazon/nova-embed', input: ['x', 'y'], dimensions: 1024, encoding_format: 'float' });
    expect(fake.problems).toEqual([]);
    expect(out.data.map((d) => d.embedding)).toEqual([vectorFor(0), vectorFor(1)]);
    expect(out.usage).toEqual({ prompt_tokens: 6, total_tokens: 6, cost: 0.0000006 });
    expect(fake.requests.map((r) => r.path)).toEqual(['/model/amazon.nova-2-multimodal-embeddings-v1%3A0/invoke', '/model/amazon.nova-2-multimodal-embeddings-v1%3A0/invoke']);
    expect(fake.requests.map((r) => r.body)).toEqual(
      ['x', 'y'].map((value) => ({ taskType: 'SINGLE_EMBEDDING', singleEmbeddingParams: { embeddingPurpose: 'GENERIC_INDEX', embeddingDimension: 1024, text: { truncationMode: 'END', value } } })),
    );
    // Without dimensions Nova answers its default size: none is asked for.
    await client().embeddings.create({ model: 'amazon/nova-embed', input: 'x', encoding_format: 'float' });
    expect(fake.requests[2]?.body).toEqual({ taskType: 'SINGLE_EMBEDDING', singleEmbeddingParams: { embeddingPurpose: 'GENERIC_INDEX', text: { truncationMode: 'END', value: 'x' } } });
    expect(fake.problems).toEqual([]);
  });

  it('refuses dimensions Nova does not take (256, 384, 1024, 3072 only) before any call, so the next endpoint serves them', async () => {
    const fake = await startNovaFake();
    const up = await openaiEmbeddingsUpstream();
    upstreams.push(fake, up);
    gateway = await startGateway({
      providers: { br: { type: 'bedrock', region: 'us-east-1', base_url: fake.url, access_key_id: 'AKIDEXAMPLE', secret_access_key: 'secret' }, oa: openaiProvider(up) },
      models: [
        { id: 'amazon/nova-embed', type: 'embedding', endpoints: [{ provider: 'br', model: 'us.amazon.nova-2-multimodal-embeddings-v1:0' }] },
        { id: 'acme/embed', type: 'embedding', endpoints: [{ provider: 'br', model: 'us.amazon.nova-2-multimodal-embeddings-v1:0' }, { provider: 'oa', model: 'e-up' }] },
      ],
    });
    const refused = await client().embeddings.create({ model: 'amazon/nova-embed', input: 'x', dimensions: 512, encoding_format: 'float' }).catch((err: unknown) => err);
    expect(refused).toMatchObject({ status: 400, code: 'unsupported_value', param: 'dimensions', error: { message: 'Provider br cannot take this request: dimensions: Amazon Nova embeddings take 256, 384, 1024, 3072 dimensions' } });
    const served = await client().embeddings.create({ model: 'acme/embed', input: 'x', dimensions: 512, encoding_format: 'float' }).withResponse();
    expect(served.response.headers.get('x-sluice-provider')).toBe('oa');
    expect(fake.requests).toHaveLength(0);
  });

  it('refuses a Bedrock model id that names no embedding family it knows (Titan, Nova, Cohere) with a 400 before any call, rather than guess a body', async () => {
    const fake = await startFake(noProblems, (_seen: Seen, res) => json(res, 200, { embedding: vectorFor(0), inputTextTokenCount: 1 }));
    const up = await openaiEmbeddingsUpstream();
    upstreams.push(fake, up);
    gateway = await startGateway({
      providers: { br: { type: 'bedrock', region: 'us-east-1', base_url: fake.url, access_key_id: 'AKIDEXAMPLE', secret_access_key: 'secret' }, oa: openaiProvider(up) },
      models: [
        { id: 'acme/bedrock-embed', type: 'embedding', endpoints: [{ provider: 'br', model: 'twelvelabs.marengo-embed-2-7-v1:0' }] },
        { id: 'acme/embed', type: 'embedding', endpoints: [{ provider: 'br', model: 'twelvelabs.marengo-embed-2-7-v1:0' }, { provider: 'oa', model: 'e-up' }] },
      ],
    });
    const refused = await client().embeddings.create({ model: 'acme/bedrock-embed', input: 'x', encoding_format: 'float' }).catch((err: unknown) => err);
    expect(refused).toMatchObject({ status: 400, code: 'unsupported_value', param: 'model' });
    expect((refused as Error).message).toContain('Provider br cannot take this request: model: the Bedrock model twelvelabs.marengo-embed-2-7-v1:0 is not an embedding model the gateway knows');
    const served = await client().embeddings.create({ model: 'acme/embed', input: 'x', encoding_format: 'float' }).withResponse();
    expect(served.response.headers.get('x-sluice-provider')).toBe('oa');
    expect(fake.requests).toHaveLength(0);
  });

  it('records no generation for a request Bedrock refuses before any call is made (dimensions for Cohere, token arrays)', async () => {
    const fake = await startFake(noProblems, (_seen: Seen, res) => json(res, 200, { embeddings: [] }));
    upstreams.push(fake);
    gateway = await startGateway({
      providers: { br: { type: 'bedrock', region: 'us-east-1', base_url: fake.url, access_key_id: 'AKIDEXAMPLE', secret_access_key: 'secret' } },
      models: [{ id: 'cohere/embed', type: 'embedding', endpoints: [{ provider: 'br', model: 'cohere.embed-english-v3' }] }],
    });
    for (const body of [{ input: 'x', dimensions: 256 }, { input: [[1, 2]] }]) {
      const refused = await client().embeddings.create({ model: 'cohere/embed', ...body }).withResponse().catch((err: { status: number; headers: Headers }) => err);
      expect(refused).toMatchObject({ status: 400 });
      const id = (refused as { headers: Headers }).headers.get('x-sluice-generation-id');
      expect(id).toMatch(/^gen_/);
      const record = await fetch(`${(gateway as Gateway).baseURL}/generation?id=${id}`, { headers: { authorization: `Bearer ${API_KEY}` } });
      expect(record.status).toBe(404);
    }
    expect(fake.requests).toHaveLength(0);
  });

  it('sends dimensions to Cohere Embed v4 on Bedrock as output_dimension, and reads its vectors by type', async () => {
    const fake = await startFake(noProblems, (seen: Seen, res) => {
      const body = seen.body as { texts: string[]; output_dimension?: number };
      json(res, 200, { id: 'c4', response_type: 'embeddings_by_type', texts: body.texts, embeddings: { float: body.texts.map((_t, i) => vectorFor(i).slice(0, body.output_dimension)) } }, { 'X-Amzn-Bedrock-Input-Token-Count': '3' });
    });
    upstreams.push(fake);
    gateway = await startGateway({
      providers: { br: { type: 'bedrock', region: 'us-east-1', base_url: fake.url, access_key_id: 'AKIDEXAMPLE', secret_access_key: 'secret' } },
      models: [{ id: 'cohere/embed-v4', type: 'embedding', endpoints: [{ provider: 'br', model: 'us.cohere.embed-v4:0' }] }],
    });
    const out = await client().embeddings.create({ model: 'cohere/embed-v4', input: ['p', 'q'], dimensions: 2, encoding_format: 'float' });
    expect(out.data.map((d) => d.embedding)).toEqual([vectorFor(0).slice(0, 2), vectorFor(1).slice(0, 2)]);
    expect(fake.requests.map((r) => r.body)).toEqual([{ texts: ['p', 'q'], input_type: 'search_document', output_dimension: 2 }]);
  });

  it('reports the input tokens Bedrock counts in the X-Amzn-Bedrock-Input-Token-Count header for Cohere Embed', async () => {
    const fake = await startFake(noProblems, (seen: Seen, res) => {
      const texts = (seen.body as { texts: string[] }).texts;
      json(res, 200, { id: 'c1', response_type: 'embeddings_floats', texts, embeddings: texts.map((_t, i) => vectorFor(i)) }, { 'X-Amzn-Bedrock-Input-Token-Count': '7' });
    });
    upstreams.push(fake);
    gateway = await startGateway({
      providers: { br: { type: 'bedrock', region: 'us-east-1', base_url: fake.url, access_key_id: 'AKIDEXAMPLE', secret_access_key: 'secret' } },
      models: [{ id: 'cohere/embed', type: 'embedding', endpoints: [{ provider: 'br', model: 'cohere.embed-english-v3' }] }],
    });
    const out = await client().embeddings.create({ model: 'cohere/embed', input: ['p', 'q'], encoding_format: 'float' });
    expect(out.usage).toEqual({ prompt_tokens: 7, total_tokens: 7 });
    const spans = await (gateway as Gateway).spans(2);
    expect(attr(spans.find((s) => s.name === 'embeddings cohere.embed-english-v3'), 'gen_ai.usage.input_tokens')).toBe(7);
  });

  it('falls back to the next endpoint and records embeddings spans', async () => {
    const down = await startUpstream((_b, res) => sendJson(res, 503, { error: { message: 'overloaded', type: 'api_error' } }));
    const up = await openaiEmbeddingsUpstream();
    upstreams.push(down, up);
    gateway = await startGateway({
      providers: { down: openaiProvider(down), up: openaiProvider(up) },
      models: [{ id: 'acme/embed', type: 'embedding', endpoints: [{ provider: 'down', model: 'e-down' }, { provider: 'up', model: 'e-up' }] }],
    });
    const response = await client().embeddings.create({ model: 'acme/embed', input: 'hi', encoding_format: 'float' }).withResponse();
    expect(response.data.data[0]?.embedding).toEqual(vectorFor(0));
    expect(response.response.headers.get('x-sluice-provider')).toBe('up');
    expect(response.response.headers.get('x-sluice-attempts')).toBe('2');
    const spans = await (gateway as Gateway).spans(3);
    const failed = spans.find((s) => s.name === 'embeddings e-down');
    const answered = spans.find((s) => s.name === 'embeddings e-up');
    expect(attr(failed, 'gen_ai.operation.name')).toBe('embeddings');
    expect(attr(failed, 'error.type')).toBe('503');
    expect(attr(answered, 'gen_ai.usage.input_tokens')).toBe(4);
    expect(attr(answered, 'sluice.provider')).toBe('up');
    expect(attr(answered, 'gen_ai.request.encoding_formats')).toEqual(['float']);
    expect(spans.find((s) => s.name === 'POST /v1/embeddings')).toBeDefined();
  });

  it('charges the Titan calls that answered before a later call of the attempt failed (an error status or a cut connection), as the upstream billed them', async () => {
    const fake = await startFake(noProblems, (seen: Seen, res) => {
      const text = (seen.body as { inputText: string }).inputText;
      if (text === 'throttled') return json(res, 429, { message: 'Too many requests, please wait before trying again.' }, { 'x-amzn-errortype': 'ThrottlingException' });
      if (text === 'cut') return void res.socket?.destroy();
      json(res, 200, { embedding: vectorFor(0), inputTextTokenCount: 5 });
    });
    const up = await openaiEmbeddingsUpstream();
    upstreams.push(fake, up);
    gateway = await startGateway({
      providers: { br: { type: 'bedrock', region: 'us-east-1', base_url: fake.url, access_key_id: 'AKIDEXAMPLE', secret_access_key: 'secret' }, oa: openaiProvider(up) },
      models: [{ id: 'acme/embed', type: 'embedding', pricing: { input: '0.0000001' }, endpoints: [{ provider: 'br', model: 'amazon.titan-embed-text-v2:0' }, { provider: 'oa', model: 'e-up' }] }],
    });
    for (const [failing, errorType] of [
      ['throttled', '429'],
      ['cut', 'UND_ERR_SOCKET'],
    ] as const) {
      const out = await client().embeddings.create({ model: 'acme/embed', input: ['first', 'second', failing], encoding_format: 'float' }).withResponse();
      // The answer counts the tokens of the endpoint that answered (4 a text); its cost is the request's: 10 Titan tokens and 12 more.
      expect(out.data.usage, failing).toEqual({ prompt_tokens: 12, total_tokens: 12, cost: 0.0000022 });
      const id = out.response.headers.get('x-sluice-generation-id');
      const record = await fetch(`${(gateway as Gateway).baseURL}/generation?id=${id}`, { headers: { authorization: `Bearer ${API_KEY}` } });
      expect(((await record.json()) as { data: unknown }).data, failing).toMatchObject({ native_tokens_prompt: 22, total_cost: 0.0000022 });
      const spans = await (gateway as Gateway).spans(errorType === '429' ? 3 : 6);
      const titan = spans.filter((s) => s.name === 'embeddings amazon.titan-embed-text-v2:0').at(-1);
      expect(attr(titan, 'error.type'), failing).toBe(errorType);
      expect(attr(titan, 'gen_ai.usage.input_tokens'), failing).toBe(10);
      expect(attr(titan, 'sluice.usage.cost'), failing).toBe(0.000001);
    }
    // The cut call came on a kept-alive connection, so it was sent again, at most twice (stale-connection.ts).
    const texts = fake.requests.map((r) => (r.body as { inputText: string }).inputText);
    expect(texts.slice(0, 6)).toEqual(['first', 'second', 'throttled', 'first', 'second', 'cut']);
    expect(texts.slice(6).every((text) => text === 'cut')).toBe(true);
    expect(texts.length).toBeGreaterThanOrEqual(7);
    expect(texts.length).toBeLessThanOrEqual(8);
  });

  it('judges an error object an OpenAI-compatible upstream answers with 200 (OpenRouter, LiteLLM) by its code, as for chat: 400 answered with its message, 503 falls back', async () => {
    const proxy = await startUpstream((body, res) => {
      const text = (body['input'] as string[])[0];
      if (text === 'long') return sendJson(res, 200, { error: { message: "This model's maximum context length is 8192 tokens", type: 'invalid_request_error', code: 400 } });
      sendJson(res, 200, { error: { message: 'No instances available', code: 503 } });
    });
    const up = await openaiEmbeddingsUpstream();
    upstreams.push(proxy, up);
    gateway = await startGateway({
      providers: { proxy: openaiProvider(proxy), up: openaiProvider(up) },
      models: [{ id: 'acme/embed', type: 'embedding', endpoints: [{ provider: 'proxy', model: 'e' }, { provider: 'up', model: 'e' }] }],
    });
    const refused = await client().embeddings.create({ model: 'acme/embed', input: ['long'], encoding_format: 'float' }).catch((err: unknown) => err);
    expect(refused).toMatchObject({ status: 400, error: { message: "Provider proxy failed: This model's maximum context length is 8192 tokens", type: 'invalid_request_error' } });
    expect(up.requests).toHaveLength(0);
    const answered = await client().embeddings.create({ model: 'acme/embed', input: ['busy'], encoding_format: 'float' });
    expect(answered.data[0]?.embedding).toEqual(vectorFor(0));
    expect(up.requests).toHaveLength(1);
  });

  it('quotes the start of an HTML page an OpenAI-compatible base_url answers with 200 (a UI, not the API), as for chat', async () => {
    const page = '<!doctype html><html><head><title>Open WebUI</title></head>';
    const ui = await startUpstream((_b, res) => {
      res.writeHead(200, { 'content-type': 'text/html' });
      res.end(`${page}<body></body></html>`);
    });
    upstreams.push(ui);
    gateway = await startGateway({ providers: { ui: openaiProvider(ui) }, models: [{ id: 'acme/embed', type: 'embedding', endpoints: [{ provider: 'ui', model: 'e' }] }] });
    const error = await client().embeddings.create({ model: 'acme/embed', input: 'x', encoding_format: 'float' }).catch((err: unknown) => err);
    expect(error).toMatchObject({ status: 502, code: 'upstream_error' });
    expect((error as Error).message).toContain(`Provider ui answered with an invalid response: the body is not JSON: ${page}`);
  });

  it('refuses an empty text, alone or in a list, with a 400 naming it before any upstream call (OpenAI, Gemini and Titan refuse empty texts)', async () => {
    const up = await openaiEmbeddingsUpstream();
    upstreams.push(up);
    gateway = await startGateway({ providers: { oa: openaiProvider(up) }, models: [{ id: 'acme/embed', type: 'embedding', endpoints: [{ provider: 'oa', model: 'text-embedding-up' }] }] });
    for (const [input, param] of [
      ['', 'input'],
      [['a', ''], 'input[1]'],
    ] as const) {
      const error = await client().embeddings.create({ model: 'acme/embed', input: input as string | string[] }).catch((err: unknown) => err);
      expect(error).toMatchObject({ status: 400, param, code: 'invalid_value', error: { message: `${param}: must not be empty` } });
    }
    expect(up.requests).toHaveLength(0);
  });

  it('refuses a language model, token arrays for google, and a bad encoding_format with 400', async () => {
    const fake = await startFake(noProblems, (_seen, res) => json(res, 200, { embeddings: [] }));
    upstreams.push(fake);
    gateway = await startGateway({
      providers: { g: { type: 'google', base_url: fake.url, api_key: 'g-key' } },
      models: [
        { id: 'google/chat', endpoints: [{ provider: 'g', model: 'gemini' }] },
        { id: 'google/embed', type: 'embedding', endpoints: [{ provider: 'g', model: 'text-embedding-004' }] },
      ],
    });
    const wrongType = await client().embeddings.create({ model: 'google/chat', input: 'x' }).catch((err: unknown) => err);
    expect(wrongType).toMatchObject({ status: 400, code: 'wrong_model_type' });
    // A fallback model is held to the route's type too, and every route to its own.
    const base = (gateway as Gateway).baseURL;
    const post = async (path: string, body: object) => {
      const response = await fetch(`${base}${path}`, { method: 'POST', headers: { authorization: `Bearer ${API_KEY}`, 'x-api-key': API_KEY, 'content-type': 'application/json', 'anthropic-version': '2023-06-01' }, body: JSON.stringify(body) });
      return [response.status, ((await response.json()) as { error: { message: string } }).error.message];
    };
    expect(await post('/embeddings', { model: 'google/embed', input: 'x', providerOptions: { gateway: { models: ['google/chat'] } } })).toEqual([
      400,
      'providerOptions.gateway.models[0]: the model `google/chat` is a language model, not an embedding model.',
    ]);
    expect(await post('/chat/completions', { model: 'google/chat', messages: [{ role: 'user', content: 'x' }], providerOptions: { gateway: { models: ['google/embed'] } } })).toEqual([
      400,
      'providerOptions.gateway.models[0]: the model `google/embed` is an embedding model, not a language model.',
    ]);
    for (const path of ['/messages', '/messages/count_tokens']) {
      expect(await post(path, { model: 'google/embed', max_tokens: 10, messages: [{ role: 'user', content: 'x' }] })).toEqual([400, 'model: the model `google/embed` is an embedding model, not a language model.']);
    }
    const tokens = await client().embeddings.create({ model: 'google/embed', input: [[1, 2]] }).catch((err: unknown) => err);
    expect(tokens).toMatchObject({ status: 400, code: 'unsupported_value' });
    const format = await fetch(`${(gateway as Gateway).baseURL}/embeddings`, { method: 'POST', headers: { authorization: `Bearer ${API_KEY}`, 'content-type': 'application/json' }, body: JSON.stringify({ model: 'google/embed', input: 'x', encoding_format: 'int8' }) });
    expect(format.status).toBe(400);
    expect(((await format.json()) as { error: { param: string } }).error.param).toBe('encoding_format');
    const whole = await fetch(`${(gateway as Gateway).baseURL}/embeddings`, { method: 'POST', headers: { authorization: `Bearer ${API_KEY}`, 'content-type': 'application/json' }, body: '[]' });
    expect(whole.status).toBe(400);
    expect(((await whole.json()) as { error: { message: string; param: string | null } }).error).toMatchObject({ message: 'The request body must be of type object', param: null });
    // `input` is a union: the error is the one of the branch of the value's type, not of another branch's elements.
    for (const [input, param, message] of [
      [Array.from({ length: 3000 }, () => 'x'), 'input', 'input: must have at most 2048 items'],
      [[], 'input', 'input: must have at least 1 item'],
      [['x', 5], 'input[1]', 'input[1]: must be of type string'],
      [true, 'input', 'input: has an invalid type or shape'],
    ] as const) {
      const error = await client().embeddings.create({ model: 'google/embed', input: input as string[] }).catch((err: unknown) => err);
      expect(error).toMatchObject({ status: 400, param, error: { message } });
    }
    expect(fake.requests).toHaveLength(0);
  });
});
