// Gemini embeddings: POST /v1beta/models/{model}:batchEmbedContents, one
// request entry per text. Gemini reports no token counts for embeddings.
import { InvalidResponseError, requireApiKey, type EmbeddingAdapter, type EmbeddingResult } from '../shared/types.js';
import { asObject } from '../shared/inputs.js';
import { jsonOf, textInputs, vectorOf } from '../shared/embedding-inputs.js';
import type { GoogleProviderConfig } from './config.js';

export const googleEmbeddings: EmbeddingAdapter<GoogleProviderConfig> = {
  buildRequests: function buildGoogleEmbeddings(request, ctx) {
    const model = ctx.model.replace(/^models\//, '');
    const requests = textInputs(request, 'google').map(function toEntry(text) {
      const entry: Record<string, unknown> = { model: `models/${model}`, content: { parts: [{ text }] } };
      if (request.dimensions !== undefined) entry['outputDimensionality'] = request.dimensions;
      return entry;
    });
    return [
      {
        url: `${ctx.provider.base_url.replace(/\/+$/, '')}/v1beta/models/${encodeURIComponent(model)}:batchEmbedContents`,
        method: 'POST',
        headers: { 'content-type': 'application/json', accept: 'application/json', ...ctx.provider.headers, 'x-goog-api-key': requireApiKey(ctx) },
        body: JSON.stringify({ requests }),
      },
    ];
  },
  parseResponses: function parseGoogleEmbeddings(replies): EmbeddingResult {
    const embeddings = asObject(jsonOf(replies[0]?.body ?? new Uint8Array()))?.['embeddings'];
    if (!Array.isArray(embeddings)) throw new InvalidResponseError('the body has no embeddings');
    return { vectors: embeddings.map((e, i) => vectorOf(asObject(e)?.['values'], `embeddings[${i}].values`)), inputTokens: 0, model: undefined };
  },
};
