// Type `anthropic`: Anthropic's Messages API (POST {base_url}/v1/messages).
import type { ProviderAdapter } from '../shared/types.js';
import { anthropicConfigSchema, type AnthropicProviderConfig } from './config.js';
import { classifyAnthropicError } from './errors.js';
import { buildAnthropicRequest } from './request.js';
import { parseAnthropicResponse } from './response.js';
import { anthropicStreamMapper } from './stream.js';

export const anthropicAdapter: ProviderAdapter<AnthropicProviderConfig> = {
  type: 'anthropic',
  genAiProviderName: 'anthropic',
  configSchema: anthropicConfigSchema,
  buildRequest: buildAnthropicRequest,
  parseResponse: parseAnthropicResponse,
  streamMapper: anthropicStreamMapper,
  classifyError: classifyAnthropicError,
};
