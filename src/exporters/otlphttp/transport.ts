// OTLP/HTTP delivery of encoded requests: serialization (JSON or protobuf,
// gzip, signature) is separate from the HTTP round trip, and an HTTP outcome
// is returned, never thrown, classified as the OTLP spec says: 429, 502, 503,
// 504 and network errors are retryable (honouring Retry-After), any other
// non-2xx is permanent.
import { abortableRequest } from '../../shared/abortable-request.js';
import { outboundAgent } from '../../shared/outbound-agent.js';
import { basicAuthorization, hasAuthorization } from '../../shared/url-credentials.js';
import { decodeResponse } from '../../otlp/proto-codec.js';
import { parseJsonResponse } from '../../otlp/json-codec.js';
import { decodeStatus } from '../../otlp/rpc-status.js';
import { transcodeToJsonSliced } from '../../otlp/json-transcoder.js';
import { wantJsonReuse } from '../../otlp/json-reuse.js';
import { parseRetryAfter } from './retry-after.js';
import { deliverySecretsRedactor, redactUrl } from '../../shared/redact-url.js';
import { Deadline } from '../../shared/abort-callbacks.js';
import { concatSliced, signSliced } from './body-sliced.js';
import { gzipSliced } from './gzip-sliced.js';

/**
 * zlib's fastest level: on OTLP span batches (JSON and protobuf) it costs
 * about 40% of the CPU of the default level 6 for bodies about 5% larger
 * (bench/RESULTS.md), and deliveries are compressed on the daemon's own core.
 */
const GZIP_LEVEL = 1;

const RETRYABLE_STATUS = new Set([429, 502, 503, 504]);
const ERROR_BODY_PREVIEW = 512; // characters of a failed response kept for the log (once the URL's credentials are out of it)
/** Bytes of a destination's answer read (partial_success and an error's preview fit in far less); the rest is not read. */
export const MAX_RESPONSE_BYTES = 64 * 1024;
/** 307 and 308 keep the method and body: followed this many times, to the same origin only. */
const MAX_REDIRECTS = 3;
const REDIRECT_STATUS = new Set([307, 308]);
const KEEP_ALIVE_TIMEOUT = 30_000; // ms
const CONNECT_TIMEOUT = 10_000; // ms
const SLICE_MS = 0.5; // JSON encoding or compression between two turns of the event loop (checked after each span or piece)

export type SendOutcome =
  | { status: 'success'; httpStatus: number; rejectedSpans: number; rejectedMessage?: string }
  | { status: 'retryable'; httpStatus: number | null; retryInMs?: number; error: string }
  | { status: 'failure'; httpStatus: number | null; error: string };

export interface Transport {
  /** Delivers the records (encoded ExportTraceServiceRequests) as one request. */
  send(records: readonly Uint8Array[], spans: number, signal: AbortSignal): Promise<SendOutcome>;
  close(): Promise<void>;
}

export interface HttpTransportOptions {
  url: string;
  encoding: 'json' | 'protobuf';
  compression: 'gzip' | 'none';
  headers: Readonly<Record<string, string>>;
  /** Signs each body with HMAC-SHA256 in x-sluice-signature. */
  secret?: string | undefined;
  /** PEM text of the CA to trust for this destination. */
  ca?: string | undefined;
  /** Allows http:// (local testing only). */
  insecure: boolean;
  /** ms, for the whole request */
  timeoutMs: number;
  userAgent: string;
}

export class InsecureUrlError extends Error {
  readonly code = 'SLUICE_ERR_INSECURE_URL';
}

