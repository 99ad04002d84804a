// The AI SDK gateway protocol under /v1/ai: what createGateway({ baseURL:
// '<gateway>/v1/ai' }) calls, for @ai-sdk/gateway 3.x (ai 6) and 4.x (ai 7).
import { GatewayHttpError } from '../core/http-error.js';
import type { ProtocolRoute } from '../core/protocol.js';
import { handleConfig } from './catalog-route.js';
import { handleEmbeddingModel } from './embedding-model.js';
import { aiSdkErrors } from './errors.js';
import { handleLanguageModel } from './language-model.js';

/** Model kinds @ai-sdk/gateway can call that Sluice does not serve: a clear client error instead of a bare 404. */
const UNSERVED_KINDS = ['image', 'video', 'reranking', 'speech', 'transcription', 'decision'] as const;

function unserved(kind: (typeof UNSERVED_KINDS)[number]): ProtocolRoute {
  const path = `/v1/ai/${kind}-model`;
  return {
    route: path,
    method: 'POST',
    path,
    errors: aiSdkErrors,
    handle: function refuseKind() {
      throw new GatewayHttpError(404, `This gateway serves language and embedding models only, not ${kind} models.`, { type: 'invalid_request_error', code: 'unsupported_model_kind' });
    },
  };
}

export const aiSdkRoutes: readonly ProtocolRoute[] = [
  { route: '/v1/ai/language-model', method: 'POST', path: '/v1/ai/language-model', errors: aiSdkErrors, generates: true, handle: handleLanguageModel },
  { route: '/v1/ai/embedding-model', method: 'POST', path: '/v1/ai/embedding-model', errors: aiSdkErrors, generates: true, handle: handleEmbeddingModel },
  { route: '/v1/ai/config', method: 'GET', path: '/v1/ai/config', errors: aiSdkErrors, handle: handleConfig },
  ...UNSERVED_KINDS.map(unserved),
];
