// The shared HTTP listener's limits, on real sockets: clients that stall in
// the headers, in the body or between requests are closed; connections past
// max_connections are closed at once and counted.
import { execFileSync, spawnSync } from 'node:child_process';
import { existsSync, readFileSync } from 'node:fs';
import { afterEach, describe, expect, it } from 'vitest';
import { DEFAULT_HTTP_LISTENER, type HttpListenerConfig } from '../../../src/core/listener/config.js';
import { HttpListener } from '../../../src/core/listener/http-listener.js';
import { Telemetry } from '../../../src/shared/telemetry.js';
import { waitUntil } from '../../helpers/daemon.js';
import { halfBody, halfHeaders, idleKeepAlive, rawClient } from '../../helpers/raw-clients.js';

const listeners: HttpListener[] = [];
afterEach(async () => {
  for (const listener of listeners.splice(0)) {
    listener.destroy();
    await listener.close();
  }
});

async function start(limits: Partial<HttpListenerConfig>, telemetry = new Telemetry({ defaultMetrics: false })): Promise<{ port: number; listener: HttpListener; telemetry: Telemetry }> {
  const listener = new HttpListener({
    name: 'test',
    endpoint: { host: '127.0.0.1', port: 0 },
    config: { ...DEFAULT_HTTP_LISTENER, ...limits },
    telemetry,
    handler: (req, res) => {
      req.resume();
      req.on('end', () => res.end('ok'));
    },
  });
  listeners.push(listener);
  const { port } = await listener.listen();
  return { port, listener, telemetry };
}

async function metric(telemetry: Telemetry, name: string): Promise<number | undefined> {
  const found = (await telemetry.registry.getMetricsAsJSON()).find((m) => m.name === name);
  return found?.values.find((v) => v.labels['listener'] === 'test')?.value;
}