/** Serializes records for one delivery: the exact bytes sent and their headers. */
export async function serializeBody(
  records: readonly Uint8Array[],
  options: Pick<HttpTransportOptions, 'encoding' | 'compression' | 'secret'>,
): Promise<{ body: Uint8Array; headers: Record<string, string> }> {
  let body: Uint8Array = options.encoding === 'json' ? await transcodeToJsonSliced(records, SLICE_MS) : await concatSliced(records, SLICE_MS);
  const headers: Record<string, string> = {
    'content-type': options.encoding === 'json' ? 'application/json' : 'application/x-protobuf',
  };
  if (options.compression === 'gzip') {
    // The transcoder's last slice may end without a turn: gzip starts with one if this turn's budget is spent (LoopSlices.start).
    body = await gzipSliced(body, GZIP_LEVEL, SLICE_MS);
    headers['content-encoding'] = 'gzip';
  }
  if (options.secret !== undefined && options.secret !== '') headers['x-sluice-signature'] = await signSliced(options.secret, body, SLICE_MS);
  return { body, headers };
}

/** partial_success from a 2xx answer: the rejected spans and the destination's error_message. */
function partialSuccess(contentType: string | undefined, body: Buffer): { rejectedSpans: number; rejectedMessage?: string } {
  if (body.length === 0) return { rejectedSpans: 0 };
  try {
    const response = contentType?.includes('json') ? parseJsonResponse(body.toString('utf8')) : decodeResponse(body);
    const partial = response.partialSuccess;
    // An int64 on the wire: a negative count would add to the spans counted as sent.
    const rejectedSpans = Math.max(0, Number(partial?.rejectedSpans ?? 0));
    return partial?.errorMessage ? { rejectedSpans, rejectedMessage: partial.errorMessage } : { rejectedSpans };
  } catch {
    // A destination may answer 200 with a body that is not an OTLP response; the data was accepted.
    return { rejectedSpans: 0 };
  }
}

/**
 * What a failed answer says. The OTLP/HTTP spec has a destination answer a
 * protobuf request's error with a protobuf google.rpc.Status: its message is
 * read out, as the collector does, rather than shown as raw bytes.
 */
function errorText(contentType: string | undefined, body: Buffer): string {
  if (contentType?.includes('protobuf')) {
    try {
      const { message } = decodeStatus(body);
      if (message !== '') return message;
    } catch {
      // Not a Status after all: shown as it came.
    }
  }
  return body.toString('utf8');
}

/**
 * Where a 307/308 answer points, when it stays on the destination's origin.
 * Header values (API keys) were configured for that origin only: a redirect
 * elsewhere is not followed, and fails as the 3xx it is.
 */
function sameOriginLocation(from: URL, location: string | string[] | undefined): URL | undefined {
  const text = Array.isArray(location) ? location[0] : location;
  if (text === undefined) return undefined;
  try {
    const next = new URL(text, from);
    return next.origin === from.origin ? next : undefined;
  } catch {
    return undefined;
  }
}

function whyNotFollowed(status: number): string {
  if (REDIRECT_STATUS.has(status)) return `another origin, or more than ${MAX_REDIRECTS} redirects`;
  // 301, 302 and 303 would turn the POST into a GET without its body.
  return 'only a 307 or 308 keeps the POST and its body';
}

/**
 * The headers configured, plus the Basic authorization that credentials
 * written into the URL stand for (shared/url-credentials.ts). A configured
 * Authorization header wins.
 */
function withUrlCredentials(headers: Readonly<Record<string, string>>, url: URL): Readonly<Record<string, string>> {
  const authorization = basicAuthorization(url);
  if (authorization === undefined || hasAuthorization(headers)) return headers;
  return { ...headers, authorization };
}

/** At most MAX_RESPONSE_BYTES of an answer: a destination cannot make a delivery hold its whole body in memory. */
async function boundedBody(body: AsyncIterable<Buffer> & { destroy(): unknown }): Promise<Buffer> {
  const chunks: Buffer[] = [];
  let total = 0;
  for await (const chunk of body) {
    const room = MAX_RESPONSE_BYTES - total;
    chunks.push(chunk.length > room ? chunk.subarray(0, room) : chunk);
    total += Math.min(chunk.length, room);
    if (total >= MAX_RESPONSE_BYTES) {
      // The rest is not read: the connection is closed rather than drained.
      body.destroy();
      break;
    }
  }
  return Buffer.concat(chunks, total);
}

