// POST /v1/messages/count_tokens: passed to the model's `anthropic` endpoints
// (in routing order, falling back between them). A model no `anthropic`
// provider serves, or only ones without an api_key (its messages go to
// Bedrock, say), gets an estimate, marked by `x-sluice-token-count: estimate`:
// one token per 4 characters of text (tool definitions and tool inputs as
// JSON), plus a flat 1600 per image or document (Anthropic's cost of a
// ~1.15 megapixel image). Other provider types expose no tokenizer.
import { PROVIDER_NOT_CONFIGURED } from '../core/attempt-failure.js';
import { runPlan } from '../core/attempt-loop.js';
import { readBody } from '../core/body.js';
import { sendJson } from '../core/http-error.js';
import type { GatewayServices, RouteRequest } from '../core/protocol.js';
import { withAnthropicStatus } from './errors.js';
import { check, parseJson, routingOptions } from './handler.js';
import { runNativeAttempt } from './native.js';
import { countTokensRequestSchema } from './schema.js';
import { GatewayHttpError } from '../core/http-error.js';
import { estimateMessagesInputTokens } from '../core/token-estimate.js';


export const ESTIMATE_HEADER = 'x-sluice-token-count';

export async function handleCountTokens(services: GatewayServices, request: RouteRequest): Promise<void> {
  const json = parseJson(await readBody(request.req, services.bodyLimit), request.server);
  const parsed = check(countTokensRequestSchema, json);
  const env = services.env;
  const [options, optionsParam] = routingOptions(parsed, request.req);
  const plan = env.router.plan(parsed.model, options, optionsParam, 'language').filter((endpoint) => env.providers.get(endpoint.provider)?.adapter.type === 'anthropic');
  const estimate = (): void => sendJson(request.res, 200, JSON.stringify({ input_tokens: estimateMessagesInputTokens(json) }), { [ESTIMATE_HEADER]: 'estimate' });
  if (plan.length === 0) {
    estimate();
    return;
  }
  const state = {
    body: json,
    stream: false,
    path: '/v1/messages/count_tokens',
    operation: 'count_tokens' as const,
    anthropicVersion: header(request, 'anthropic-version'),
    anthropicBeta: header(request, 'anthropic-beta'),
    res: request.res,
    server: request.server,
    spans: request.spans,
    client: request.client,
    meter: undefined,
    inputMessages: undefined,
    attempts: 0,
  };
  try {
    await runPlan(env, plan, state, runNativeAttempt);
  } catch (err) {
    // The plan answers provider_not_configured only when no upstream failed: nothing could be asked.
    if (err instanceof GatewayHttpError && err.errorCode === PROVIDER_NOT_CONFIGURED) {
      estimate();
      return;
    }
    throw err instanceof GatewayHttpError ? withAnthropicStatus(err) : err;
  }
}

function header(request: RouteRequest, name: string): string | undefined {
  const value = request.req.headers[name];
  return Array.isArray(value) ? value.join(',') : value;
}
