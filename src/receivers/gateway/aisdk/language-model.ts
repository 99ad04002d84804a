// POST /v1/ai/language-model: the AI SDK gateway provider's doGenerate and
// doStream. The model id and streaming travel in headers, the call options
// in the body; routing is providerOptions.gateway, as on Chat Completions.
import type { IncomingMessage } from 'node:http';
import { runAttempt, type RequestState } from '../core/attempt.js';
import { runPlan, type TryEndpoint } from '../core/attempt-loop.js';
import { readBody } from '../core/body.js';
import { captureInput } from '../core/capture.js';
import type { Endpoint, ModelType } from '../core/catalog.js';
import { GatewayHttpError } from '../core/http-error.js';
import type { GatewayServices, RouteRequest } from '../core/protocol.js';
import type { Router, RoutingOptions } from '../core/routing.js';
import { parseJsonBody, validated } from '../core/json-body.js';
import { AiSdkAnswer } from './answer.js';
import { PROMPT_PARAMS, forEndpoint, toChatRequest } from './request.js';
import { inClientTerms } from '../core/param-origin.js';
import { AttemptLog, logged } from './routing.js';
import { callWarnings } from './warnings.js';
import { languageModelCallSchema, type LanguageModelCall } from './schema.js';

const OPTIONS_PARAM = 'providerOptions.gateway';
const SPEC_VERSIONS: ReadonlySet<string> = new Set(['3', '4']);

export function header(req: IncomingMessage, name: string): string | undefined {
  const value = req.headers[name];
  return Array.isArray(value) ? value[0] : value;
}

export async function handleLanguageModel(services: GatewayServices, request: RouteRequest): Promise<void> {
  const { req, server } = request;
  const model = requiredHeader(req, 'ai-language-model-id');
  server.str('sluice.model', model);
  checkSpecVersion(req, 'ai-language-model-specification-version');
  // V4 (ai 7) tags a file part's data; V3 (ai 6) takes it bare.
  const tagged = header(req, 'ai-language-model-specification-version') === '4';
  const stream = header(req, 'ai-language-model-streaming') === 'true';
  const call = parseCall(await readBody(req, services.bodyLimit));
  const env = services.env;
  const chat = toChatRequest(call, model, stream);
  const options = call.providerOptions?.gateway;
  const plan = planFor(env.router, model, { order: options?.order, only: options?.only, models: options?.models }, 'language');
  const log = new AttemptLog();
  const answer = new AiSdkAnswer(model, log, tagged, call.includeRawChunks === true);
  const state: RequestState = {
    request: chat,
    res: request.res,
    answer,
    meter: request.meter,
    includeUsage: true,
    inputMessages: env.captureContent ? captureInput(chat.messages) : undefined,
    server,
    spans: request.spans,
    client: request.client,
    attempts: 0,
  };
  const attempt: TryEndpoint<RequestState> = async (attemptEnv, provider, endpoint, attemptState) => {
    answer.warnings = callWarnings(call, chat, provider.slug, provider.config.type, endpoint.model);
    attemptState.request = forEndpoint(chat, call, provider.config.type, endpoint.model);
    // An attempt's error about the translated request names the prompt's fields.
    return inClientTerms(await runAttempt(attemptEnv, provider, endpoint, attemptState), chat, PROMPT_PARAMS);
  };
  await runPlan(env, plan, state, logged(log, attempt)).catch(function reportFailure(err: unknown) {
    throw inClientClasses(err, model);
  });
}

/**
 * The upstream attempts' failure in the client's terms. An upstream that does
 * not know the model answers model_not_found with its own param (or none);
 * the client's error class reads the model id from it. A provider refusing
 * the gateway's own credentials (401, 403) is a failed dependency: as a 401
 * the client would drop the message and tell the app its own key is wrong.
 */
export function inClientClasses(err: unknown, model: string): unknown {
  if (!(err instanceof GatewayHttpError)) return err;
  if (err.status === 401 || err.status === 403) {
    const slug = err.headers['x-sluice-provider'];
    const message = `${slug === undefined ? 'The provider' : `Provider ${slug}`} refused this gateway's credentials (HTTP ${err.status}): ${err.message}`;
    return new GatewayHttpError(424, message, { type: 'failed_dependency', code: 'provider_credentials_rejected', headers: err.headers });
  }
  if (err.errorCode !== 'model_not_found' || err.param === model) return err;
  return new GatewayHttpError(err.status, err.message, { type: err.errorType, code: err.errorCode, param: model, headers: err.headers });
}

export function requiredHeader(req: IncomingMessage, name: string): string {
  const value = header(req, name);
  if (value === undefined || value === '') throw new GatewayHttpError(400, `The ${name} header is required.`, { code: 'missing_header', param: name });
  return value;
}

/** 3 is @ai-sdk/gateway 3.x (ai 6), 4 is 4.x (ai 7); both read the shapes this gateway answers with. */
export function checkSpecVersion(req: IncomingMessage, name: string): void {
  const version = header(req, name);
  if (version !== undefined && !SPEC_VERSIONS.has(version)) {
    throw new GatewayHttpError(400, `${name} ${version} is not supported; this gateway speaks versions 3 and 4.`, { code: 'unsupported_version', param: name });
  }
}

function parseCall(body: Buffer): LanguageModelCall {
  return validated(languageModelCallSchema, parseJsonBody(body));
}


const FALLBACK_PARAM = /\.models\[(\d+)\]$/;

/** The router's plan, with an unknown model reported as the client's error class reads it (param = the model id). */
export function planFor(router: Router, model: string, options: RoutingOptions, type: ModelType): Endpoint[] {
  try {
    return router.plan(model, options, OPTIONS_PARAM, type);
  } catch (err) {
    if (!(err instanceof GatewayHttpError) || err.errorCode !== 'model_not_found') throw err;
    const index = FALLBACK_PARAM.exec(err.param ?? '')?.[1];
    const missing = index === undefined ? model : (options.models?.[Number(index)] ?? model);
    throw new GatewayHttpError(404, err.message, { code: 'model_not_found', param: missing });
  }
}
