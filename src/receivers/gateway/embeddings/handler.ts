// POST /v1/embeddings: OpenAI's embeddings API over the catalog's
// `type: embedding` models, routed and retried like chat. Vectors come back
// as floats or, with encoding_format base64, as little-endian float32 bytes
// in base64 (what the openai SDK asks for by default and decodes).
import type { ServerResponse } from 'node:http';
import { runPlan } from '../core/attempt-loop.js';
import { readBody } from '../core/body.js';
import { runEmbeddingAttempt, type EmbeddingState } from '../core/embedding-attempt.js';
import type { GatewayServices, RouteRequest } from '../core/protocol.js';
import { parseJsonBody, validated } from '../core/json-body.js';
import type { EmbeddingRequest, EmbeddingResult } from '../providers/shared/types.js';
import { embeddingsRequestSchema, type EmbeddingsRequestBody } from './schema.js';
import { writeJsonAnswer } from '../core/answer-head.js';
import { recordRequestedModel } from '../core/spans.js';

export async function handleEmbeddings(services: GatewayServices, request: RouteRequest): Promise<void> {
  const body = parseBody(await readBody(request.req, services.bodyLimit), request);
  const gateway = body.providerOptions?.gateway;
  const plan = services.env.router.plan(body.model, { order: gateway?.order, only: gateway?.only, models: gateway?.models }, 'providerOptions.gateway', 'embedding');
  const state: EmbeddingState = {
    request: normalize(body),
    encodingFormat: body.encoding_format ?? undefined,
    res: request.res,
    answer: body.encoding_format === 'base64' ? answerBase64(body.model) : answerFloat(body.model),
    meter: request.meter,
    server: request.server,
    spans: request.spans,
    client: request.client,
    attempts: 0,
  };
  await runPlan(services.env, plan, state, runEmbeddingAttempt);
}

function parseBody(body: Buffer, request: RouteRequest): EmbeddingsRequestBody {
  const json = parseJsonBody(body);
  if (typeof json === 'object' && json !== null && typeof (json as { model?: unknown }).model === 'string') recordRequestedModel(request.server, (json as { model: string }).model);
  return validated(embeddingsRequestSchema, json);
}

function normalize(body: EmbeddingsRequestBody): EmbeddingRequest {
  const input = body.input;
  let list: EmbeddingRequest['input'];
  if (typeof input === 'string') list = [input];
  else if (input.every((item): item is number => typeof item === 'number')) list = [input];
  else list = input as EmbeddingRequest['input'];
  return { input: list, dimensions: body.dimensions ?? undefined, user: body.user ?? undefined };
}

/** Little-endian float32 bytes in base64, as OpenAI encodes them. */
export function float32Base64(vector: readonly number[]): string {
  const bytes = Buffer.allocUnsafe(vector.length * 4);
  for (let i = 0; i < vector.length; i++) bytes.writeFloatLE(vector[i] as number, i * 4);
  return bytes.toString('base64');
}

interface EmbeddingsUsage {
  prompt_tokens: number;
  total_tokens: number;
  /** USD, on priced models only. */
  cost?: number;
}

function answerWith(model: string, encode: (vector: number[]) => number[] | string) {
  return function answerEmbeddings(res: ServerResponse, result: EmbeddingResult, state: EmbeddingState, slug: string): void {
    const usage: EmbeddingsUsage = { prompt_tokens: result.inputTokens, total_tokens: result.inputTokens };
    // A priced model's answer shows its cost, as a chat answer does.
    const meter = state.meter;
    if (meter?.priced === true) usage.cost = meter.costUsd;
    const payload = JSON.stringify({
      object: 'list',
      data: result.vectors.map((vector, index) => ({ object: 'embedding', index, embedding: encode(vector) })),
      model,
      usage,
    });
    writeJsonAnswer(res, state, slug, payload);
  };
}

function answerFloat(model: string) {
  return answerWith(model, (vector) => vector);
}

function answerBase64(model: string) {
  return answerWith(model, float32Base64);
}
