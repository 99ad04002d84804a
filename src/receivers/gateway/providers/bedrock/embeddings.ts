// Bedrock embeddings through InvokeModel (POST /model/{id}/invoke, signed):
// Amazon Titan and Amazon Nova take one text per call (Titan {inputText} and
// its model's dimensions field, Nova a SINGLE_EMBEDDING task), Cohere Embed a
// batch of up to 96 ({texts, input_type, ...}). The model id says which; an
// id that names none of them is refused before any call, since each family
// refuses the others' bodies.
import { asObject, invalidRequest } from '../shared/inputs.js';
import { tokenCount } from '../../../../shared/tokens.js';
import { batchesOf, jsonOf, textInputs, vectorOf } from '../shared/embedding-inputs.js';
import { providerOptionsFor } from '../shared/provider-options.js';
import { InvalidResponseError, type AttemptContext, type EmbeddingAdapter, type EmbeddingReply, type EmbeddingRequest, type EmbeddingResult, type UpstreamRequest } from '../shared/types.js';
import type { BedrockProviderConfig } from './config.js';
import { authorize } from './signer.js';

/** Cohere Embed on Bedrock takes at most this many texts per call: more go in further calls. */
const COHERE_MAX_TEXTS = 96;

/** The output sizes Nova Multimodal Embeddings takes (its default is the largest). */
const NOVA_DIMENSIONS: readonly number[] = [256, 384, 1024, 3072];

type Family = 'titan' | 'nova' | 'cohere';

/** The embedding family a model id (or an inference profile id such as `us.amazon.nova-...`) names. */
function familyOf(model: string): Family {
  if (model.includes('amazon.titan-embed')) return 'titan';
  if (model.includes('amazon.nova') && model.includes('embed')) return 'nova';
  if (model.includes('cohere.embed')) return 'cohere';
  return invalidRequest('model', `the Bedrock model ${model} is not an embedding model the gateway knows: its id must name amazon.titan-embed, amazon.nova-*-embeddings or cohere.embed`);
}

/** providerOptions.bedrock (or .<slug>), as @ai-sdk/amazon-bedrock names its embedding options. */
function bedrockOptions(request: EmbeddingRequest, ctx: AttemptContext<BedrockProviderConfig>): Record<string, unknown> {
  return providerOptionsFor(request, ctx.slug, 'bedrock') ?? {};
}

/**
 * The fields a Cohere call adds to its texts: input_type (what the vectors
 * are for: a query is embedded unlike the documents it searches) and
 * truncate, as @ai-sdk/amazon-bedrock names them (providerOptions.bedrock
 * inputType, truncate; documents by default), and Embed v4's
 * output_dimension (Embed v3's dimensions are fixed: refused before the call).
 */
function cohereFields(request: EmbeddingRequest, ctx: AttemptContext<BedrockProviderConfig>): Record<string, unknown> {
  const options = bedrockOptions(request, ctx);
  const inputType = options['inputType'];
  const truncate = options['truncate'];
  const fields: Record<string, unknown> = { input_type: typeof inputType === 'string' ? inputType : 'search_document' };
  if (typeof truncate === 'string') fields['truncate'] = truncate;
  if (request.dimensions !== undefined) {
    if (!ctx.model.includes('cohere.embed-v4')) invalidRequest('dimensions', 'Cohere Embed v3 on Bedrock has fixed dimensions');
    fields['output_dimension'] = request.dimensions;
  }
  return fields;
}

/**
 * The fields a Titan call adds to its text: Titan Text v2 takes `dimensions`
 * and `normalize` (providerOptions.bedrock.normalize), Titan Multimodal
 * `embeddingConfig.outputEmbeddingLength`; Titan Text v1 takes the text alone
 * (Bedrock refuses any other key), so what it cannot take is refused before the call.
 */
function titanFields(request: EmbeddingRequest, ctx: AttemptContext<BedrockProviderConfig>): Record<string, unknown> {
  const { model } = ctx;
  const normalize = bedrockOptions(request, ctx)['normalize'];
  const textV2 = model.includes('titan-embed-text-v2');
  if (typeof normalize === 'boolean' && !textV2) invalidRequest('providerOptions.bedrock.normalize', 'only Titan Text Embeddings v2 takes normalize');
  const fields: Record<string, unknown> = typeof normalize === 'boolean' ? { normalize } : {};
  const dimensions = request.dimensions;
  if (dimensions === undefined) return fields;
  if (model.includes('titan-embed-image')) return { ...fields, embeddingConfig: { outputEmbeddingLength: dimensions } };
  if (model.includes('titan-embed-text-v1') || model.includes('titan-embed-g1-text')) invalidRequest('dimensions', 'Titan Text Embeddings v1 has fixed dimensions');
  return { ...fields, dimensions };
}

/**
 * A Nova call's parameters but the text: embeddingPurpose and the
 * truncationMode it requires, as @ai-sdk/amazon-bedrock names and defaults
 * them (providerOptions.bedrock embeddingPurpose, GENERIC_INDEX; truncate,
 * END), and embeddingDimension, one of the sizes Nova takes (refused before
 * the call otherwise; left out, Nova answers its 3072).
 */
