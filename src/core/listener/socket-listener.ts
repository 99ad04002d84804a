// A plain TCP or TLS listener that hands each connection (TLS already
// terminated) to a protocol engine: the gRPC receiver injects them into
// grpc-js. It shares the HTTP listener's TLS, connection cap, counting and
// two-step stop.
import { createServer as createNetServer, type Server as NetServer, type Socket } from 'node:net';
import { createServer as createTlsServer, type TLSSocket } from 'node:tls';
import type { Telemetry } from '../telemetry.js';
import { ConnectionTracker, listenerMetrics } from './connections.js';
import type { Endpoint } from './endpoint.js';
import type { ManagedListener } from './group.js';
import { tlsServerOptions, type TlsMaterial } from './tls.js';

/** A TLS handshake not done by then is abandoned (ms); Node's default is 120 s. */
const HANDSHAKE_TIMEOUT_MS = 10_000;
/** How often silent plaintext connections are looked for (ms). */
const SWEEP_INTERVAL_MS = 1_000;

export interface SocketListenerOptions {
  readonly name: string;
  readonly endpoint: Endpoint;
  readonly tls: TlsMaterial | undefined;
  readonly maxConnections: number;
  /** ALPN protocols offered with TLS (`h2` for gRPC). */
  readonly alpn: readonly string[];
  readonly telemetry: Telemetry;
  readonly onConnection: (socket: Socket | TLSSocket) => void;
}

export class SocketListener implements ManagedListener {
  readonly #server: NetServer;
  readonly #tracker: ConnectionTracker;
  readonly #endpoint: Endpoint;
  readonly #closed: Promise<void>;
  readonly #forceHooks = new Set<() => void>();
  #address: Endpoint | undefined;
  #stopping = false;
  #silentSweep: NodeJS.Timeout | undefined;

  constructor(options: SocketListenerOptions) {
    this.#endpoint = options.endpoint;
    const onConnection = options.onConnection;
    if (options.tls === undefined) {
      this.#server = createNetServer(onConnection);
    } else {
      const server = createTlsServer({ ...tlsServerOptions(options.tls), ALPNProtocols: [...options.alpn], handshakeTimeout: HANDSHAKE_TIMEOUT_MS });
      server.on('secureConnection', onConnection);
      this.#server = server;
    }
    const tracker = new ConnectionTracker(this.#server, options.maxConnections, listenerMetrics(options.telemetry, options.name));
    this.#tracker = tracker;
    const server = this.#server;
    // A plaintext client that connects and never sends a byte (TLS: the handshake timeout).
    if (options.tls === undefined) {
      server.once('listening', () => {
        this.#silentSweep = setInterval(function sweepSilent() {
          tracker.destroySilent(HANDSHAKE_TIMEOUT_MS);
        }, SWEEP_INTERVAL_MS);
        this.#silentSweep.unref();
      });
    }
    this.#closed = new Promise<void>((resolve) => {
      server.once('close', () => {
        clearInterval(this.#silentSweep);
        resolve();
      });
    });
  }

  get address(): Endpoint | undefined {
    return this.#address;
  }

  get connections(): number {
    return this.#tracker.size;
  }

  listen(): Promise<Endpoint> {
    const server = this.#server;
    const { host, port } = this.#endpoint;
    return new Promise<Endpoint>((resolve, reject) => {
      function onError(err: Error): void {
        server.off('listening', onListening);
        reject(err);
      }
      const onListening = (): void => {
        server.off('error', onError);
        const bound = server.address();
        this.#address = { host, port: typeof bound === 'object' && bound !== null ? bound.port : port };
        resolve(this.#address);
      };
      server.once('error', onError);
      server.once('listening', onListening);
      server.listen(port, host);
    });
  }

  onForceClose(hook: () => void): () => void {
    this.#forceHooks.add(hook);
    const hooks = this.#forceHooks;
    return function remove() {
      hooks.delete(hook);
    };
  }

  stopAccepting(): void {
    if (this.#stopping) return;
    this.#stopping = true;
    if (this.#server.listening) this.#server.close();
    else this.#server.emit('close');
  }

  /** Stops accepting; resolves once every connection has closed. */
  close(): Promise<void> {
    this.stopAccepting();
    return this.#closed;
  }

  destroy(): void {
    this.stopAccepting();
    for (const hook of this.#forceHooks) {
      try {
        hook();
      } catch {
        // best effort; the sockets close regardless
      }
    }
    this.#tracker.destroyAll();
  }
}
