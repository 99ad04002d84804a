import { createServer, type Server, type ServerResponse } from 'node:http';
import { createServer as createHttpsServer } from 'node:https';
import type { AddressInfo } from 'node:net';
import { afterEach, describe, expect, it } from 'vitest';
import { saveProxyEnv, startConnectProxy } from '../../helpers/connect-proxy.js';
import { startSilentServer, type SilentServer } from '../../helpers/silent-server.js';
import { testTls } from '../../helpers/tls.js';
import { createHttpTransport } from '../../../src/exporters/otlphttp/transport.js';
import { takeRememberedResourceSpans } from '../../../src/otlp/json-reuse.js';
import { transcodeToJson } from '../../../src/otlp/json-transcoder.js';
import { encodeRequest, encodeResponse } from '../../../src/otlp/proto-codec.js';
import { encodeStatus } from '../../../src/otlp/rpc-status.js';

const servers: Server[] = [];
const silentServers: SilentServer[] = [];
const stalled: ServerResponse[] = [];

afterEach(async () => {
  for (const res of stalled.splice(0)) res.destroy();
  await Promise.all(servers.splice(0).map((s) => new Promise((resolve) => s.close(resolve))));
  await Promise.all(silentServers.splice(0).map((s) => s.close()));
});

/** A destination that answers 200 to every request, or never answers. */
async function destination(answer: boolean): Promise<string> {
  const server = createServer((req, res) => {
    req.resume();
    req.on('end', () => {
      if (answer) res.writeHead(200, { 'content-type': 'application/x-protobuf' }).end();
      else stalled.push(res);
    });
  });
  servers.push(server);
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  return `http://127.0.0.1:${(server.address() as AddressInfo).port}/v1/traces`;
}

function transport(url: string, timeoutMs: number) {
  return createHttpTransport({ url, headers: {}, encoding: 'protobuf', compression: 'none', insecure: true, timeoutMs, userAgent: 'sluice-test' });
}

const records = [encodeRequest({ resourceSpans: [] })];

