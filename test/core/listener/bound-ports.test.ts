// Ports kept across a reload: the old listener detaches, a connection made
// then waits unread, and the next listener on that endpoint answers it.
import { request } from 'node:http';
import { connect } from 'node:net';
import { afterEach, describe, expect, it } from 'vitest';
import { PortKeeper } from '../../../src/core/listener/bound-ports.js';
import { DEFAULT_HTTP_LISTENER } from '../../../src/core/listener/config.js';
import type { Endpoint } from '../../../src/core/listener/endpoint.js';
import { HttpListener } from '../../../src/core/listener/http-listener.js';
import { Telemetry } from '../../../src/shared/telemetry.js';
import { freePort } from '../../helpers/daemon.js';

const keepers: PortKeeper[] = [];
const listeners: HttpListener[] = [];
afterEach(async () => {
  for (const listener of listeners.splice(0)) {
    listener.destroy();
    await listener.close();
  }
  for (const keeper of keepers.splice(0)) keeper.closeAll();
});

function keeper(): PortKeeper {
  const made = new PortKeeper();
  keepers.push(made);
  return made;
}

/** A listener that answers every request with its own tag. */
function answering(tag: string, endpoint: Endpoint = { host: '127.0.0.1', port: 0 }, name = 'test'): HttpListener {
  const listener = new HttpListener({
    name,
    endpoint,
    config: DEFAULT_HTTP_LISTENER,
    telemetry: new Telemetry({ defaultMetrics: false }),
    handler: (req, res) => {
      req.resume();
      req.on('end', () => res.end(tag));
    },
  });
  listeners.push(listener);
  return listener;
}

/** A request on a connection of its own; resolves the answer's body. */
function post(port: number, body: string): Promise<string> {
  return new Promise((resolve, reject) => {
    const sent = request({ host: '127.0.0.1', port, method: 'POST', agent: false }, (res) => {
      let text = '';
      res.setEncoding('utf8');
      res.on('data', (chunk: string) => (text += chunk));
      res.on('end', () => resolve(text));
    });
    sent.on('error', reject);
    sent.end(body);
  });
}

/** Whether a TCP connection to the port is accepted (true) or refused (false). */
function accepts(port: number): Promise<boolean> {
  return new Promise((resolve) => {
    const socket = connect(port, '127.0.0.1');
    socket.once('connect', () => {
      socket.destroy();
      resolve(true);
    });
    socket.once('error', () => resolve(false));
  });
}

describe('bound ports', () => {
  it('holds a connection made while no listener is attached and hands it, unread, to the next one', async () => {
    const ports = keeper();
    const { port } = await answering('old').listen(ports);
    expect(await post(port, 'hi')).toBe('old');

    await listeners[0]?.close();
    // No listener now: the request is sent and waits.
    const waiting = post(port, 'x'.repeat(100_000));
    await new Promise((r) => setTimeout(r, 100));
    const next = await answering('new').listen(ports);
    expect(next.port).toBe(port);
    expect(await waiting).toBe('new');
  });

  it('gives a listener on port 0 the port it had, and refuses a second listener there as a second bind would be', async () => {
    const ports = keeper();
    const first = await answering('one').listen(ports);
    await expect(answering('two').listen(ports)).rejects.toMatchObject({ code: 'EADDRINUSE' });
    // Another listener's port 0 is another port.
    const other = await answering('other', undefined, 'another').listen(ports);
    expect(other.port).not.toBe(first.port);

    await listeners[0]?.close();
    expect((await answering('again').listen(ports)).port).toBe(first.port);
  });

  it('closes on settle the ports no listener holds, and only those', async () => {
    const ports = keeper();
    const [kept, dropped] = [await freePort(), await freePort()];
    await answering('kept', { host: '127.0.0.1', port: kept }).listen(ports);
    await answering('dropped', { host: '127.0.0.1', port: dropped }, 'other').listen(ports);
    await listeners[1]?.close();
    expect(await accepts(dropped)).toBe(true);

    ports.settle();
    expect(await accepts(dropped)).toBe(false);
    expect(await post(kept, '')).toBe('kept');
  });

  it('closes every port, and the connections held on them, on closeAll', async () => {
    const ports = keeper();
    const { port } = await answering('gone').listen(ports);
    await listeners[0]?.close();
    const held = post(port, '').catch((err: unknown) => err);
    await new Promise((r) => setTimeout(r, 100));

    ports.closeAll();
    expect(await held).toBeInstanceOf(Error);
    expect(await accepts(port)).toBe(false);
  });

  it('binds a port of its own for a listener without a keeper, and closes it when the listener stops', async () => {
    const listener = answering('alone');
    const { port } = await listener.listen();
    expect(await post(port, '')).toBe('alone');
    await listener.close();
    expect(await accepts(port)).toBe(false);
  });
});
