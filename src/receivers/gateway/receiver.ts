// The gateway receiver: an HTTP server serving the model catalog and chat
// completions, and turning each request into spans for the pipelines it feeds.
import { createServer, type IncomingMessage, type Server, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';
import type { Logger } from 'pino';
import type { CreateSettings, Host, Receiver, TracesConsumer } from '../../core/component.js';
import { errorMessage } from '../../core/errors.js';
import { TraceBatch } from '../../otlp/batch.js';
import type { ExportTraceServiceRequest, KeyValue } from '../../otlp/model.js';
import type { ResolvedProvider } from './core/attempt.js';
import type { PlanEnv } from './core/attempt-loop.js';
import { Accountant, type AccountKey, type KeyLimits } from '../../usage/accountant.js';
import { UsageMeter } from '../../usage/meter.js';
import { usageMetrics } from '../../usage/metrics.js';
import { ApiKeys, bearerKey, isKey } from './core/auth.js';
import { refusalError } from './core/refusal.js';
import { Catalog } from './core/catalog.js';
import { ClientLink } from './core/client-link.js';
import { GatewayHttpError, sendError } from './core/http-error.js';
import { gatewayMetrics, type GatewayMetrics } from './core/metrics.js';
import type { ErrorFormat, GatewayServices, ProtocolRoute } from './core/protocol.js';
import { forMethod, RouteTable } from './core/route-table.js';
import { createRouter } from './core/routing.js';
import { SpanBatcher } from './core/span-batcher.js';
import { encodeSpanRequest, type ResourcePairs } from './core/span-export.js';
import { startServerSpan, toRequest, type SpanRecord } from './core/spans.js';
import { parseTraceparent } from './core/trace-context.js';
import { UpstreamAgents } from './core/upstream.js';
import { chatErrors } from './chat/answer.js';
import { apiKeyName, type GatewayConfig } from './config.js';
import { providerAdapters } from './providers/index.js';
import { gatewayRoutes } from './routes.js';

/** ms shutdown waits for in-flight responses (long streams) before closing their sockets. */
const SHUTDOWN_GRACE_MS = 30_000;
/** ms an idle client connection stays open; above common client-side pool timeouts. */
const CLIENT_KEEP_ALIVE_MS = 65_000;

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
  readonly #config: GatewayConfig;
  readonly #catalog: Catalog;
  readonly #env: PlanEnv;
  /** Set at start(host): keys and usage accounting use the host's shared state. */
  #services: GatewayServices | undefined;
  readonly #routes = new RouteTable(gatewayRoutes);
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
    this.#config = config;
    const catalog = new Catalog(config.models, Math.floor(Date.now() / 1000));
    this.#catalog = catalog;
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
    const attemptDuration = this.#metrics.attemptDuration;
    const receiver = this.#id;
    this.#env = {
      agents: this.#agents,
      captureContent: config.capture_content,
      router: createRouter(catalog, new Set(providers.keys())),
      providers,
      countAttempt: function countAttempt(provider, outcome) {
        attempts.inc({ receiver, provider, outcome });
      },
      timeAttempt: function timeAttempt(provider, seconds) {
        attemptDuration.observe({ receiver, provider }, seconds);
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
    this.#services = {
      keys: new ApiKeys(this.#config.api_keys.map((entry) => ({ key: typeof entry === 'string' ? entry : entry.key, value: accountant.key(keyLimits(entry)) }))),
      accountant,
      adminApiKey: host.adminApiKey,
      catalog: this.#catalog,
      env: this.#env,
      bodyLimit: this.#config.max_request_body_size,
    };
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
    const queryAt = rawUrl.indexOf('?');
    const path = queryAt === -1 ? rawUrl : rawUrl.slice(0, queryAt);
    const onPath = this.#routes.onPath(path);
    const route = forMethod(onPath, method);
    const routeName = onPath[0]?.route;
    const server = startServerSpan(routeName === undefined ? method : `${method} ${routeName}`, parseTraceparent(header(req, 'traceparent'), header(req, 'tracestate')));
    server.str('http.request.method', method).str('url.path', path);
    if (routeName !== undefined) server.str('http.route', routeName);
    const spans: SpanRecord[] = [server];
    const client = new ClientLink();
    const meter: MeterSlot = { meter: undefined };
    const finish = (): void => {
      meter.meter?.finish(res.headersSent ? res.statusCode : 499);
      if (!res.writableFinished) client.close();
      if (res.headersSent) server.int('http.response.status_code', res.statusCode);
      else server.fail('client_closed');
      server.end();
      const label = routeName ?? 'unknown';
      this.#metrics.requests.inc({ receiver: this.#id, route: label, status: res.headersSent ? String(res.statusCode) : '499' });
      this.#metrics.duration.observe({ receiver: this.#id, route: label }, Number(process.hrtime.bigint() - started) / 1e9);
      this.#batcher.add(spans);
    };
    res.once('close', finish);
    const errors: ErrorFormat = (route ?? onPath[0])?.errors ?? chatErrors;
    this.#dispatch(req, res, route, onPath, method, path, queryAt === -1 ? '' : rawUrl.slice(queryAt + 1), server, spans, client, meter).catch((err: unknown) => {
      const error = err instanceof GatewayHttpError ? err : internalError(err, this.#logger);
      server.fail(error.spanErrorType, error.message);
      sendError(res, error, errors);
    });
  }

  async #dispatch(
    req: IncomingMessage,
    res: ServerResponse,
    route: ProtocolRoute | undefined,
    onPath: readonly ProtocolRoute[],
    method: string,
    path: string,
    query: string,
    server: SpanRecord,
    spans: SpanRecord[],
    client: ClientLink,
    slot: MeterSlot,
  ): Promise<void> {
    if (route === undefined) {
      const first = onPath[0];
      if (first === undefined) throw new GatewayHttpError(404, `Unknown route ${method} ${req.url ?? ''}.`, { code: 'not_found' });
      const allow = onPath.map((r) => r.method).join(', ');
      throw new GatewayHttpError(405, `Method ${method} is not allowed on ${first.route}; use ${allow}.`, { code: 'method_not_allowed', headers: { allow } });
    }
    const services = this.#services as GatewayServices;
    const presented = route.presentedKey === undefined ? bearerKey(req) : route.presentedKey(req);
    if (route.adminKey === true && isKey(presented, services.adminApiKey())) {
      await route.handle(services, { req, res, path, query, server, spans, client, key: ADMIN_KEY, admin: true, meter: undefined });
      return;
    }
    const key = services.keys.authorize(presented);
    const limited = await services.accountant.admitRequest(key);
    if (limited !== undefined) throw refusalError(limited);
    let meter: UsageMeter | undefined;
    if (route.generates === true) {
      const now = Date.now();
      const refused = await services.accountant.admitGeneration(key, now);
      if (refused !== undefined) throw refusalError(refused);
      meter = new UsageMeter(services.accountant, key, now);
      slot.meter = meter;
      // Merged into whatever writeHead the answer (or its error) uses.
      res.setHeader('x-sluice-generation-id', meter.generationId);
    }
    await route.handle(services, { req, res, path, query, server, spans, client, key, admin: false, meter });
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

/** What the admin key is on the routes that take it: no limits, and no records of its own. */
const ADMIN_KEY: AccountKey = { name: 'admin', requests: undefined, tokens: undefined, budget: undefined };

/** The request's usage meter, once its route is known to generate. */
interface MeterSlot {
  meter: UsageMeter | undefined;
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
