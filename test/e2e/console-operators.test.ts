// The console as operators share it: a drain edited in the console while
// someone else changes it through the API, long and non-Latin names, a narrow
// window, and a daemon that goes away while the page is open. Debian's
// chromium driven by playwright-core, against the built daemon.
import { createServer, request } from 'node:http';
import type { AddressInfo } from 'node:net';
import type { Browser, Page } from 'playwright-core';
import { afterAll, afterEach, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import { launchChromium } from '../helpers/chromium.js';
import { freePort, startDaemon, type RunningDaemon } from '../helpers/daemon.js';
import { completion, sendJson, startUpstream } from '../receivers/gateway/harness.js';

const ADMIN_KEY = 'operators-admin-key';

function poll<T>(read: () => T | Promise<T>) {
  return expect.poll(read, { timeout: 15_000, interval: 100 });
}

let daemon: RunningDaemon;
/** A daemon a test stopped and started again over the same directory (removed at the end). */
let stopped: RunningDaemon | undefined;
let otlpPort: number;

function config({ dir, adminPort }: { dir: string; adminPort: number }): string {
  return `
receivers:
  otlp: { protocols: { http: { endpoint: 127.0.0.1:${otlpPort} } } }
exporters:
  drains: {}
service:
  storage: { directory: ${dir}/data }
  admin: { endpoint: 127.0.0.1:${adminPort}, api_key: ${ADMIN_KEY} }
  pipelines: { traces: { receivers: [otlp], exporters: [drains] } }
`;
}

/** How far the page scrolls sideways: 0 when everything fits the window. */
function sidewaysOverflow(): Promise<number> {
  return page.evaluate<number>('document.documentElement.scrollWidth - document.documentElement.clientWidth');
}
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
  otlpPort = await freePort();
  daemon = await startDaemon(config);
  base = `http://127.0.0.1:${daemon.adminPort}`;
  browser = await launchChromium();
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
  await stopped?.cleanup();
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

  it('says a Save the network failed in the words it says so elsewhere, with no "Error: " before them', async () => {
    const created = await drainsApi('POST', '', { name: 'unsaved', delivery: { endpoint: { traces: 'https://collector.example.com/v1/traces' } } });
    expect(created.status).toBe(201);
    await signIn();
    await page.getByRole('row').filter({ hasText: 'unsaved' }).getByRole('button', { name: 'Edit' }).click();
    await page.getByLabel('Name').fill('never-saved');
    await page.route(`**/v1/drains/${created.json.id}`, (route) => (route.request().method() === 'PATCH' ? route.abort() : route.fallback()));
    try {
      await page.getByRole('button', { name: 'Save' }).click();
      await poll(() => page.getByRole('alert').allTextContents()).toEqual(['Could not reach the admin endpoint (Failed to fetch). Is the daemon running?']);
    } finally {
      await page.unroute(`**/v1/drains/${created.json.id}`);
    }
    expect((await drainsApi('GET', `/${created.json.id}`)).json.name).toBe('unsaved');
  });

  it('keeps a long unbroken name and a narrow window from widening the page: tables scroll in their own box', async () => {
    const name = `${'ü'.repeat(40)}${'x'.repeat(80)}`;
    expect((await drainsApi('POST', '', { name, delivery: { endpoint: { traces: 'https://collector.example.com/v1/traces' } } })).status).toBe(201);
    await signIn();
    const row = page.getByRole('row').filter({ hasText: 'ü' });
    await row.waitFor();
    expect(await sidewaysOverflow()).toBe(0);
    await page.setViewportSize({ width: 375, height: 800 });
    await poll(sidewaysOverflow).toBe(0);
    // The table is wider than a phone, so it scrolls inside its own box, which shows every column.
    expect(await page.locator('.table-scroll').evaluate((box) => box.scrollWidth > box.clientWidth)).toBe(true);
    await row.getByRole('button', { name: 'Edit' }).click();
    await page.getByRole('heading', { name: `Edit drain ${name}` }).waitFor();
    expect(await sidewaysOverflow()).toBe(0);
    for (const screen of ['Gateway', 'Pipeline']) {
      await page.getByRole('link', { name: screen }).click();
      await page.getByRole('heading', { name: screen }).waitFor();
      expect(await sidewaysOverflow()).toBe(0);
    }
  });

  it('gives the keyboard to the next drain after a delete, and to New drain after the last', async () => {
    for (const name of ['first', 'second']) {
      expect((await drainsApi('POST', '', { name, delivery: { endpoint: { traces: 'https://collector.example.com/v1/traces' } } })).status).toBe(201);
    }
    page.on('dialog', (dialog) => void dialog.accept());
    await signIn();
    const row = (name: string) => page.getByRole('row').filter({ has: page.getByRole('rowheader', { name, exact: true }) });
    // Disable keeps the keyboard on the row's button, now Enable.
    await row('first').getByRole('button', { name: 'Disable' }).focus();
    await page.keyboard.press('Enter');
    await poll(() => row('first').getByRole('button', { name: 'Enable' }).evaluate((button) => button === button.ownerDocument.activeElement)).toBe(true);
    await row('first').getByRole('button', { name: 'Delete' }).focus();
    await page.keyboard.press('Enter');
    await poll(() => row('first').count()).toBe(0);
    await poll(() => page.evaluate<string>('document.activeElement.textContent + "@" + document.activeElement.closest("tr")?.dataset.drain')).toBe('Edit@second');
    await row('second').getByRole('button', { name: 'Delete' }).focus();
    await page.keyboard.press('Enter');
    await poll(() => row('second').count()).toBe(0);
    await poll(() => page.evaluate<string>('document.activeElement.id')).toBe('new-drain');
  });

  it('gives the keyboard to the field a Remove button cleared, as the button goes away', async () => {
    const body = { name: 'write-only', delivery: { endpoint: { traces: 'https://collector.example.com/v1/traces' }, secret: 'signing-secret', headers: { 'x-api-key': 'v' } } };
    expect((await drainsApi('POST', '', body)).status).toBe(201);
    await signIn();
    await page.getByRole('row').filter({ hasText: 'write-only' }).getByRole('button', { name: 'Edit' }).click();
    const removals: Array<[string, string]> = [
      ['Remove secret', 'drain-secret'],
      ['Remove headers', 'drain-headers'],
    ];
    for (const [button, field] of removals) {
      await page.getByRole('button', { name: button }).focus();
      await page.keyboard.press('Enter');
      await poll(() => page.getByRole('button', { name: button }).count()).toBe(0);
      await poll(() => page.evaluate<string>('document.activeElement.id')).toBe(field);
    }
  });

  it('labels a chart scale of millions of spans per second compactly, and the current rate with separators', async () => {
    // No test machine sends 3 million spans a second: the daemon's own answer with its series scaled up.
    await page.route('**/v1/stats', async (route) => {
      const answer = await route.fetch();
      const stats = await answer.json();
      const at = stats.sampledAt as number;
      stats.series = [1, 2, 3].map((n) => ({ at: at - (3 - n) * 2_000, acceptedPerSecond: 1_234_567.8 * n, sentPerSecond: 1_000_000 * n }));
      await route.fulfill({ response: answer, json: stats });
    });
    await signIn();
    await page.getByRole('link', { name: 'Pipeline' }).click();
    await poll(() => page.locator('.chart .tick').first().textContent()).toBe('5M/s');
    expect(await page.locator('figcaption .muted').textContent()).toBe('Now 3,703,703.4 spans/s accepted, 3,000,000 spans/s sent (scale 0 to 5,000,000 spans/s).');
  });

  it('works behind a proxy that serves the admin endpoint under a path', async () => {
    expect((await drainsApi('POST', '', { name: 'proxied', delivery: { endpoint: { traces: 'https://collector.example.com/v1/traces' } } })).status).toBe(201);
    // A reverse proxy as an ingress sets one up: /sluice/... is the admin endpoint's /...; nothing else is served.
    const proxy = createServer((req, res) => {
      if (!req.url?.startsWith('/sluice/')) return void res.writeHead(404).end();
      const upstream = request({ host: '127.0.0.1', port: daemon.adminPort, method: req.method, path: req.url.slice('/sluice'.length), headers: req.headers }, (answer) => {
        res.writeHead(answer.statusCode ?? 502, answer.headers);
        answer.pipe(res);
      });
      req.pipe(upstream);
    });
    await new Promise<void>((resolve) => proxy.listen(0, '127.0.0.1', resolve));
    try {
      await page.goto(`http://127.0.0.1:${(proxy.address() as AddressInfo).port}/sluice/`);
      await signIn();
      await page.getByRole('rowheader', { name: 'proxied' }).waitFor();
      await page.getByRole('link', { name: 'Pipeline' }).click();
      await page.getByRole('heading', { name: 'Receivers' }).waitFor();
      expect(await page.getByRole('alert').count()).toBe(0);
    } finally {
      proxy.closeAllConnections();
      await new Promise((resolve) => proxy.close(resolve));
    }
  });

  it('refuses a key no admin key can be (beyond Latin-1) as a wrong key, not as a daemon that cannot be reached', async () => {
    await page.getByLabel('Admin key').fill('ключ-админа');
    await page.getByRole('button', { name: 'Sign in' }).click();
    await poll(() => page.getByRole('alert').textContent()).toMatch(/^The admin key was refused: it holds a character no admin key can have/);
    await signIn();
  });

  it('says the daemon does not answer while it hangs, instead of showing its last numbers as current', async () => {
    await signIn();
    await page.getByRole('link', { name: 'Pipeline' }).click();
    await page.getByRole('heading', { name: 'Receivers' }).waitFor();
    // Frozen, the daemon keeps the page's connection open and never answers on it.
    daemon.child.kill('SIGSTOP');
    try {
      await expect
        .poll(() => page.getByRole('alert').allTextContents(), { timeout: 30_000, interval: 200 })
        .toEqual(['The admin endpoint did not answer within 10 s. Is the daemon stopped or overloaded?']);
    } finally {
      daemon.child.kill('SIGCONT');
    }
    await poll(() => page.getByRole('alert').count()).toBe(0);
    expect(await page.getByRole('heading', { name: 'Receivers' }).count()).toBe(1);
  }, 60_000);

  it('says the daemon cannot be reached while it is stopped, and carries on once it is back', async () => {
    await signIn();
    await page.getByRole('link', { name: 'Pipeline' }).click();
    await page.getByRole('heading', { name: 'Pipeline' }).waitFor();
    const { dir, adminPort } = daemon;
    await daemon.stop();
    await poll(() => page.getByRole('alert').textContent()).toBe('Could not reach the admin endpoint (Failed to fetch). Is the daemon running?');
    stopped = daemon;
    daemon = await startDaemon(() => config({ dir, adminPort }), {
      dir,
      ready: async () => (await fetch(`http://127.0.0.1:${adminPort}/readyz`)).status === 200,
    });
    await poll(() => page.getByRole('alert').count()).toBe(0);
    expect(await page.getByRole('heading', { name: 'Receivers' }).count()).toBe(1);
  });
});