describe('the OTLP/HTTP transport', () => {
  it('keeps the URL\'s credentials out of an error that echoes the request back', async () => {
    const server = createServer((req, res) => {
      req.resume();
      req.on('end', () => res.writeHead(400, { 'content-type': 'text/plain' }).end(`bad request to ${req.url ?? ''} (auth ${req.headers.authorization ?? 'none'}) full http://drain-user:pw-SECRET@host${req.url ?? ''}`));
    });
    servers.push(server);
    await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
    const port = (server.address() as AddressInfo).port;
    const t = transport(`http://drain-user:pw-SECRET@127.0.0.1:${port}/v1/traces?token=tok2-SECRET&team=a&dd-api-key=dd%2BSECRET`, 5_000);
    const result = await t.send(records, 0, new AbortController().signal);
    await t.close();
    expect(result).toMatchObject({ status: 'failure', httpStatus: 400 });
    const error = (result as { error: string }).error;
    expect(error).toContain('/v1/traces?token=***&team=a&dd-api-key=***');
    expect(error).toContain('drain-user:***@host');
    expect(error).not.toMatch(/SECRET/);
  });

  it('keeps the header values out of an error that echoes them, the credentials of a `Bearer` value alone included', async () => {
    const server = createServer((req, res) => {
      req.resume();
      const token = (req.headers.authorization ?? '').replace(/^Bearer /, '');
      req.on('end', () => res.writeHead(403, { 'content-type': 'text/plain' }).end(`key ${String(req.headers['x-api-key'])} refused; token ${token} unknown; flag ${String(req.headers['x-flag'])} seen`));
    });
    servers.push(server);
    await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
    const url = `http://127.0.0.1:${(server.address() as AddressInfo).port}/v1/traces`;
    const headers = { 'x-api-key': 'hdr-SECRET-1', authorization: 'Bearer tok-SECRET-2', 'x-flag': 'on' };
    const t = createHttpTransport({ url, headers, encoding: 'protobuf', compression: 'none', insecure: true, timeoutMs: 5_000, userAgent: 'sluice-test' });
    const result = await t.send(records, 0, new AbortController().signal);
    await t.close();
    expect(result).toMatchObject({ status: 'failure', httpStatus: 403 });
    // A value as short as `on` hides nothing and stays, so the rest of the message reads as sent.
    expect((result as { error: string }).error).toBe('HTTP 403: key *** refused; token *** unknown; flag on seen');
  });

  it('sends the credentials written into the URL as Basic authorization, as curl and the collector do, unless a header sets it', async () => {
    const seen: Array<string | undefined> = [];
    const server = createServer((req, res) => {
      seen.push(req.headers.authorization);
      req.resume();
      req.on('end', () => res.writeHead(200).end());
    });
    const url = new URL(await listen(server));
    const send = async (userinfo: string, headers: Record<string, string> = {}) => {
      const t = createHttpTransport({ url: `http://${userinfo}@${url.host}${url.pathname}`, headers, encoding: 'protobuf', compression: 'none', insecure: true, timeoutMs: 5_000, userAgent: 'sluice-test' });
      expect(await t.send(records, 0, new AbortController().signal)).toMatchObject({ status: 'success' });
      await t.close();
    };
    await send('instance:p%40ss%3Aword');
    await send('token-only');
    await send('instance:pass', { Authorization: 'Bearer configured' });
    const basic = (credentials: string) => `Basic ${Buffer.from(credentials).toString('base64')}`;
    expect(seen).toEqual([basic('instance:p@ss:word'), basic('token-only:'), 'Bearer configured']);
  });

  it('delivers to a destination that answers', async () => {
    const t = transport(await destination(true), 5_000);
    expect(await t.send(records, 0, new AbortController().signal)).toMatchObject({ status: 'success', httpStatus: 200 });
    await t.close();
  });

  it('gives up on a destination that never answers as a retryable timeout', async () => {
    const t = transport(await destination(false), 200);
    const result = await t.send(records, 0, new AbortController().signal);
    expect(result).toMatchObject({ status: 'retryable', httpStatus: null });
    expect((result as { error: string }).error).toContain('timed out after 200ms');
    await t.close();
  });

  it('times out and closes while a destination accepts the connection but never answers its TLS handshake', async () => {
    // undici hears no abort while a connection is being made: the handshake would run to its connect timeout (10 s).
    const silent = await startSilentServer();
    silentServers.push(silent);
    const t = createHttpTransport({ url: `https://127.0.0.1:${silent.port}/v1/traces`, headers: {}, encoding: 'protobuf', compression: 'none', insecure: false, timeoutMs: 200, userAgent: 'sluice-test' });
    const result = await t.send(records, 0, new AbortController().signal);
    expect(result).toMatchObject({ status: 'retryable', httpStatus: null });
    expect((result as { error: string }).error).toContain('timed out after 200ms');
    // Answered while the handshake still hangs (undici gives it up at its connect timeout, and the socket closes then).
    await new Promise((resolve) => setTimeout(resolve, 100));
    expect(silent.open()).toBe(1);
    // Closing does not wait for the handshake either (the exporter's shutdown, a reload).
    await t.close();
    await new Promise((resolve) => setTimeout(resolve, 100));
    expect(silent.open()).toBe(1);
  });

  it('delivers through the proxy HTTPS_PROXY names, trusting the destination\'s CA through the tunnel, and directly to a host NO_PROXY lists', async () => {
    const tls = testTls();
    const destination = createHttpsServer({ cert: tls.cert, key: tls.key }, (req, res) => {
      req.resume();
      req.on('end', () => res.writeHead(200, { 'content-type': 'application/x-protobuf' }).end());
    });
    servers.push(destination);
    await new Promise<void>((resolve) => destination.listen(0, '127.0.0.1', resolve));
    const port = (destination.address() as AddressInfo).port;
    const proxy = await startConnectProxy();
    const env = saveProxyEnv();
    const viaLocalhost = (): ReturnType<typeof createHttpTransport> =>
      createHttpTransport({ url: `https://localhost:${port}/v1/traces`, headers: {}, encoding: 'protobuf', compression: 'none', ca: tls.ca, insecure: false, timeoutMs: 5_000, userAgent: 'sluice-test' });
    try {
      process.env['HTTPS_PROXY'] = process.env['https_proxy'] = proxy.url;
      delete process.env['NO_PROXY'];
      delete process.env['no_proxy'];
      const proxied = viaLocalhost();
      expect(await proxied.send(records, 0, new AbortController().signal)).toMatchObject({ status: 'success', httpStatus: 200 });
      await proxied.close();
      expect(proxy.targets).toEqual([`localhost:${port}`]);
      process.env['NO_PROXY'] = process.env['no_proxy'] = 'localhost';
      const direct = viaLocalhost();
      expect(await direct.send(records, 0, new AbortController().signal)).toMatchObject({ status: 'success', httpStatus: 200 });
      await direct.close();
      expect(proxy.targets).toHaveLength(1);
    } finally {
      env.restore();
      await proxy.close();
    }
  });

  it('stops a delivery when the exporter shuts down, and does not call it a timeout', async () => {
    const t = transport(await destination(false), 60_000);
    const shutdown = new AbortController();
    const sending = t.send(records, 0, shutdown.signal);
    setTimeout(() => shutdown.abort(new Error('exporter shutting down')), 50);
    const result = await sending;
    expect(result).toMatchObject({ status: 'retryable', httpStatus: null });
    expect((result as { error: string }).error).not.toContain('timed out');
    const again = await t.send(records, 0, shutdown.signal);
    expect(again).toMatchObject({ status: 'retryable', httpStatus: null });
    await t.close();
  });

  it('wants the file exporter\'s JSON kept from its first JSON delivery until it is closed, and a protobuf one never does', async () => {
    const url = await destination(true);
    const line = () => {
      const bytes = encodeRequest({ resourceSpans: [{ scopeSpans: [{ spans: [{ traceId: '0'.repeat(32), spanId: '1'.repeat(16), name: 'a', startTimeUnixNano: '1', endTimeUnixNano: '2' }] }] }] });
      transcodeToJson([bytes], { suffix: '\n', remember: true });
      return takeRememberedResourceSpans(bytes) !== undefined;
    };
    const proto = transport(url, 5_000);
    await proto.send(records, 0, new AbortController().signal);
    const json = createHttpTransport({ url, headers: {}, encoding: 'json', compression: 'none', insecure: true, timeoutMs: 5_000, userAgent: 'sluice-test' });
    // Made but not yet sending (a drain that failed to start never does): nothing kept.
    expect(line()).toBe(false);
    expect(await json.send(records, 0, new AbortController().signal)).toMatchObject({ status: 'success' });
    expect(line()).toBe(true);
    await json.close();
    expect(line()).toBe(false);
    // Closed, an old transport finishing a delivery does not start wanting again.
    await json.send(records, 0, new AbortController().signal);
    expect(line()).toBe(false);
    await proto.close();
  });

  it('reads at most 64 KiB of an answer, so one that never ends does not hold the delivery', async () => {
    const server = createServer((req, res) => {
      req.resume();
      req.on('end', () => {
        res.writeHead(200, { 'content-type': 'application/x-protobuf' });
        res.write(Buffer.alloc(100 * 1024));
        stalled.push(res);
      });
    });
    const url = await listen(server);
    const t = transport(url, 5_000);
    expect(await t.send(records, 0, new AbortController().signal)).toMatchObject({ status: 'success', httpStatus: 200 });
    await t.close();
  });

  it('follows a 307 or 308 on the destination\'s origin with the same body, and not one to another origin', async () => {
    const seen: string[] = [];
    const other = createServer((req, res) => {
      seen.push(`other ${req.url ?? ''}`);
      req.resume();
      req.on('end', () => res.writeHead(200).end());
    });
    const otherUrl = await listen(other);
    const server = createServer((req, res) => {
      const chunks: Buffer[] = [];
      req.on('data', (c: Buffer) => chunks.push(c));
      req.on('end', () => {
        seen.push(`${req.method ?? ''} ${req.url ?? ''} ${Buffer.concat(chunks).length}`);
        if (req.url === '/v1/traces') res.writeHead(307, { location: '/v2/traces' }).end();
        else if (req.url === '/v2/traces') res.writeHead(200, { 'content-type': 'application/x-protobuf' }).end();
        else res.writeHead(308, { location: otherUrl }).end();
      });
    });
    const url = await listen(server);
    const body = [encodeRequest({ resourceSpans: [{ scopeSpans: [{ spans: [{ traceId: '0af7651916cd43dd8448eb211c80319c', spanId: 'b7ad6b7169203331', name: 's', kind: 1, startTimeUnixNano: '1', endTimeUnixNano: '2' }] }] }] })];
    const size = body[0]?.length ?? 0;
    const t = transport(url, 5_000);
    expect(await t.send(body, 1, new AbortController().signal)).toMatchObject({ status: 'success', httpStatus: 200 });
    expect(seen).toEqual([`POST /v1/traces ${size}`, `POST /v2/traces ${size}`]);
    const away = transport(url.replace('/v1/traces', '/elsewhere'), 5_000);
    const refused = await away.send(body, 1, new AbortController().signal);
    expect(refused).toMatchObject({ status: 'failure', httpStatus: 308 });
    expect('error' in refused ? refused.error : '').toContain(`redirected to ${otherUrl}, not followed (another origin`);
    expect(seen.some((line) => line.startsWith('other'))).toBe(false);
    await t.close();
    await away.close();
  });

  it('reads the message out of a protobuf google.rpc.Status error, as the OTLP/HTTP spec has destinations answer', async () => {
    const server = createServer((req, res) => {
      req.resume();
      req.on('end', () => res.writeHead(400, { 'content-type': 'application/x-protobuf' }).end(encodeStatus(3, 'resource attribute service.name is required')));
    });
    const t = transport(await listen(server), 5_000);
    const result = await t.send(records, 0, new AbortController().signal);
    await t.close();
    expect(result).toEqual({ status: 'failure', httpStatus: 400, error: 'HTTP 400: resource attribute service.name is required' });
  });

  it("reads a Retry-After in asctime's form as UTC, as HTTP dates are, whatever the daemon's time zone", async () => {
    const savedTz = process.env['TZ'];
    process.env['TZ'] = 'America/New_York';
    try {
      // asctime: `Sun Nov  6 08:49:37 1994`, the day padded with a space; in GMT though it names no zone (RFC 9110 5.6.7).
      const at = new Date(Date.now() + 120_000);
      const [weekday, day, month, year, time] = at.toUTCString().replace(',', '').split(' ').map(String);
      const asctime = `${weekday} ${month} ${(day ?? '').replace(/^0/, ' ')} ${time} ${year}`;
      const server = createServer((req, res) => {
        req.resume();
        req.on('end', () => res.writeHead(503, { 'retry-after': asctime }).end());
      });
      servers.push(server);
      await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
      const t = transport(`http://127.0.0.1:${(server.address() as AddressInfo).port}/v1/traces`, 5_000);
      const result = await t.send(records, 0, new AbortController().signal);
      await t.close();
      expect(result).toMatchObject({ status: 'retryable', httpStatus: 503 });
      // Two minutes, less the second the date drops and the time the answer took; five hours more read as New York's time.
      const retryInMs = (result as { retryInMs?: number }).retryInMs ?? 0;
      expect(retryInMs).toBeGreaterThan(60_000);
      expect(retryInMs).toBeLessThanOrEqual(120_000);
    } finally {
      if (savedTz === undefined) delete process.env['TZ'];
      else process.env['TZ'] = savedTz;
    }
  });

  it("reads a JSON partial_success written in the proto's field names, or under a media type in capitals, as the collector does", async () => {
    const answers = [
      { 'content-type': 'application/json', body: JSON.stringify({ partial_success: { rejected_spans: '2', error_message: 'two spans too old' } }) },
      { 'content-type': 'Application/JSON; charset=UTF-8', body: JSON.stringify({ partialSuccess: { rejectedSpans: '1', errorMessage: 'one span too old' } }) },
    ];
    const server = createServer((req, res) => {
      req.resume();
      const answer = answers.shift();
      req.on('end', () => res.writeHead(200, { 'content-type': answer?.['content-type'] ?? 'application/json' }).end(answer?.body ?? '{}'));
    });
    const t = createHttpTransport({ url: await listen(server), headers: {}, encoding: 'json', compression: 'none', insecure: true, timeoutMs: 5_000, userAgent: 'sluice-test' });
    const snakeCase = await t.send(records, 3, new AbortController().signal);
    const capitals = await t.send(records, 3, new AbortController().signal);
    await t.close();
    expect(snakeCase).toMatchObject({ status: 'success', httpStatus: 200, rejectedSpans: 2, rejectedMessage: 'two spans too old' });
    expect(capitals).toMatchObject({ status: 'success', httpStatus: 200, rejectedSpans: 1, rejectedMessage: 'one span too old' });
  });

  it('counts no spans rejected when a partial_success reports a negative rejected_spans', async () => {
    const server = createServer((req, res) => {
      req.resume();
      req.on('end', () => res.writeHead(200, { 'content-type': 'application/x-protobuf' }).end(encodeResponse({ partialSuccess: { rejectedSpans: '-5', errorMessage: 'odd' } })));
    });
    const t = transport(await listen(server), 5_000);
    const result = await t.send(records, 3, new AbortController().signal);
    await t.close();
    expect(result).toMatchObject({ status: 'success', httpStatus: 200, rejectedSpans: 0 });
  });

  it('names where a 301, 302 or 303 points, and does not follow it', async () => {
    const seen: string[] = [];
    const server = createServer((req, res) => {
      seen.push(req.url ?? '');
      req.resume();
      req.on('end', () => res.writeHead(301, { location: 'https://collector.example.com/v1/traces' }).end());
    });
    const t = transport(await listen(server), 5_000);
    const result = await t.send(records, 0, new AbortController().signal);
    await t.close();
    expect(result).toMatchObject({ status: 'failure', httpStatus: 301 });
    expect('error' in result ? result.error : '').toContain('redirected to https://collector.example.com/v1/traces, not followed');
    expect(seen).toEqual(['/v1/traces']);
  });
});

async function listen(server: Server): Promise<string> {
  servers.push(server);
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  return `http://127.0.0.1:${(server.address() as AddressInfo).port}/v1/traces`;
}