describe('http listener', () => {
  it('shows its connection series at 0 from the start, before any client connects', async () => {
    const { telemetry } = await start({});
    expect(await metric(telemetry, 'sluice_listener_connections')).toBe(0);
    expect(await metric(telemetry, 'sluice_listener_connections_refused_total')).toBe(0);
  });

  it('closes a connection whose headers are not complete within read_header_timeout', async () => {
    const { port } = await start({ read_header_timeout: 300, read_timeout: 5_000 });
    const client = await halfHeaders(port);
    await client.closed;
    expect(client.received()).toMatch(/^HTTP\/1\.1 408/);
  });

  it('closes a connection that sends nothing at all within read_header_timeout', async () => {
    const { port, listener } = await start({ read_header_timeout: 300, read_timeout: 5_000 });
    const client = await rawClient(port);
    await client.closed;
    expect(listener.connections).toBe(0);
  });

  it('closes a connection whose body is not complete within read_timeout', async () => {
    const { port } = await start({ read_header_timeout: 300, read_timeout: 600 });
    const client = await halfBody(port);
    await client.closed;
    expect(client.received()).not.toContain('ok');
  });

  it('closes a kept-alive connection idle for idle_timeout', async () => {
    const { port } = await start({ idle_timeout: 300 });
    const client = await idleKeepAlive(port, '/');
    expect(client.received()).toContain('ok');
    await client.closed;
  });

  it('closes a kept-alive connection whose client sends only blank lines after its answer, which restart no timer of Node\'s', async () => {
    const { port } = await start({ idle_timeout: 300, read_header_timeout: 300 });
    const client = await idleKeepAlive(port, '/');
    // Empty lines before a request line are allowed (RFC 9112 2.2); they begin no request.
    const blankLines = setInterval(() => client.socket.write('\r\n'), 50);
    try {
      await client.closed;
    } finally {
      clearInterval(blankLines);
    }
    expect(client.received()).toContain('ok');
  });

  it('answers a request that expects 100-continue without asking for its body when the handler refuses it on its headers, and asks when it reads it', async () => {
    const listener = new HttpListener({
      name: 'test',
      endpoint: { host: '127.0.0.1', port: 0 },
      config: DEFAULT_HTTP_LISTENER,
      telemetry: new Telemetry({ defaultMetrics: false }),
      handler: (req, res) => {
        if (req.headers.authorization === undefined) res.writeHead(401, { connection: 'close' }).end('no key');
        else {
          req.resume();
          req.on('end', () => res.end('ok'));
        }
      },
    });
    listeners.push(listener);
    const { port } = await listener.listen();
    const head = (auth: string) => `POST / HTTP/1.1\r\nhost: x\r\ncontent-length: 5\r\nexpect: 100-continue\r\n${auth}\r\n`;
    const refused = await rawClient(port);
    refused.socket.write(head(''));
    await waitUntil(() => refused.received().includes('\r\n\r\n'), 5_000, 'an answer');
    expect(refused.received()).toMatch(/^HTTP\/1\.1 401/);
    const accepted = await rawClient(port);
    accepted.socket.write(head('authorization: Bearer k\r\n'));
    await waitUntil(() => accepted.received().includes('\r\n\r\n'), 5_000, 'the go-ahead');
    expect(accepted.received()).toMatch(/^HTTP\/1\.1 100 Continue/);
    accepted.socket.write('hello');
    await waitUntil(() => accepted.received().includes('ok'), 5_000, 'the answer');
    expect(accepted.received()).toContain('HTTP/1.1 200');
  });

  it('serves a kept-alive connection\'s next request after its answer', async () => {
    const { port } = await start({ idle_timeout: 300, read_header_timeout: 300 });
    const client = await idleKeepAlive(port, '/');
    client.socket.write('GET /second HTTP/1.1\r\nHost: 127.0.0.1\r\n\r\n');
    await waitUntil(() => client.received().split('ok').length === 3, 5_000, 'the second answer');
    client.socket.destroy();
  });

  it('closes a kept-alive connection after read_timeout when idle_timeout is 0, as Go\'s server does', async () => {
    const { port } = await start({ idle_timeout: 0, read_timeout: 400, read_header_timeout: 300 });
    const client = await idleKeepAlive(port, '/');
    expect(client.received()).toContain('ok');
    await client.closed;
  });

  it('closes connections beyond max_connections at once, counting open and refused ones', async () => {
    const { port, telemetry } = await start({ max_connections: 2 });
    const kept = [await rawClient(port), await rawClient(port)];
    await waitUntil(async () => (await metric(telemetry, 'sluice_listener_connections')) === 2, 5_000, 'two open connections');
    const refused = await rawClient(port);
    await refused.closed;
    expect(await metric(telemetry, 'sluice_listener_connections_refused_total')).toBe(1);
    for (const client of kept) client.socket.destroy();
    await waitUntil(async () => (await metric(telemetry, 'sluice_listener_connections')) === 0, 5_000, 'no open connection');
  });

  it('stops accepting, lets a started request finish, and destroys what is left on destroy()', async () => {
    const { port, listener } = await start({});
    const stalled = await halfBody(port);
    listener.stopAccepting();
    await expect(rawClient(port)).rejects.toThrow(/ECONNREFUSED/);
    let destroyedHookRan = false;
    listener.onForceClose(() => {
      destroyedHookRan = true;
    });
    const closed = listener.close();
    listener.destroy();
    await stalled.closed;
    await closed;
    expect(destroyedHookRan).toBe(true);
    expect(listener.connections).toBe(0);
  });

  it('closes a kept-alive connection between requests once it stops accepting, and answers one whose next request had begun', async () => {
    const { port, listener } = await start({});
    const idle = await idleKeepAlive(port, '/');
    const begun = await idleKeepAlive(port, '/');
    begun.socket.write('GET / HTTP/1.1\r\nHost: 127.');
    // The half-sent request reaches the listener before it stops.
    await new Promise((resolve) => setTimeout(resolve, 200));
    listener.stopAccepting();
    await idle.closed;
    begun.socket.write('0.0.1\r\n\r\n');
    await begun.closed;
    expect(begun.received().match(/HTTP\/1\.1 200/g)).toHaveLength(2);
    expect(begun.received()).toMatch(/connection: close/i);
  });

  it('closes, once it stops, a connection whose client sends only blank lines long before the grace, and answers a slow request begun at the stop', async () => {
    const { port, listener } = await start({ read_header_timeout: 1_000 });
    const blank = await idleKeepAlive(port, '/');
    const slow = await idleKeepAlive(port, '/');
    const blankLines = setInterval(() => blank.socket.write('\r\n'), 50);
    try {
      // Blank lines already on the connection when the stop comes.
      await new Promise((resolve) => setTimeout(resolve, 200));
      listener.stopAccepting();
      slow.socket.write('GET / HTTP/1.1\r\nHost: 127.');
      // Well within read_header_timeout of its start.
      await new Promise((resolve) => setTimeout(resolve, 100));
      slow.socket.write('0.0.1\r\n\r\n');
      await slow.closed;
      expect(slow.received().match(/HTTP\/1\.1 200/g)).toHaveLength(2);
      expect(slow.received()).toMatch(/connection: close/i);
      // The grace a reload or shutdown would give it (shutdown_grace or longer).
      let graceTimer: NodeJS.Timeout | undefined;
      const grace = new Promise<string>((resolve) => {
        graceTimer = setTimeout(() => resolve('held until the grace'), 45_000);
      });
      const outcome = await Promise.race([blank.closed.then(() => 'closed'), grace]);
      clearTimeout(graceTimer);
      expect(outcome).toBe('closed');
      expect(blank.received().match(/HTTP\/1\.1 200/g)).toHaveLength(1);
    } finally {
      clearInterval(blankLines);
    }
  });

  it('answers, with Connection: close, the next request a client sends right after the stop on a connection it was just told stays open', async () => {
    const { port, listener } = await start({});
    const client = await idleKeepAlive(port, '/');
    expect(client.received()).not.toMatch(/connection: close/i);
    listener.stopAccepting();
    // The client reuses its connection as soon as it has its answer, as keep-alive pools do.
    await new Promise((resolve) => setTimeout(resolve, 50));
    client.socket.write('GET / HTTP/1.1\r\nHost: 127.0.0.1\r\n\r\n');
    await client.closed;
    expect(client.received().match(/HTTP\/1\.1 200/g)).toHaveLength(2);
    expect(client.received()).toMatch(/connection: close/i);
  });

  it('answers a request that reached a long-idle connection while the loop was busy, when the listener stops before reading it, instead of resetting it as idle', async () => {
    const { port, listener } = await start({});
    const client = await idleKeepAlive(port, '/');
    // Idle well past the stop's linger: the connection counts as idle by its age.
    await new Promise((resolve) => setTimeout(resolve, 800));
    client.socket.write('GET / HTTP/1.1\r\nHost: 127.0.0.1\r\n\r\n');
    // The loop is held (a reload building its graph, a batch): the request
    // reaches the kernel's buffer, and the stop comes before the loop reads it.
    const heldUntil = Date.now() + 50;
    while (Date.now() < heldUntil);
    listener.stopAccepting();
    await client.closed;
    expect(client.received().match(/HTTP\/1\.1 200/g)).toHaveLength(2);
    expect(client.received()).toMatch(/connection: close/i);
  });

  it('lets an answer ended before the listener stopped reach a client that reads it slowly, instead of closing its connection as idle', async () => {
    // Bigger than the socket buffers on both sides, so most of it is still queued in the process when the client pauses.
    const body = Buffer.alloc(64 * 1024 * 1024, 'x');
    let ended!: () => void;
    const answered = new Promise<void>((resolve) => {
      ended = resolve;
    });
    const listener = new HttpListener({
      name: 'test',
      endpoint: { host: '127.0.0.1', port: 0 },
      config: DEFAULT_HTTP_LISTENER,
      telemetry: new Telemetry({ defaultMetrics: false }),
      handler: (_req, res) => {
        res.end(body);
        ended();
      },
    });
    listeners.push(listener);
    const { port } = await listener.listen();
    const client = await rawClient(port, 'GET / HTTP/1.1\r\nHost: 127.0.0.1\r\n\r\n');
    client.socket.pause();
    await answered;
    listener.stopAccepting();
    // The stopping listener's sweep of idle connections runs every 100 ms meanwhile.
    await new Promise((resolve) => setTimeout(resolve, 500));
    let bytes = 0;
    client.socket.removeAllListeners('data');
    client.socket.on('data', (chunk: Buffer) => {
      bytes += chunk.length;
    });
    client.socket.resume();
    await client.closed;
    expect(bytes).toBeGreaterThan(body.length);
  });

  // ss shows a listening socket's accept backlog (Linux) as its Send-Q.
  it.runIf(existsSync('/proc/sys/net/core/somaxconn') && spawnSync('ss', ['-V']).status === 0)('lets as many connections as max_connections wait to be accepted (up to the kernel\'s somaxconn), not Node\'s default 511', async () => {
    const somaxconn = Number(readFileSync('/proc/sys/net/core/somaxconn', 'utf8'));
    const { port } = await start({ max_connections: 3000 });
    const [, , sendQ] = execFileSync('ss', ['-ltnH', `sport = :${port}`], { encoding: 'utf8' }).trim().split(/\s+/);
    // A burst of 3000 connections past a backlog of 511 left clients retransmitting; some were reset.
    expect(Number(sendQ)).toBe(Math.min(3000, somaxconn));
  });
});
