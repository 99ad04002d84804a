// The gateway receiver: an HTTP server serving the model catalog and chat
// completions, and turning each request into spans for the pipelines it feeds.
import { createServer, type IncomingMessage, type Server, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';
import type { Logger } from 'pino';
import type { CreateSettings, Host, Receiver, TracesConsumer } from '../../core/component.js';
import { errorMessage } from '../../core/errors.js';
import { TraceBatch } from '../../otlp/batch.js';
import type { ExportTraceServiceRequest, KeyValue } from '../../otlp/model.js';
import type { ResolvedProvider } from './attempt.js';
import { ClientLink } from './client-link.js';
import { Accountant, type AccountKey, type KeyLimits } from '../../usage/accountant.js';
import { usageMetrics } from '../../usage/metrics.js';
import { ApiKeys } from './auth.js';
import { refusalError } from './refusal.js';
import { readBody } from './body.js';
import { Catalog } from './catalog.js';
import { handleChat, type ChatEnv } from './chat.js';
import { apiKeyName, type GatewayConfig } from './config.js';
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
/** ms shutdown waits for in-flight responses (long streams) before closing their sockets. */
const SHUTDOWN_GRACE_MS = 30_000;
/** ms an idle client connection stays open; above common client-side pool timeouts. */
const CLIENT_KEEP_ALIVE_MS = 65_000;

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
  readonly #apiKeys: GatewayConfig['api_keys'];
  /** Set at start(host): the keys' limits use the host's shared state. */
  #keys: ApiKeys<AccountKey> | undefined;
  #accountant: Accountant | undefined;
  readonly #catalog: Catalog;
  readonly #env: ChatEnv;
  readonly #agents: UpstreamAgents;
  readonly #resource: ResourcePairs;
  readonly #metrics: GatewayMetrics;
  readonly #batcher = new SpanBatcher<SpanRecord>((spans) => this.#emit(spans));
  #server: Server | undefined;
  #stopping: Promise<void> | undefined;

  constructor(settings: CreateSettings, config: GatewayConfig, next: TracesConsumer) {
    this.#id = settings.id;
    this.#logger = settings.logger;
    this.#next = next;
    this.#listen = parseEndpoint(config.endpoint);
    this.#bodyLimit = config.max_request_body_size;
    this.#apiKeys = config.api_keys;
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
    const address = this.#server?.address();
    return typeof address === 'object' && address !== null ? address : undefined;
  }

  async start(host: Host): Promise<void> {
    const [ledger, generations] = await Promise.all([host.state.spendLedger(), host.state.generationStore()]);
    const accountant = new Accountant({ rateLimiter: (options) => host.state.rateLimiter(options), ledger, generations, metrics: usageMetrics(host.telemetry), logger: this.#logger });
    this.#accountant = accountant;
    this.#keys = new ApiKeys(this.#apiKeys.map((entry) => ({ key: typeof entry === 'string' ? entry : entry.key, value: accountant.key(keyLimits(entry)) })));
    const server = createServer((req, res) => {
      this.#handle(req, res);
    });
    server.keepAliveTimeout = CLIENT_KEEP_ALIVE_MS;
    this.#server = server;
    const { host: address, port } = this.#listen;
    await new Promise<void>(function listen(resolve, reject) {
      server.once('error', reject);
      server.listen(port, address, function listening() {
        server.off('error', reject);
        resolve();
      });
    });
    this.#logger.info({ receiver: this.#id, endpoint: `${this.#listen.host}:${this.address?.port ?? this.#listen.port}` }, 'gateway listening');
  }

  shutdown(): Promise<void> {
    this.#stopping ??= this.#stop();
    return this.#stopping;
  }

  async #stop(): Promise<void> {
    const server = this.#server;
    if (server !== undefined) {
      let grace: NodeJS.Timeout | undefined;
      try {
        await new Promise<void>(function close(resolve) {
          server.close(() => resolve());
          server.closeIdleConnections();
          grace = setTimeout(() => server.closeAllConnections(), SHUTDOWN_GRACE_MS);
        });
      } finally {
        clearTimeout(grace);
      }
    }
    this.#batcher.flush();
    await this.#agents.close();
  }

  #handle(req: IncomingMessage, res: ServerResponse): void {
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
    const finish = (): void => {
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
    const keys = this.#keys as ApiKeys<AccountKey>;
    const accountant = this.#accountant as Accountant;
    const key = keys.authorize(req);
    const refused = await accountant.admitRequest(key);
    if (refused !== undefined) throw refusalError(refused);
    if (route.name === 'models') return sendJson(res, 200, this.#catalog.listJson);
    if (route.name === 'model') {
      server.str('sluice.model', route.id);
      const record = this.#catalog.recordJson(route.id);
      if (record === undefined) throw new GatewayHttpError(404, `The model \`${route.id}\` does not exist.`, { code: 'model_not_found', param: 'model' });
      return sendJson(res, 200, record);
    }
    const overBudget = await accountant.admitGeneration(key, Date.now());
    if (overBudget !== undefined) throw refusalError(overBudget);
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

function keyLimits(entry: GatewayConfig['api_keys'][number]): KeyLimits {
  if (typeof entry === 'string') return { name: apiKeyName(entry), requestsPerMinute: undefined, tokensPerMinute: undefined, budget: undefined };
  return { name: apiKeyName(entry), requestsPerMinute: entry.requests_per_minute, tokensPerMinute: entry.tokens_per_minute, budget: entry.budget };
}

function header(req: IncomingMessage, name: string): string | undefined {
  const value = req.headers[name];
  return Array.isArray(value) ? value[0] : value;
}

function internalError(err: unknown, logger: Logger): GatewayHttpError {
  logger.error({ err: errorMessage(err) }, 'gateway request failed');
  return new GatewayHttpError(500, 'The gateway failed to handle the request.', { type: 'api_error', code: 'internal_error' });
}
