// The console as a user finds it beyond the main flow (console.test.ts):
// what the Pipeline screen says about refused requests, small spends on the
// Gateway screen, where the keyboard goes when rules move or forms open and
// close, and what the page says after a reload changed the admin key. Debian's
// chromium driven by playwright-core, against the built daemon.
import { writeFile } from 'node:fs/promises';
import { createServer } from 'node:http';
import type { AddressInfo } from 'node:net';
import type { Browser, Locator, Page } from 'playwright-core';
import { afterAll, afterEach, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import { launchChromium } from '../helpers/chromium.js';
import { freePort, startDaemon, type RunningDaemon } from '../helpers/daemon.js';
import { completion, sendJson, startUpstream, type Upstream } from '../receivers/gateway/harness.js';

const ADMIN_KEY = 'usability-admin-key';
const GATEWAY_KEY = 'usability-gateway-key';
const OTLP_KEY = 'usability-otlp-key';

function poll<T>(read: () => T | Promise<T>) {
  return expect.poll(read, { timeout: 15_000, interval: 100 });
}

function config(ports: { otlp: number; gateway: number; upstream: string }, adminKey: string) {
  return ({ dir, adminPort }: { dir: string; adminPort: number }) => `
receivers:
  otlp:
    protocols:
      http: { endpoint: 127.0.0.1:${ports.otlp} }
    auth: { api_keys: [${OTLP_KEY}] }
  gateway:
    endpoint: 127.0.0.1:${ports.gateway}
    api_keys:
      - { key: "${GATEWAY_KEY}", name: team-cheap, budget: { usd: 1, period: day } }
    providers:
      up: { type: openai, base_url: "${ports.upstream}", api_key: upstream-key }
    models:
      - id: up/cheap
        pricing: { input: "0.000001", output: "0.000002" }
        endpoints: [{ provider: up, model: cheap }]
exporters:
  drains: {}
drains:
  - name: from-config
    url: https://127.0.0.1:9/v1/traces
service:
  storage: { directory: ${dir}/data }
  admin: { endpoint: 127.0.0.1:${adminPort}, api_key: ${adminKey} }
  pipelines:
    traces:
      receivers: [otlp, gateway]
      exporters: [drains]
`;
}

let daemon: RunningDaemon;
let upstream: Upstream;
let browser: Browser;
let page: Page;
let base: string;
let ports: { otlp: number; gateway: number; upstream: string };
const pageErrors: string[] = [];

/** The id of the element that has the keyboard. */
function focused(): Promise<string> {
  return page.evaluate<string>('`${document.activeElement.tagName.toLowerCase()}#${document.activeElement.id}:${document.activeElement.textContent}`');
}

/** Whether this element has the keyboard (a string: the tests' tsconfig has no DOM types). */
function hasFocus(locator: Locator): Promise<boolean> {
  return locator.evaluate((element) => element === element.ownerDocument.activeElement);
}

async function signIn(key = ADMIN_KEY): Promise<void> {
  await page.getByLabel('Admin key').fill(key);
  await page.getByRole('button', { name: 'Sign in' }).click();
  await page.getByRole('heading', { name: 'Drains' }).waitFor();
}

beforeAll(async () => {
  upstream = await startUpstream((_body, res) => sendJson(res, 200, completion('hello')));
  ports = { otlp: await freePort(), gateway: await freePort(), upstream: upstream.url };
  daemon = await startDaemon(config(ports, ADMIN_KEY));
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
});

afterAll(async () => {
  await browser?.close();
  await daemon?.cleanup();
  await upstream?.close();
  expect(pageErrors).toEqual([]);
});

describe('web console', () => {
  it('shows on the Pipeline screen the requests a receiver refused without reading their spans', async () => {
    const otlp = `http://127.0.0.1:${ports.otlp}/v1/traces`;
    const body = JSON.stringify({ resourceSpans: [] });
    expect((await fetch(otlp, { method: 'POST', headers: { 'content-type': 'application/json' }, body })).status).toBe(401);
    expect((await fetch(otlp, { method: 'POST', headers: { 'content-type': 'application/json' }, body })).status).toBe(401);
    expect((await fetch(otlp, { method: 'POST', headers: { 'content-type': 'application/json', authorization: `Bearer ${OTLP_KEY}` }, body: '{' })).status).toBe(400);
    await signIn();
    await page.getByRole('link', { name: 'Pipeline' }).click();
    // Nothing was accepted, yet the receiver is listed with what it refused.
    const row = page.getByRole('row').filter({ has: page.getByRole('rowheader', { name: 'otlp', exact: true }) });
    await poll(() => row.getByRole('cell').allTextContents()).toEqual(['http', '0', '0', '3malformed 1, unauthenticated 2']);
    expect(await page.getByRole('columnheader', { name: 'Refused requests' }).count()).toBe(1);
  });

  it('shows a spend below a hundredth of a cent as it is, not as $0.0000', async () => {
    const res = await fetch(`http://127.0.0.1:${ports.gateway}/v1/chat/completions`, {
      method: 'POST',
      headers: { 'content-type': 'application/json', authorization: `Bearer ${GATEWAY_KEY}` },
      body: JSON.stringify({ model: 'up/cheap', messages: [{ role: 'user', content: 'hi' }] }),
    });
    expect(res.status).toBe(200);
    await signIn();
    await page.getByRole('link', { name: 'Gateway' }).click();
    // 11 input tokens at $0.000001 and 7 output tokens at $0.000002: $0.000025.
    const key = page.getByRole('row').filter({ has: page.getByRole('rowheader', { name: 'team-cheap', exact: true }) });
    await poll(() => key.getByRole('cell').allTextContents()).toEqual(['1', '18', '$0.000025', '$0.000025 of $1 this day', 'none', '18']);
  });

  it('keeps the keyboard on a rule moved to the top or the bottom, and on the next rule after a removal', async () => {
    await signIn();
    await page.getByRole('button', { name: 'New drain' }).click();
    for (const env of ['first', 'second', 'third']) {
      await page.getByRole('button', { name: 'Add rule' }).click();
      await page.getByRole('group', { name: /^Rule \d$/ }).last().getByLabel('Environment').fill(env);
    }
    const rule = (n: number) => page.getByRole('group', { name: `Rule ${n}` });
    // Rule 2 moved up reaches the top, where its Move up is disabled: the keyboard stays on the row.
    await rule(2).getByRole('button', { name: 'Move up' }).focus();
    await page.keyboard.press('Enter');
    await poll(() => rule(1).getByLabel('Environment').inputValue()).toBe('second');
    await poll(focused).toMatch(/^button#rule-\d+-down:Move down$/);
    expect(await hasFocus(rule(1).getByRole('button', { name: 'Move down' }))).toBe(true);
    // Pressed again, the same row moves down; then to the bottom.
    await page.keyboard.press('Enter');
    await poll(() => rule(2).getByLabel('Environment').inputValue()).toBe('second');
    await page.keyboard.press('Enter');
    await poll(() => rule(3).getByLabel('Environment').inputValue()).toBe('second');
    await poll(() => hasFocus(rule(3).getByRole('button', { name: 'Move up' }))).toBe(true);
    // Removing rule 1 hands the keyboard to the rule that takes its place.
    await rule(1).getByRole('button', { name: 'Remove rule' }).focus();
    await page.keyboard.press('Enter');
    await poll(() => rule(1).getByLabel('Environment').inputValue()).toBe('third');
    await poll(() => hasFocus(rule(1).getByRole('button', { name: 'Remove rule' }))).toBe(true);
    // Removing the last rule hands it to the one above; removing the only one, to Add rule.
    await rule(2).getByRole('button', { name: 'Remove rule' }).focus();
    await page.keyboard.press('Enter');
    await poll(() => page.getByRole('group', { name: /^Rule \d$/ }).count()).toBe(1);
    await poll(() => hasFocus(rule(1).getByRole('button', { name: 'Remove rule' }))).toBe(true);
    await page.keyboard.press('Enter');
    await poll(focused).toBe('button#add-rule:Add rule');
  });

  it('gives the keyboard to the drain form it opens and back to the button that opened it', async () => {
    await signIn();
    await poll(focused).toMatch(/^h1#drains-title:Drains$/);
    await page.getByRole('button', { name: 'New drain' }).focus();
    await page.keyboard.press('Enter');
    await poll(focused).toBe('h1#form-title:New drain');
    await page.getByRole('button', { name: 'Cancel' }).focus();
    await page.keyboard.press('Enter');
    await poll(focused).toBe('button#new-drain:New drain');
    const edit = page.getByRole('row').filter({ hasText: 'from-config' }).getByRole('button', { name: 'Edit' });
    await edit.focus();
    await page.keyboard.press('Enter');
    await poll(focused).toBe('h1#form-title:Drain from-config');
    await page.getByRole('button', { name: 'Back' }).click();
    await poll(() => hasFocus(edit)).toBe(true);
  });

  it('never shows a header value that a refusing destination echoes, in the table or in Test delivery', async () => {
    const echo = createServer((req, res) => {
      req.resume();
      req.on('end', () => res.writeHead(401, { 'content-type': 'text/plain' }).end(`unknown key ${String(req.headers['x-api-key'])}`));
    });
    await new Promise<void>((resolve) => echo.listen(0, '127.0.0.1', resolve));
    try {
      const url = `http://127.0.0.1:${(echo.address() as AddressInfo).port}/v1/traces`;
      await signIn();
      await page.getByRole('button', { name: 'New drain' }).click();
      await page.getByLabel('Name').fill('echoing');
      await page.getByLabel('Endpoint URL').fill(url);
      await page.getByLabel('Allow plain http:// (insecure, for local testing only)').check();
      await page.getByLabel('Headers').fill('x-api-key: echoed-key-value');
      await page.getByRole('button', { name: 'Test delivery' }).click();
      await poll(() => page.getByRole('status').textContent()).toMatch(/^Failed: HTTP 401 in \d+ ms \(HTTP 401: unknown key \*\*\*\)$/);
      await page.getByRole('button', { name: 'Save' }).click();
      const row = page.getByRole('row').filter({ hasText: 'echoing' });
      await row.waitFor();
      // A trace through the drain fails the same way: its last error hides the value too.
      const traceId = '0af7651916cd43dd8448eb211c80319c';
      const spans = { resourceSpans: [{ resource: { attributes: [] }, scopeSpans: [{ spans: [{ traceId, spanId: 'b7ad6b7169203331', name: 'GET /', kind: 2, startTimeUnixNano: '1', endTimeUnixNano: '2' }] }] }] };
      const sent = await fetch(`http://127.0.0.1:${ports.otlp}/v1/traces`, { method: 'POST', headers: { 'content-type': 'application/json', authorization: `Bearer ${OTLP_KEY}` }, body: JSON.stringify(spans) });
      expect(sent.status).toBe(200);
      await poll(() => row.getByRole('cell').nth(6).textContent()).toMatch(/^HTTP 401: unknown key \*\*\*/);
      expect(await page.content()).not.toContain('echoed-key-value');
      expect(await (await fetch(`${base}/v1/drains`, { headers: { authorization: `Bearer ${ADMIN_KEY}` } })).text()).not.toContain('echoed-key-value');
      expect(daemon.logs.join('\n')).not.toContain('echoed-key-value');
    } finally {
      echo.closeAllConnections();
      await new Promise((resolve) => echo.close(resolve));
    }
  });

  it('keeps the problem the API found with a rule on that rule when it moves or another is removed', async () => {
    await signIn();
    await page.getByRole('button', { name: 'New drain' }).click();
    await page.getByLabel('Name').fill('moving-problems');
    await page.getByLabel('Endpoint URL').fill('https://127.0.0.1:9/v1/traces');
    for (const [env, percentage] of [['production', '100'], ['preview', '150'], ['staging', '10']] as const) {
      await page.getByRole('button', { name: 'Add rule' }).click();
      const added = page.getByRole('group', { name: /^Rule \d$/ }).last();
      await added.getByLabel('Environment').fill(env);
      await added.getByLabel('Percentage').fill(percentage);
    }
    const rule = (n: number) => page.getByRole('group', { name: `Rule ${n}` });
    const problem = async (n: number) => ({
      env: await rule(n).getByLabel('Environment').inputValue(),
      invalid: await rule(n).getByLabel('Percentage').getAttribute('aria-invalid'),
      text: await rule(n).locator('.field-error').allTextContents(),
    });
    await page.getByRole('button', { name: 'Save' }).click();
    await poll(() => problem(2)).toEqual({ env: 'preview', invalid: 'true', text: ['', 'sampling[1].rate: must be a percentage from 0 to 100', '', ''] });
    // Moved to the top, the rule takes its problem along, named by its new place; the rule it passed has none.
    await rule(2).getByRole('button', { name: 'Move up' }).click();
    await poll(() => problem(1)).toEqual({ env: 'preview', invalid: 'true', text: ['', 'sampling[0].rate: must be a percentage from 0 to 100', '', ''] });
    expect(await problem(2)).toEqual({ env: 'production', invalid: null, text: ['', '', '', ''] });
    // Removing the rule above it moves it up again; removing it clears its problem.
    await rule(2).getByRole('button', { name: 'Move up' }).click();
    await rule(1).getByRole('button', { name: 'Remove rule' }).click();
    await poll(() => problem(1)).toEqual({ env: 'preview', invalid: 'true', text: ['', 'sampling[0].rate: must be a percentage from 0 to 100', '', ''] });
    await rule(1).getByRole('button', { name: 'Remove rule' }).click();
    await poll(() => problem(1)).toEqual({ env: 'staging', invalid: null, text: ['', '', '', ''] });
  });

  it('refuses a header typed twice instead of keeping only one of its values', async () => {
    await signIn();
    await page.getByRole('button', { name: 'New drain' }).click();
    await page.getByLabel('Name').fill('twice-headed');
    await page.getByLabel('Endpoint URL').fill('https://127.0.0.1:9/v1/traces');
    await page.getByLabel('Headers').fill('x-api-key: first\nauthorization: Bearer t\nX-Api-Key: second');
    await page.getByRole('button', { name: 'Save' }).click();
    await poll(() => page.locator('#err-headers').textContent()).toBe('delivery.headers: line 3 repeats header x-api-key (header names are case-insensitive)');
    expect(await page.getByLabel('Headers').getAttribute('aria-invalid')).toBe('true');
    const { drains } = (await (await fetch(`${base}/v1/drains`, { headers: { authorization: `Bearer ${ADMIN_KEY}` } })).json()) as { drains: Array<{ name: string }> };
    expect(drains.map((drain) => drain.name)).not.toContain('twice-headed');
  });

  it('stops showing the outcome of a test delivery once the delivery it tested is changed', async () => {
    const sink = createServer((req, res) => {
      req.resume();
      req.on('end', () => res.writeHead(200, { 'content-type': 'application/x-protobuf' }).end());
    });
    await new Promise<void>((resolve) => sink.listen(0, '127.0.0.1', resolve));
    try {
      const live = `http://127.0.0.1:${(sink.address() as AddressInfo).port}/v1/traces`;
      await signIn();
      await page.getByRole('button', { name: 'New drain' }).click();
      await page.getByLabel('Endpoint URL').fill(live);
      await page.getByLabel('Allow plain http:// (insecure, for local testing only)').check();
      await page.getByRole('button', { name: 'Test delivery' }).click();
      await poll(() => page.getByRole('status').textContent()).toMatch(/^Delivered: HTTP 200 in \d+ ms$/);
      // Another endpoint, untested: no outcome is shown beside it; back to the tested one, its outcome is.
      await page.getByLabel('Endpoint URL').fill(`http://127.0.0.1:${await freePort()}/v1/traces`);
      await poll(() => page.getByRole('status').textContent()).toBe('');
      await page.getByLabel('Endpoint URL').fill(live);
      await poll(() => page.getByRole('status').textContent()).toMatch(/^Delivered: HTTP 200 in \d+ ms$/);
      await page.getByLabel('Headers').fill('x-api-key: another');
      await poll(() => page.getByRole('status').textContent()).toBe('');
    } finally {
      sink.closeAllConnections();
      await new Promise((resolve) => sink.close(resolve));
    }
  });

  it('shows a tiny rate as plain digits, and refuses a percentage that is not a decimal number', async () => {
    const created = await fetch(`${base}/v1/drains`, {
      method: 'POST',
      headers: { authorization: `Bearer ${ADMIN_KEY}`, 'content-type': 'application/json' },
      body: JSON.stringify({ name: 'tiny-rate', delivery: { endpoint: { traces: 'https://127.0.0.1:9/v1/traces' } }, sampling: [{ env: 'production', rate: 1e-9 }] }),
    });
    expect(created.status).toBe(201);
    await signIn();
    await page.getByRole('row').filter({ hasText: 'tiny-rate' }).getByRole('button', { name: 'Edit' }).click();
    const percentage = page.getByRole('group', { name: 'Rule 1' }).getByLabel('Percentage');
    expect(await percentage.inputValue()).toBe('0.0000001');
    // Number() reads 0x10 as 16: the form sends it as typed, and the API's problem is shown beside it.
    await percentage.fill('0x10');
    await page.getByRole('button', { name: 'Save' }).click();
    await poll(() => page.getByRole('group', { name: 'Rule 1' }).locator('.field-error').allTextContents()).toEqual(['', 'sampling[0].rate: must be a percentage from 0 to 100', '', '']);
    const { drains } = (await (await fetch(`${base}/v1/drains`, { headers: { authorization: `Bearer ${ADMIN_KEY}` } })).json()) as { drains: Array<{ name: string; sampling: Array<{ rate: number }> }> };
    expect(drains.find((drain) => drain.name === 'tiny-rate')?.sampling).toEqual([{ type: 'head_sampling', env: 'production', rate: 1e-9 }]);
  });

  it('goes back to the list of drains when the Drains link is followed from a drain form', async () => {
    await signIn();
    for (const open of ['New drain', 'Edit']) {
      await page.getByRole('button', { name: open }).first().click();
      await page.getByRole('button', { name: /^(Cancel|Back)$/ }).waitFor();
      // The address already reads #/drains (or nothing, its default): following the link changes no hash.
      await page.getByRole('navigation', { name: 'Console' }).getByRole('link', { name: 'Drains' }).click();
      await poll(() => page.getByRole('button', { name: 'New drain' }).count()).toBe(1);
      await poll(() => hasFocus(page.getByRole('heading', { name: 'Drains' }))).toBe(true);
    }
  });

  it('says why it signed out when a reload changed the admin key, and signs in with the new one', async () => {
    await signIn();
    await writeFile(daemon.configPath, config(ports, 'rotated-admin-key')({ dir: daemon.dir, adminPort: daemon.adminPort }));
    daemon.child.kill('SIGHUP');
    await poll(() => page.getByRole('alert').textContent()).toMatch(/stopped working .*Sign in with the current key/);
    expect(await hasFocus(page.getByLabel('Admin key'))).toBe(true);
    await signIn('rotated-admin-key');
    expect(await page.getByRole('alert').count()).toBe(0);
  });
});

describe('web console without a drains exporter', () => {
  let bare: RunningDaemon | undefined;

  afterAll(async () => {
    await bare?.cleanup();
  });

  it('says the drains API is missing instead of loading forever', async () => {
    const otlp = await freePort();
    bare = await startDaemon(
      ({ dir, adminPort }) => `
receivers:
  otlp: { protocols: { http: { endpoint: 127.0.0.1:${otlp} } } }
exporters:
  debug: {}
service:
  storage: { directory: ${dir}/data }
  admin: { endpoint: 127.0.0.1:${adminPort}, api_key: ${ADMIN_KEY} }
  pipelines: { traces: { receivers: [otlp], exporters: [debug] } }
`,
    );
    await page.goto(`http://127.0.0.1:${bare.adminPort}/`);
    await signIn();
    await poll(() => page.getByRole('alert').textContent()).toMatch(/no drains exporter is configured/);
    expect(await page.getByText('Loading…').count()).toBe(0);
  });
});
