// The provider adapter interface. An adapter is a pure translator between the
// OpenAI Chat Completions shapes and one provider's wire format; the gateway
// core owns HTTP (a keep-alive undici pool per provider), timeouts, fallback,
// cancellation and spans. So a new provider type is four mappings: request,
// response, stream and error classification.
import type { z } from 'zod';
import type { ChatCompletion, ChatCompletionChunk, ChatCompletionRequest, Usage } from './openai-types.js';

/** Provider settings every type shares (`receivers.gateway.providers.<slug>`). */
export interface BaseProviderConfig {
  type: string;
  base_url: string;
  api_key?: string | undefined;
  /** Extra headers sent upstream with every request. */
  headers?: Record<string, string> | undefined;
  /** ms; overrides the receiver's first_byte_timeout */
  first_byte_timeout?: number | undefined;
  /** ms; overrides the receiver's stream_idle_timeout */
  stream_idle_timeout?: number | undefined;
}

/** Everything an adapter needs to map one attempt. */
export interface AttemptContext<C extends BaseProviderConfig = BaseProviderConfig> {
  /** The provider slug from the config (`anthropic`, `local`, ...). */
  readonly slug: string;
  readonly provider: C;
  /** The model name sent upstream (the endpoint's `model`). */
  readonly model: string;
  /** The catalog entry's max_tokens, when the model is in the catalog. */
  readonly maxTokens: number | undefined;
  /** Aborted when the client disconnects or the attempt times out. */
  readonly signal: AbortSignal;
}

export interface UpstreamRequest {
  /** Absolute URL. */
  url: string;
  method: 'POST' | 'GET';
  headers: Record<string, string>;
  body: string | Uint8Array;
}

/** How an upstream failure is surfaced and whether the next endpoint may be tried. */
/** The code of the 400 a provider type (or its model) answers for what it cannot take; the next endpoint may. */
export const UNSUPPORTED_VALUE = 'unsupported_value';

export interface UpstreamErrorInfo {
  /** The HTTP status the gateway answers with if this is the last attempt. */
  status: number;
  message: string;
  /** OpenAI error type: invalid_request_error, authentication_error, rate_limit_error, api_error, ... */
  type: string;
  code: string | null;
  param: string | null;
  /** True for network errors, timeouts, 429, 5xx (incl. Anthropic 529) and upstream 401/403. */
  fallback: boolean;
  /** Seconds the upstream asks to wait before a retry, said in its body rather than a Retry-After header (Gemini's RetryInfo). */
  retryAfter?: number | undefined;
}

/**
 * Maps a streaming response body to OpenAI chunks as its bytes arrive,
 * synchronously: the gateway feeds it from undici's data callbacks, so a
 * chunk costs no stream, promise or generator step on its way through.
 * Chunks carry `usage` on the last one when the upstream reports it; the
 * gateway decides whether the client asked for it.
 *
 * Mapping stops at the first failure: an in-band upstream error
 * (UpstreamStreamError), an event that is not what the protocol says, a
 * stream cut short. The chunks mapped before it are still returned, and the
 * failure is left in `error`; push() and end() do not throw.
 */
export interface StreamMapper {
  /** The chunks this part of the body completes, valid until the next call. */
  push(part: Uint8Array): readonly ChatCompletionChunk[];
  /** The chunks left once the body has ended. */
  end(): readonly ChatCompletionChunk[];
  /** True once the upstream has said the stream is over (OpenAI's `[DONE]`): later bytes map to nothing. */
  readonly finished: boolean;
  /** Why mapping stopped, once it has; later bytes map to nothing. */
  readonly error: unknown;
  /**
   * Usage the upstream has told before its final report (Anthropic's
   * message_start, Gemini's usageMetadata on each event), charged when the
   * stream fails before that report.
   */
  readonly usageSoFar?: Usage | undefined;
}

export interface ProviderAdapter<C extends BaseProviderConfig = BaseProviderConfig> {
  /** The `type` in the provider config: openai | anthropic | google | bedrock. */
  readonly type: string;
  /** gen_ai.provider.name per the OpenTelemetry GenAI semantic conventions. */
  readonly genAiProviderName: string;
  /** Validates one `providers.<slug>` entry of this type (snake_case keys, durations already in ms). */
  readonly configSchema: z.ZodType<C>;
  /**
   * True when the upstream already speaks the OpenAI wire format: the gateway
   * then answers non-streaming requests with the upstream body bytes as they
   * are (parseResponse still runs, for the spans) instead of re-serializing.
   */
  readonly passthrough?: boolean;

  /** Maps the request; may be async (for example to fetch and inline an image). */
  buildRequest(request: ChatCompletionRequest, ctx: AttemptContext<C>): Promise<UpstreamRequest> | UpstreamRequest;

  /** Maps a 2xx non-streaming response body of this request. */
  parseResponse(body: Uint8Array, ctx: AttemptContext<C>, request: ChatCompletionRequest): ChatCompletion;

