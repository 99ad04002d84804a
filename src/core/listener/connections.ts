// Open connections of one listener: counted, capped and destroyable. Every
// listener (http, https, net, tls servers alike) is a net.Server underneath,
// so one tracker serves them all. Beyond max_connections the kernel's
// connection is closed at once by Node ('drop') and counted; over TLS, so is
// a handshake that fails (no or an untrusted client certificate under mTLS,
// no shared protocol version, a timeout).
import type { Server } from 'node:net';
import type { Socket } from 'node:net';
import type { Endpoint } from './endpoint.js';

export interface ListenerMetrics {
  opened(): void;
  closed(): void;
  refused(): void;
  handshakeFailed(): void;
}

/**
 * What a listener needs of the service's metrics registry; shared/telemetry.ts's
 * Telemetry provides it. Named here so the listener layer imports nothing above it.
 */
export interface ListenerTelemetry {
  gauge(name: string, help: string, labelNames: readonly ['listener']): { labels(labels: { listener: string }): { inc(value?: number): void; dec(): void } };
  counter(name: string, help: string, labelNames: readonly ['listener']): { labels(labels: { listener: string }): { inc(value?: number): void } };
}

/**
 * Each listener's series exist from its start, at 0, as the collector's do:
 * a series that appears only with its first event reads as no data (an alert
 * on refused connections never sees the first ones). `secure`: the listener
 * terminates TLS, so its handshake failures are such a series too.
 */
export function listenerMetrics(telemetry: ListenerTelemetry, listener: string, secure = false): ListenerMetrics {
  const open = telemetry.gauge('sluice_listener_connections', 'Connections open on a listener.', ['listener']).labels({ listener });
  const refused = telemetry.counter('sluice_listener_connections_refused_total', 'Connections a listener closed at once because max_connections were open.', ['listener']).labels({ listener });
  const failedHandshakes = telemetry
    .counter('sluice_listener_tls_handshake_failures_total', 'TLS connections a listener closed because the handshake failed (under mTLS: no or an untrusted client certificate).', ['listener'])
    .labels({ listener });
  open.inc(0);
  refused.inc(0);
  if (secure) failedHandshakes.inc(0);
  return {
    opened() {
      open.inc();
    },
    closed() {
      open.dec();
    },
    refused() {
      refused.inc();
    },
    handshakeFailed() {
      failedHandshakes.inc();
    },
  };
}

/**
 * Binds the server; rejects with the bind error (EADDRINUSE, ...). Resolves
 * the bound address (port 0 resolved). As many connections as the server
 * admits (its maxConnections) may wait to be accepted, as in Go's listeners
 * (the kernel caps it at net.core.somaxconn): past Node's default of 511, a
 * burst of connections while the loop was busy left clients retransmitting
 * for seconds, and some were reset.
 */
export function listenOn(server: Server, endpoint: Endpoint): Promise<Endpoint> {
  const { host, port } = endpoint;
  return new Promise<Endpoint>((resolve, reject) => {
    function onError(err: Error): void {
      server.off('listening', onListening);
      reject(err);
    }
    function onListening(): void {
      server.off('error', onError);
      const bound = server.address();
      resolve({ host, port: typeof bound === 'object' && bound !== null ? bound.port : port });
    }
    server.once('error', onError);
    server.once('listening', onListening);
    server.listen({ port, host, backlog: Number.isFinite(server.maxConnections) ? server.maxConnections : undefined });
  });
}

/** How long a connection this side has ended may wait for the peer to close its own (ms). */
export const HALF_CLOSED_GRACE_MS = 5_000;

/**
 * Once this side has ended a connection (an idle keep-alive closed, a gRPC
 * GOAWAY), a peer that never closes its own side does not keep the slot:
 * the socket is destroyed HALF_CLOSED_GRACE_MS later.
 */
function closeBehindOurEnd(socket: Socket): void {
  socket.once('finish', function ended() {
    const timer = setTimeout(() => socket.destroy(), HALF_CLOSED_GRACE_MS);
    timer.unref();
    socket.once('close', () => clearTimeout(timer));
  });
}

export class ConnectionTracker {
  /** Open sockets and when each was accepted (ms). */
  readonly #sockets = new Map<Socket, number>();
  readonly #forceHooks = new Set<() => void>();
  /** Called once no connection is open: see drained(). */
  #whenDrained: (() => void) | undefined;

  constructor(server: Server, maxConnections: number, metrics: ListenerMetrics) {
    server.maxConnections = maxConnections;
    const sockets = this.#sockets;
    server.on('connection', (socket: Socket) => {
      sockets.set(socket, Date.now());
      metrics.opened();
      socket.once('close', () => {
        sockets.delete(socket);
        metrics.closed();
        if (sockets.size > 0) return;
        const drained = this.#whenDrained;
        this.#whenDrained = undefined;
        drained?.();
      });
      closeBehindOurEnd(socket);
    });
    // Over TLS the application ends the TLS socket: the TCP socket under it never emits 'finish'.
    server.on('secureConnection', closeBehindOurEnd);
    server.on('drop', function refuse() {
      metrics.refused();
    });
    // Emitted by TLS servers only. Node closes the socket after a handshake
    // error, but not after a handshake timeout (https.Server does; a bare
    // tls.Server leaves it open): a client that never finishes its
    // ClientHello would keep its slot.
    server.on('tlsClientError', function handshakeFailed(_err: Error, socket: Socket) {
      metrics.handshakeFailed();
      socket.destroy();
    });
  }

  get size(): number {
    return this.#sockets.size;
  }

  /** Resolves once no connection is open (at once when none is); for a listener that accepts no more. */
  drained(): Promise<void> {
    if (this.#sockets.size === 0) return Promise.resolve();
    return new Promise<void>((resolve) => {
      const earlier = this.#whenDrained;
      this.#whenDrained = function drained() {
        earlier?.();
        resolve();
      };
    });
  }

  /**
   * Runs just before a forced close destroys the connections: the place to
   * send last words (a stream's in-band error). Returns the remover.
   */
  onForceClose(hook: () => void): () => void {
    this.#forceHooks.add(hook);
    const hooks = this.#forceHooks;
    return function remove() {
      hooks.delete(hook);
    };
  }

  /** Runs the force-close hooks; each is best effort, the connections close regardless. */
  runForceHooks(): void {
    for (const hook of this.#forceHooks) {
      try {
        hook();
      } catch {
        // last words are best effort
      }
    }
  }

  /** Destroys every open connection, whatever state it is in. */
  destroyAll(): void {
    for (const socket of this.#sockets.keys()) socket.destroy();
  }

  /**
   * Destroys plaintext connections that sent fewer than `minBytes` for `ms`
   * (gRPC: HTTP/2's 24-byte client preface): for listeners without an HTTP
   * parser, whose engine has no such limit.
   */
  destroySilent(ms: number, minBytes = 1): void {
    const before = Date.now() - ms;
    for (const [socket, openedAt] of this.#sockets) {
      if (openedAt < before && socket.bytesRead < minBytes) socket.destroy();
    }
  }
}
