import { pino } from 'pino';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { CONTENT_SECURITY_POLICY, mountConsole } from '../../../src/admin/console/serve.js';
import { sendJson } from '../../../src/admin/respond.js';
import { AdminServer } from '../../../src/admin/server.js';
import { Telemetry } from '../../../src/shared/telemetry.js';

let admin: AdminServer;
let base: string;

beforeEach(async () => {
  admin = new AdminServer({ telemetry: new Telemetry({ defaultMetrics: false }), logger: pino({ level: 'silent' }), isReady: () => true, apiKey: () => 'k' });
  mountConsole(admin);
  admin.addRoute('/v1/drains', (_req, res) => sendJson(res, 200, { drains: [] }));
  await admin.listen('127.0.0.1:0');
  base = `http://127.0.0.1:${admin.address()?.port ?? 0}`;
});

afterEach(async () => {
  await admin.close();
});

describe('console route', () => {
  it('serves the page at / with a CSP that allows only this origin and no inline code', async () => {
    const res = await fetch(`${base}/`);
    expect(res.status).toBe(200);
    expect(res.headers.get('content-type')).toBe('text/html; charset=utf-8');
    expect(res.headers.get('content-security-policy')).toBe(CONTENT_SECURITY_POLICY);
    expect(CONTENT_SECURITY_POLICY).toContain("default-src 'none'");
    expect(CONTENT_SECURITY_POLICY).not.toMatch(/unsafe-|\*|https?:/);
    expect(res.headers.get('x-content-type-options')).toBe('nosniff');
    const page = await res.text();
    expect(page).toContain('<script type="module" src="console/main.js"></script>');
    expect(page).not.toMatch(/<script>|<style|\sstyle=/);
  });

  it('leaves the APIs their paths and answers 404 for anything else', async () => {
    expect(await (await fetch(`${base}/v1/drains`)).json()).toEqual({ drains: [] });
    const missing = await fetch(`${base}/console/other.js`);
    expect(missing.status).toBe(404);
    expect(await missing.json()).toEqual({ error: { message: 'not found: /console/other.js', code: 'not_found' } });
    expect((await fetch(`${base}/v1/unknown`)).status).toBe(404);
  });

  it('answers 405 to a method other than GET or HEAD', async () => {
    const res = await fetch(`${base}/`, { method: 'POST' });
    expect(res.status).toBe(405);
    expect(res.headers.get('allow')).toBe('GET, HEAD');
  });

  it('serves the bundled script and stylesheet built into dist/console', async () => {
    const js = await fetch(`${base}/console/main.js`);
    expect(js.status).toBe(200);
    expect(js.headers.get('content-type')).toBe('text/javascript; charset=utf-8');
    expect((await js.text()).length).toBeGreaterThan(1000);
    const css = await fetch(`${base}/console/main.css`);
    expect(css.headers.get('content-type')).toBe('text/css; charset=utf-8');
    expect(await css.text()).toContain('.rule-list');
  });
});
