// Gemini embeddings: POST /v1beta/models/{model}:batchEmbedContents, one
// request entry per text, at most MAX_BATCH entries a call. Each answer's
// usageMetadata.promptTokenCount counts its call's input tokens (0 when absent).
import { tokenCount } from '../../../../shared/tokens.js';
import { InvalidResponseError, requireApiKey, type EmbeddingAdapter, type EmbeddingResult } from '../shared/types.js';
import { asObject } from '../shared/inputs.js';
import { providerOptionsFor } from '../shared/provider-options.js';
import { batchesOf, jsonOf, textInputs, vectorOf } from '../shared/embedding-inputs.js';
import type { GoogleProviderConfig } from './config.js';

/** batchEmbedContents refuses more entries than this ("at most 100 requests can be in one batch"); OpenAI takes 2048 inputs. */
const MAX_BATCH = 100;

export const googleEmbeddings: EmbeddingAdapter<GoogleProviderConfig> = {
  buildRequests: function buildGoogleEmbeddings(request, ctx) {
    const model = ctx.model.replace(/^models\//, '');
    // What the vectors are for (RETRIEVAL_QUERY, RETRIEVAL_DOCUMENT, ...), as @ai-sdk/google names it.
    const taskType = providerOptionsFor(request, ctx.slug, 'google')?.['taskType'];
    const entries = textInputs(request, 'google').map(function toEntry(text) {
      const entry: Record<string, unknown> = { model: `models/${model}`, content: { parts: [{ text }] } };
      if (request.dimensions !== undefined) entry['outputDimensionality'] = request.dimensions;
      if (typeof taskType === 'string') entry['taskType'] = taskType;
      return entry;
    });
    const url = `${ctx.provider.base_url.replace(/\/+$/, '')}/v1beta/models/${encodeURIComponent(model)}:batchEmbedContents`;
    const headers = { 'content-type': 'application/json', accept: 'application/json', ...ctx.provider.headers, 'x-goog-api-key': requireApiKey(ctx) };
    return batchesOf(entries, MAX_BATCH).map((requests) => ({ url, method: 'POST', headers, body: JSON.stringify({ requests }) }));
  },
  parseResponses: function parseGoogleEmbeddings(replies): EmbeddingResult {
    let inputTokens = 0;
    const vectors = replies.flatMap(function vectorsOf(reply) {
      const parsed = asObject(jsonOf(reply.body));
      const embeddings = parsed?.['embeddings'];
      if (!Array.isArray(embeddings)) throw new InvalidResponseError('the body has no embeddings');
      // Gemini bills embeddings by input token and says how many in usageMetadata (older answers had none).
      inputTokens += tokenCount(asObject(parsed?.['usageMetadata'])?.['promptTokenCount']);
      return embeddings.map((e, i) => vectorOf(asObject(e)?.['values'], `embeddings[${i}].values`));
    });
    return { vectors, inputTokens, model: undefined };
  },
};
