// One HTTP(S) listener with the limits of DESIGN section 10: TLS, header,
// request and idle timeouts, a connection cap, open connections counted, and
// a two-step stop (stop accepting; destroy what is left when the grace period
// is over) that no client can hold up.
import { createServer as createHttpServer, type IncomingMessage, type Server as HttpServer, type ServerOptions, type ServerResponse } from 'node:http';
import { createServer as createHttpsServer, type Server as HttpsServer } from 'node:https';
import type { HttpListenerConfig } from './config.js';
import { ListenerPort, type PortKeeper } from './bound-ports.js';
import { ConnectionTracker, listenerMetrics, type ListenerTelemetry } from './connections.js';
import type { Endpoint } from './endpoint.js';
import type { ManagedListener } from './group.js';
import { KeepAliveDeadline } from './keep-alive-deadline.js';
import { tlsServerOptions } from './tls.js';
import { LinkedSet } from '../../shared/linked-set.js';

/** How often Node checks header and request timeouts (its default, 30 s, would let a 10 s limit run to 40 s). */
const TIMEOUT_CHECK_INTERVAL_MS = 1_000;
/** While stopping, connections that fall idle after answering are closed this often (ms). */
const IDLE_SWEEP_MS = 100;
/**
 * While stopping, a connection is closed as idle only once it has been so
 * for this long (ms): a client answered just before the stop was told the
 * connection stays open, and its next request, sent at once, is answered
 * (with `Connection: close`) rather than met by a reset. A reload's new
 * connections wait at the port for at most this much longer.
 */
const STOP_LINGER_MS = 500;

export type RequestHandler = (req: IncomingMessage, res: ServerResponse) => void;

export interface HttpListenerOptions {
  /** The `listener` label of its metrics: `otlp/http`, `gateway`, `admin`. */
  readonly name: string;
  readonly endpoint: Endpoint;
  readonly config: HttpListenerConfig;
  readonly telemetry: ListenerTelemetry;
  readonly handler: RequestHandler;
}

export class HttpListener implements ManagedListener {
  readonly #name: string;
  /** Never bound itself: its port (bound-ports.ts) hands it the connections. */
  readonly #server: HttpServer | HttpsServer;
  readonly #tracker: ConnectionTracker;
  readonly #endpoint: Endpoint;
  /** Not a Set: see LinkedSet for why a Set of requests fills the old generation. */
  readonly #inFlight = new LinkedSet<ServerResponse>();
  /** Set by stopAccepting(): resolves once every connection has closed. */
  #closed: Promise<void> | undefined;
  #port: ListenerPort | undefined;
  #stopping = false;
  #idleSweep: NodeJS.Timeout | undefined;
  #keepAliveSweep: NodeJS.Timeout | undefined;

