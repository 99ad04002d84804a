// The gateway receiver: an HTTP server serving the model catalog and chat
// completions, and turning each request into spans for the pipelines it feeds.
import type { IncomingMessage, ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';
import type { Logger } from 'pino';
import type { CreateSettings, Host, Receiver, TracesConsumer } from '../../core/component.js';
import { errorMessage } from '../../shared/errors.js';
import { leftOutField, LogThrottle } from '../../shared/log-throttle.js';
import { BOUND_PORTS, hostService, LISTENER_GROUP } from '../../core/host-services.js';
import type { HttpListenerConfig } from '../../core/listener/config.js';
import { CorsPolicy } from '../../core/listener/cors.js';
import { HttpListener } from '../../core/listener/http-listener.js';
import { formatEndpoint, listenEndpoint } from '../../core/listener/endpoint.js';
import { listenError } from '../../core/listener/listen-error.js';
import type { Telemetry } from '../../shared/telemetry.js';
import { TraceBatch } from '../../otlp/batch.js';
import type { ResolvedProvider } from './core/attempt.js';
import { SHUTTING_DOWN } from './core/attempt-failure.js';
import { providerSecretsRedactor } from './core/provider-secrets.js';
import type { PlanEnv } from './core/attempt-loop.js';
import { Accountant, type AccountKey, type Admission, type KeyLimits, UNLIMITED } from '../../usage/accountant.js';
import { newGenerationId } from '../../shared/generation-id.js';
import { UsageMeter } from '../../usage/meter.js';
import { usageMetrics } from '../../usage/metrics.js';
import { ApiKeys, bearerKey, isKey } from './core/auth.js';
import { RATE_LIMIT_HEADERS, rateLimitHeaders, refusalError } from './core/refusal.js';
import { Catalog } from './core/catalog.js';
import { ClientLink } from './core/client-link.js';
import { GatewayHttpError, openaiErrors, sendError } from './core/http-error.js';
import { gatewayMetrics, type GatewayMetrics } from './core/metrics.js';
import { SeriesTable, type CounterSeries, type HistogramSeries } from '../../shared/metric-series.js';
import { LinkedSet } from '../../shared/linked-set.js';
import type { ErrorFormat, GatewayServices, ProtocolRoute } from './core/protocol.js';
import { forMethod, RouteTable } from './core/route-table.js';
import { createRouter } from './core/routing.js';
import { SpanBatcher } from './core/span-batcher.js';
import type { ResourcePairs } from './core/span-export.js';
import { recordHttpRequest, serverSpanName } from './core/http-span.js';
import { startServerSpan, type SpanRecord } from './core/spans.js';
import { parseTraceparent, traceContextPropagated } from './core/trace-context.js';
import { UpstreamAgents } from './core/upstream.js';
import { apiKeyName, type GatewayConfig } from './config.js';
import { providerAdapters } from './providers/index.js';
import { gatewayRoutes } from './routes.js';

/**
 * Response headers browser scripts may read (CORS): the generation id is how a page looks up its usage (GET /v1/generation),
 * Anthropic's request-id what its support asks for.
 */
const EXPOSED_HEADERS = ['x-sluice-provider', 'x-sluice-attempts', 'x-sluice-generation-id', 'retry-after', 'x-should-retry', 'request-id', ...RATE_LIMIT_HEADERS];

/**
 * What an open stream is told, in its protocol's error event, when the
 * shutdown grace is over. Made when needed, not once as the module loads: the
 * module loads while the first graph starts (factory.ts), and an Error made
 * then keeps its async stack, that graph and all its components with it, for
 * the process's life.
 */
function shuttingDown(): GatewayHttpError {
  return new GatewayHttpError(503, 'The gateway is shutting down; the stream was cut. Retry the request.', { type: 'api_error', code: SHUTTING_DOWN });
}

interface OpenRequest {
  readonly res: ServerResponse;
  readonly client: ClientLink;
  readonly errors: ErrorFormat;
}

function ignore(): void {}

export class GatewayReceiver implements Receiver {
  readonly #id: string;
  readonly #logger: Logger;
  /** A full disk refuses every request's spans: one line per interval says so. */
  readonly #spansRefused = new LogThrottle();
  readonly #next: TracesConsumer;
  readonly #listen: { host: string; port: number };
  readonly #config: GatewayConfig;
  readonly #catalog: Catalog;
  readonly #env: PlanEnv;
  /** Set at start(host): keys and usage accounting use the host's shared state. */
  #services: GatewayServices | undefined;
  readonly #routes = new RouteTable(gatewayRoutes);
  readonly #agents: UpstreamAgents;
  /** Whether W3C Trace Context is read from clients and sent upstream (OTEL_PROPAGATORS). */
  readonly #traceContext: boolean;
  readonly #batcher: SpanBatcher;
  readonly #metrics: GatewayMetrics;
  readonly #requestSeries: SeriesTable<CounterSeries>;
  readonly #durationSeries: SeriesTable<HistogramSeries>;
  readonly #limits: HttpListenerConfig;
  readonly #telemetry: Telemetry;
  readonly #cors: CorsPolicy | undefined;
  /** Not a Set: see LinkedSet for why a Set of requests fills the old generation. */
  readonly #open = new LinkedSet<OpenRequest>();
  /** Called when the last open request closes, while stopping. */
  #lastClosed: (() => void) | undefined;
  /** Span batches handed downstream and not yet settled: the exporters stop only after these. */
  readonly #emitting = new Set<Promise<void>>();
  #listener: HttpListener | undefined;
  #stopping: Promise<void> | undefined;

  constructor(settings: CreateSettings, config: GatewayConfig, next: TracesConsumer) {
    this.#id = settings.id;
    this.#logger = settings.logger;
    this.#next = next;
    this.#listen = listenEndpoint(config.endpoint);
    const { tls, max_connections, read_header_timeout, read_timeout, idle_timeout } = config;
    this.#limits = { ...(tls === undefined ? {} : { tls }), max_connections, read_header_timeout, read_timeout, idle_timeout };
    this.#telemetry = settings.telemetry;
    this.#cors = config.cors === undefined ? undefined : new CorsPolicy(config.cors, ['GET', 'POST'], EXPOSED_HEADERS);
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
        redact: providerSecretsRedactor(provider),
      });
    }
    this.#traceContext = traceContextPropagated();
    this.#agents = new UpstreamAgents(providers.keys(), this.#traceContext);
    const receiver = this.#id;
    const metrics = this.#metrics;
    const attempts = new SeriesTable((provider, outcome) => metrics.attempts.series({ receiver, provider, outcome }));
    const attemptDuration = new SeriesTable((provider) => metrics.attemptDuration.series({ receiver, provider }));
    this.#requestSeries = new SeriesTable((route, status) => metrics.requests.series({ receiver, route, status }));
    this.#durationSeries = new SeriesTable((route) => metrics.duration.series({ receiver, route }));
    this.#env = {
      agents: this.#agents,
      captureContent: config.capture_content,
      router: createRouter(catalog, new Set(providers.keys())),
      providers,
      countAttempt: function countAttempt(provider, outcome) {
        attempts.get(provider, outcome).inc();
      },
      timeAttempt: function timeAttempt(provider, seconds) {
        attemptDuration.get(provider).observe(seconds);
      },
    };
    const resource: ResourcePairs = [
      ['service.name', 'sluice'],
      ['deployment.environment.name', config.environment],
    ];
    this.#batcher = new SpanBatcher({
      resource,
      emit: (request, spans) => this.#emit(request, spans),
      dropped: (err) => {
        this.#metrics.spansRefused.inc({ receiver: this.#id, transport: 'http', reason: 'encoding' }, 1);
        this.#logger.error({ receiver: this.#id, err: errorMessage(err) }, 'a gateway span could not be encoded and was left out');
      },
    });
  }

  /** The bound address (for tests that listen on port 0). */
  get address(): AddressInfo | undefined {
    const address = this.#listener?.address;
    return address === undefined ? undefined : { address: address.host, family: address.host.includes(':') ? 'IPv6' : 'IPv4', port: address.port };
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
    try {
      await listener.listen(hostService(host, BOUND_PORTS));
    } catch (err) {
      throw listenError(`receivers.${this.#id}.endpoint`, formatEndpoint(this.#listen.host, this.#listen.port), err);
    }
    this.#listener = listener;
    hostService(host, LISTENER_GROUP)?.add(listener);
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
    // A connection destroyed when the grace is over closes its request only
    // after the listener reports closed: its spans come then.
    await this.#requestsClosed();
    this.#batcher.flush();
    await Promise.all(this.#emitting);
    await this.#agents.close();
  }

  #requestsClosed(): Promise<void> {
    if (this.#open.size === 0) return Promise.resolve();
    return new Promise((resolve) => {
      this.#lastClosed = resolve;
    });
  }

  /** Open streams end with an in-band `shutting_down` error; their upstream requests are cancelled. */
  #cutOpenStreams(): void {
    for (const { res, client, errors } of this.#open) {
      // Whole answers are written in one go: a started, unfinished one is a stream.
      if (res.headersSent && !res.writableEnded) {
        // The stream's own loop may still try to write its end: nothing to tell anyone then.
        res.on('error', ignore);
        res.end(errors.streamEvent(shuttingDown()));
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
    const queryAt = rawUrl.indexOf('?');
    const path = queryAt === -1 ? rawUrl : rawUrl.slice(0, queryAt);
    const onPath = this.#routes.onPath(path);
    const route = forMethod(onPath, method);
    const routeName = onPath[0]?.route;
    const server = startServerSpan(serverSpanName(method, routeName), this.#traceContext ? parseTraceparent(header(req, 'traceparent'), header(req, 'tracestate')) : undefined);
    recordHttpRequest(server, req, method, path, queryAt === -1 ? undefined : rawUrl.slice(queryAt + 1));
    if (routeName !== undefined) server.str('http.route', routeName);
    const spans: SpanRecord[] = [server];
    const client = new ClientLink();
    const errors: ErrorFormat = (route ?? onPath[0])?.errors ?? openaiErrors;
    const open: OpenRequest = { res, client, errors };
    const openLink = this.#open.add(open);
    const meter: MeterSlot = { generationId: undefined, meter: undefined };
    // The generation is recorded once the response has closed and every attempt has settled
    // (an attempt charges its usage as it ends, which may come after the client's last byte).
    let closedStatus: number | undefined;
    let settled = false;
    const recordGeneration = (): void => {
      if (closedStatus !== undefined && settled) meter.meter?.finish(closedStatus);
    };
    const finish = (): void => {
      this.#open.delete(openLink);
      if (this.#open.size === 0) this.#lastClosed?.();
      closedStatus = res.headersSent ? res.statusCode : 499;
      recordGeneration();
      if (!res.writableFinished) client.close();
      if (res.headersSent) server.int('http.response.status_code', res.statusCode);
      else server.fail('client_closed');
      server.end();
      const label = routeName ?? 'unknown';
      this.#requestSeries.get(label, res.headersSent ? String(res.statusCode) : '499').inc();
      this.#durationSeries.get(label).observe(Number(process.hrtime.bigint() - started) / 1e9);
      this.#batcher.add(spans);
    };
    // 'close' is emitted once: on() spares the once() wrapper and its removal.
    res.on('close', finish);
    const settle = (): void => {
      settled = true;
      recordGeneration();
    };
    // One reaction for both outcomes: .catch().finally() would cost four more promises per request.
    this.#dispatch(req, res, route, onPath, method, path, queryAt === -1 ? '' : rawUrl.slice(queryAt + 1), server, spans, client, meter).then(settle, (err: unknown) => {
      try {
        const error = err instanceof GatewayHttpError ? err : internalError(err, this.#logger);
        if (error.status < 500) server.refuse(error.spanErrorType);
        else server.fail(error.spanErrorType, error.message);
        const generationId = meter.generationId;
        sendError(res, generationId === undefined ? error : error.withHeaders({ 'x-sluice-generation-id': generationId }), errors);
      } finally {
        settle();
      }
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
      const allow = onPath.flatMap((r) => (r.method === 'GET' ? ['GET', 'HEAD'] : [r.method])).join(', ');
      throw new GatewayHttpError(405, `Method ${method} is not allowed on ${first.route}; use ${allow}.`, { code: 'method_not_allowed', headers: { allow } });
    }
    const services = this.#services as GatewayServices;
    const now = Date.now();
    // Named before the key is checked: every answer of a model route carries it, a refusal too (not recorded: nothing reached an upstream).
    if (route.generates === true) slot.generationId = newGenerationId(now);
    const presented = route.presentedKey === undefined ? bearerKey(req) : route.presentedKey(req);
    if (route.adminKey === true && isKey(presented, services.adminApiKey())) {
      await route.handle(services, { req, res, path, query, server, spans, client, key: ADMIN_KEY, admin: true, meter: undefined });
      return;
    }
    const key = services.keys.authorize(presented);
    // Every limit is asked at once: in cluster mode their Redis commands share one round trip's wait.
    // A key without limits skips the asking (and its promises) altogether.
    const [requests, generation] = !limitedKey(key)
      ? NOT_LIMITED
      : await Promise.all([services.accountant.admitRequest(key), route.generates === true ? services.accountant.admitGeneration(key, now) : UNLIMITED]);
    const limits = rateLimitHeaders(requests.allowance, generation.allowance);
    if (requests.refusal !== undefined) throw refusalError(requests.refusal, limits);
    let meter: UsageMeter | undefined;
    if (route.generates === true) {
      if (generation.refusal !== undefined) throw refusalError(generation.refusal, limits);
      meter = new UsageMeter(services.accountant, key, now, slot.generationId);
      meter.limits = limits;
      // Answers name it in their head (answer-head.ts), errors as they are sent.
      slot.meter = meter;
    }
    await route.handle(services, { req, res, path, query, server, spans, client, key, admin: false, meter });
  }

  #emit(request: Uint8Array, count: number): void {
    const labels = { receiver: this.#id, transport: 'http' };
    const metrics = this.#metrics;
    const logger = this.#logger;
    const refusals = this.#spansRefused;
    const batch = TraceBatch.fromOwnProto(request);
    const emitting = this.#emitting;
    // Not awaited: the gateway's response never waits for its own spans (DESIGN 9).
    const settled = this.#next.consume(batch).then(
      function accepted() {
        metrics.spansAccepted.inc(labels, count);
        emitting.delete(settled);
      },
      function refused(err: unknown) {
        metrics.spansRefused.inc({ ...labels, reason: 'pipeline' }, count);
        refusals.run(function logRefusal(leftOut) {
          logger.warn({ receiver: labels.receiver, err: errorMessage(err), ...leftOutField(leftOut) }, 'gateway spans refused by the pipeline');
        });
        emitting.delete(settled);
      },
    );
    emitting.add(settled);
  }
}

const NOT_LIMITED: readonly [Admission, Admission] = [UNLIMITED, UNLIMITED];

function limitedKey(key: AccountKey): boolean {
  return key.requests !== undefined || key.tokens !== undefined || key.budget !== undefined;
}

/** What the admin key is on the routes that take it: no limits, and no records of its own. */
const ADMIN_KEY: AccountKey = { name: 'admin', requests: undefined, tokens: undefined, budget: undefined };

/** The request's usage meter, once its route is known to generate. */
interface MeterSlot {
  /** Set first, on model routes: what refusals before the meter exists are named by. */
  generationId: string | undefined;
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
