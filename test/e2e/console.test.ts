// Issue 15 end to end: Debian's chromium, driven by playwright-core, signs in
// to the built daemon's console, creates a drain with three sampling rules,
// reorders them, tests delivery to a live and a dead HTTPS sink, and checks
// that the sink receives exactly what the reordered rules select. Then it
// edits the secret, deletes the drain, and visits the Gateway and Pipeline
// screens while traffic flows. No browser is downloaded: the test runs
// /usr/bin/chromium (.ci/run installs the package when missing).
import { createHmac } from 'node:crypto';
import { existsSync } from 'node:fs';
import { mkdir, mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { SpanKind, context, trace as otelTrace } from '@opentelemetry/api';
import { OTLPTraceExporter } from '@opentelemetry/exporter-trace-otlp-proto';
import { resourceFromAttributes } from '@opentelemetry/resources';
import { BasicTracerProvider, BatchSpanProcessor } from '@opentelemetry/sdk-trace-base';
import OpenAI from 'openai';
import type { BrowserContext, Page } from 'playwright-core';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { hexToBytes } from '../../src/otlp/ids.js';
import { RuleSet, type SamplingRule } from '../../src/processors/sampling/rules.js';
import { launchChromiumProfile } from '../helpers/chromium.js';
import { freePort, startDaemon, type RunningDaemon } from '../helpers/daemon.js';
import { startOtlpSink, type OtlpSink } from '../helpers/otlp-sink.js';
import { testTls } from '../helpers/tls.js';
import { completion, sendJson, startUpstream, type Upstream } from '../receivers/gateway/harness.js';

const ADMIN_KEY = 'console-admin-key';
const GATEWAY_KEY = 'console-gateway-key';
// Screenshots go to docs/ when asked (SLUICE_SCREENSHOTS=1, as the README says), else to a temporary folder.
const DOCS = fileURLToPath(new URL('../../docs/', import.meta.url));

// The rules as typed into the form; the test moves the last to the top.
const TYPED: SamplingRule[] = [
  { environment: 'production', percentage: 100, path_prefix: '/api' },
  { environment: 'preview', percentage: 50 },
  { environment: 'production', percentage: 0, path_prefix: '/api/cart' },
];
const REORDERED: SamplingRule[] = [TYPED[2], TYPED[0], TYPED[1]] as SamplingRule[];

interface SentTrace {
  traceId: string;
  env: string;
  path: string;
}

async function sendTraces(url: string, envs: readonly string[], perPath: number): Promise<SentTrace[]> {
  const sent: SentTrace[] = [];
  for (const env of envs) {
    const provider = new BasicTracerProvider({
      resource: resourceFromAttributes({ 'service.name': `shop-${env}`, 'deployment.environment.name': env }),
      spanProcessors: [new BatchSpanProcessor(new OTLPTraceExporter({ url }), { maxExportBatchSize: 20, scheduledDelayMillis: 20 })],
    });
    const tracer = provider.getTracer('console-e2e');
    for (const path of ['/api/cart', '/api/orders', '/home']) {
      for (let i = 0; i < perPath; i++) {
        const root = tracer.startSpan(`GET ${path}`, { kind: SpanKind.SERVER, attributes: { 'url.path': path } });
        tracer.startSpan('SELECT', { kind: SpanKind.CLIENT }, otelTrace.setSpan(context.active(), root)).end();
        root.end();
        sent.push({ traceId: root.spanContext().traceId, env, path });
      }
    }
    await provider.forceFlush();
    await provider.shutdown();
  }
  return sent;
}

// The page answers within a moment; under a loaded CI machine give it time (vitest's default is 1 s).
function poll<T>(read: () => T | Promise<T>) {
  return expect.poll(read, { timeout: 15_000, interval: 100 });
}

let daemon: RunningDaemon;
let sink: OtlpSink;
let upstream: Upstream;
let browser: BrowserContext;
let page: Page;
let profile: string;
let shots: string;
let otlpUrl: string;
let gatewayPort: number;
let base: string;
const pageErrors: string[] = [];

async function screenshot(name: string): Promise<void> {
  const path = join(shots, `console-${name}.png`);
  await page.screenshot({ path, fullPage: true });
  expect(existsSync(path)).toBe(true);
}

function adminApi(path: string, init: RequestInit = {}): Promise<Response> {
  return fetch(`${base}${path}`, { ...init, headers: { authorization: `Bearer ${ADMIN_KEY}`, 'content-type': 'application/json', ...init.headers } });
}

beforeAll(async () => {
  const tls = testTls();
  sink = await startOtlpSink();
  upstream = await startUpstream((_body, res) => sendJson(res, 200, completion('hello from upstream')));
  const otlpPort = await freePort();
  gatewayPort = await freePort();
  const deadUpstream = await freePort();
  const deadDrain = await freePort();
  otlpUrl = `http://127.0.0.1:${otlpPort}/v1/traces`;
  daemon = await startDaemon(
    ({ dir, adminPort }) => `
receivers:
  otlp:
    protocols:
      http: { endpoint: 127.0.0.1:${otlpPort} }
  gateway:
    endpoint: 127.0.0.1:${gatewayPort}
    environment: production
    api_keys:
      - { key: "${GATEWAY_KEY}", name: team-console, requests_per_minute: 600, budget: { usd: 5, period: day } }
    providers:
      down: { type: openai, base_url: "http://127.0.0.1:${deadUpstream}/v1", api_key: upstream-key }
      up: { type: openai, base_url: "${upstream.url}", api_key: upstream-key }
    models:
      - id: openai/gpt-4o-mini
        name: GPT-4o mini
        pricing: { input: "0.0001", output: "0.001" }
        endpoints:
          - { provider: down, model: gpt-4o-mini }
          - { provider: up, model: gpt-4o-mini }
processors:
  resource:
    attributes:
      platform.projectId: prj_console
      platform.deploymentId: dpl_console
exporters:
  drains: { decision_wait: 1s }
drains:
  - name: from-config
    url: ${sink.url}
    format: protobuf
    secret: config-secret
    tls: { ca_file: ${tls.caFile} }
    sampling:
      - { environment: nowhere, percentage: 100 }
  - name: dead-end
    url: https://127.0.0.1:${deadDrain}/v1/traces
    sampling:
      - { environment: development, percentage: 100 }
service:
  storage: { directory: ${dir}/data }
  admin: { endpoint: 127.0.0.1:${adminPort}, api_key: ${ADMIN_KEY} }
  pipelines:
    traces:
      receivers: [otlp, gateway]
      processors: [resource]
      exporters: [drains]
`,
  );
  base = `http://127.0.0.1:${daemon.adminPort}`;
  profile = await mkdtemp(join(tmpdir(), 'sluice-chromium-'));
  shots = process.env.SLUICE_SCREENSHOTS === '1' ? DOCS : await mkdtemp(join(tmpdir(), 'sluice-shots-'));
  await mkdir(shots, { recursive: true });
  browser = await launchChromiumProfile(profile, { width: 1180, height: 760 });
  page = browser.pages()[0] ?? (await browser.newPage());
  page.on('pageerror', (err) => pageErrors.push(err.message));
  // A CSP violation shows in the console as an error (answers the test provokes, 401 and 400, show there too).
  page.on('console', (message) => {
    if (message.type() === 'error' && !/^Failed to load resource: the server responded with a status of 40[01]/.test(message.text())) pageErrors.push(message.text());
  });
}, 60_000);

afterAll(async () => {
  await browser?.close();
  await daemon?.cleanup();
  await sink?.close();
  await upstream?.close();
  if (profile !== undefined) await rm(profile, { recursive: true, force: true });
  if (shots !== undefined && shots !== DOCS) await rm(shots, { recursive: true, force: true });
});

describe('web console', () => {
  it('serves the page and its assets from the package behind a strict CSP', async () => {
    const res = await fetch(`${base}/`);
    expect(res.status).toBe(200);
    const csp = res.headers.get('content-security-policy') ?? '';
    expect(csp).toContain("script-src 'self'");
    expect(csp).toContain("style-src 'self'");
    expect(csp).not.toContain('unsafe-inline');
    const html = await res.text();
    expect(html).not.toMatch(/<script>|<style|style=|https?:\/\//);
    const js = await fetch(`${base}/console/main.js`);
    expect(js.status).toBe(200);
    expect(js.headers.get('content-type')).toMatch(/^text\/javascript/);
    expect((await fetch(`${base}/console/main.css`)).status).toBe(200);
    // The APIs keep their paths.
    expect((await fetch(`${base}/v1/drains`)).status).toBe(401);
    expect((await fetch(`${base}/nope`)).status).toBe(404);
  });

  it('refuses a wrong admin key, then signs in with the right one', async () => {
    await page.goto(`${base}/`);
    await screenshot('sign-in');
    await page.getByLabel('Admin key').fill('not-the-key');
    await page.getByRole('button', { name: 'Sign in' }).click();
    await poll(() => page.getByRole('alert').textContent()).toMatch(/refused/);
    await poll(() => page.getByRole('heading', { name: 'Drains' }).count()).toBe(0);
    await page.getByLabel('Admin key').fill(ADMIN_KEY);
    await page.keyboard.press('Enter');
    await page.getByRole('heading', { name: 'Drains' }).waitFor();
    // Only this tab's sessionStorage holds the key.
    expect(await page.evaluate('({ session: sessionStorage.length, local: localStorage.length, cookie: document.cookie })')).toEqual({ session: 1, local: 0, cookie: '' });
  });

  it('shows a config drain read-only and says why', async () => {
    const row = page.getByRole('row').filter({ hasText: 'from-config' });
    await row.getByRole('button', { name: 'Edit' }).click();
    await poll(() => page.getByRole('note').textContent()).toMatch(/defined in the config file/);
    expect(await page.getByLabel('Name').isDisabled()).toBe(true);
    expect(await page.getByLabel('Endpoint URL').inputValue()).toBe(sink.url);
    expect(await page.getByRole('button', { name: 'Save' }).count()).toBe(0);
    expect(await page.getByRole('button', { name: 'Delete' }).count()).toBe(0);
    // It can still be tested as stored: its CA comes from the config file, never through the page.
    await page.getByRole('button', { name: 'Test delivery' }).click();
    await poll(() => page.getByRole('status').textContent()).toMatch(/^Delivered: HTTP 200 in \d+ ms/);
    expect(sink.received[0]?.headers['x-sluice-signature']).toBe(createHmac('sha256', 'config-secret').update(sink.received[0]?.raw ?? '').digest('hex'));
    sink.received.length = 0;
    await page.getByRole('button', { name: 'Back' }).click();
    expect(await page.getByRole('row').filter({ hasText: 'from-config' }).getByRole('button', { name: 'Delete' }).count()).toBe(0);
  });

  it('creates a drain with three rules, shows API errors by field, reorders, tests delivery and saves', async () => {
    await page.getByRole('button', { name: 'New drain' }).click();
    await page.getByLabel('Name').fill('console-drain');
    await page.getByLabel('Endpoint URL').fill('http://127.0.0.1:9/v1/traces');
    await page.getByLabel('Format').selectOption('json');
    await page.getByLabel('Headers').fill('x-team: console-team-value');
    await page.getByLabel('Secret').fill('first-secret');
    await page.getByLabel('TLS CA').fill(testTls().ca);
    expect(await page.getByText('forwards 100% of traces').count()).toBe(1);
    for (const [i, rule] of TYPED.entries()) {
      await page.getByRole('button', { name: 'Add rule' }).click();
      const group = page.getByRole('group', { name: `Rule ${i + 1}` });
      await group.getByLabel('Environment').fill(rule.environment);
      await group.getByLabel('Percentage').fill(i === 1 ? '150' : String(rule.percentage));
      await group.getByLabel('Path prefix').fill(rule.path_prefix ?? '');
    }
    expect(await page.getByText('A request that matches no rule is dropped.').count()).toBe(1);

    // The API refuses the plain-http URL and the 150% rule; each problem shows by its field.
    await page.getByRole('button', { name: 'Save' }).click();
    await poll(() => page.locator('#err-url').textContent()).toMatch(/^delivery\.endpoint\.traces: .*https/);
    const rule2 = page.getByRole('group', { name: 'Rule 2' });
    expect(await rule2.locator('.field-error').first().textContent()).toBe('');
    // Worded for the Percentage field: the API's "from 0 to 1" would have them type 1.5.
    await poll(() => rule2.getByLabel('Percentage').getAttribute('aria-invalid')).toBe('true');
    expect(await rule2.locator(`#${await rule2.getByLabel('Percentage').getAttribute('aria-describedby')}`).textContent()).toBe('sampling[1].rate: must be a percentage from 0 to 100');
    expect(await page.getByLabel('Endpoint URL').getAttribute('aria-invalid')).toBe('true');
    await screenshot('drain-errors');
    await page.getByLabel('Endpoint URL').fill(sink.url);
    await rule2.getByLabel('Percentage').fill('50');

    // Move the last rule to the top: a click, then the keyboard (focus stays on the moved row's button).
    await page.getByRole('group', { name: 'Rule 3' }).getByRole('button', { name: 'Move up' }).click();
    await page.getByRole('group', { name: 'Rule 2' }).getByRole('button', { name: 'Move up' }).focus();
    await page.keyboard.press('Enter');
    for (const [i, rule] of REORDERED.entries()) {
      const group = page.getByRole('group', { name: `Rule ${i + 1}` });
      expect(await group.getByLabel('Environment').inputValue()).toBe(rule.environment);
      expect(await group.getByLabel('Percentage').inputValue()).toBe(String(rule.percentage));
      expect(await group.getByLabel('Path prefix').inputValue()).toBe(rule.path_prefix ?? '');
    }
    expect(await page.getByRole('group', { name: 'Rule 1' }).getByRole('button', { name: 'Move up' }).isDisabled()).toBe(true);

    // Test delivery: the live sink answers 200; a closed port answers nothing.
    await page.getByRole('button', { name: 'Test delivery' }).click();
    await poll(() => page.getByRole('status').textContent()).toMatch(/^Delivered: HTTP 200 in \d+ ms/);
    await screenshot('drain-form');
    expect(sink.received.length).toBe(1);
    sink.received.length = 0;
    await page.getByLabel('Endpoint URL').fill(`https://127.0.0.1:${await freePort()}/v1/traces`);
    await page.getByRole('button', { name: 'Test delivery' }).click();
    await poll(() => page.getByRole('status').textContent()).toMatch(/^Failed: no HTTP status in \d+ ms \(.+\)/);
    await page.getByLabel('Endpoint URL').fill(sink.url);

    await page.getByRole('button', { name: 'Save' }).click();
    const row = page.getByRole('row').filter({ hasText: 'console-drain' });
    await row.waitFor();
    expect(await row.getByRole('cell').allTextContents()).toEqual(expect.arrayContaining(['api', 'enabled', 'json (gzip)', sink.url]));
    const listed = (await (await adminApi('/v1/drains')).json()) as { drains: Array<{ name: string; sampling: unknown[] }> };
    expect(listed.drains.find((drain) => drain.name === 'console-drain')?.sampling).toEqual([
      { type: 'head_sampling', env: 'production', rate: 0, requestPath: '/api/cart' },
      { type: 'head_sampling', env: 'production', rate: 1, requestPath: '/api' },
      { type: 'head_sampling', env: 'preview', rate: 0.5 },
    ]);
  });

  it('delivers exactly what the reordered rules select, while the pipeline chart moves', async () => {
    await page.getByRole('link', { name: 'Pipeline' }).click();
    const accepted = page.locator('polyline.accepted');
    await accepted.waitFor({ state: 'attached' });
    const before = (await accepted.getAttribute('points')) ?? '';
    // A point above the baseline (y < 148) means a non-zero rate was drawn.
    const risen = (points: string) => points.split(' ').some((point) => Number(point.split(',')[1]) < 147.9);
    expect(risen(before)).toBe(false);

    const sent = await sendTraces(otlpUrl, ['production', 'preview', 'development'], 8);
    const ruleSet = new RuleSet(REORDERED);
    const want = new Set(sent.filter((t) => ruleSet.decide(hexToBytes(t.traceId), t.env, t.path).keep).map((t) => t.traceId));
    // /api/orders in production by rule 2; /api/cart dropped by rule 1 (it came first); about half of preview.
    expect(want.size).toBeGreaterThanOrEqual(8);
    // Development traces match no rule, so more traffic for the chart adds nothing to the sink.
    let flowing = true;
    const filler = (async () => {
      while (flowing) {
        await sendTraces(otlpUrl, ['development'], 5);
        await new Promise((resolve) => setTimeout(resolve, 100));
      }
    })();
    try {
      await expect.poll(async () => risen((await accepted.getAttribute('points')) ?? ''), { timeout: 20_000, interval: 500 }).toBe(true);
    } finally {
      flowing = false;
      await filler;
    }
    expect(await accepted.getAttribute('points')).not.toBe(before);
    await page.getByRole('rowheader', { name: 'otlp', exact: true }).waitFor();
    await screenshot('pipeline');

    await sink.waitForSpans(want.size * 2, 20_000);
    await new Promise((resolve) => setTimeout(resolve, 1_500)); // past decision_wait: nothing more may come
    const got = new Map<string, number>();
    for (const { span, resource } of sink.spans()) {
      got.set(span.traceId, (got.get(span.traceId) ?? 0) + 1);
      expect(resource['platform.deploymentId']).toBe('dpl_console');
    }
    expect(new Set(got.keys())).toEqual(want);
    for (const count of got.values()) expect(count).toBe(2);
    for (const request of sink.received) {
      expect(request.headers['content-type']).toBe('application/json');
      expect(request.headers['x-team']).toBe('console-team-value');
      expect(request.headers['x-sluice-signature']).toBe(createHmac('sha256', 'first-secret').update(request.raw).digest('hex'));
    }
  });

  it('shows the gateway catalog, the providers of the last 15 minutes and each key against its budget', async () => {
    // The openai SDK through the gateway: the first provider is down, the second answers.
    const client = new OpenAI({ baseURL: `http://127.0.0.1:${gatewayPort}/v1`, apiKey: GATEWAY_KEY, maxRetries: 0 });
    const answer = await client.chat.completions.create({ model: 'openai/gpt-4o-mini', messages: [{ role: 'user', content: 'hi' }] });
    expect(answer.choices[0]?.message.content).toBe('hello from upstream');
    await page.getByRole('link', { name: 'Gateway' }).click();
    const model = page.getByRole('row').filter({ hasText: 'openai/gpt-4o-mini' });
    await model.waitFor();
    expect(await model.getByRole('cell').allTextContents()).toEqual(['GPT-4o mini', 'down (gpt-4o-mini) → up (gpt-4o-mini)', '$100', '$1000', '$100', '$100']);
    const provider = (slug: string) => page.getByRole('row').filter({ has: page.getByRole('rowheader', { name: slug, exact: true }) });
    await expect.poll(() => provider('down').getByRole('cell').allTextContents(), { timeout: 10_000 }).toEqual(['1', '1', 'network_error 1', expect.stringMatching(/ ms$/), expect.stringMatching(/ ms$/)]);
    expect(await provider('up').getByRole('cell').allTextContents()).toEqual(['1', '0', '', expect.stringMatching(/ ms$/), expect.stringMatching(/ ms$/)]);
    // Each key's row shows what the usage records say: 11 input and 7 output tokens at $0.0001 and
    // $0.001 are $0.0081 today, against $5 a day; beside them the key's limits and the metrics' tokens.
    const key = page.getByRole('row').filter({ has: page.getByRole('rowheader', { name: 'team-console', exact: true }) });
    await poll(() => key.getByRole('cell').allTextContents()).toEqual(['1', '18', '$0.0081', '$0.0081 of $5 this day', '600 req/min', '18']);
    expect(await key.getByRole('meter').getAttribute('value')).toBe('0.0081');
    const stats = (await (await adminApi('/v1/stats')).json()) as { gateway: { usage: unknown[] } };
    expect(stats.gateway.usage).toEqual([{ name: 'team-console', day: expect.stringMatching(/^\d{4}-\d\d-\d\d$/), today: { requests: 1, tokens: 18, costUsd: 0.0081 }, budget: { usd: 5, period: 'day', spentUsd: 0.0081 } }]);
    await screenshot('gateway');
  });

  it('keeps the secret write-only through an edit, then deletes the drain after confirmation', async () => {
    await page.getByRole('link', { name: 'Drains' }).click();
    const sentCell = page.getByRole('row').filter({ hasText: 'console-drain' }).getByRole('cell').nth(4);
    await poll(() => sentCell.textContent()).not.toBe('0');
    // The drain whose endpoint is down shows errored, with its last error and when it happened.
    const dead = page.getByRole('row').filter({ hasText: 'dead-end' });
    await poll(() => dead.getByRole('cell').nth(1).textContent()).toBe('errored');
    expect(await dead.getByRole('cell').nth(6).textContent()).toMatch(/ECONNREFUSED|connect|refused/i);
    expect(await dead.locator('time').textContent()).toMatch(/^\d{4}-\d\d-\d\d \d\d:\d\d:\d\d UTC$/);
    await screenshot('drains');
    await page.getByRole('row').filter({ hasText: 'console-drain' }).getByRole('button', { name: 'Edit' }).click();
    expect(await page.getByLabel('Secret').inputValue()).toBe('');
    expect(await page.getByTestId('secret-state').textContent()).toBe('A secret is set.');
    await page.getByLabel('Secret').fill('second-secret');
    await page.getByRole('button', { name: 'Save' }).click();
    await page.getByRole('button', { name: 'New drain' }).waitFor();
    await page.getByRole('row').filter({ hasText: 'console-drain' }).getByRole('button', { name: 'Edit' }).click();
    expect(await page.getByLabel('Secret').inputValue()).toBe('');
    expect(await page.getByTestId('secret-state').textContent()).toBe('A secret is set.');
    expect(await page.getByLabel('TLS CA').inputValue()).toBe('');
    expect(await page.getByLabel('Headers').inputValue()).toBe('');
    expect(await page.getByText('Set now: x-team (values hidden).').count()).toBe(1);
    // Tested as stored: the new secret signs, the stored CA verifies the sink.
    sink.received.length = 0;
    await page.getByRole('button', { name: 'Test delivery' }).click();
    await poll(() => page.getByRole('status').textContent()).toMatch(/^Delivered: HTTP 200/);
    expect(sink.received[0]?.headers['x-sluice-signature']).toBe(createHmac('sha256', 'second-secret').update(sink.received[0]?.raw ?? '').digest('hex'));
    const shown = await page.content();
    expect(shown).not.toContain('second-secret');
    expect(shown).not.toContain('first-secret');
    expect(shown).not.toContain('console-team-value');
    const api = await (await adminApi('/v1/drains')).text();
    expect(api).not.toContain('second-secret');
    expect(api).not.toContain('console-team-value');
    // The new secret signs deliveries from now on.
    sink.received.length = 0;
    await sendTraces(otlpUrl, ['production'], 1);
    await sink.waitForSpans(2);
    expect(sink.received[0]?.headers['x-sluice-signature']).toBe(createHmac('sha256', 'second-secret').update(sink.received[0]?.raw ?? '').digest('hex'));
    await page.getByRole('button', { name: 'Cancel' }).click();

    const row = page.getByRole('row').filter({ hasText: 'console-drain' });
    await row.getByRole('button', { name: 'Disable' }).click();
    await poll(() => row.getByRole('cell').nth(1).textContent()).toBe('disabled');
    await row.getByRole('button', { name: 'Enable' }).click();
    await poll(() => row.getByRole('cell').nth(1).textContent()).toBe('enabled');
    page.once('dialog', (dialog) => void dialog.dismiss());
    await row.getByRole('button', { name: 'Delete' }).click();
    expect(await row.count()).toBe(1);
    page.once('dialog', (dialog) => void dialog.accept());
    await row.getByRole('button', { name: 'Delete' }).click();
    await poll(() => row.count()).toBe(0);
    const after = (await (await adminApi('/v1/drains')).json()) as { drains: Array<{ name: string }> };
    expect(after.drains.map((drain) => drain.name)).toEqual(['from-config', 'dead-end']);
    expect(pageErrors).toEqual([]);
  });
});
