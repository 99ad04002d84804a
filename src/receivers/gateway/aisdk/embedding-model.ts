// POST /v1/ai/embedding-model: the AI SDK gateway provider's doEmbed
// (`embed`, `embedMany`). Model id in `ai-model-id`; body {values,
// dimensions? (4.x), providerOptions?}; answer {embeddings, usage:{tokens},
// warnings, providerMetadata}, the same for both client generations.
import type { ServerResponse } from 'node:http';
import { z } from 'zod';
import { runPlan } from '../core/attempt-loop.js';
import { readBody } from '../core/body.js';
import { runEmbeddingAttempt, type EmbeddingState } from '../core/embedding-attempt.js';
import type { GatewayServices, RouteRequest } from '../core/protocol.js';
import { parseJsonBody, validated } from '../core/json-body.js';
import type { EmbeddingResult } from '../providers/shared/types.js';
import { checkSpecVersion, inClientClasses, planFor, requiredHeader } from './language-model.js';
import { gatewayMetadata } from './result.js';
import { AttemptLog, logged } from './routing.js';
import { aiGatewayOptionsSchema } from './schema.js';
import { embeddingText } from '../embeddings/schema.js';
import { writeJsonAnswer } from '../core/answer-head.js';

/** The client's maxEmbeddingsPerCall: embedMany splits larger batches. */
const MAX_VALUES = 2048;

const embeddingCallSchema = z.object({
  values: z.array(embeddingText).min(1).max(MAX_VALUES),
  dimensions: z.number().int().positive().optional(),
  providerOptions: z.looseObject({ gateway: aiGatewayOptionsSchema.optional() }).optional(),
});

type EmbeddingCall = z.output<typeof embeddingCallSchema>;

export async function handleEmbeddingModel(services: GatewayServices, request: RouteRequest): Promise<void> {
  const { req, server } = request;
  const model = requiredHeader(req, 'ai-model-id');
  server.str('sluice.model', model);
  checkSpecVersion(req, 'ai-embedding-model-specification-version');
  const call = parseCall(await readBody(req, services.bodyLimit));
  const options = call.providerOptions?.gateway;
  const plan = planFor(services.env.router, model, { order: options?.order, only: options?.only, models: options?.models }, 'embedding');
  const log = new AttemptLog();
  const state: EmbeddingState = {
    request: { input: call.values, dimensions: call.dimensions ?? dimensionsOption(call), user: userOption(call), providerOptions: call.providerOptions },
    res: request.res,
    answer: answerEmbeddings(model, log),
    meter: request.meter,
    server,
    spans: request.spans,
    client: request.client,
    attempts: 0,
  };
  await runPlan(services.env, plan, state, logged(log, runEmbeddingAttempt)).catch(function reportFailure(err: unknown) {
    throw inClientClasses(err, model);
  });
}

/**
 * ai 6 has no `dimensions` call setting: apps pass it as
 * providerOptions.openai.dimensions, google.outputDimensionality, or
 * bedrock.dimensions (Titan), bedrock.embeddingDimension (Nova) or
 * bedrock.outputDimension (Cohere).
 */
function dimensionsOption(call: EmbeddingCall): number | undefined {
  const options = call.providerOptions as Record<string, Record<string, unknown> | undefined> | undefined;
  const bedrock = options?.['bedrock'];
  const value = options?.['openai']?.['dimensions'] ?? options?.['google']?.['outputDimensionality'] ?? bedrock?.['dimensions'] ?? bedrock?.['embeddingDimension'] ?? bedrock?.['outputDimension'];
  return typeof value === 'number' && Number.isInteger(value) && value > 0 ? value : undefined;
}

/** The end user an app names for the provider's abuse monitoring, as @ai-sdk/openai takes it (providerOptions.openai.user). */
function userOption(call: EmbeddingCall): string | undefined {
  const user = (call.providerOptions as Record<string, Record<string, unknown> | undefined> | undefined)?.['openai']?.['user'];
  return typeof user === 'string' ? user : undefined;
}

function parseCall(body: Buffer): EmbeddingCall {
  return validated(embeddingCallSchema, parseJsonBody(body));
}

function answerEmbeddings(modelId: string, log: AttemptLog) {
  return function answer(res: ServerResponse, result: EmbeddingResult, state: EmbeddingState, slug: string): void {
    const payload = JSON.stringify({
      embeddings: result.vectors,
      usage: { tokens: result.inputTokens },
      warnings: [],
      providerMetadata: { gateway: gatewayMetadata(state, log.answered(modelId)) },
    });
    writeJsonAnswer(res, state, slug, payload);
  };
}
