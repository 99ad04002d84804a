// A plain TCP or TLS listener that hands each connection (TLS already
// terminated) to a protocol engine: the gRPC receiver injects them into
// grpc-js. It shares the HTTP listener's TLS, connection cap, counting and
// two-step stop.
import { createServer as createNetServer, type Server as NetServer, type Socket } from 'node:net';
import { createServer as createTlsServer, type TLSSocket } from 'node:tls';
import { ListenerPort, type PortKeeper } from './bound-ports.js';
import { ConnectionTracker, listenerMetrics, type ListenerTelemetry } from './connections.js';
import type { Endpoint } from './endpoint.js';
import type { ManagedListener } from './group.js';
import { tlsServerOptions, type TlsMaterial } from './tls.js';

/** How often silent plaintext connections are looked for (ms). */
const SWEEP_INTERVAL_MS = 1_000;

export interface SocketListenerOptions {
  readonly name: string;
  readonly endpoint: Endpoint;
  readonly tls: TlsMaterial | undefined;
  readonly maxConnections: number;
  /**
   * A connection that completed no TLS handshake by then is closed (ms), as is
   * one that has not sent `minFirstBytes` by then (plaintext: since it was
   * accepted; TLS: since its handshake).
   */
  readonly silentTimeoutMs: number;
  /** Bytes a connection must have sent by silentTimeoutMs (HTTP/2's preface for gRPC). */
  readonly minFirstBytes?: number;
  /** ALPN protocols offered with TLS (`h2` for gRPC). */
  readonly alpn: readonly string[];
  readonly telemetry: ListenerTelemetry;
  readonly onConnection: (socket: Socket | TLSSocket) => void;
}

export class SocketListener implements ManagedListener {
  readonly #name: string;
  /** Never bound itself: its port (bound-ports.ts) hands it the connections. */
  readonly #server: NetServer;
  readonly #tracker: ConnectionTracker;
  readonly #endpoint: Endpoint;
  /** Set by stopAccepting(): resolves once every connection has closed. */
  #closed: Promise<void> | undefined;
  #port: ListenerPort | undefined;
  #stopping = false;
  #silentSweep: NodeJS.Timeout | undefined;

  constructor(options: SocketListenerOptions) {
    this.#name = options.name;
    this.#endpoint = options.endpoint;
    const onConnection = options.onConnection;
    const silentMs = options.silentTimeoutMs;
    const minBytes = options.minFirstBytes ?? 1;
    if (options.tls === undefined) {
      this.#server = createNetServer(onConnection);
    } else {
      const server = createTlsServer({ ...tlsServerOptions(options.tls), ALPNProtocols: [...options.alpn], handshakeTimeout: silentMs });
      // The TCP socket's bytes include the handshake's: the TLS socket counts what the client sent over it.
      server.on('secureConnection', function awaitFirstBytes(socket: TLSSocket) {
        const timer = setTimeout(function silentTooLong() {
          if (socket.bytesRead < minBytes) socket.destroy();
        }, silentMs);
        timer.unref();
        socket.once('close', () => clearTimeout(timer));
      });
      server.on('secureConnection', onConnection);
      this.#server = server;
    }
    const tracker = new ConnectionTracker(this.#server, options.maxConnections, listenerMetrics(options.telemetry, options.name, options.tls !== undefined));
    this.#tracker = tracker;
    const server = this.#server;
    // A plaintext client that connects and never sends a byte (TLS: the handshake timeout).
    if (options.tls === undefined) {
      server.once('listening', () => {
        this.#silentSweep = setInterval(function sweepSilent() {
          tracker.destroySilent(silentMs, minBytes);
        }, SWEEP_INTERVAL_MS);
        this.#silentSweep.unref();
      });
    }
  }

  get address(): Endpoint | undefined {
    return this.#port?.address;
  }

  get connections(): number {
    return this.#tracker.size;
  }

  /** Binds the endpoint, or with `ports` takes the port a previous listener there left (a reload). */
  async listen(ports?: PortKeeper): Promise<Endpoint> {
    const port = await ListenerPort.open(this.#server, this.#name, this.#endpoint, ports, () => this.#stopping);
    this.#port = port;
    return port.address;
  }

  onForceClose(hook: () => void): () => void {
    return this.#tracker.onForceClose(hook);
  }

  stopAccepting(): void {
    if (this.#stopping) return;
    this.#stopping = true;
    this.#port?.release();
    this.#closed = this.#tracker.drained().then(() => {
      clearInterval(this.#silentSweep);
    });
  }

  /** Stops accepting; resolves once every connection has closed. */
  close(): Promise<void> {
    this.stopAccepting();
    return this.#closed ?? Promise.resolve();
  }

  destroy(): void {
    this.stopAccepting();
    this.#tracker.runForceHooks();
    this.#tracker.destroyAll();
  }
}
