// The shared socket listener under the gRPC receiver: connection cap and
// counting, silent connections closed, forced close with its hook.
import { connect, type Socket } from 'node:net';
import { afterEach, describe, expect, it } from 'vitest';
import { connect as connectTls, type ConnectionOptions } from 'node:tls';
import { SocketListener } from '../../../src/core/listener/socket-listener.js';
import type { TlsMaterial } from '../../../src/core/listener/tls.js';
import { testTls } from '../../helpers/tls.js';
import { Telemetry } from '../../../src/shared/telemetry.js';
import { waitUntil } from '../../helpers/daemon.js';
import { rawClient } from '../../helpers/raw-clients.js';

const listeners: SocketListener[] = [];
afterEach(async () => {
  for (const listener of listeners.splice(0)) {
    listener.destroy();
    await listener.close();
  }
});

async function start(maxConnections: number, silentTimeoutMs: number, options: { minFirstBytes?: number; onConnection?: (socket: Socket) => void; tls?: TlsMaterial } = {}) {
  const telemetry = new Telemetry({ defaultMetrics: false });
  const listener = new SocketListener({
    name: 'test/grpc',
    endpoint: { host: '127.0.0.1', port: 0 },
    tls: options.tls,
    maxConnections,
    silentTimeoutMs,
    ...(options.minFirstBytes === undefined ? {} : { minFirstBytes: options.minFirstBytes }),
    alpn: ['h2'],
    telemetry,
    onConnection: options.onConnection ?? ((socket) => socket.on('data', () => socket.write('seen'))),
  });
  listeners.push(listener);
  const { port } = await listener.listen();
  return { port, listener, telemetry };
}

