// Type `bedrock`: Amazon Bedrock's Converse and ConverseStream APIs, SigV4-signed.
import type { ProviderAdapter } from '../shared/types.js';
import { bedrockEmbeddings } from './embeddings.js';
import { bedrockConfigSchema, type BedrockProviderConfig } from './config.js';
import { classifyBedrockError } from './errors.js';
import { buildBedrockRequest } from './request.js';
import { parseBedrockResponse } from './response.js';
import { bedrockStreamMapper } from './stream.js';

export const bedrockAdapter: ProviderAdapter<BedrockProviderConfig> = {
  type: 'bedrock',
  genAiProviderName: 'aws.bedrock',
  configSchema: bedrockConfigSchema,
  buildRequest: buildBedrockRequest,
  parseResponse: parseBedrockResponse,
  streamMapper: bedrockStreamMapper,
  classifyError: classifyBedrockError,
  embeddings: bedrockEmbeddings,
};