export function createHttpTransport(options: HttpTransportOptions): Transport {
  const url = new URL(options.url);
  if (url.protocol !== 'https:' && !(url.protocol === 'http:' && options.insecure)) {
    throw new InsecureUrlError(`${options.url}: must be an https URL (set insecure: true to allow http for local testing)`);
  }
  const dispatcher = outboundAgent({
    keepAliveTimeout: KEEP_ALIVE_TIMEOUT,
    connect: { timeout: CONNECT_TIMEOUT, ...(options.ca === undefined ? {} : { ca: options.ca }) },
  });
  const configuredHeaders = withUrlCredentials(options.headers, url);
  const baseHeaders = { ...configuredHeaders, 'user-agent': options.userAgent };
  // What a destination says goes to logs and the drains API: never with the URL's credentials or the header values it may echo.
  const redact = deliverySecretsRedactor(options.url, configuredHeaders);
  // A JSON destination's records were often transcoded already, for the `file` exporter's lines:
  // wanted from the first delivery on (a transport that never sends, such as a drain that failed to start, wants nothing).
  let releaseJsonReuse: (() => void) | undefined;
  let closed = false;

  return {
    send: async function deliver(records, _spans, signal) {
      if (options.encoding === 'json' && releaseJsonReuse === undefined && !closed) releaseJsonReuse = wantJsonReuse();
      const { body, headers } = await serializeBody(records, options);
      const deadline = new Deadline(signal, options.timeoutMs);
      try {
        let target = url;
        let response = await abortableRequest(target, { method: 'POST', headers: { ...baseHeaders, ...headers }, body, dispatcher, signal: deadline.signal });
        for (let redirects = 0; REDIRECT_STATUS.has(response.statusCode) && redirects < MAX_REDIRECTS; redirects++) {
          const next = sameOriginLocation(target, response.headers['location']);
          if (next === undefined) break;
          await response.body.dump();
          target = next;
          response = await abortableRequest(target, { method: 'POST', headers: { ...baseHeaders, ...headers }, body, dispatcher, signal: deadline.signal });
        }
        const responseBody = await boundedBody(response.body);
        const status = response.statusCode;
        // Media types are case-insensitive: `Application/JSON` is JSON.
        const contentType = response.headers['content-type']?.toString().toLowerCase();
        if (status >= 200 && status < 300) {
          const { rejectedSpans, rejectedMessage } = partialSuccess(contentType, responseBody);
          return rejectedMessage === undefined ? { status: 'success', httpStatus: status, rejectedSpans } : { status: 'success', httpStatus: status, rejectedSpans, rejectedMessage: redact(rejectedMessage) };
        }
        const location = response.headers['location'];
        const error = REDIRECT_STATUS.has(status) || (status >= 300 && status < 400 && location !== undefined)
          ? `HTTP ${status}: redirected to ${redact(redactUrl(String(location ?? '(no location)')))}, not followed (${whyNotFollowed(status)}): configure the new URL`
          : `HTTP ${status}: ${redact(errorText(contentType, responseBody)).slice(0, ERROR_BODY_PREVIEW)}`;
        if (RETRYABLE_STATUS.has(status)) {
          const retryInMs = parseRetryAfter(response.headers['retry-after']);
          return retryInMs === undefined ? { status: 'retryable', httpStatus: status, error } : { status: 'retryable', httpStatus: status, retryInMs, error };
        }
        return { status: 'failure', httpStatus: status, error };
      } catch (err) {
        const reason = deadline.timedOut ? `timed out after ${options.timeoutMs}ms` : err instanceof Error ? err.message : String(err);
        return { status: 'retryable', httpStatus: null, error: `request to ${url.host} failed: ${redact(reason)}` };
      } finally {
        deadline.end();
      }
    },
    close: async function close() {
      closed = true;
      releaseJsonReuse?.();
      // Nothing is left to finish: the sender has stopped. destroy() also lets
      // go of a connection still being made, which close() waits out (up to
      // the connect timeout) before it settles.
      await dispatcher.destroy();
    },
  };
}
