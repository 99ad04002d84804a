// A request refused before its body is read (401, 413) gets its answer with
// `Connection: close` and the connection closed, as the OTLP receiver does:
// keeping it would mean reading and discarding whatever the client still
// sends, for up to read_timeout, before the connection could be reused.
import { connect, type Socket } from 'node:net';
import { afterEach, describe, expect, it } from 'vitest';
import { API_KEY, openaiProvider, startGateway, startUpstream, type Gateway, type Upstream } from '../harness.js';

let gateway: Gateway | undefined;
let upstream: Upstream | undefined;

afterEach(async () => {
  await gateway?.close();
  await upstream?.close();
  gateway = undefined;
  upstream = undefined;
});

/** Sends the head and the first bytes of a `length`-byte body; resolves with what came back once the gateway closed the connection. */
function sendPartly(port: number, key: string, length = 1_000_000): Promise<string> {
  return new Promise((resolve, reject) => {
    const socket: Socket = connect(port, '127.0.0.1');
    let answer = '';
    socket.setEncoding('latin1');
    socket.on('data', (data: string) => (answer += data));
    socket.on('error', reject);
    socket.on('close', () => resolve(answer));
    socket.write(`POST /v1/chat/completions HTTP/1.1\r\nHost: x\r\nAuthorization: Bearer ${key}\r\nContent-Type: application/json\r\nContent-Length: ${length}\r\n\r\n{"model":"acme/m","messages":[`);
  });
}

describe('a request refused before its body is read', () => {
  it('is answered with Connection: close and its connection closed, not kept while the rest of the body is read', async () => {
    upstream = await startUpstream(() => undefined);
    gateway = await startGateway({ providers: { up: openaiProvider(upstream) }, models: [{ id: 'acme/m', endpoints: [{ provider: 'up', model: 'm' }] }] });
    const refused = await sendPartly(gateway.port, 'not-the-key');
    expect(refused).toMatch(/^HTTP\/1\.1 401 /);
    expect(refused.toLowerCase()).toContain('connection: close');
    // Over max_request_body_size (20MiB): 413 on the declared length, before the body.
    const tooLarge = await sendPartly(gateway.port, API_KEY, 30_000_000);
    expect(tooLarge).toMatch(/^HTTP\/1\.1 413 /);
    expect(tooLarge.toLowerCase()).toContain('connection: close');
    expect(upstream.requests).toHaveLength(0);
  });
});
