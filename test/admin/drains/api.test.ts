import { execFileSync } from 'node:child_process';
import { existsSync, mkdirSync, mkdtempSync, readdirSync, readFileSync, rmSync, statSync, writeFileSync } from 'node:fs';
import { request as httpRequest } from 'node:http';
import { gzipSync } from 'node:zlib';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { pino } from 'pino';
import { afterEach, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import { mountDrainsApi, SWAPPING } from '../../../src/admin/drains/routes.js';
import { AdminServer } from '../../../src/admin/server.js';
import { hostService } from '../../../src/core/host-services.js';
import { Telemetry } from '../../../src/shared/telemetry.js';
import { DRAINS_CONTROLLER, type DrainsController } from '../../../src/exporters/drains/controller.js';
import { TraceBatch } from '../../../src/otlp/batch.js';
import { requestOf, trace, traceIdWithR } from '../../processors/sampling/helpers.js';
import { exporterConfig, makeHarness, type Harness } from '../../exporters/drains/harness.js';
import { startSink, waitFor, type Sink } from '../../exporters/drains/sink.js';
import { testTls, type TestTls } from '../../helpers/tls.js';

const KEY = 'admin-key-for-tests';
let pki: TestTls;
let storage: string;
let admin: AdminServer;
let base: string;
let harness: Harness;
let sink: Sink;

beforeAll(() => {
  pki = testTls();
});

async function startExporter(drains: unknown[] = []): Promise<void> {
  harness = makeHarness(exporterConfig(drains), storage, new Telemetry({ defaultMetrics: false }));
  await harness.exporter.start(harness.host);
}

beforeEach(async () => {
  storage = mkdtempSync(join(tmpdir(), 'sluice-api-'));
  admin = new AdminServer({ telemetry: new Telemetry({ defaultMetrics: false }), logger: pino({ level: 'silent' }), isReady: () => true, apiKey: () => KEY });
  await admin.listen('127.0.0.1:0');
  // As the service does: the API finds the running exporter through the host.
  mountDrainsApi(admin, () => hostService(harness.host, DRAINS_CONTROLLER));
  base = `http://127.0.0.1:${admin.address()?.port ?? 0}`;
  sink = await startSink();
  await startExporter([{ name: 'from-config', url: sink.url, tls: { ca_file: pki.caFile }, sampling: [] }]);
});

afterEach(async () => {
  await harness.exporter.shutdown();
  await admin.close();
  await sink.close();
  rmSync(storage, { recursive: true, force: true });
});

/** The response fields these tests read (drain, list, error and test-delivery answers). */
interface ApiJson {
  id: string;
  name: string;
  status: string | number | null;
  createdAt: number;
  updatedAt: number;
  delivery: { secret: boolean } & Record<string, unknown>;
  sampling: unknown[];
  deliveries: { failed: number; spansDropped: Record<string, number>; lastError: string | null };
  drains: ApiJson[];
  error: { message: string } | string;
  latencyMs: number;
}

function errorMessage(json: ApiJson): string {
  return typeof json.error === 'string' ? json.error : json.error.message;
}

/** The URL the drains controller stored for `id`, unredacted. */
function storedUrl(id: string): string | undefined {
  return hostService(harness.host, DRAINS_CONTROLLER)?.get(id)?.definition.delivery.url;
}

async function call(method: string, path: string, body?: unknown, key: string | null = KEY): Promise<{ status: number; json: ApiJson; text: string }> {
  const headers: Record<string, string> = { 'content-type': 'application/json' };
  if (key !== null) headers['authorization'] = `Bearer ${key}`;
  const response = await fetch(`${base}${path}`, { method, headers, ...(body === undefined ? {} : { body: typeof body === 'string' ? body : JSON.stringify(body) }) });
  const text = await response.text();
  return { status: response.status, text, json: (text === '' ? {} : JSON.parse(text)) as ApiJson };
}

function drainBody(overrides: Record<string, unknown> = {}, delivery: Record<string, unknown> = {}): Record<string, unknown> {
  return {
    name: 'honeycomb',
    delivery: { type: 'otlphttp', endpoint: { traces: sink.url }, encoding: 'json', compression: 'gzip', headers: { 'x-honeycomb-team': 'team-secret-value' }, secret: 'signing-secret-value', tls: { ca: pki.ca }, ...delivery },
    sampling: [{ type: 'head_sampling', env: 'production', rate: 0.1, requestPath: '/api' }],
    ...overrides,
  };
}

describe('drains API', () => {
  it('answers 401 without the admin key and with a wrong one', async () => {
    expect((await call('GET', '/v1/drains', undefined, null)).status).toBe(401);
    expect((await call('GET', '/v1/drains', undefined, 'wrong')).status).toBe(401);
    expect((await call('POST', '/v1/drains', drainBody(), 'wrong')).status).toBe(401);
    expect((await call('DELETE', '/v1/drains/drn_x', undefined, null)).status).toBe(401);
  });

  it('creates a drain: 201 with id, timestamps, source and status, never the secret or header values', async () => {
    const before = Date.now();
    const { status, json, text } = await call('POST', '/v1/drains', drainBody());
    expect(status).toBe(201);
    expect(json.id).toMatch(/^drn_[A-Za-z0-9_-]{10,}$/);
    expect(json).toMatchObject({ name: 'honeycomb', source: 'api', status: 'enabled' });
    expect(json.createdAt).toBeGreaterThanOrEqual(before);
    expect(json.updatedAt).toBe(json.createdAt);
    expect(json.delivery).toMatchObject({ type: 'otlphttp', endpoint: { traces: sink.url }, encoding: 'json', compression: 'gzip', headers: ['x-honeycomb-team'], secret: true });
    expect(json.sampling).toEqual([{ type: 'head_sampling', env: 'production', rate: 0.1, requestPath: '/api' }]);
    expect(json.deliveries).toMatchObject({ succeeded: 0, failed: 0, spansSent: 0 });
    expect(text).not.toContain('team-secret-value');
    expect(text).not.toContain('signing-secret-value');
  });

  it('lists config and API drains, and reads one by id', async () => {
    const created = (await call('POST', '/v1/drains', drainBody())).json;
    const list = await call('GET', '/v1/drains');
    expect(list.status).toBe(200);
    expect(list.json.drains.map((d) => [d.name, (d as unknown as { source: string }).source])).toEqual([['from-config', 'config'], ['honeycomb', 'api']]);
    const one = await call('GET', `/v1/drains/${created.id}`);
    expect(one.status).toBe(200);
    expect(one.json.id).toBe(created.id);
  });

  it('answers 404 for an unknown id on read, update and delete', async () => {
    // An id with malformed percent-escapes names no drain either.
    expect((await call('GET', '/v1/drains/%E0')).status).toBe(404);
    expect((await call('GET', '/v1/drains/drn_nope')).status).toBe(404);
    expect((await call('PATCH', '/v1/drains/drn_nope', { name: 'x' })).status).toBe(404);
    expect((await call('DELETE', '/v1/drains/drn_nope')).status).toBe(404);
  });

  it('updates part of a drain and keeps the rest, secret included', async () => {
    const created = (await call('POST', '/v1/drains', drainBody())).json;
    await new Promise((resolve) => setTimeout(resolve, 5));
    const patched = await call('PATCH', `/v1/drains/${created.id}`, { name: 'renamed', sampling: [{ env: 'preview', rate: 1 }], delivery: { compression: 'none' } });
    expect(patched.status).toBe(200);
    expect(patched.json).toMatchObject({ id: created.id, name: 'renamed', createdAt: created.createdAt });
    expect(patched.json.updatedAt).toBeGreaterThan(created.updatedAt);
    expect(patched.json.delivery).toMatchObject({ compression: 'none', encoding: 'json', secret: true, headers: ['x-honeycomb-team'] });
    expect(patched.json.sampling).toEqual([{ type: 'head_sampling', env: 'preview', rate: 1 }]);
    const cleared = await call('PATCH', `/v1/drains/${created.id}`, { delivery: { secret: null } });
    expect(cleared.json.delivery.secret).toBe(false);
  });

  it('never answers the password written into a drain URL, and keeps it when a PATCH omits or echoes the URL', async () => {
    const withPassword = sink.url.replace('https://', 'https://drain-user:url-password-value@');
    const shown = sink.url.replace('https://', 'https://drain-user:***@');
    const created = await call('POST', '/v1/drains', drainBody({}, { endpoint: { traces: withPassword } }));
    expect(created.status).toBe(201);
    expect(created.json.delivery['endpoint']).toEqual({ traces: shown });
    const id = created.json.id;
    for (const answer of [created, await call('GET', `/v1/drains/${id}`), await call('GET', '/v1/drains')]) expect(answer.text).not.toContain('url-password-value');

    const renamed = await call('PATCH', `/v1/drains/${id}`, { name: 'renamed' });
    expect(renamed.json.delivery['endpoint']).toEqual({ traces: shown });
    expect(storedUrl(id)).toBe(withPassword);
    // The console sends back the URL it was shown.
    const echoed = await call('PATCH', `/v1/drains/${id}`, { delivery: { endpoint: { traces: shown }, compression: 'none' } });
    expect(echoed.status).toBe(200);
    expect(echoed.text).not.toContain('url-password-value');
    expect(storedUrl(id)).toBe(withPassword);

    const replaced = await call('PATCH', `/v1/drains/${id}`, { delivery: { endpoint: { traces: sink.url.replace('https://', 'https://drain-user:new-password-value@') } } });
    expect(replaced.text).not.toContain('new-password-value');
    expect(storedUrl(id)).toBe(sink.url.replace('https://', 'https://drain-user:new-password-value@'));
  });

  it('never answers a token written into a drain URL\'s query, and keeps it when a PATCH echoes the URL', async () => {
    const sep = sink.url.includes('?') ? '&' : '?';
    const withToken = `${sink.url}${sep}api_key=url-token-value&team=a`;
    const shown = `${sink.url}${sep}api_key=***&team=a`;
    const created = await call('POST', '/v1/drains', drainBody({}, { endpoint: { traces: withToken } }));
    expect(created.status).toBe(201);
    expect(created.json.delivery['endpoint']).toEqual({ traces: shown });
    const id = created.json.id;
    for (const answer of [created, await call('GET', `/v1/drains/${id}`), await call('GET', '/v1/drains')]) expect(answer.text).not.toContain('url-token-value');
    const echoed = await call('PATCH', `/v1/drains/${id}`, { delivery: { endpoint: { traces: shown } } });
    expect(echoed.status).toBe(200);
    expect(storedUrl(id)).toBe(withToken);
  });

  it('applies two PATCHes sent at once to one drain, each changing only the keys it sends', async () => {
    for (let round = 0; round < 3; round++) {
      const created = (await call('POST', '/v1/drains', drainBody({ name: `both-${round}` }))).json;
      const [renamed, disabled] = await Promise.all([
        call('PATCH', `/v1/drains/${created.id}`, { name: `renamed-${round}` }),
        call('PATCH', `/v1/drains/${created.id}`, { status: 'disabled' }),
      ]);
      expect([renamed.status, disabled.status]).toEqual([200, 200]);
      expect((await call('GET', `/v1/drains/${created.id}`)).json).toMatchObject({ name: `renamed-${round}`, status: 'disabled' });
    }
  });

  it('answers 404, never 500, to a PATCH that a DELETE sent at the same time overtakes', async () => {
    for (let round = 0; round < 3; round++) {
      const created = (await call('POST', '/v1/drains', drainBody())).json;
      const [deleted, patched] = await Promise.all([call('DELETE', `/v1/drains/${created.id}`), call('PATCH', `/v1/drains/${created.id}`, { name: 'late' })]);
      expect(deleted.status).toBe(204);
      // Which one the exporter takes first is up to the sockets; a PATCH taken second finds no drain.
      expect([200, 404]).toContain(patched.status);
      if (patched.status === 404) expect(patched.json.error).toEqual({ message: `drain ${created.id} does not exist`, code: 'not_found' });
      expect((await call('GET', `/v1/drains/${created.id}`)).status).toBe(404);
    }
  });

  it('disables and enables a drain', async () => {
    const created = (await call('POST', '/v1/drains', drainBody())).json;
    expect((await call('PATCH', `/v1/drains/${created.id}`, { status: 'disabled' })).json.status).toBe('disabled');
    expect((await call('PATCH', `/v1/drains/${created.id}`, { status: 'enabled' })).json.status).toBe('enabled');
    const errored = await call('PATCH', `/v1/drains/${created.id}`, { status: 'errored' });
    expect(errored.status).toBe(400);
    expect(errorMessage(errored.json)).toBe('status: must be one of enabled, disabled');
  });

  it('deletes a drain: 204, then 404, and its series leave /metrics', async () => {
    const created = (await call('POST', '/v1/drains', drainBody())).json;
    await harness.exporter.consume(TraceBatch.fromProto(requestOf(trace({ traceId: traceIdWithR(0n) }))));
    const before = await harness.telemetry.registry.metrics();
    expect(before).toContain(`queue="drain/${created.id}"`);
    const deleted = await call('DELETE', `/v1/drains/${created.id}`);
    expect(deleted.status).toBe(204);
    expect(deleted.text).toBe('');
    expect((await call('GET', `/v1/drains/${created.id}`)).status).toBe(404);
    const after = await harness.telemetry.registry.metrics();
    expect(after).not.toContain(created.id);
    // The config drain's series stay.
    const fromConfig = (await call('GET', '/v1/drains')).json.drains[0]?.id ?? '';
    expect(after).toContain(`queue="drain/${fromConfig}"`);
  });

  it('answers 409 to PATCH and DELETE of a config drain', async () => {
    const configDrain = (await call('GET', '/v1/drains')).json.drains[0] as ApiJson;
    const patch = await call('PATCH', `/v1/drains/${configDrain.id}`, { name: 'x' });
    expect(patch.status).toBe(409);
    expect(errorMessage(patch.json)).toContain('config');
    expect((await call('DELETE', `/v1/drains/${configDrain.id}`)).status).toBe(409);
  });

  const invalid: [string, () => Record<string, unknown>, string][] = [
    ['a rate above 1', () => drainBody({ sampling: [{ type: 'head_sampling', env: 'production', rate: 1.5 }] }), 'sampling[0].rate: must be a number from 0 to 1'],
    ['a negative rate', () => drainBody({ sampling: [{ env: 'production', rate: -0.1 }] }), 'sampling[0].rate: must be a number from 0 to 1'],
    ['an http URL', () => drainBody({}, { endpoint: { traces: 'http://example.com/v1/traces' } }), 'delivery.endpoint.traces: must be an https URL'],
    ['a URL that is not one', () => drainBody({}, { endpoint: { traces: 'not a url' } }), 'delivery.endpoint.traces: must be an https URL'],
    ['a missing URL', () => drainBody({}, { endpoint: {} }), 'delivery.endpoint.traces: required'],
    ['an unknown encoding', () => drainBody({}, { encoding: 'xml' }), 'delivery.encoding: must be one of proto, json'],
    ['an empty name', () => drainBody({ name: '' }), 'name: must not be empty'],
    ['a name of 129 characters', () => drainBody({ name: 'n'.repeat(129) }), 'name: must be at most 128 characters long'],
    ['a name of spaces only', () => drainBody({ name: '   ' }), 'name: must not be blank'],
    ['a name with a line break', () => drainBody({ name: 'prod\nDelete drain staging?' }), 'name: must not contain control characters (a line break, a tab)'],
    ['a name with a right-to-left override', () => drainBody({ name: 'invoice\u202Egpj.exe' }), 'name: must not contain control characters (a line break, a tab)'],
    ['21 headers', () => drainBody({}, { headers: Object.fromEntries(Array.from({ length: 21 }, (_, i) => [`h${i}`, 'v'])) }), 'delivery.headers: must have at most 20 headers'],
    ['a header value with a line break', () => drainBody({}, { headers: { 'x-team': 'a\nb' } }), 'delivery.headers.x-team: has a value a header cannot carry'],
    ['a header name given twice in different cases', () => drainBody({}, { headers: { 'X-Api-Key': 'a', 'x-api-key': 'b' } }), 'delivery.headers.x-api-key: repeats header X-Api-Key'],
    ['a header the exporter sets', () => drainBody({}, { headers: { 'Content-Encoding': 'br' } }), 'delivery.headers.Content-Encoding: is set by the exporter or by HTTP itself'],
    ['101 rules', () => drainBody({ sampling: Array.from({ length: 101 }, () => ({ env: 'production', rate: 0.5 })) }), 'sampling: must have at most 100 rules'],
    ['an unknown key', () => drainBody({ colour: 'red' }), 'colour: unknown key'],
    ['a CA that is not PEM', () => drainBody({}, { tls: { ca: 'nope' } }), 'delivery.tls.ca: must be a PEM certificate'],
    ['a CA whose PEM does not parse', () => drainBody({}, { tls: { ca: '-----BEGIN CERTIFICATE-----\nabc\n-----END CERTIFICATE-----\n' } }), 'delivery.tls.ca: must be a PEM certificate'],
    ['a name that is a number', () => drainBody({ name: 5 }), 'name: must be a string'],
    ['a URL that is a number', () => drainBody({}, { endpoint: { traces: 5 } }), 'delivery.endpoint.traces: must be a string'],
    ['an endpoint that is a string', () => drainBody({}, { endpoint: 'https://example.com/v1/traces' }), 'delivery.endpoint: must be an object'],
    ['a delivery that is a string', () => ({ name: 'd', delivery: 'https://example.com/v1/traces' }), 'delivery: must be an object'],
    ['a rule env that is a number', () => drainBody({ sampling: [{ env: 5, rate: 0.5 }] }), 'sampling[0].env: must be a string'],
    ['a requestPath without its leading /, which no request path begins with', () => drainBody({ sampling: [{ env: 'production', rate: 0.5, requestPath: 'api' }] }), 'sampling[0].requestPath: must begin with / (a request path, such as /api)'],
    ['an env with a space around it, which no trace\'s environment matches', () => drainBody({ sampling: [{ env: ' production', rate: 0.5 }] }), 'sampling[0].env: must not begin or end with a space (environments are compared whole)'],
  ];
  for (const [what, body, message] of invalid) {
    it(`answers 400 naming the field for ${what}`, async () => {
      const { status, json } = await call('POST', '/v1/drains', body());
      expect(status).toBe(400);
      expect(errorMessage(json)).toContain(message);
    });
  }

  it('words an http URL without insecure exactly as DESIGN does', async () => {
    const { json } = await call('POST', '/v1/drains', drainBody({}, { endpoint: { traces: 'http://example.com/v1/traces' } }));
    expect(errorMessage(json)).toBe('delivery.endpoint.traces: must be an https URL');
  });

  it('names a URL that is not https beside the delivery\'s other bad fields', async () => {
    const { status, json } = await call('POST', '/v1/drains', drainBody({ name: '' }, { endpoint: { traces: 'http://example.com/v1/traces' }, encoding: 'xml' }));
    expect(status).toBe(400);
    expect((json.error as unknown as { problems: string[] }).problems).toEqual(['name: must not be empty', 'delivery.encoding: must be one of proto, json', 'delivery.endpoint.traces: must be an https URL']);
  });

  it('answers 400 for a body that is not JSON, and for a bad PATCH', async () => {
    expect(errorMessage((await call('POST', '/v1/drains', '{not json')).json)).toBe('body: must be valid JSON');
    const created = (await call('POST', '/v1/drains', drainBody())).json;
    const bad = await call('PATCH', `/v1/drains/${created.id}`, { delivery: { endpoint: { traces: 'http://x' } } });
    expect(bad.status).toBe(400);
    expect(errorMessage(bad.json)).toContain('delivery.endpoint.traces: must be an https URL');
  });

  it('allows http with delivery.insecure', async () => {
    expect((await call('POST', '/v1/drains', drainBody({}, { endpoint: { traces: 'http://127.0.0.1:9/v1/traces' }, insecure: true }))).status).toBe(201);
  });

  it('allows http with insecure at the top of the body, as a YAML drain sets it, on create and PATCH', async () => {
    const created = await call('POST', '/v1/drains', { ...drainBody({}, { endpoint: { traces: 'http://127.0.0.1:9/v1/traces' } }), insecure: true });
    expect(created.status).toBe(201);
    expect(created.json.delivery).toMatchObject({ insecure: true });
    const secure = (await call('POST', '/v1/drains', drainBody({ name: 'secure' }))).json;
    const patched = await call('PATCH', `/v1/drains/${secure.id}`, { insecure: true, delivery: { endpoint: { traces: 'http://127.0.0.1:9/v1/traces' }, headers: {} } });
    expect(patched.status).toBe(200);
    expect(patched.json.delivery).toMatchObject({ insecure: true, endpoint: { traces: 'http://127.0.0.1:9/v1/traces' } });
  });

  it('refuses a drain beyond 1000 drains', async () => {
    const changes = { name: 'filler', enabled: false, delivery: { url: sink.url, encoding: 'json' as const, compression: 'none' as const, headers: {}, insecure: false }, sampling: [] };
    for (let i = 0; i < 999; i++) await harness.exporter.create(changes);
    const refused = await call('POST', '/v1/drains', drainBody());
    expect(refused.status).toBe(400);
    expect(errorMessage(refused.json)).toContain('at most 1000 drains');
  }, 120_000);

  it('creates only the drains that fit under 1000 when creates arrive at once', async () => {
    const changes = { name: 'filler', enabled: false, delivery: { url: sink.url, encoding: 'json' as const, compression: 'none' as const, headers: {}, insecure: false }, sampling: [] };
    // With the config drain, 999 drains: room for one more.
    for (let i = 0; i < 998; i++) await harness.exporter.create(changes);
    const answers = await Promise.all([1, 2, 3].map((i) => call('POST', '/v1/drains', drainBody({ name: `racer-${i}` }))));
    expect(answers.map((answer) => answer.status).sort()).toEqual([201, 400, 400]);
    for (const refused of answers.filter((answer) => answer.status === 400)) expect(errorMessage(refused.json)).toContain('at most 1000 drains');
    expect((await call('GET', '/v1/drains')).json.drains).toHaveLength(1000);
  }, 120_000);

  it('persists API drains atomically and reads them back after a restart', async () => {
    const created = (await call('POST', '/v1/drains', drainBody())).json;
    await harness.exporter.shutdown();
    const file = join(storage, 'drains.json');
    expect(statSync(file).mode & 0o777).toBe(0o600);
    expect(JSON.parse(readFileSync(file, 'utf8')).drains).toHaveLength(1);
    await startExporter([]);
    const read = await call('GET', `/v1/drains/${created.id}`);
    expect(read.status).toBe(200);
    expect(read.json).toMatchObject({ id: created.id, name: 'honeycomb', createdAt: created.createdAt, source: 'api' });
    expect(read.json.delivery.secret).toBe(true);
  });

  it('applies API changes to delivery without a restart', async () => {
    const created = (await call('POST', '/v1/drains', drainBody({ sampling: [] }, { secret: 'k' }))).json;
    const consume = (r: bigint) => harness.exporter.consume(TraceBatch.fromProto(requestOf(trace({ path: '/api', traceId: traceIdWithR(r) }))));
    await consume(1n);
    // The config drain (same sink) and the new one both deliver.
    await waitFor(() => sink.spanIds().length === 6, 10_000, 'two drains delivering');
    expect(sink.requests.some((r) => sink.signatureValid(r, 'k'))).toBe(true);
    await call('PATCH', `/v1/drains/${created.id}`, { sampling: [{ env: 'production', rate: 0 }] });
    await consume(2n);
    await waitFor(() => sink.spanIds().length >= 9, 10_000, 'config drain delivery');
    await new Promise((resolve) => setTimeout(resolve, 200));
    expect(sink.spanIds()).toHaveLength(9);
  });

  it('shows a drain whose deliveries fail as errored, with its counters', async () => {
    sink.behaviour = 400;
    const created = (await call('POST', '/v1/drains', drainBody({ sampling: [] }))).json;
    await harness.exporter.consume(TraceBatch.fromProto(requestOf(trace({}))));
    await waitFor(() => (harness.exporter.get(created.id)?.stats.counters.deliveriesFailed ?? 0) > 0, 10_000, 'a failed delivery');
    const read = (await call('GET', `/v1/drains/${created.id}`)).json;
    expect(read.status).toBe('errored');
    expect(read.deliveries.failed).toBe(1);
    expect(read.deliveries.spansDropped.permanent).toBe(3);
    expect(read.deliveries.lastError).toContain('HTTP 400');
  });

  it('test-delivers a sample trace and reports the outcome', async () => {
    const ok = await call('POST', '/v1/drains/test', { delivery: drainBody().delivery });
    expect(ok.status).toBe(200);
    expect(ok.json).toMatchObject({ ok: true, status: 200 });
    expect(typeof ok.json.latencyMs).toBe('number');
    await waitFor(() => sink.requests.length === 1);
    sink.behaviour = 503;
    expect((await call('POST', '/v1/drains/test', { delivery: drainBody().delivery })).json).toMatchObject({ ok: false, status: 503 });
    const unreachable = await call('POST', '/v1/drains/test', { delivery: { endpoint: { traces: 'https://127.0.0.1:1/v1/traces' } } });
    expect(unreachable.json).toMatchObject({ ok: false, status: null });
    expect(typeof unreachable.json.error).toBe('string');
    const invalidBody = await call('POST', '/v1/drains/test', { delivery: { endpoint: { traces: 'ftp://x' } } });
    expect(invalidBody.status).toBe(400);
  });

  it('reports a test delivery whose span the destination rejects in a partial success as failed, with the reason it gives', async () => {
    sink.body = JSON.stringify({ partialSuccess: { rejectedSpans: '1', errorMessage: 'span rejected: the key may not write traces' } });
    const rejected = await call('POST', '/v1/drains/test', { delivery: drainBody().delivery });
    expect(rejected.json).toMatchObject({ ok: false, status: 200, error: 'the destination rejected the test span: span rejected: the key may not write traces' });
    // A partial success that rejects nothing is the OTLP spec's warning: the span was taken.
    sink.body = JSON.stringify({ partialSuccess: { rejectedSpans: '0', errorMessage: 'attribute values were truncated' } });
    expect((await call('POST', '/v1/drains/test', { delivery: drainBody().delivery })).json).toMatchObject({ ok: true, status: 200 });
  });

  it('test-delivers over a stored drain with its secret, header values and CA, changing only what the body gives', async () => {
    const created = (await call('POST', '/v1/drains', drainBody())).json;
    const stored = await call('POST', '/v1/drains/test', { drain: created.id });
    expect(stored.json).toMatchObject({ ok: true, status: 200 });
    await waitFor(() => sink.requests.length === 1);
    const [request] = sink.requests;
    expect(request === undefined ? false : sink.signatureValid(request, 'signing-secret-value')).toBe(true);
    expect(request?.headers['x-honeycomb-team']).toBe('team-secret-value');
    // As every delivered span, the test trace carries both platform attributes.
    expect(request?.request.resourceSpans[0]?.resource?.attributes.map((a) => a.key)).toEqual(expect.arrayContaining(['platform.projectId', 'platform.deploymentId']));
    // Header values go only to the origin they were set for: a test elsewhere gives them again.
    const elsewhere = await call('POST', '/v1/drains/test', { drain: created.id, delivery: { endpoint: { traces: 'https://127.0.0.1:1/v1/traces' } } });
    expect(elsewhere.status).toBe(400);
    expect(errorMessage(elsewhere.json)).toMatch(/^delivery\.headers: the endpoint moves from https:\/\/127\.0\.0\.1:\d+ to https:\/\/127\.0\.0\.1:1; give the headers again/);
    const moved = await call('POST', '/v1/drains/test', { drain: created.id, delivery: { endpoint: { traces: 'https://127.0.0.1:1/v1/traces' }, headers: {} } });
    expect(moved.json).toMatchObject({ ok: false, status: null });
    const bad = await call('POST', '/v1/drains/test', { drain: created.id, delivery: { encoding: 'xml' } });
    expect(bad.status).toBe(400);
    expect(errorMessage(bad.json)).toMatch(/^delivery\.encoding: /);
    expect((await call('POST', '/v1/drains/test', { drain: 'drn_missing' })).status).toBe(404);
    expect(sink.requests).toHaveLength(1);
    // A config drain's CA is its tls.ca_file.
    const fromConfig = (await call('GET', '/v1/drains')).json.drains.find((drain) => drain.name === 'from-config');
    expect((await call('POST', '/v1/drains/test', { drain: fromConfig?.id })).json).toMatchObject({ ok: true, status: 200 });
  });

  it('reads a gzip body, answers 415 to an encoding it cannot read and 413 to a declared length over the limit before any byte', async () => {
    const gzipped = await fetch(`${base}/v1/drains`, {
      method: 'POST',
      headers: { authorization: `Bearer ${KEY}`, 'content-type': 'application/json', 'content-encoding': 'gzip' },
      body: gzipSync(JSON.stringify(drainBody())),
    });
    expect(gzipped.status).toBe(201);
    const brotli = await fetch(`${base}/v1/drains`, { method: 'POST', headers: { authorization: `Bearer ${KEY}`, 'content-encoding': 'br' }, body: 'x' });
    expect(brotli.status).toBe(415);
    expect(((await brotli.json()) as { error: { message: string } }).error.message).toBe('content-encoding: br is not supported (gzip, deflate or none)');
    const port = admin.address()?.port ?? 0;
    // A compressed body is bounded as sent too: one declared over the limit cannot fit, whatever it inflates to.
    for (const encoding of ['identity', 'gzip']) {
      const early = await new Promise<number>((resolve, reject) => {
        const headers = { authorization: `Bearer ${KEY}`, 'content-encoding': encoding, 'content-length': 2 * 1024 * 1024 };
        const req = httpRequest({ host: '127.0.0.1', port, method: 'POST', path: '/v1/drains', headers }, (res) => {
          res.resume();
          resolve(res.statusCode ?? 0);
          req.destroy();
        });
        req.on('error', reject);
        req.flushHeaders();
      });
      expect(early).toBe(413);
    }
  });

  it('answers 405 for a method the path does not take, and HEAD as GET without a body', async () => {
    const put = await fetch(`${base}/v1/drains`, { method: 'PUT', headers: { authorization: `Bearer ${KEY}` } });
    expect(put.status).toBe(405);
    expect(put.headers.get('allow')).toBe('GET, HEAD, POST');
    expect((await call('GET', '/v1/drains/test')).status).toBe(405);
    const created = (await call('POST', '/v1/drains', drainBody())).json;
    const post = await fetch(`${base}/v1/drains/${created.id}`, { method: 'POST', headers: { authorization: `Bearer ${KEY}` } });
    expect(post.headers.get('allow')).toBe('GET, HEAD, PATCH, DELETE');
    for (const path of ['/v1/drains', `/v1/drains/${created.id}`]) {
      const head = await fetch(`${base}${path}`, { method: 'HEAD', headers: { authorization: `Bearer ${KEY}` } });
      expect(head.status).toBe(200);
      expect(head.headers.get('content-type')).toBe('application/json');
      expect(await head.text()).toBe('');
    }
    expect((await fetch(`${base}/v1/drains/drn_nope`, { method: 'HEAD', headers: { authorization: `Bearer ${KEY}` } })).status).toBe(404);
  });

  it('keeps stored URL credentials under an edited redacted URL, and refuses to move header values to another origin', async () => {
    const sep = sink.url.includes('?') ? '&' : '?';
    const withSecrets = `${sink.url.replace('https://', 'https://drain-user:url-password-value@')}${sep}token=url-token-value`;
    const created = (await call('POST', '/v1/drains', drainBody({}, { endpoint: { traces: withSecrets } }))).json;
    // The console shows the redacted URL; the user edits only its path.
    const shown = created.delivery['endpoint'] as { traces: string };
    const edited = shown.traces.replace('/v1/traces', '/v2/traces');
    expect(edited).toContain('***');
    const patched = await call('PATCH', `/v1/drains/${created.id}`, { delivery: { endpoint: { traces: edited } } });
    expect(patched.status).toBe(200);
    expect(storedUrl(created.id)).toBe(withSecrets.replace('/v1/traces', '/v2/traces'));
    // Another origin: `***` stands for nothing there, and stored header values stay behind.
    const moved = await call('PATCH', `/v1/drains/${created.id}`, { delivery: { endpoint: { traces: 'https://u:***@elsewhere.example/v1/traces' } } });
    expect(moved.status).toBe(400);
    expect(errorMessage(moved.json)).toMatch(/^delivery\.endpoint\.traces: `\*\*\*` stands for a stored credential, which is not carried to another origin/);
    const noHeaders = await call('PATCH', `/v1/drains/${created.id}`, { delivery: { endpoint: { traces: 'https://elsewhere.example/v1/traces' } } });
    expect(noHeaders.status).toBe(400);
    expect(errorMessage(noHeaders.json)).toMatch(/^delivery\.headers: the endpoint moves from https:\/\/127\.0\.0\.1:\d+ to https:\/\/elsewhere\.example; give the headers again/);
    const withHeaders = await call('PATCH', `/v1/drains/${created.id}`, { delivery: { endpoint: { traces: 'https://elsewhere.example/v1/traces' }, headers: { 'x-other': 'v' } } });
    expect(withHeaders.status).toBe(200);
    expect(hostService(harness.host, DRAINS_CONTROLLER)?.get(created.id)?.definition.delivery.headers).toEqual({ 'x-other': 'v' });
  });

  it('answers 401 before saying whether drains are configured, and 503 while the config is being applied', async () => {
    const other = new AdminServer({ telemetry: new Telemetry({ defaultMetrics: false }), logger: pino({ level: 'silent' }), isReady: () => true, apiKey: () => KEY });
    await other.listen('127.0.0.1:0');
    let lookup: DrainsController | typeof SWAPPING | undefined;
    mountDrainsApi(other, () => lookup);
    const otherBase = `http://127.0.0.1:${other.address()?.port ?? 0}`;
    try {
      expect((await fetch(`${otherBase}/v1/drains`)).status).toBe(401);
      expect((await fetch(`${otherBase}/v1/drains`, { headers: { authorization: `Bearer ${KEY}` } })).status).toBe(404);
      lookup = SWAPPING;
      const swapping = await fetch(`${otherBase}/v1/drains`, { headers: { authorization: `Bearer ${KEY}` } });
      expect(swapping.status).toBe(503);
      expect(swapping.headers.get('retry-after')).toBe('1');
      // A stopped exporter still at hand changes nothing and says so.
      lookup = hostService(harness.host, DRAINS_CONTROLLER);
      await harness.exporter.shutdown();
      const refused = await fetch(`${otherBase}/v1/drains`, { method: 'POST', headers: { authorization: `Bearer ${KEY}`, 'content-type': 'application/json' }, body: JSON.stringify(drainBody()) });
      expect(refused.status).toBe(503);
      expect(((await refused.json()) as { error: { message: string } }).error.message).toMatch(/the drains exporter is stopping/);
      expect(existsSync(join(storage, 'drains.json'))).toBe(false);
    } finally {
      await other.close();
    }
  });

  it('creates a drain whose body arrives during a reload with the exporter running once it has arrived', async () => {
    const port = admin.address()?.port ?? 0;
    const text = JSON.stringify(drainBody({ name: 'during-reload' }));
    const answer = new Promise<{ status: number; body: string }>((resolve, reject) => {
      const req = httpRequest({ host: '127.0.0.1', port, method: 'POST', path: '/v1/drains', headers: { authorization: `Bearer ${KEY}`, 'content-type': 'application/json', 'content-length': Buffer.byteLength(text) } }, (res) => {
        let body = '';
        res.setEncoding('utf8');
        res.on('data', (chunk: string) => (body += chunk));
        res.on('end', () => resolve({ status: res.statusCode ?? 0, body }));
      });
      req.on('error', reject);
      req.write(text.slice(0, 10));
      // The reload: the running exporter stops and the next one starts on the same storage.
      void (async () => {
        await new Promise((r) => setTimeout(r, 50));
        await harness.exporter.shutdown();
        await startExporter([{ name: 'from-config', url: sink.url, tls: { ca_file: pki.caFile }, sampling: [] }]);
        req.end(text.slice(10));
      })().catch(reject);
    });
    const { status, body } = await answer;
    expect(status).toBe(201);
    const id = (JSON.parse(body) as { id: string }).id;
    expect((await call('GET', `/v1/drains/${id}`)).status).toBe(200);
    const file = JSON.parse(readFileSync(join(storage, 'drains.json'), 'utf8')) as { drains: { id: string }[] };
    expect(file.drains.map((d) => d.id)).toEqual([id]);
  });

  // A small tmpfs makes a real full disk; mounting one needs root.
  it.runIf(process.getuid?.() === 0)('answers 503 storage_full to a create, update and delete a full disk refuses, changing nothing, and takes them once there is room', async () => {
    await harness.exporter.shutdown();
    const full = join(storage, 'full');
    mkdirSync(full);
    execFileSync('mount', ['-t', 'tmpfs', '-o', 'size=1m', 'tmpfs', full]);
    try {
      harness = makeHarness(exporterConfig([]), full, new Telemetry({ defaultMetrics: false }));
      await harness.exporter.start(harness.host);
      const kept = (await call('POST', '/v1/drains', drainBody({ name: 'kept' }))).json;
      const file = join(full, 'drains.json');
      const stored = readFileSync(file, 'utf8');
      try {
        writeFileSync(join(full, 'filler'), Buffer.alloc(2 * 1024 * 1024));
      } catch (err) {
        expect((err as NodeJS.ErrnoException).code).toBe('ENOSPC');
      }

      const refusals = [
        await call('POST', '/v1/drains', drainBody({ name: 'refused' })),
        await call('PATCH', `/v1/drains/${kept.id}`, { name: 'renamed' }),
        await call('DELETE', `/v1/drains/${kept.id}`),
      ];
      for (const refused of refusals) {
        expect(refused.status).toBe(503);
        expect(refused.json.error).toMatchObject({ code: 'storage_full' });
        expect(errorMessage(refused.json)).toMatch(/^the drains could not be stored in .*drains\.json: the storage is full \(ENOSPC: no space left on device.*\); nothing was changed, try again once there is room$/);
      }
      expect((await call('GET', '/v1/drains')).json.drains.map((d) => [d.id, d.name])).toEqual([[kept.id, 'kept']]);
      expect(readFileSync(file, 'utf8')).toBe(stored);
      expect(readdirSync(full).filter((name) => name.startsWith('drains.json'))).toEqual(['drains.json']);

      rmSync(join(full, 'filler'));
      expect((await call('PATCH', `/v1/drains/${kept.id}`, { name: 'renamed' })).status).toBe(200);
      expect((await call('POST', '/v1/drains', drainBody({ name: 'created' }))).status).toBe(201);
      expect((await call('DELETE', `/v1/drains/${kept.id}`)).status).toBe(204);
      expect((JSON.parse(readFileSync(file, 'utf8')) as { drains: { name: string }[] }).drains.map((d) => d.name)).toEqual(['created']);
    } finally {
      await harness.exporter.shutdown();
      execFileSync('umount', [full]);
    }
  });
});
