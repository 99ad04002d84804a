import { connect } from 'node:net';
import { pino } from 'pino';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { bearerMatches } from '../../src/admin/auth.js';
import { sendJson } from '../../src/admin/respond.js';
import { AdminServer } from '../../src/admin/server.js';
import { readBody } from '../../src/core/http-body.js';
import { Telemetry } from '../../src/shared/telemetry.js';
import { waitUntil } from '../helpers/daemon.js';
import { rawClient } from '../helpers/raw-clients.js';

let ready = false;
let apiKey: string | undefined = 'admin-secret';
let telemetry: Telemetry;
let admin: AdminServer;
let base: string;

beforeEach(async () => {
  ready = false;
  apiKey = 'admin-secret';
  telemetry = new Telemetry({ defaultMetrics: false });
  admin = new AdminServer({ telemetry, logger: pino({ level: 'silent' }), isReady: () => ready, apiKey: () => apiKey });
  await admin.listen('127.0.0.1:0');
  base = `http://127.0.0.1:${admin.address()?.port ?? 0}`;
});

afterEach(async () => {
  await admin.close();
});

describe('admin endpoint', () => {
  it('does not log a client that leaves in the middle of its body as a failure', async () => {
    const lines: { level: number; msg: string }[] = [];
    const logger = pino({ level: 'debug' }, { write: (line: string) => void lines.push(JSON.parse(line) as { level: number; msg: string }) });
    const other = new AdminServer({ telemetry, logger, isReady: () => true, apiKey: () => apiKey });
    await other.listen('127.0.0.1:0');
    let settled!: () => void;
    const handled = new Promise<void>((resolve) => (settled = resolve));
    other.addRoute('/v1/slow', async (req) => {
      try {
        await readBody(req, 'identity', 1024);
      } finally {
        setImmediate(settled);
      }
    });
    try {
      const socket = connect(other.address()?.port ?? 0, '127.0.0.1');
      await new Promise((resolve) => socket.once('connect', resolve));
      socket.write('POST /v1/slow HTTP/1.1\r\nhost: x\r\ncontent-length: 100\r\n\r\n{"par');
      await new Promise((resolve) => setTimeout(resolve, 50));
      socket.destroy();
      await handled;
      expect(lines.filter((line) => line.level >= 50)).toEqual([]);
      expect(lines.map((line) => line.msg)).toContain('admin request aborted by the client');
    } finally {
      await other.close();
    }
  });

  it('answers /healthz with 200 while alive', async () => {
    const res = await fetch(`${base}/healthz`);
    expect(res.status).toBe(200);
    expect(await res.json()).toEqual({ status: 'alive' });
  });

  it('answers /readyz with 503 until every component started, then 200', async () => {
    expect((await fetch(`${base}/readyz`)).status).toBe(503);
    ready = true;
    expect((await fetch(`${base}/readyz`)).status).toBe(200);
  });

  it('serves the telemetry registry as Prometheus text on /metrics', async () => {
    telemetry.counter('sluice_test_total', 'A test counter.', ['receiver']).inc({ receiver: 'otlp' }, 3);
    const res = await fetch(`${base}/metrics`);
    expect(res.status).toBe(200);
    expect(res.headers.get('content-type')).toMatch(/^text\/plain/);
    expect(await res.text()).toContain('sluice_test_total{receiver="otlp"} 3');
  });

  it('marks every JSON answer, the admin key\'s and the errors, as never to be stored or sniffed', async () => {
    admin.addRoute('/v1/secret-ish', (_req, res) => sendJson(res, 200, { spend: 1 }));
    for (const path of ['/v1/secret-ish', '/nope', '/healthz']) {
      const res = await fetch(`${base}${path}`);
      expect(res.headers.get('cache-control')).toBe('no-store');
      expect(res.headers.get('x-content-type-options')).toBe('nosniff');
    }
  });

  it('answers an unknown path with a JSON 404', async () => {
    const res = await fetch(`${base}/nope`);
    expect(res.status).toBe(404);
    expect(await res.json()).toEqual({ error: { message: 'not found: /nope', code: 'not_found' } });
  });

  it('answers 400 to a request target URL cannot read, and keeps serving', async () => {
    const port = admin.address()?.port ?? 0;
    for (const target of ['http://[/', 'http://a:99999/']) {
      const answer = await rawRequest(port, `GET ${target} HTTP/1.1\r\nHost: x\r\nConnection: close\r\n\r\n`);
      expect(answer).toMatch(/^HTTP\/1\.1 400 /);
      expect(answer).toContain('{"error":{"message":"the request target is not a valid URL path","code":"invalid_request"}}');
    }
    expect((await fetch(`${base}/healthz`)).status).toBe(200);
  });

  it('reads a path beginning with // as a path, not as a host and the route after it', async () => {
    admin.addRoute('/v1/drains', (_req, res, url) => sendJson(res, 200, { path: url.pathname }));
    const port = admin.address()?.port ?? 0;
    for (const target of ['//x/v1/drains', '//v1/drains', '//healthz', '//[', '//%/']) {
      const answer = await rawRequest(port, `GET ${target} HTTP/1.1\r\nHost: x\r\nConnection: close\r\n\r\n`);
      expect(answer).toMatch(/^HTTP\/1\.1 404 /);
      expect(answer).toContain(`{"error":{"message":"not found: ${target}","code":"not_found"}}`);
    }
    const proxied = await rawRequest(port, 'GET http://admin.example/v1/drains/drn_1 HTTP/1.1\r\nHost: x\r\nConnection: close\r\n\r\n');
    expect(proxied).toContain('{"path":"/v1/drains/drn_1"}');
  });

  it('answers another method on a builtin path with a JSON 405 and Allow', async () => {
    const res = await fetch(`${base}/healthz`, { method: 'POST' });
    expect(res.status).toBe(405);
    expect(res.headers.get('allow')).toBe('GET, HEAD');
    expect(await res.json()).toEqual({ error: { message: 'POST is not allowed on /healthz', code: 'method_not_allowed' } });
  });

  it('serves a mounted route and everything under it until it is removed', async () => {
    const remove = admin.addRoute('/v1/drains', (_req, res, url) => sendJson(res, 200, { path: url.pathname }));
    expect(await (await fetch(`${base}/v1/drains/drn_1`)).json()).toEqual({ path: '/v1/drains/drn_1' });
    expect((await fetch(`${base}/v1/drainsx`)).status).toBe(404);
    remove();
    expect((await fetch(`${base}/v1/drains`)).status).toBe(404);
  });

  it('guards a route with the admin key', async () => {
    admin.addRoute('/v1/drains', (req, res) => {
      if (admin.requireAdminKey(req, res)) sendJson(res, 200, { ok: true });
    });
    for (const headers of [{}, { authorization: 'Bearer wrong' }]) {
      const res = await fetch(`${base}/v1/drains`, { headers });
      expect(res.status).toBe(401);
      expect(await res.json()).toEqual({ error: { message: 'missing or wrong admin API key', code: 'unauthorized' } });
    }
    expect((await fetch(`${base}/v1/drains`, { headers: { authorization: 'Bearer admin-secret' } })).status).toBe(200);
  });

  it('refuses every request to a guarded route when no admin key is configured', async () => {
    apiKey = undefined;
    admin.addRoute('/v1/drains', (req, res) => {
      if (admin.requireAdminKey(req, res)) sendJson(res, 200, { ok: true });
    });
    const res = await fetch(`${base}/v1/drains`, { headers: { authorization: 'Bearer ' } });
    expect(res.status).toBe(401);
    expect(await res.json()).toEqual({ error: { message: 'the admin API is disabled: set service.admin.api_key', code: 'admin_api_disabled' } });
  });

  it('answers 500 in JSON when a mounted handler throws', async () => {
    admin.addRoute('/boom', () => {
      throw new Error('kaput');
    });
    const res = await fetch(`${base}/boom`);
    expect(res.status).toBe(500);
    expect(await res.json()).toEqual({ error: { message: 'internal error', code: 'internal_error' } });
  });
});