  /** For passthrough adapters: parseResponse on the body already decoded (the answer needs the text too). */
  parseResponseText?(text: string, ctx: AttemptContext<C>): ChatCompletion;

  /** A mapper for one 2xx streaming response body (see StreamMapper) of this request. */
  streamMapper(ctx: AttemptContext<C>, request: ChatCompletionRequest): StreamMapper;

  /** Classifies a non-2xx upstream response (embedding calls' too). */
  classifyError(status: number, body: Uint8Array, headers: Record<string, string | string[] | undefined>): UpstreamErrorInfo;

  /** Present when the provider type serves catalog models of `type: embedding`. */
  readonly embeddings?: EmbeddingAdapter<C>;
}

/** What every embeddings protocol is mapped to: OpenAI's request, normalized to a list. */
export interface EmbeddingRequest {
  /** Texts, or (OpenAI-compatible upstreams only) token id arrays. */
  readonly input: readonly string[] | ReadonlyArray<readonly number[]>;
  /** Output dimensions, for models that can shorten their vectors. */
  readonly dimensions: number | undefined;
  readonly user: string | undefined;
  /** providerOptions.<slug> (or .<type>) of an AI SDK call: settings of the provider's own (Gemini's taskType, Cohere's inputType on Bedrock). */
  readonly providerOptions?: Readonly<Record<string, unknown>> | undefined;
}

export interface EmbeddingResult {
  /** One vector per input, in input order. */
  readonly vectors: number[][];
  /** Input tokens the upstream counted (0 when it reports none). */
  readonly inputTokens: number;
  /** The model the upstream says answered, when it says. */
  readonly model: string | undefined;
}

/** One 2xx upstream answer to an embeddings request. */
export interface EmbeddingReply {
  readonly body: Uint8Array;
  /** Some providers count tokens only in a header (Bedrock's InvokeModel). */
  readonly headers: Record<string, string | string[] | undefined>;
}

export interface EmbeddingAdapter<C extends BaseProviderConfig = BaseProviderConfig> {
  /**
   * The upstream requests for one attempt, sent one after another (Titan
   * embeds one text per call; the others batch, as their upstreams allow).
   * An async iterable is read one request at a time, each made when its
   * turn comes: Bedrock signs it then, since a signature is good for five
   * minutes and a run of Titan calls can take longer.
   */
  buildRequests(request: EmbeddingRequest, ctx: AttemptContext<C>): readonly UpstreamRequest[] | AsyncIterable<UpstreamRequest>;
  /**
   * Maps the 2xx answers, in the order of buildRequests: all of them, or
   * (to count the tokens to charge) the first ones, when a later call failed.
   */
  parseResponses(replies: readonly EmbeddingReply[], request: EmbeddingRequest, ctx: AttemptContext<C>): EmbeddingResult;
}

/**
 * The provider has no credentials yet (config.example.yaml ships providers
 * whose keys come from unset variables): the attempt answers 503 with this
 * message and the next provider is tried.
 */
export class ProviderNotConfiguredError extends Error {
  readonly code = 'SLUICE_ERR_PROVIDER_NOT_CONFIGURED';

  constructor(message: string) {
    super(message);
    this.name = 'ProviderNotConfiguredError';
  }
}

/** The api_key a provider needs before any request is sent. */
export function requireApiKey(ctx: { slug: string; provider: { api_key?: string | undefined } }): string {
  const key = ctx.provider.api_key;
  if (key === undefined || key === '') {
    throw new ProviderNotConfiguredError(`Provider ${ctx.slug} has no api_key: set receivers.gateway.providers.${ctx.slug}.api_key.`);
  }
  return key;
}

/**
 * An upstream answer that parsed but is not what was asked for (an
 * embedding list without its vectors, say). A SyntaxError, as JSON that does
 * not parse is: both are the attempt's `invalid_response`; this one says
 * what is wrong.
 */
export class InvalidResponseError extends SyntaxError {
  constructor(message: string) {
    super(message);
    this.name = 'InvalidResponseError';
  }
}

/** An error event inside an upstream stream (Anthropic `error`, Bedrock exception frames, ...). */
export class UpstreamStreamError extends Error {
  readonly code = 'SLUICE_ERR_UPSTREAM_STREAM';
  readonly errorType: string;
  /**
   * What the upstream's HTTP answer would have been, when the event says
   * (Bedrock's validationException, Gemini's `{"error":{"code":400}}`):
   * before the first chunk the attempt is judged as that answer would be,
   * so a request the upstream refused is not tried on the next provider.
   */
  readonly answer: UpstreamErrorInfo | undefined;

  constructor(message: string, errorType = 'api_error', answer?: UpstreamErrorInfo) {
    super(message);
    this.name = 'UpstreamStreamError';
    this.errorType = errorType;
    this.answer = answer;
  }
}
