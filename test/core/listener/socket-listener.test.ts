// The shared socket listener under the gRPC receiver: connection cap and
// counting, silent connections closed, forced close with its hook.
import { afterEach, describe, expect, it } from 'vitest';
import { SocketListener } from '../../../src/core/listener/socket-listener.js';
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

async function start(maxConnections: number, silentTimeoutMs: number) {
  const telemetry = new Telemetry({ defaultMetrics: false });
  const listener = new SocketListener({
    name: 'test/grpc',
    endpoint: { host: '127.0.0.1', port: 0 },
    tls: undefined,
    maxConnections,
    silentTimeoutMs,
    alpn: ['h2'],
    telemetry,
    onConnection: (socket) => socket.on('data', () => socket.write('seen')),
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
