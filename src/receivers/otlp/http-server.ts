// OTLP/HTTP: POST /v1/traces with a protobuf or JSON body, optionally gzip
// or deflate compressed. Protobuf bodies are only scanned, never decoded
// (DESIGN 9). Errors follow the OTLP/HTTP spec: a google.rpc.Status body in
// the request's encoding.
import type { IncomingMessage, ServerResponse } from 'node:http';
import type { Logger } from 'pino';
import type { TracesConsumer } from '../../core/component.js';
import type { PortKeeper } from '../../core/listener/bound-ports.js';
import type { BearerKeys } from '../../core/listener/bearer.js';
import { CorsPolicy } from '../../core/listener/cors.js';
import { HttpListener } from '../../core/listener/http-listener.js';
import { leftOutField, LogThrottle } from '../../shared/log-throttle.js';
import type { Telemetry } from '../../shared/telemetry.js';
import type { TraceBatch } from '../../otlp/batch.js';
import { stringifyResponse } from '../../otlp/json-codec.js';
import { decodeBody } from './body-decode.js';
import { encodeResponse } from '../../otlp/proto-codec.js';
import { BodyTooLargeError, parseContentEncoding, readBody, RequestAbortedError } from '../../core/http-body.js';
import type { HttpProtocolConfig } from './config.js';
import { formatEndpoint, type Endpoint } from '../../core/listener/endpoint.js';
import { listenError } from '../../core/listener/listen-error.js';
import type { TransportMetrics } from './metrics.js';
import { classify } from './outcome.js';
import { encodeStatus } from '../../otlp/rpc-status.js';

const TRACES_PATH = '/v1/traces';
const PROTOBUF = 'application/x-protobuf';
const JSON_TYPE = 'application/json';

type BodyType = 'protobuf' | 'json';

// Both are constant: an empty ExportTraceServiceResponse means full success.
const PROTOBUF_OK = Buffer.from(encodeResponse({}));
const JSON_OK = Buffer.from(stringifyResponse({}));

// google.rpc.Code values carried in error bodies, as the collector does.
const RPC_CODE: Readonly<Record<number, number>> = { 400: 3, 401: 16, 404: 5, 405: 12, 413: 8, 415: 3, 429: 8, 503: 14 };

function bodyTypeOf(header: string | undefined): BodyType | undefined {
  if (header === undefined) return undefined;
  const semicolon = header.indexOf(';');
  const mediaType = (semicolon === -1 ? header : header.slice(0, semicolon)).trim().toLowerCase();
  if (mediaType === PROTOBUF) return 'protobuf';
  if (mediaType === JSON_TYPE) return 'json';
  return undefined;
}

function pathOf(url: string | undefined): string {
  const raw = url ?? '/';
  const query = raw.indexOf('?');
  return query === -1 ? raw : raw.slice(0, query);
}

export interface HttpReceiverOptions {
  readonly id: string;
  readonly config: HttpProtocolConfig;
  readonly next: TracesConsumer;
  readonly logger: Logger;
  readonly metrics: TransportMetrics;
  readonly telemetry: Telemetry;
  /** receivers.otlp.auth: undefined when requests need no key. */
  readonly keys: BearerKeys | undefined;
}

export class OtlpHttpServer {
  readonly #options: HttpReceiverOptions;
  readonly #limit: number;
  /** A full disk refuses every request: one line per interval says so. */
  readonly #unavailable = new LogThrottle();
  readonly #listener: HttpListener;
  readonly #cors: CorsPolicy | undefined;

