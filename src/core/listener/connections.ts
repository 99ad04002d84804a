// Open connections of one listener: counted, capped and destroyable. Every
// listener (http, https, net, tls servers alike) is a net.Server underneath,
// so one tracker serves them all. Beyond max_connections the kernel's
// connection is closed at once by Node ('drop') and counted.
import type { Server } from 'node:net';
import type { Socket } from 'node:net';
import type { Telemetry } from '../telemetry.js';

export interface ListenerMetrics {
  opened(): void;
  closed(): void;
  refused(): void;
}

export function listenerMetrics(telemetry: Telemetry, listener: string): ListenerMetrics {
  const open = telemetry.gauge('sluice_listener_connections', 'Connections open on a listener.', ['listener']).labels({ listener });
  const refused = telemetry.counter('sluice_listener_connections_refused_total', 'Connections a listener closed at once because max_connections were open.', ['listener']).labels({ listener });
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
  };
}

export class ConnectionTracker {
  /** Open sockets and when each was accepted (ms). */
  readonly #sockets = new Map<Socket, number>();

  constructor(server: Server, maxConnections: number, metrics: ListenerMetrics) {
    server.maxConnections = maxConnections;
    const sockets = this.#sockets;
    server.on('connection', function track(socket: Socket) {
      sockets.set(socket, Date.now());
      metrics.opened();
      socket.once('close', function untrack() {
        sockets.delete(socket);
        metrics.closed();
      });
    });
    server.on('drop', function refuse() {
      metrics.refused();
    });
  }

  get size(): number {
    return this.#sockets.size;
  }

  /** Destroys every open connection, whatever state it is in. */
  destroyAll(): void {
    for (const socket of this.#sockets.keys()) socket.destroy();
  }

  /**
   * Destroys plaintext connections that sent nothing at all for `ms`: for
   * listeners without an HTTP parser (gRPC), whose engine has no such limit.
   */
  destroySilent(ms: number): void {
    const before = Date.now() - ms;
    for (const [socket, openedAt] of this.#sockets) {
      if (openedAt < before && socket.bytesRead === 0) socket.destroy();
    }
  }
}