function novaParams(request: EmbeddingRequest, ctx: AttemptContext<BedrockProviderConfig>): { embeddingPurpose: string; embeddingDimension?: number; truncationMode: string } {
  const options = bedrockOptions(request, ctx);
  const purpose = options['embeddingPurpose'];
  const truncate = options['truncate'];
  const params = { embeddingPurpose: typeof purpose === 'string' ? purpose : 'GENERIC_INDEX', truncationMode: typeof truncate === 'string' ? truncate : 'END' };
  const dimensions = request.dimensions;
  if (dimensions === undefined) return params;
  if (!NOVA_DIMENSIONS.includes(dimensions)) invalidRequest('dimensions', `Amazon Nova embeddings take ${NOVA_DIMENSIONS.join(', ')} dimensions`);
  return { ...params, embeddingDimension: dimensions };
}

function novaBody(params: ReturnType<typeof novaParams>, value: string): Record<string, unknown> {
  const { truncationMode, ...rest } = params;
  return { taskType: 'SINGLE_EMBEDDING', singleEmbeddingParams: { ...rest, text: { truncationMode, value } } };
}

async function invoke(ctx: AttemptContext<BedrockProviderConfig>, body: Record<string, unknown>): Promise<UpstreamRequest> {
  const url = new URL(`${ctx.provider.base_url.replace(/\/+$/, '')}/model/${encodeURIComponent(ctx.model)}/invoke`);
  const json = JSON.stringify(body);
  const headers: Record<string, string> = { ...ctx.provider.headers, 'content-type': 'application/json', accept: 'application/json' };
  return { url: url.href, method: 'POST', headers: await authorize(ctx.provider, url, headers, json), body: json };
}

/** InvokeModel's `X-Amzn-Bedrock-Input-Token-Count` header, 0 when absent or not a count. */
function headerTokens(headers: EmbeddingReply['headers'] | undefined): number {
  const value = headers?.['x-amzn-bedrock-input-token-count'];
  return tokenCount(Number(Array.isArray(value) ? value[0] : value));
}

function parseCohere(replies: readonly EmbeddingReply[]): EmbeddingResult {
  let inputTokens = 0;
  const vectors = replies.flatMap(function cohereVectors(reply) {
    const raw = asObject(jsonOf(reply.body))?.['embeddings'];
    // embeddings is a list of vectors, or {float: [...]} when embedding_types was given.
    const list = Array.isArray(raw) ? raw : asObject(raw)?.['float'];
    if (!Array.isArray(list)) throw new InvalidResponseError('the body has no embeddings');
    // Cohere's body has no token count; InvokeModel reports it in a header.
    inputTokens += headerTokens(reply.headers);
    return list.map((v, i) => vectorOf(v, `embeddings[${i}]`));
  });
  return { vectors, inputTokens, model: undefined };
}

function parseTitan(replies: readonly EmbeddingReply[]): EmbeddingResult {
  let inputTokens = 0;
  const vectors = replies.map(function titanVector(reply, i) {
    const parsed = asObject(jsonOf(reply.body));
    const tokens = parsed?.['inputTextTokenCount'];
    inputTokens += typeof tokens === 'number' ? tokenCount(tokens) : headerTokens(reply.headers);
    return vectorOf(parsed?.['embedding'], `response ${i} embedding`);
  });
  return { vectors, inputTokens, model: undefined };
}

/** Nova answers {embeddings: [{embeddingType, embedding}]}, one entry for a text; its body has no token count, the header has. */
function parseNova(replies: readonly EmbeddingReply[]): EmbeddingResult {
  let inputTokens = 0;
  const vectors = replies.map(function novaVector(reply, i) {
    const embeddings = asObject(jsonOf(reply.body))?.['embeddings'];
    inputTokens += headerTokens(reply.headers);
    return vectorOf(Array.isArray(embeddings) ? asObject(embeddings[0])?.['embedding'] : undefined, `response ${i} embeddings[0].embedding`);
  });
  return { vectors, inputTokens, model: undefined };
}

export const bedrockEmbeddings: EmbeddingAdapter<BedrockProviderConfig> = {
  // A generator: each call is signed when it is sent (see EmbeddingAdapter.buildRequests).
  buildRequests: async function* buildBedrockEmbeddings(request, ctx) {
    const texts = textInputs(request, 'bedrock');
    switch (familyOf(ctx.model)) {
      case 'cohere': {
        const fields = cohereFields(request, ctx);
        for (const batch of batchesOf(texts, COHERE_MAX_TEXTS)) yield await invoke(ctx, { texts: batch, ...fields });
        return;
      }
      case 'nova': {
        const params = novaParams(request, ctx);
        for (const value of texts) yield await invoke(ctx, novaBody(params, value));
        return;
      }
      case 'titan': {
        const fields = titanFields(request, ctx);
        for (const inputText of texts) yield await invoke(ctx, { inputText, ...fields });
        return;
      }
    }
  },
  parseResponses: function parseBedrockEmbeddings(replies, _request, ctx): EmbeddingResult {
    switch (familyOf(ctx.model)) {
      case 'cohere':
        return parseCohere(replies);
      case 'nova':
        return parseNova(replies);
      case 'titan':
        return parseTitan(replies);
    }
  },
};