  constructor(options: HttpReceiverOptions) {
    this.#options = options;
    this.#limit = options.config.max_request_body_size;
    // Retry-After is no CORS-safelisted header: exposed, a browser exporter (the SDK's fetch transport) can wait as a 429 asks.
    this.#cors = options.config.cors === undefined ? undefined : new CorsPolicy(options.config.cors, ['POST'], ['Retry-After']);
    this.#listener = new HttpListener({
      name: `${options.id}/http`,
      endpoint: options.config.endpoint,
      config: options.config,
      telemetry: options.telemetry,
      handler: (req, res) => {
        this.#handle(req, res).catch((err: unknown) => {
          options.logger.error({ err }, 'unexpected error while handling an OTLP/HTTP request');
          if (!res.headersSent) this.#send(res, 500, 'text/plain; charset=utf-8', Buffer.from('internal error'));
          else res.destroy();
        });
      },
    });
  }

  /** The bound address, once listening. */
  get address(): Endpoint | undefined {
    return this.#listener.address;
  }

  /** The listener, for the service's shutdown group. */
  get listener(): HttpListener {
    return this.#listener;
  }

  async listen(ports?: PortKeeper): Promise<Endpoint> {
    const { host, port } = this.#options.config.endpoint;
    try {
      return await this.#listener.listen(ports);
    } catch (err) {
      throw listenError(`receivers.${this.#options.id}.protocols.http.endpoint`, formatEndpoint(host, port), err);
    }
  }

  /** Stops accepting; in-flight requests are answered, then their sockets close. */
  close(): Promise<void> {
    return this.#listener.close();
  }

  async #handle(req: IncomingMessage, res: ServerResponse): Promise<void> {
    if (this.#cors?.handle(req, res) === true) return;
    const type = bodyTypeOf(req.headers['content-type']);
    if (pathOf(req.url) !== TRACES_PATH) {
      this.#fail(req, res, type, 404, `no such path: ${pathOf(req.url)}; OTLP traces are accepted at POST ${TRACES_PATH}`);
      return;
    }
    if (req.method !== 'POST') {
      res.setHeader('Allow', 'POST');
      this.#fail(req, res, type, 405, `method ${req.method ?? ''} is not allowed; use POST`);
      return;
    }
    if (this.#options.keys !== undefined && !this.#options.keys.accepts(req.headers.authorization)) {
      this.#options.metrics.refused('unauthenticated', 0);
      res.setHeader('WWW-Authenticate', 'Bearer');
      this.#fail(req, res, type, 401, 'missing or unknown API key: send Authorization: Bearer <key>');
      return;
    }
    if (type === undefined) {
      const given = req.headers['content-type'] ?? '(none)';
      this.#fail(req, res, type, 415, `unsupported content type ${given}; use ${PROTOBUF} or ${JSON_TYPE}`);
      return;
    }
    const encoding = parseContentEncoding(req.headers['content-encoding']);
    if (encoding === undefined) {
      this.#fail(req, res, type, 415, `unsupported content encoding ${req.headers['content-encoding'] ?? ''}; use gzip, deflate or none`);
      return;
    }
    // The limit holds for the bytes sent as well as for what they inflate to: a compressed body declared over it is refused too.
    const declared = Number(req.headers['content-length']);
    if (declared > this.#limit) {
      this.#refuse(req, res, type, new BodyTooLargeError(this.#limit), 0);
      return;
    }

    let batch: TraceBatch;
    try {
      const body = await readBody(req, encoding, this.#limit);
      batch = await decodeBody(type, body);
    } catch (err) {
      if (err instanceof RequestAbortedError) return;
      this.#refuse(req, res, type, err, 0);
      return;
    }

    const spans = batch.spanCount;
    // OTLP: an empty request is answered with success; nothing to deliver.
    if (spans > 0) {
      try {
        await this.#options.next.consume(batch);
      } catch (err) {
        this.#refuse(req, res, type, err, spans);
        return;
      }
      this.#options.metrics.accepted(spans);
    }
    this.#send(res, 200, type === 'protobuf' ? PROTOBUF : JSON_TYPE, type === 'protobuf' ? PROTOBUF_OK : JSON_OK);
  }

  #refuse(req: IncomingMessage, res: ServerResponse, type: BodyType, err: unknown, spans: number): void {
    const refusal = classify(err);
    this.#options.metrics.refused(refusal.reason, spans);
    if (refusal.reason === 'error') {
      const logger = this.#options.logger;
      this.#unavailable.run(function logRefusal(leftOut) {
        logger.warn({ err, spans, ...leftOutField(leftOut) }, 'refused spans: the pipeline is unavailable');
      });
    }
    if (refusal.retryAfterMs !== undefined) res.setHeader('Retry-After', String(Math.ceil(refusal.retryAfterMs / 1000)));
    this.#fail(req, res, type, refusal.httpStatus, refusal.message);
  }

  #fail(req: IncomingMessage, res: ServerResponse, type: BodyType | undefined, status: number, message: string): void {
    // A body left unread (413, early 4xx) would have to be drained to reuse
    // the connection; closing it is cheaper and bounds what a client can send.
    if (!req.complete) res.setHeader('Connection', 'close');
    const code = RPC_CODE[status] ?? 2;
    // A request in neither encoding (a 415, a bare GET) still gets a Status, in JSON.
    if (type === 'protobuf') this.#send(res, status, PROTOBUF, Buffer.from(encodeStatus(code, message)));
    else this.#send(res, status, JSON_TYPE, Buffer.from(JSON.stringify({ code, message })));
  }

  #send(res: ServerResponse, status: number, contentType: string, body: Buffer): void {
    res.writeHead(status, { 'Content-Type': contentType, 'Content-Length': body.length });
    res.end(body);
  }
}
