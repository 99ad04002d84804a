// Type `openai`: any OpenAI-compatible upstream (OpenAI, Groq, Together,
// DeepSeek, xAI, Mistral, vLLM, Ollama, llama.cpp's server).
import type { ProviderAdapter } from '../shared/types.js';
import { openaiEmbeddings } from './embeddings.js';
import { openaiConfigSchema, type OpenAIProviderConfig } from './config.js';
import { buildOpenAIRequest } from './request.js';
import { classifyOpenAIError, parseOpenAIResponse, parseOpenAIResponseText } from './response.js';
import { openAIStreamMapper } from './stream.js';

export const openaiAdapter: ProviderAdapter<OpenAIProviderConfig> = {
  type: 'openai',
  genAiProviderName: 'openai',
  configSchema: openaiConfigSchema,
  passthrough: true,
  buildRequest: buildOpenAIRequest,
  parseResponse: parseOpenAIResponse,
  parseResponseText: parseOpenAIResponseText,
  streamMapper: openAIStreamMapper,
  classifyError: classifyOpenAIError,
  embeddings: openaiEmbeddings,
};
