// The AI SDK gateway protocol under /v1/ai: what createGateway({ baseURL:
// '<gateway>/v1/ai' }) calls, for @ai-sdk/gateway 3.x (ai 6) and 4.x (ai 7).
import type { ProtocolRoute } from '../core/protocol.js';
import { handleConfig } from './catalog-route.js';
import { handleEmbeddingModel } from './embedding-model.js';
import { aiSdkErrors } from './errors.js';
import { handleLanguageModel } from './language-model.js';

export const aiSdkRoutes: readonly ProtocolRoute[] = [
  { route: '/v1/ai/language-model', method: 'POST', path: '/v1/ai/language-model', errors: aiSdkErrors, generates: true, handle: handleLanguageModel },
  { route: '/v1/ai/embedding-model', method: 'POST', path: '/v1/ai/embedding-model', errors: aiSdkErrors, generates: true, handle: handleEmbeddingModel },
  { route: '/v1/ai/config', method: 'GET', path: '/v1/ai/config', errors: aiSdkErrors, handle: handleConfig },
];
