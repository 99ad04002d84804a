// OpenAI's embeddings route.
import { openaiErrors } from '../core/http-error.js';
import type { ProtocolRoute } from '../core/protocol.js';
import { handleEmbeddings } from './handler.js';

export const embeddingsRoutes: readonly ProtocolRoute[] = [{ route: '/v1/embeddings', method: 'POST', path: '/v1/embeddings', errors: openaiErrors, generates: true, handle: handleEmbeddings }];
