// The console as operators share it: a drain edited in the console while
// someone else changes it through the API, long and non-Latin names, a narrow
// window, and a daemon that goes away while the page is open. Debian's
// chromium driven by playwright-core, against the built daemon.
import { existsSync } from 'node:fs';
import { chromium, type Browser, type Page } from 'playwright-core';
import { afterAll, afterEach, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import { freePort, startDaemon, type RunningDaemon } from '../helpers/daemon.js';

const CHROMIUM = process.env.SLUICE_CHROMIUM ?? '/usr/bin/chromium';
const ADMIN_KEY = 'operators-admin-key';

function poll<T>(read: () => T | Promise<T>) {
  return expect.poll(read, { timeout: 15_000, interval: 100 });
}

let daemon: RunningDaemon;
let browser: Browser;
let page: Page;
let base: string;
const pageErrors: string[] = [];

async function drainsApi(method: string, path: string, body?: unknown): Promise<{ status: number; json: any }> {
  const res = await fetch(`${base}/v1/drains${path}`, {
    method,
    headers: { authorization: `Bearer ${ADMIN_KEY}`, ...(body === undefined ? {} : { 'content-type': 'application/json' }) },
    ...(body === undefined ? {} : { body: JSON.stringify(body) }),
  });
  const text = await res.text();
  return { status: res.status, json: text === '' ? undefined : JSON.parse(text) };
}

async function signIn(): Promise<void> {
  await page.getByLabel('Admin key').fill(ADMIN_KEY);
  await page.getByRole('button', { name: 'Sign in' }).click();
  await page.getByRole('heading', { name: 'Drains' }).waitFor();
}

beforeAll(async () => {
  if (!existsSync(CHROMIUM)) throw new Error(`${CHROMIUM} is missing: apt-get install -y chromium (.ci/run does)`);
  const otlp = await freePort();
  daemon = await startDaemon(
    ({ dir, adminPort }) => `
receivers:
  otlp: { protocols: { http: { endpoint: 127.0.0.1:${otlp} } } }
exporters:
  drains: {}
service:
  storage: { directory: ${dir}/data }
  admin: { endpoint: 127.0.0.1:${adminPort}, api_key: ${ADMIN_KEY} }
  pipelines: { traces: { receivers: [otlp], exporters: [drains] } }
`,
  );
  base = `http://127.0.0.1:${daemon.adminPort}`;
  browser = await chromium.launch({
    executablePath: CHROMIUM,
    headless: true,
    args: ['--headless', '--no-sandbox', '--disable-gpu', '--disable-quic', '--no-first-run', '--disable-background-networking', '--disable-component-update', '--disable-sync'],
  });
}, 60_000);

beforeEach(async () => {
  page = await browser.newPage({ viewport: { width: 1180, height: 760 } });
  page.on('pageerror', (err) => pageErrors.push(err.message));
  await page.goto(`${base}/`);
});

afterEach(async () => {
  await page.close();
  for (const drain of (await drainsApi('GET', '')).json.drains) await drainsApi('DELETE', `/${drain.id}`);
});

afterAll(async () => {
  await browser?.close();
  await daemon?.cleanup();
  expect(pageErrors).toEqual([]);
});

describe('web console shared by operators', () => {
  it('saves only the fields the form changed, keeping what another operator changed meanwhile', async () => {
    const created = await drainsApi('POST', '', {
      name: 'shared',
      delivery: { endpoint: { traces: 'https://collector.example.com/v1/traces' }, secret: 'signing-secret', headers: { 'x-api-key': 'header-value' } },
      sampling: [{ env: 'production', rate: 0.5 }],
    });
    expect(created.status).toBe(201);
    await signIn();
    await page.getByRole('row').filter({ hasText: 'shared' }).getByRole('button', { name: 'Edit' }).click();
    await page.getByLabel('Name').fill('shared-renamed');
    // Someone else changes the rules and the compression while the form is open.
    const other = await drainsApi('PATCH', `/${created.json.id}`, { sampling: [{ env: 'staging', rate: 1 }], delivery: { compression: 'none' } });
    expect(other.status).toBe(200);
    await page.getByRole('button', { name: 'Save' }).click();
    await page.getByRole('heading', { name: 'Drains' }).waitFor();
    const after = (await drainsApi('GET', `/${created.json.id}`)).json;
    expect(after.name).toBe('shared-renamed');
    expect(after.sampling).toEqual([{ type: 'head_sampling', env: 'staging', rate: 1 }]);
    expect(after.delivery).toMatchObject({ compression: 'none', secret: true, headers: ['x-api-key'] });
  });
});
