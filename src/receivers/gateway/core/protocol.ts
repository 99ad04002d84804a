// What a client protocol plugs into the gateway: routes (path, method, how
// errors and keys look in that protocol) and, for protocols answered from
// the Chat Completions lingua franca the provider adapters speak, how a
// completion and a stream of chunks are written back in the client's shape.
// A new protocol is a folder exporting its routes, listed in ../routes.ts.
import type { IncomingMessage, ServerResponse } from 'node:http';
import type { AccountKey, Accountant } from '../../../usage/accountant.js';
import type { UsageMeter } from '../../../usage/meter.js';
import type { ApiKeys } from './auth.js';
import type { Catalog } from './catalog.js';
import type { ClientLink } from './client-link.js';
import type { GatewayHttpError } from './http-error.js';
import type { ChatCompletion, ChatCompletionChunk, Usage } from '../providers/shared/openai-types.js';
import type { RequestState } from './attempt.js';
import type { PlanEnv } from './attempt-loop.js';
import type { SpanRecord } from './spans.js';

/** What every route handler may use; built once per receiver. */
export interface GatewayServices {
  readonly keys: ApiKeys<AccountKey>;
  readonly accountant: Accountant;
  /** service.admin.api_key as it is now: it sees every key's usage records. */
  readonly adminApiKey: () => string | undefined;
  readonly catalog: Catalog;
  readonly env: PlanEnv;
  /** receivers.gateway.max_request_body_size, bytes. */
  readonly bodyLimit: number;
}

/** One request in flight, as the receiver hands it to a route. */
export interface RouteRequest {
  readonly req: IncomingMessage;
  readonly res: ServerResponse;
  /** The request path without its query. */
  readonly path: string;
  /** The query string without `?` ('' when absent). */
  readonly query: string;
  readonly server: SpanRecord;
  readonly spans: SpanRecord[];
  readonly client: ClientLink;
  /** The key the client presented (already authorized). */
  readonly key: AccountKey;
  /** True when the client presented the admin key (only on routes with `adminKey: true`). */
  readonly admin: boolean;
  /** Set on routes that generate (`generates: true`): the request's generation id, cost and record. */
  readonly meter: UsageMeter | undefined;
}

export interface ProtocolRoute {
  /** The route as it appears in span names and metric labels: `/v1/chat/completions`, `/v1/models/{id}`. */
  readonly route: string;
  readonly method: 'GET' | 'POST';
  /** Exact path; or, when `prefix` is true, a path prefix followed by at least one character. */
  readonly path: string;
  readonly prefix?: boolean;
  /** How an error answer looks in this protocol. */
  readonly errors: ErrorFormat;
  /** The API key the client presented (undefined: none). Defaults to `Authorization: Bearer`. */
  readonly presentedKey?: (req: IncomingMessage) => string | undefined;
  /** True for routes that call upstream models: they are refused over budget and become generation records. */
  readonly generates?: boolean;
  /** True for routes that also take service.admin.api_key (usage lookups across every key). */
  readonly adminKey?: boolean;
  handle(services: GatewayServices, request: RouteRequest): Promise<void> | void;
}

export interface ErrorFormat {
  /** The body of a non-streaming error answer (JSON text). */
  body(error: GatewayHttpError): string;
  /** The in-band event that ends a started stream the gateway itself cuts (shutdown). */
  streamEvent(error: GatewayHttpError): string;
}

/**
 * How a protocol answered from Chat Completions shapes writes its answer.
 * Implementations that need no per-request state are shared constants, so
 * the chat hot path allocates nothing for them.
 */
export interface CompletionAnswer {
  /**
   * Writes a non-streaming answer. `text` is the upstream body as it came
   * when the adapter is a passthrough (already the Chat Completions shape).
   * `charged`: the usage the attempt was charged, the upstream's or, where
   * it reported none, the gateway's estimate.
   */
  complete(res: ServerResponse, completion: ChatCompletion, text: string | undefined, state: RequestState, slug: string, charged: Usage): void;
  /** Called once the first upstream chunk exists; the encoder writes every event of this stream. */
  openStream(state: RequestState, slug: string): StreamEncoder;
}

export interface StreamEncoder {
  /** The text to write for one chunk ('' writes nothing). */
  chunk(chunk: ChatCompletionChunk, state: RequestState): string;
  /** The text that ends a complete stream; `charged`: its usage as charged (the upstream's last report, or the estimate). */
  end(state: RequestState, charged: Usage | undefined): string;
  /** The in-band error event that ends a failed stream after its first byte. */
  error(error: GatewayHttpError, state: RequestState): string;
}
