// OpenAI-compatible embeddings: POST {base_url}/embeddings with the request
// as OpenAI takes it (floats asked for, whatever the client wants: the
// gateway encodes base64 itself so every provider type answers alike).
import { asObject } from '../shared/inputs.js';
import { tokenCount } from '../../../../shared/tokens.js';
import { textOf, vectorOf } from '../shared/embedding-inputs.js';
import { InvalidResponseError, ProviderNotConfiguredError, type EmbeddingAdapter, type EmbeddingResult } from '../shared/types.js';
import { upstreamUrl, type OpenAIProviderConfig } from './config.js';
import { inBandError, parseJsonBody } from './response.js';

export const openaiEmbeddings: EmbeddingAdapter<OpenAIProviderConfig> = {
  buildRequests: function buildOpenAIEmbeddings(request, ctx) {
    const provider = ctx.provider;
    if (provider.api_key === '') throw new ProviderNotConfiguredError(`Provider ${ctx.slug} has no api_key: set receivers.gateway.providers.${ctx.slug}.api_key.`);
    const body: Record<string, unknown> = { model: ctx.model, input: request.input, encoding_format: 'float' };
    if (request.dimensions !== undefined) body['dimensions'] = request.dimensions;
    if (request.user !== undefined) body['user'] = request.user;
    const headers: Record<string, string> = { 'content-type': 'application/json', accept: 'application/json', ...provider.headers };
    if (provider.api_key !== undefined) headers['authorization'] = `Bearer ${provider.api_key}`;
    return [{ url: upstreamUrl(provider, '/embeddings'), method: 'POST', headers, body: JSON.stringify(body) }];
  },
  parseResponses: function parseOpenAIEmbeddings(replies): EmbeddingResult {
    const text = textOf(replies[0]?.body ?? new Uint8Array());
    const parsed = asObject(parseJsonBody(text));
    // OpenRouter, LiteLLM and others may answer 200 with an error object: judged by its code, as for chat.
    const error = parsed === undefined ? undefined : inBandError(parsed, text);
    if (error !== undefined) throw error;
    const data = parsed?.['data'];
    if (!Array.isArray(data)) throw new InvalidResponseError('the body is not an embedding list');
    const vectors: number[][] = [];
    for (const item of data) {
      const entry = asObject(item);
      const index = typeof entry?.['index'] === 'number' ? entry['index'] : vectors.length;
      vectors[index] = vectorOf(entry?.['embedding'], `data[${index}].embedding`);
    }
    const usage = asObject(parsed?.['usage']);
    // Embeddings have no output: a server that reports only total_tokens counts the input there.
    const tokens = usage?.['prompt_tokens'] ?? usage?.['total_tokens'];
    return { vectors, inputTokens: tokenCount(tokens), model: typeof parsed?.['model'] === 'string' ? parsed['model'] : undefined };
  },
};
