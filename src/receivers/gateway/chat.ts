// POST /v1/chat/completions: parse, validate, route, then try the planned
// endpoints in order until one answers or a failure must not fall back.
import type { ServerResponse } from 'node:http';
import { runAttempt, type AttemptEnv, type RequestState, type ResolvedProvider } from './attempt.js';
import { captureInput } from './capture.js';
import type { ClientLink } from './client-link.js';
import { GatewayHttpError } from './http-error.js';
import type { ChatCompletionRequest } from './openai-types.js';
import type { Router, RoutingOptions } from './routing.js';
import { chatRequestSchema, firstProblem, type ValidatedRequest } from './schema.js';
import { fastParse } from './schema-fast.js';
import type { SpanRecord } from './spans.js';

export interface ChatEnv extends AttemptEnv {
  readonly router: Router;
  readonly providers: ReadonlyMap<string, ResolvedProvider>;
}

export async function handleChat(env: ChatEnv, body: Buffer, res: ServerResponse, server: SpanRecord, spans: SpanRecord[], client: ClientLink): Promise<void> {
  const request = parseRequest(body, server);
  const [options, optionsParam] = routingOptions(request);
  const plan = env.router.plan(request.model, options, optionsParam);
  const state: RequestState = {
    request,
    includeUsage: request.stream_options?.include_usage === true,
    inputMessages: env.captureContent ? captureInput(request.messages) : undefined,
    server,
    spans,
    client,
    attempts: 0,
  };
  let last: GatewayHttpError | undefined;
  for (const endpoint of plan) {
    if (client.closed) return;
    const provider = env.providers.get(endpoint.provider);
    if (provider === undefined) continue; // config validation makes this unreachable
    const result = await runAttempt(env, provider, endpoint, state, res);
    if (result.answered) {
      server.str('sluice.provider', provider.slug);
      return;
    }
    last = result.error;
    if (!result.fallback) break;
  }
  if (client.closed) return;
  const failure = last ?? new GatewayHttpError(502, 'No upstream attempt was made.', { type: 'api_error', code: 'upstream_error' });
  throw failure.withHeaders({ 'x-sluice-attempts': String(state.attempts) });
}

function parseRequest(body: Buffer, server: SpanRecord): ChatCompletionRequest {
  let json: unknown;
  try {
    json = JSON.parse(body.toString('utf8'));
  } catch {
    throw new GatewayHttpError(400, 'We could not parse the JSON body of your request.', { code: 'invalid_json' });
  }
  if (typeof json === 'object' && json !== null && typeof (json as { model?: unknown }).model === 'string') {
    server.str('sluice.model', (json as { model: string }).model);
  }
  const data = fastParse(json) ?? validate(json);
  // `null` means "not set" in the OpenAI API; dropping it keeps adapters to one case.
  for (const key of Object.keys(data)) if (data[key] === null) delete data[key];
  return data as unknown as ChatCompletionRequest;
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