describe('admin endpoint answers given before the body is read', () => {
  it('close the connection instead of reading and dropping the rest of the body, and keep a bodiless request\'s open', async () => {
    admin.addRoute('/v1/guarded', (req, res) => {
      if (admin.requireAdminKey(req, res)) sendJson(res, 200, { ok: true });
    });
    const port = admin.address()?.port ?? 0;
    // A client without the key announcing 10 MiB: answered on its headers, it must not get to send them all.
    const refused = await rawClient(port, 'POST /v1/guarded HTTP/1.1\r\nHost: x\r\nContent-Length: 10485760\r\n\r\n');
    try {
      await waitUntil(() => refused.received().includes('"code":"unauthorized"'), 5_000, 'the 401');
      expect(refused.received()).toMatch(/^HTTP\/1\.1 401 [^]*\r\nconnection: close\r\n/i);
      await refused.closed;
    } finally {
      refused.socket.destroy();
    }
    const bodiless = await rawClient(port, 'GET /v1/guarded HTTP/1.1\r\nHost: x\r\n\r\n');
    try {
      await waitUntil(() => bodiless.received().includes('"code":"unauthorized"'), 5_000, 'the 401');
      expect(bodiless.received()).toMatch(/\r\nconnection: keep-alive\r\n/i);
    } finally {
      bodiless.socket.destroy();
    }
  });
});

describe('bearer comparison', () => {
  it('matches only the exact key', () => {
    expect(bearerMatches('Bearer k3y', 'k3y')).toBe(true);
    expect(bearerMatches('Bearer k3y2', 'k3y')).toBe(false);
    expect(bearerMatches('Basic k3y', 'k3y')).toBe(false);
    expect(bearerMatches(undefined, 'k3y')).toBe(false);
  });
});

/** Sends `text` as it is (fetch would normalize the target) and returns everything the server wrote back. */
function rawRequest(port: number, text: string): Promise<string> {
  return new Promise((resolve, reject) => {
    const socket = connect(port, '127.0.0.1', () => socket.end(text));
    let answer = '';
    socket.setEncoding('utf8');
    socket.on('data', (chunk: string) => (answer += chunk));
    socket.on('end', () => resolve(answer));
    socket.on('error', reject);
  });
}
