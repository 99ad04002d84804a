// Type `google`: the Gemini API (generateContent, streamGenerateContent?alt=sse).
import type { ProviderAdapter } from '../shared/types.js';
import { googleEmbeddings } from './embeddings.js';
import { googleConfigSchema, type GoogleProviderConfig } from './config.js';
import { classifyGoogleError } from './errors.js';
import { buildGoogleRequest } from './request.js';
import { parseGoogleResponse } from './response.js';
import { googleStreamMapper } from './stream.js';

export const googleAdapter: ProviderAdapter<GoogleProviderConfig> = {
  type: 'google',
  genAiProviderName: 'gcp.gemini',
  configSchema: googleConfigSchema,
  buildRequest: buildGoogleRequest,
  parseResponse: parseGoogleResponse,
  streamMapper: googleStreamMapper,
  classifyError: classifyGoogleError,
  embeddings: googleEmbeddings,
};