describe('socket listener', () => {
  it('closes connections beyond max_connections at once and counts them', async () => {
    const { port, listener, telemetry } = await start(1, 60_000);
    const kept = await rawClient(port);
    await waitUntil(() => listener.connections === 1, 5_000, 'one open connection');
    const refused = await rawClient(port);
    await refused.closed;
    const metrics = await telemetry.registry.metrics();
    expect(metrics).toContain('sluice_listener_connections_refused_total{listener="test/grpc"} 1');
    expect(metrics).toContain('sluice_listener_connections{listener="test/grpc"} 1');
    kept.socket.destroy();
  });

  it('closes a connection that sends nothing, and keeps one that talks', async () => {
    const { port } = await start(10, 300);
    const silent = await rawClient(port);
    const talking = await rawClient(port, 'PRI * HTTP/2.0');
    await silent.closed;
    await waitUntil(() => talking.received() === 'seen', 5_000, 'the answer');
    expect(talking.socket.destroyed).toBe(false);
    talking.socket.destroy();
  });

  it('closes a plaintext connection that has not sent HTTP/2\'s whole preface by the silent timeout', async () => {
    const { port } = await start(10, 300, { minFirstBytes: 24 });
    const stalled = await rawClient(port, 'P');
    const talking = await rawClient(port, 'PRI * HTTP/2.0\r\n\r\nSM\r\n\r\n');
    await stalled.closed;
    await waitUntil(() => talking.received() === 'seen', 5_000, 'the answer');
    expect(talking.socket.destroyed).toBe(false);
    talking.socket.destroy();
  });

  it('destroys a connection it ended once the peer has not closed its side within the grace', async () => {
    const { port, listener } = await start(10, 60_000, { onConnection: (socket) => socket.once('data', () => socket.end('bye')) });
    // A peer that keeps its side open after the server's FIN (allowHalfOpen), as a stalled gRPC client does after a GOAWAY.
    const peer = connect({ port, host: '127.0.0.1', allowHalfOpen: true });
    peer.on('error', () => {});
    peer.on('data', () => {});
    await new Promise<void>((resolve) => peer.once('connect', () => resolve()));
    peer.write('x');
    await new Promise<void>((resolve) => peer.once('end', () => resolve()));
    expect(listener.connections).toBe(1);
    // The grace is 5 s: the slot is free once it is over, though the peer never closed.
    await waitUntil(() => listener.connections === 0, 8_000, 'the slot to be free');
    peer.destroy();
  });

  it('destroys a TLS connection it ended once the peer has not closed its side within the grace', async () => {
    const pki = testTls();
    const tls: TlsMaterial = { cert: Buffer.from(pki.cert), key: Buffer.from(pki.key), clientCa: undefined, minVersion: 'TLSv1.2' };
    const { port, listener } = await start(10, 60_000, { tls, onConnection: (socket) => socket.once('data', () => socket.end('bye')) });
    // allowHalfOpen works on a TLS client as on a TCP one; Node's types leave it out.
    const options = { port, host: '127.0.0.1', ca: pki.ca, rejectUnauthorized: false, allowHalfOpen: true } as ConnectionOptions;
    const peer = connectTls(options);
    peer.on('error', () => {});
    peer.on('data', () => {});
    await new Promise<void>((resolve) => peer.once('secureConnect', () => resolve()));
    peer.write('x');
    await new Promise<void>((resolve) => peer.once('end', () => resolve()));
    expect(listener.connections).toBe(1);
    await waitUntil(() => listener.connections === 0, 8_000, 'the slot to be free');
    peer.destroy();
  });

  it('closes a TLS connection that has not finished its handshake by the silent timeout, and counts it', async () => {
    const pki = testTls();
    const tls: TlsMaterial = { cert: Buffer.from(pki.cert), key: Buffer.from(pki.key), clientCa: undefined, minVersion: 'TLSv1.2' };
    const { port, listener, telemetry } = await start(10, 300, { tls });
    // A TCP connection that never sends its ClientHello, and one that sends only the start of a TLS record.
    const silent = await rawClient(port);
    const partial = await rawClient(port, '\x16\x03\x01\x02\x00');
    await Promise.all([silent.closed, partial.closed]);
    await waitUntil(() => listener.connections === 0, 5_000, 'the slots to be free');
    expect(await telemetry.registry.metrics()).toContain('sluice_listener_tls_handshake_failures_total{listener="test/grpc"} 2');
  });

  it('closes a TLS connection that has not sent HTTP/2\'s whole preface by the silent timeout after its handshake, and keeps one that did', async () => {
    const pki = testTls();
    const tls: TlsMaterial = { cert: Buffer.from(pki.cert), key: Buffer.from(pki.key), clientCa: undefined, minVersion: 'TLSv1.2' };
    const { port } = await start(10, 300, { tls, minFirstBytes: 24 });
    async function handshaken(first: string) {
      const socket = connectTls({ port, host: '127.0.0.1', ca: pki.ca, rejectUnauthorized: false, ALPNProtocols: ['h2'] });
      let received = '';
      socket.on('error', () => {});
      socket.on('data', (chunk: Buffer) => (received += chunk.toString()));
      const closed = new Promise<void>((resolve) => socket.once('close', () => resolve()));
      await new Promise<void>((resolve) => socket.once('secureConnect', () => resolve()));
      socket.write(first);
      return { socket, closed, received: () => received };
    }
    // The talking one first: by the time the stalled one is closed, its own deadline has passed too.
    const talking = await handshaken('PRI * HTTP/2.0\r\n\r\nSM\r\n\r\n');
    const stalled = await handshaken('PRI * HTTP/2.0');
    await stalled.closed;
    await waitUntil(() => talking.received() === 'seen', 5_000, 'the first answer');
    talking.socket.write('more');
    await waitUntil(() => talking.received() === 'seenseen', 5_000, 'an answer after the deadline');
    talking.socket.destroy();
  });

  it('runs its force-close hook and destroys every connection on destroy()', async () => {
    const { port, listener } = await start(10, 60_000);
    const client = await rawClient(port, 'x');
    let hookRan = false;
    listener.onForceClose(() => {
      hookRan = true;
    });
    const closed = listener.close();
    listener.destroy();
    await client.closed;
    await closed;
    expect(hookRan).toBe(true);
  });
});
