// POST /v1/embeddings as OpenAI takes it. Compiled once.
import { z } from 'zod';
import { gatewayOptionsSchema } from '../core/gateway-options.js';

/** OpenAI's limit on inputs per request. */
export const MAX_INPUTS = 2048;

const tokens = z.array(z.number().int().nonnegative()).min(1);

/** A text to embed: OpenAI, Gemini, Titan and Cohere all refuse an empty one, so it is refused before any call. */
export const embeddingText = z.string().min(1);

export const embeddingsRequestSchema = z.looseObject({
  model: z.string().min(1),
  input: z.union([embeddingText, z.array(embeddingText).min(1).max(MAX_INPUTS), tokens, z.array(tokens).min(1).max(MAX_INPUTS)]),
  // null is not given, as OpenAI takes it (LiteLLM sends encoding_format: null to keep the SDK's base64 default off).
  dimensions: z.number().int().positive().nullable().optional(),
  encoding_format: z.enum(['float', 'base64']).nullable().optional(),
  user: z.string().nullable().optional(),
  providerOptions: z.looseObject({ gateway: gatewayOptionsSchema.optional() }).optional(),
});

export type EmbeddingsRequestBody = z.output<typeof embeddingsRequestSchema>;
