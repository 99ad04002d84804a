// POST /v1/messages: parse and check, route like chat, then try the planned
// endpoints: `anthropic` providers natively (native.ts), the others through
// the Chat Completions adapters with the request translated (to-chat.ts) and
// the answer mapped back (answer.ts).
import type { IncomingMessage } from 'node:http';
import type { z } from 'zod';
import { runAttempt, type AttemptEnv, type AttemptResult, type RequestState, type ResolvedProvider } from '../core/attempt.js';
import { runPlan } from '../core/attempt-loop.js';
import { UNSUPPORTED_VALUE } from '../core/attempt-failure.js';
import { readBody } from '../core/body.js';
import { captureWithInstructions, type CapturedConversation } from '../core/capture.js';
import type { Endpoint } from '../core/catalog.js';
import { GatewayHttpError } from '../core/http-error.js';
import { parseJsonBody } from '../core/json-body.js';
import type { GatewayServices, RouteRequest } from '../core/protocol.js';
import type { RoutingOptions } from '../core/routing.js';
import { recordRequestedModel, type SpanRecord } from '../core/spans.js';
import { ProviderRequestError } from '../providers/shared/inputs.js';
import { messagesAnswer } from './answer.js';
import { withAnthropicStatus } from './errors.js';
import { runNativeAttempt, type NativeState } from './native.js';
import { describeProblem, messagesRequestSchema, type MessagesRequest } from './schema.js';
import { MESSAGES_PARAMS, toChatRequest } from './to-chat.js';
import { inClientTerms } from '../core/param-origin.js';

/** The header that carries `order` for clients that cannot add body fields (Claude Code: ANTHROPIC_CUSTOM_HEADERS). */
export const ORDER_HEADER = 'x-sluice-order';

interface MessagesState extends NativeState {
  readonly request: MessagesRequest;
  readonly captureContent: boolean;
  /** The translated request per provider type, made on first use (or the 400 it gave). */
  readonly translated: Map<string, RequestState | ProviderRequestError>;
}

export async function handleMessages(services: GatewayServices, request: RouteRequest): Promise<void> {
  const json = parseJson(await readBody(request.req, services.bodyLimit), request.server);
  const parsed = check(messagesRequestSchema, json);
  const env = services.env;
  const [options, optionsParam] = routingOptions(parsed, request.req);
  const plan = env.router.plan(parsed.model, options, optionsParam, 'language');
  const state: MessagesState = {
    body: json,
    request: parsed,
    stream: parsed.stream === true,
    path: '/v1/messages',
    operation: 'chat',
    anthropicVersion: header(request.req, 'anthropic-version'),
    anthropicBeta: header(request.req, 'anthropic-beta'),
    res: request.res,
    server: request.server,
    spans: request.spans,
    client: request.client,
    captureContent: env.captureContent,
    meter: request.meter,
    ...(env.captureContent ? capturedInput(parsed) : NOT_CAPTURED),
    translated: new Map(),
    attempts: 0,
  };
  try {
    await runPlan(env, plan, state, tryEndpoint);
  } catch (err) {
    throw err instanceof GatewayHttpError ? withAnthropicStatus(err) : err;
  }
}

async function tryEndpoint(env: AttemptEnv, provider: ResolvedProvider, endpoint: Endpoint, state: MessagesState): Promise<AttemptResult> {
  if (provider.adapter.type === 'anthropic') return runNativeAttempt(env, provider, endpoint, state);
  const chat = translated(state, provider.adapter.type);
  if (chat instanceof ProviderRequestError) {
    // Another provider type may carry it: the 400 is the answer only if none does.
    const error = new GatewayHttpError(400, `Provider ${provider.slug} cannot take this request: ${chat.message}`, { type: 'invalid_request_error', code: UNSUPPORTED_VALUE, param: chat.param });
    return { answered: false, fallback: true, error };
  }
  chat.attempts = state.attempts;
  try {
    return inClientTerms(await runAttempt(env, provider, endpoint, chat), chat.request, MESSAGES_PARAMS);
  } finally {
    state.attempts = chat.attempts;
  }
}

function translated(state: MessagesState, providerType: string): RequestState | ProviderRequestError {
  let known = state.translated.get(providerType);
  if (known !== undefined) return known;
  try {
    const request = toChatRequest(state.request, providerType);
    known = {
      request,
      res: state.res,
      answer: messagesAnswer,
      meter: state.meter,
      includeUsage: true,
      ...(state.captureContent ? captureWithInstructions(request.messages) : NOT_CAPTURED),
      server: state.server,
      spans: state.spans,
      client: state.client,
      attempts: 0,
    };
  } catch (err) {
    if (!(err instanceof ProviderRequestError)) throw err;
    known = err;
  }
  state.translated.set(providerType, known);
  return known;
}

/** capture_content off, or a conversation the translation cannot read. */
const NOT_CAPTURED = { systemInstructions: undefined, inputMessages: undefined } as const;

/** The conversation for gen_ai.system_instructions and gen_ai.input.messages, read through the translation; one it cannot read (documents, server tools) is not captured. */
function capturedInput(request: MessagesRequest): CapturedConversation | typeof NOT_CAPTURED {
  try {
    return captureWithInstructions(toChatRequest(request, 'anthropic').messages);
  } catch (err) {
    if (err instanceof ProviderRequestError) return NOT_CAPTURED;
    throw err;
  }
}

export function parseJson(body: Buffer, server: SpanRecord): Record<string, unknown> {
  const json = parseJsonBody(body, 'The request body is not valid JSON.');
  if (typeof json !== 'object' || json === null || Array.isArray(json)) throw new GatewayHttpError(400, 'The request body must be a JSON object.', { code: 'invalid_json' });
  const model = (json as { model?: unknown }).model;
  if (typeof model === 'string') recordRequestedModel(server, model);
  return json as Record<string, unknown>;
}

export function check<T extends z.ZodType>(schema: T, json: unknown): z.output<T> {
  const parsed = schema.safeParse(json);
  if (parsed.success) return parsed.data;
  const problem = describeProblem(parsed.error);
  throw new GatewayHttpError(400, problem.message, { param: problem.param, code: 'invalid_value' });
}

/** providerOptions.gateway in the body, else `order` from the x-sluice-order header (comma-separated slugs). */
export function routingOptions(request: { providerOptions?: { gateway?: { order?: string[] | undefined; only?: string[] | undefined; models?: string[] | undefined } | undefined } | undefined }, req: IncomingMessage): [RoutingOptions, string] {
  const gateway = request.providerOptions?.gateway;
  if (gateway !== undefined) return [{ order: gateway.order, only: gateway.only, models: gateway.models }, 'providerOptions.gateway'];
  const order = header(req, ORDER_HEADER)
    ?.split(',')
    .map((slug) => slug.trim())
    .filter((slug) => slug !== '');
  return [{ order, only: undefined, models: undefined }, ORDER_HEADER];
}

function header(req: IncomingMessage, name: string): string | undefined {
  const value = req.headers[name];
  return Array.isArray(value) ? value.join(',') : value;
}
