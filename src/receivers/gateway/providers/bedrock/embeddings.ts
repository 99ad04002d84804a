// Bedrock embeddings through InvokeModel (POST /model/{id}/invoke, signed):
// Amazon Titan takes one text per call ({inputText} and its model's
// dimensions field), Cohere Embed a batch of up to 96 ({texts, input_type,
// ...}). The model id says which.
import { asObject, invalidRequest } from '../shared/inputs.js';
import { tokenCount } from '../../../../shared/tokens.js';
import { batchesOf, jsonOf, textInputs, vectorOf } from '../shared/embedding-inputs.js';
import { providerOptionsFor } from '../shared/provider-options.js';
import { InvalidResponseError, type AttemptContext, type EmbeddingAdapter, type EmbeddingReply, type EmbeddingRequest, type EmbeddingResult, type UpstreamRequest } from '../shared/types.js';
import type { BedrockProviderConfig } from './config.js';
import { authorize } from './signer.js';

/** Cohere Embed on Bedrock takes at most this many texts per call: more go in further calls. */
const COHERE_MAX_TEXTS = 96;

function isCohere(model: string): boolean {
  return model.includes('cohere.embed');
}

/**
 * The fields a Cohere call adds to its texts: input_type (what the vectors
 * are for: a query is embedded unlike the documents it searches) and
 * truncate, as @ai-sdk/amazon-bedrock names them (providerOptions.bedrock
 * inputType, truncate; documents by default), and Embed v4's
 * output_dimension (Embed v3's dimensions are fixed: refused before the call).
 */
function cohereFields(request: EmbeddingRequest, ctx: AttemptContext<BedrockProviderConfig>): Record<string, unknown> {
  const options = providerOptionsFor(request, ctx.slug, 'bedrock');
  const inputType = options?.['inputType'];
  const truncate = options?.['truncate'];
  const fields: Record<string, unknown> = { input_type: typeof inputType === 'string' ? inputType : 'search_document' };
  if (typeof truncate === 'string') fields['truncate'] = truncate;
  if (request.dimensions !== undefined) {
    if (!ctx.model.includes('cohere.embed-v4')) invalidRequest('dimensions', 'Cohere Embed v3 on Bedrock has fixed dimensions');
    fields['output_dimension'] = request.dimensions;
  }
  return fields;
}

/**
 * A Titan call's body: Titan Text v2 takes `dimensions`, Titan Multimodal
 * `embeddingConfig.outputEmbeddingLength`; Titan Text v1 takes the text alone
 * (Bedrock refuses any other key), so dimensions are refused before the call.
 */
function titanBody(model: string, inputText: string, dimensions: number | undefined): Record<string, unknown> {
  if (dimensions === undefined) return { inputText };
  if (model.includes('titan-embed-image')) return { inputText, embeddingConfig: { outputEmbeddingLength: dimensions } };
  if (model.includes('titan-embed-text-v1') || model.includes('titan-embed-g1-text')) invalidRequest('dimensions', 'Titan Text Embeddings v1 has fixed dimensions');
  return { inputText, dimensions };
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

export const bedrockEmbeddings: EmbeddingAdapter<BedrockProviderConfig> = {
  // A generator: each call is signed when it is sent (see EmbeddingAdapter.buildRequests).
  buildRequests: async function* buildBedrockEmbeddings(request, ctx) {
    const texts = textInputs(request, 'bedrock');
    if (isCohere(ctx.model)) {
      const fields = cohereFields(request, ctx);
      for (const batch of batchesOf(texts, COHERE_MAX_TEXTS)) yield await invoke(ctx, { texts: batch, ...fields });
      return;
    }
    for (const inputText of texts) yield await invoke(ctx, titanBody(ctx.model, inputText, request.dimensions));
  },
  parseResponses: function parseBedrockEmbeddings(replies, _request, ctx): EmbeddingResult {
    if (isCohere(ctx.model)) {
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
    let inputTokens = 0;
    const vectors = replies.map(function titanVector(reply, i) {
      const parsed = asObject(jsonOf(reply.body));
      const tokens = parsed?.['inputTextTokenCount'];
      inputTokens += typeof tokens === 'number' ? tokenCount(tokens) : headerTokens(reply.headers);
      return vectorOf(parsed?.['embedding'], `response ${i} embedding`);
    });
    return { vectors, inputTokens, model: undefined };
  },
};