describe('web console with two gateways', () => {
  it('says which gateway each provider row belongs to when both have a provider of that name', async () => {
    const upstream = await startUpstream((_body, res) => sendJson(res, 200, completion('hello')));
    const gateways = [await freePort(), await freePort()];
    const gatewayConfig = (port: number, key: string) => `
    endpoint: 127.0.0.1:${port}
    api_keys: [{ key: ${key}, name: ${key} }]
    providers: { up: { type: openai, base_url: "${upstream.url}", api_key: upstream-key } }
    models: [{ id: up/m, endpoints: [{ provider: up, model: m }] }]`;
    const two = await startDaemon(
      ({ dir, adminPort }) => `
receivers:
  gateway:${gatewayConfig(gateways[0] ?? 0, 'public-key')}
  gateway/internal:${gatewayConfig(gateways[1] ?? 0, 'internal-key')}
exporters:
  debug: {}
service:
  storage: { directory: ${dir}/data }
  admin: { endpoint: 127.0.0.1:${adminPort}, api_key: ${ADMIN_KEY} }
  pipelines: { traces: { receivers: [gateway, gateway/internal], exporters: [debug] } }
`,
    );
    try {
      const ask = (port: number, key: string) =>
        fetch(`http://127.0.0.1:${port}/v1/chat/completions`, {
          method: 'POST',
          headers: { 'content-type': 'application/json', authorization: `Bearer ${key}` },
          body: JSON.stringify({ model: 'up/m', messages: [{ role: 'user', content: 'hi' }] }),
        });
      expect((await ask(gateways[0] ?? 0, 'public-key')).status).toBe(200);
      for (let i = 0; i < 2; i += 1) expect((await ask(gateways[1] ?? 0, 'internal-key')).status).toBe(200);
      await page.goto(`http://127.0.0.1:${two.adminPort}/#/gateway`);
      await page.getByLabel('Admin key').fill(ADMIN_KEY);
      await page.getByRole('button', { name: 'Sign in' }).click();
      const attempts = (name: string) => page.getByRole('row').filter({ has: page.getByRole('rowheader', { name, exact: true }) }).getByRole('cell').first().textContent();
      await poll(() => attempts('up (gateway)')).toBe('1');
      expect(await attempts('up (gateway/internal)')).toBe('2');
    } finally {
      await two.cleanup();
      await upstream.close();
    }
  });
});
