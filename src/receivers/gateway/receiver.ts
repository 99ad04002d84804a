// The gateway receiver: an HTTP server serving the model catalog and chat
// completions, and turning each request into spans for the pipelines it feeds.
import type { IncomingMessage, ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';
import type { Logger } from 'pino';
import type { CreateSettings, Host, Receiver, TracesConsumer } from '../../core/component.js';
import { errorMessage } from '../../core/errors.js';
import type { HttpListenerConfig } from '../../core/listener/config.js';
import { CorsPolicy } from '../../core/listener/cors.js';
import { listenerGroupOf } from '../../core/listener/group.js';
import { HttpListener } from '../../core/listener/http-listener.js';
import type { Telemetry } from '../../core/telemetry.js';
import { TraceBatch } from '../../otlp/batch.js';
import type { ExportTraceServiceRequest, KeyValue } from '../../otlp/model.js';
import type { ResolvedProvider } from './attempt.js';
import { ClientLink } from './client-link.js';
import { ApiKeys } from './auth.js';
import { readBody } from './body.js';
import { Catalog } from './catalog.js';
import { handleChat, type ChatEnv } from './chat.js';
import type { GatewayConfig } from './config.js';
import { GatewayHttpError, sendError, sendJson } from './http-error.js';
import { gatewayMetrics, type GatewayMetrics } from './metrics.js';
import { providerAdapters } from './providers/index.js';
import { createRouter } from './routing.js';
import { SpanBatcher } from './span-batcher.js';
import { encodeSpanRequest, type ResourcePairs } from './span-export.js';
import { startServerSpan, toRequest, type SpanRecord } from './spans.js';
import { parseTraceparent } from './trace-context.js';
import { UpstreamAgents } from './upstream.js';

const MODELS_PREFIX = '/v1/models/';
/** Response headers a browser script may read (CORS). */
const EXPOSED_HEADERS = ['x-sluice-provider', 'x-sluice-attempts', 'retry-after'];

/** The in-band event an open stream gets when the shutdown grace is over. */
const SHUTTING_DOWN_EVENT = `data: ${JSON.stringify(
  new GatewayHttpError(503, 'The gateway is shutting down; the stream was cut. Retry the request.', { type: 'api_error', code: 'shutting_down' }).body(),
)}\n\n`;

interface OpenRequest {
  readonly res: ServerResponse;
  readonly client: ClientLink;
}

function ignore(): void {}

type Route =
  | { name: 'models'; route: '/v1/models'; allow: 'GET' }
  | { name: 'model'; route: '/v1/models/{id}'; allow: 'GET'; id: string }
  | { name: 'chat'; route: '/v1/chat/completions'; allow: 'POST' };

function matchRoute(path: string): Route | undefined {
  if (path === '/v1/chat/completions') return { name: 'chat', route: '/v1/chat/completions', allow: 'POST' };
  if (path === '/v1/models') return { name: 'models', route: '/v1/models', allow: 'GET' };
  if (path.startsWith(MODELS_PREFIX) && path.length > MODELS_PREFIX.length) {
    return { name: 'model', route: '/v1/models/{id}', allow: 'GET', id: decodeURIComponent(path.slice(MODELS_PREFIX.length)) };
  }
  return undefined;
}

export function parseEndpoint(endpoint: string): { host: string; port: number } {
  const colon = endpoint.lastIndexOf(':');
  const host = endpoint.slice(0, colon);
  return { host: host.startsWith('[') ? host.slice(1, -1) : host, port: Number(endpoint.slice(colon + 1)) };
}

export class GatewayReceiver implements Receiver {
  readonly #id: string;
  readonly #logger: Logger;
  readonly #next: TracesConsumer;
  readonly #listen: { host: string; port: number };
  readonly #bodyLimit: number;
  readonly #keys: ApiKeys;
  readonly #catalog: Catalog;
  readonly #env: ChatEnv;
  readonly #agents: UpstreamAgents;
  readonly #resource: ResourcePairs;
  readonly #metrics: GatewayMetrics;
  readonly #batcher = new SpanBatcher<SpanRecord>((spans) => this.#emit(spans));
  readonly #limits: HttpListenerConfig;
  readonly #telemetry: Telemetry;
  readonly #cors: CorsPolicy | undefined;
  readonly #open = new Set<OpenRequest>();
  #listener: HttpListener | undefined;
  #stopping: Promise<void> | undefined;

  constructor(settings: CreateSettings, config: GatewayConfig, next: TracesConsumer) {
    this.#id = settings.id;
    this.#logger = settings.logger;
    this.#next = next;
    this.#listen = parseEndpoint(config.endpoint);
    this.#bodyLimit = config.max_request_body_size;
    const { tls, max_connections, read_header_timeout, read_timeout, idle_timeout } = config;
    this.#limits = { ...(tls === undefined ? {} : { tls }), max_connections, read_header_timeout, read_timeout, idle_timeout };
    this.#telemetry = settings.telemetry;
    this.#cors = config.cors === undefined ? undefined : new CorsPolicy(config.cors, ['GET', 'POST'], EXPOSED_HEADERS);
    this.#keys = new ApiKeys(config.api_keys.map((k) => (typeof k === 'string' ? { key: k, requestsPerMinute: undefined } : { key: k.key, requestsPerMinute: k.requests_per_minute })));
    this.#catalog = new Catalog(config.models, Math.floor(Date.now() / 1000));
    this.#metrics = gatewayMetrics(settings.telemetry);
    const providers = new Map<string, ResolvedProvider>();
    for (const [slug, provider] of Object.entries(config.providers)) {
      const adapter = providerAdapters.get(provider.type);
      if (adapter === undefined) continue; // the config schema already refused it
      providers.set(slug, {
        slug,
        config: provider,
        adapter,
        firstByteMs: provider.first_byte_timeout ?? config.first_byte_timeout,
        idleMs: provider.stream_idle_timeout ?? config.stream_idle_timeout,
      });
    }
    this.#agents = new UpstreamAgents(providers.keys());
    const attempts = this.#metrics.attempts;
    const receiver = this.#id;
    this.#env = {
      agents: this.#agents,
      captureContent: config.capture_content,
      router: createRouter(this.#catalog, new Set(providers.keys())),
      providers,
      countAttempt: function countAttempt(provider, outcome) {
        attempts.inc({ receiver, provider, outcome });
      },
    };
    this.#resource = [
      ['service.name', 'sluice'],
      ['deployment.environment.name', config.environment],
    ];
  }

  /** The bound address (for tests that listen on port 0). */
  get address(): AddressInfo | undefined {
    const address = this.#listener?.address;
    return address === undefined ? undefined : { address: address.host, family: address.host.includes(':') ? 'IPv6' : 'IPv4', port: address.port };
  }

  async start(host: Host): Promise<void> {
    const listener = new HttpListener({
      name: this.#id,
      endpoint: this.#listen,
      config: this.#limits,
      telemetry: this.#telemetry,
      handler: (req, res) => {
        this.#handle(req, res);
      },
    });
    listener.onForceClose(() => this.#cutOpenStreams());
    await listener.listen();
    this.#listener = listener;
    listenerGroupOf(host)?.add(listener);
    this.#logger.info({ receiver: this.#id, endpoint: `${this.#listen.host}:${this.address?.port ?? this.#listen.port}`, tls: listener.secure }, 'gateway listening');
  }

  shutdown(): Promise<void> {
    this.#stopping ??= this.#stop();
    return this.#stopping;
  }

  async #stop(): Promise<void> {
    // The service's listener group destroys what is still open when
    // service.shutdown_grace is over; until then streams may finish.
    await this.#listener?.close();
    this.#batcher.flush();
    await this.#agents.close();
  }

  /** Open streams end with an in-band `shutting_down` error; their upstream requests are cancelled. */
  #cutOpenStreams(): void {
    for (const { res, client } of this.#open) {
      // Whole answers are written in one go: a started, unfinished one is a stream.
      if (res.headersSent && !res.writableEnded) {
        // The stream's own loop may still try to write its end: nothing to tell anyone then.
        res.on('error', ignore);
        res.end(SHUTTING_DOWN_EVENT);
      }
      client.close();
    }
  }

  #handle(req: IncomingMessage, res: ServerResponse): void {
    // A preflight is answered before routing and auth (browsers send no key with it).
    if (this.#cors?.handle(req, res) === true) return;
    const started = process.hrtime.bigint();
    const method = req.method ?? 'GET';
    const rawUrl = req.url ?? '/';
    const query = rawUrl.indexOf('?');
    const path = query === -1 ? rawUrl : rawUrl.slice(0, query);
    const route = matchRoute(path);
    const server = startServerSpan(route === undefined ? method : `${method} ${route.route}`, parseTraceparent(header(req, 'traceparent'), header(req, 'tracestate')));
    server.str('http.request.method', method).str('url.path', path);
    if (route !== undefined) server.str('http.route', route.route);
    const spans: SpanRecord[] = [server];
    const client = new ClientLink();
    const open: OpenRequest = { res, client };
    this.#open.add(open);
    const finish = (): void => {
      this.#open.delete(open);
      if (!res.writableFinished) client.close();
      if (res.headersSent) server.int('http.response.status_code', res.statusCode);
      else server.fail('client_closed');
      server.end();
      const label = route?.route ?? 'unknown';
      this.#metrics.requests.inc({ receiver: this.#id, route: label, status: res.headersSent ? String(res.statusCode) : '499' });
      this.#metrics.duration.observe({ receiver: this.#id, route: label }, Number(process.hrtime.bigint() - started) / 1e9);
      this.#batcher.add(spans);
    };
    res.once('close', finish);
    this.#dispatch(req, res, route, method, server, spans, client).catch((err: unknown) => {
      const error = err instanceof GatewayHttpError ? err : internalError(err, this.#logger);
      server.fail(error.spanErrorType, error.message);
      sendError(res, error);
    });
  }

  async #dispatch(req: IncomingMessage, res: ServerResponse, route: Route | undefined, method: string, server: SpanRecord, spans: SpanRecord[], client: ClientLink): Promise<void> {
    if (route === undefined) throw new GatewayHttpError(404, `Unknown route ${method} ${req.url ?? ''}.`, { code: 'not_found' });
    if (method !== route.allow) {
      throw new GatewayHttpError(405, `Method ${method} is not allowed on ${route.route}; use ${route.allow}.`, { code: 'method_not_allowed', headers: { allow: route.allow } });
    }
    this.#keys.authorize(req);
    if (route.name === 'models') return sendJson(res, 200, this.#catalog.listJson);
    if (route.name === 'model') {
      server.str('sluice.model', route.id);
      const record = this.#catalog.recordJson(route.id);
      if (record === undefined) throw new GatewayHttpError(404, `The model \`${route.id}\` does not exist.`, { code: 'model_not_found', param: 'model' });
      return sendJson(res, 200, record);
    }
    const body = await readBody(req, this.#bodyLimit);
    await handleChat(this.#env, body, res, server, spans, client);
  }

  #emit(spans: SpanRecord[]): void {
    const count = spans.length;
    const labels = { receiver: this.#id, transport: 'http' };
    const metrics = this.#metrics;
    const logger = this.#logger;
    const resource = this.#resource;
    function buildModel(): ExportTraceServiceRequest {
      // Processors downstream may rewrite the resource: each batch gets its own copy.
      const attributes: KeyValue[] = resource.map(([key, value]) => ({ key, value: { stringValue: value } }));
      return toRequest(attributes, spans.map((s) => s.toSpan()));
    }
    const batch = TraceBatch.fromOwnProto(encodeSpanRequest(resource, spans), buildModel);
    // Not awaited: the gateway's response never waits for its own spans (DESIGN 9).
    this.#next.consume(batch).then(
      function accepted() {
        metrics.spansAccepted.inc(labels, count);
      },
      function refused(err: unknown) {
        metrics.spansRefused.inc({ ...labels, reason: 'pipeline' }, count);
        logger.warn({ receiver: labels.receiver, err: errorMessage(err) }, 'gateway spans refused by the pipeline');
      },
    );
  }
}

function header(req: IncomingMessage, name: string): string | undefined {
  const value = req.headers[name];
  return Array.isArray(value) ? value[0] : value;
}

function internalError(err: unknown, logger: Logger): GatewayHttpError {
  logger.error({ err: errorMessage(err) }, 'gateway request failed');
  return new GatewayHttpError(500, 'The gateway failed to handle the request.', { type: 'api_error', code: 'internal_error' });
}