  constructor(options: HttpListenerOptions) {
    const { config } = options;
    this.#name = options.name;
    this.#endpoint = options.endpoint;
    // As Go's http.Server (the collector's confighttp): no idle timeout falls back to the read timeout.
    const idleMs = config.idle_timeout === 0 ? config.read_timeout : config.idle_timeout;
    const serverOptions: ServerOptions = {
      headersTimeout: config.read_header_timeout,
      requestTimeout: config.read_timeout,
      keepAliveTimeout: idleMs,
      connectionsCheckingInterval: TIMEOUT_CHECK_INTERVAL_MS,
    };
    const handler = options.handler;
    const inFlight = this.#inFlight;
    let keepAlive: KeepAliveDeadline | undefined;
    const handle = (req: IncomingMessage, res: ServerResponse): void => {
      const socket = req.socket;
      keepAlive?.requestStarted(socket);
      // A request answered while stopping closes its connection after the
      // answer (`Connection: close`), so no client reuses it.
      const link = this.#stopping ? undefined : inFlight.add(res);
      if (link === undefined) res.shouldKeepAlive = false;
      // 'close' is emitted once: on() spares the once() wrapper and its removal.
      res.on('close', function answered() {
        if (link !== undefined) inFlight.delete(link);
        keepAlive?.requestEnded(socket);
      });
      handler(req, res);
    };
    this.#server =
      config.tls === undefined
        ? createHttpServer(serverOptions, handle)
        : createHttpsServer({ ...serverOptions, ...tlsServerOptions(config.tls), handshakeTimeout: config.read_header_timeout }, handle);
    this.#server.keepAliveTimeout = idleMs;
    // A client that sent `Expect: 100-continue` is told to go on once its
    // body is read (every reader here takes it with on('data'), which resumes
    // the stream), not at once as Node would: a request refused on its
    // headers alone (401, 413, 415) is answered before its body is uploaded.
    this.#server.on('checkContinue', function continueOnRead(req: IncomingMessage, res: ServerResponse) {
      req.once('resume', function bodyWanted() {
        if (!res.headersSent) res.writeContinue();
      });
      handle(req, res);
    });
    const deadline = new KeepAliveDeadline(
      this.#server,
      idleMs > 0 ? idleMs + config.read_header_timeout : Infinity,
      config.read_header_timeout + TIMEOUT_CHECK_INTERVAL_MS,
      config.tls !== undefined,
    );
    keepAlive = deadline;
    // Node's own, which server.close() calls too, cuts answers still being written (keep-alive-deadline.ts).
    // Called only once stopping: a connection answered in the last STOP_LINGER_MS is left for its next request.
    this.#server.closeIdleConnections = function closeIdleConnections() {
      deadline.closeIdle(STOP_LINGER_MS);
    };
    if (idleMs > 0) {
      this.#server.once('listening', () => {
        this.#keepAliveSweep = setInterval(function sweepKeepAlive() {
          deadline.sweep();
        }, TIMEOUT_CHECK_INTERVAL_MS);
        this.#keepAliveSweep.unref();
      });
    }
    // A client that connects and sends nothing is closed by Node's header
    // timeout too (408), and over TLS by the handshake timeout.
    this.#tracker = new ConnectionTracker(this.#server, config.max_connections, listenerMetrics(options.telemetry, options.name, config.tls !== undefined));
  }

  /** The bound address once listening (port 0 resolved). */
  get address(): Endpoint | undefined {
    return this.#port?.address;
  }

  get secure(): boolean {
    return 'setSecureContext' in this.#server;
  }

  /** Open connections. */
  get connections(): number {
    return this.#tracker.size;
  }

  /**
   * Binds the endpoint, or with `ports` takes the port a previous listener
   * there left (a reload). Rejects with the bind error (EADDRINUSE, ...);
   * callers name the listener.
   */
  async listen(ports?: PortKeeper): Promise<Endpoint> {
    const port = await ListenerPort.open(this.#server, this.#name, this.#endpoint, ports, () => this.#stopping);
    this.#port = port;
    return port.address;
  }

  /**
   * Runs just before a forced close destroys the connections: the place to
   * send last words (a stream's in-band error). Returns the remover.
   */
  onForceClose(hook: () => void): () => void {
    return this.#tracker.onForceClose(hook);
  }

  stopAccepting(): void {
    if (this.#stopping) return;
    this.#stopping = true;
    for (const res of this.#inFlight) if (!res.headersSent) res.shouldKeepAlive = false;
    this.#inFlight.clear();
    this.#port?.release();
    const server = this.#server;
    // Never bound: close() only stops Node's timeout checks and closes the idle connections.
    server.close();
    this.#idleSweep = setInterval(function sweep() {
      server.closeIdleConnections();
    }, IDLE_SWEEP_MS);
    this.#idleSweep.unref();
    this.#closed = this.#tracker.drained().then(() => {
      clearInterval(this.#idleSweep);
      clearInterval(this.#keepAliveSweep);
    });
  }

  /** Stops accepting; resolves once every connection has closed (forced by destroy()). */
  close(): Promise<void> {
    this.stopAccepting();
    return this.#closed ?? Promise.resolve();
  }

  destroy(): void {
    this.stopAccepting();
    this.#tracker.runForceHooks();
    // The hooks' writes reach the sockets first.
    setImmediate(() => this.#tracker.destroyAll());
  }
}
