// POST /v1/chat/completions: parse, validate, route, then run the plan with
// answers written in the Chat Completions shapes.
import { runAttempt, type RequestState } from '../core/attempt.js';
import { runPlan } from '../core/attempt-loop.js';
import { readBody } from '../core/body.js';
import { captureInput } from '../core/capture.js';
import { GatewayHttpError } from '../core/http-error.js';
import { RAW_REQUEST, type ChatCompletionRequest } from '../providers/shared/openai-types.js';
import type { GatewayServices, RouteRequest } from '../core/protocol.js';
import type { RoutingOptions } from '../core/routing.js';
import { chatAnswer } from './answer.js';
import { firstProblem } from '../core/schema-problem.js';
import { parseJsonBody } from '../core/json-body.js';
import { chatRequestSchema, type ValidatedRequest } from './schema.js';
import { fastParse } from './schema-fast.js';
import { rawRequestText } from '../providers/shared/raw-request.js';
import { recordRequestedModel, type SpanRecord } from '../core/spans.js';

export async function handleChat(services: GatewayServices, request: RouteRequest): Promise<void> {
  const body = await readBody(request.req, services.bodyLimit);
  const env = services.env;
  const chat = parseRequest(body, request.server);
  if (services.catalog.typeOf(chat.model) === 'embedding') {
    throw new GatewayHttpError(400, `The model \`${chat.model}\` is an embedding model: use POST /v1/embeddings.`, { code: 'wrong_model_type', param: 'model' });
  }
  const [options, optionsParam] = routingOptions(chat);
  const plan = env.router.plan(chat.model, options, optionsParam, 'language');
  const state: RequestState = {
    request: chat,
    res: request.res,
    answer: chatAnswer,
    meter: request.meter,
    includeUsage: chat.stream_options?.include_usage === true,
    inputMessages: env.captureContent ? captureInput(chat.messages) : undefined,
    server: request.server,
    spans: request.spans,
    client: request.client,
    attempts: 0,
  };
  await runPlan(env, plan, state, runAttempt);
}

function parseRequest(body: Buffer, server: SpanRecord): ChatCompletionRequest {
  const text = body.toString('utf8');
  const json = parseJsonBody(text);
  if (typeof json === 'object' && json !== null && typeof (json as { model?: unknown }).model === 'string') {
    recordRequestedModel(server, (json as { model: string }).model);
  }
  const fast = fastParse(json);
  const data = fast ?? validate(json);
  // `null` means "not set" in the OpenAI API; dropping it keeps adapters to one case.
  let dropped = false;
  for (const key of Object.keys(data)) {
    if (data[key] === null) {
      delete data[key];
      dropped = true;
    }
  }
  const request = data as unknown as ChatCompletionRequest;
  if (fast !== undefined && !dropped && request.stream !== true) {
    const raw = rawRequestText(text, json, request.model);
    if (raw !== undefined) request[RAW_REQUEST] = raw;
  }
  return request;
}

function validate(json: unknown): Record<string, unknown> {
  const parsed = chatRequestSchema.safeParse(json);
  if (!parsed.success) {
    const problem = firstProblem(parsed.error);
    throw new GatewayHttpError(400, problem.message, { param: problem.param, code: 'invalid_value' });
  }
  return parsed.data as Record<string, unknown>;
}

/** providerOptions.gateway as documented, or as @ai-sdk/openai-compatible spreads it into the body. */
function routingOptions(request: ValidatedRequest): [RoutingOptions, string] {
  const documented = request.providerOptions?.gateway;
  if (documented !== undefined) return [{ order: documented.order, only: documented.only, models: documented.models }, 'providerOptions.gateway'];
  if (request.gateway !== undefined) return [{ order: request.gateway.order, only: request.gateway.only, models: request.gateway.models }, 'gateway'];
  return [{ order: request.order, only: request.only, models: request.models }, ''];
}
