// The admin endpoint behind TLS and mTLS, used by real clients (undici's
// fetch with the test CA, and curl): health, metrics and the drains API with
// the admin key; under mTLS a client without a certificate is refused; a
// rotated certificate is served after SIGHUP.
import { copyFile } from 'node:fs/promises';
import { Agent, fetch as undiciFetch } from 'undici';
import { afterEach, describe, expect, it } from 'vitest';
import { curl } from '../helpers/curl.js';
import { freePort, startDaemon, waitUntil, type RunningDaemon } from '../helpers/daemon.js';
import { issueCert, servedName, strangerCert, testTls } from '../helpers/tls.js';

const ADMIN_KEY = 'admin-over-tls';

const cleanups: Array<() => Promise<unknown>> = [];
afterEach(async () => {
  for (const c of cleanups.splice(0).reverse()) await c();
});

/** A daemon whose admin endpoint serves TLS (mTLS when clientCa is set); readiness is probed through `agent`. */
async function startTlsAdmin(agent: Agent, clientCaFile: string | undefined): Promise<RunningDaemon & { certFile: string; keyFile: string }> {
  const server = issueCert('admin.sluice.test', 'server');
  // Copies, so a test can rotate the certificate in place.
  const certFile = `${server.certFile}.served`;
  const keyFile = `${server.keyFile}.served`;
  await copyFile(server.certFile, certFile);
  await copyFile(server.keyFile, keyFile);
  const otlp = await freePort();
  const clientCa = clientCaFile === undefined ? '' : `, client_ca_file: ${clientCaFile}`;
  const daemon = await startDaemon(
    ({ dir, adminPort }) => `
receivers:
  otlp: { protocols: { http: { endpoint: 127.0.0.1:${otlp} } } }
exporters:
  drains: {}
service:
  storage: { directory: ${dir}/data }
  admin:
    endpoint: 127.0.0.1:${adminPort}
    api_key: ${ADMIN_KEY}
    tls: { cert_file: ${certFile}, key_file: ${keyFile}${clientCa} }
  pipelines: { traces: { receivers: [otlp], exporters: [drains] } }
`,
    {
      ready: async (port) => (await undiciFetch(`https://127.0.0.1:${port}/readyz`, { dispatcher: agent })).status === 200,
    },
  );
  cleanups.push(() => daemon.cleanup());
  return { ...daemon, certFile, keyFile };
}

function newAgent(options: { ca: string; cert?: string; key?: string }): Agent {
  const agent = new Agent({ connect: options });
  cleanups.push(() => agent.close());
  return agent;
}

describe('admin endpoint over TLS', () => {
  it('serves health, metrics and the drains API over TLS to undici and curl, with the admin key', async () => {
    const tls = testTls();
    const agent = newAgent({ ca: tls.ca });
    const daemon = await startTlsAdmin(agent, undefined);
    const base = `https://127.0.0.1:${daemon.adminPort}`;
    const authorization = `Bearer ${ADMIN_KEY}`;

    expect((await undiciFetch(`${base}/healthz`, { dispatcher: agent })).status).toBe(200);
    const metrics = await (await undiciFetch(`${base}/metrics`, { dispatcher: agent })).text();
    expect(metrics).toMatch(/sluice_listener_connections\{listener="admin"\} [1-9]/);

    const created = await undiciFetch(`${base}/v1/drains`, {
      dispatcher: agent,
      method: 'POST',
      headers: { authorization, 'content-type': 'application/json' },
      body: JSON.stringify({ name: 'over-tls', delivery: { type: 'otlphttp', endpoint: { traces: 'https://collector.example.com/v1/traces' }, encoding: 'json' } }),
    });
    expect(created.status).toBe(201);
    const drain = (await created.json()) as { id: string; name: string };
    expect(drain.id).toMatch(/^drn_/);
    expect((await undiciFetch(`${base}/v1/drains`, { dispatcher: agent })).status).toBe(401);

    // curl: trusted with --cacert (the drain just made is listed), refused without it (60: unknown CA).
    const listed = await curl('--cacert', tls.caFile, `${base}/v1/drains`, '-H', `authorization: ${authorization}`);
    expect(listed.code).toBe(0);
    expect(JSON.parse(listed.out)).toMatchObject({ drains: [{ id: drain.id, name: 'over-tls' }] });
    expect((await curl('--cacert', tls.caFile, '-o', '/dev/null', '-w', '%{http_code}', `${base}/healthz`)).out).toBe('200');
    expect((await curl(`${base}/healthz`)).code).toBe(60);
    // Plaintext HTTP on the TLS port gets no answer of the admin API.
    const plain = await fetch(`http://127.0.0.1:${daemon.adminPort}/healthz`).then((r) => r.status, () => 'refused');
    expect(plain).not.toBe(200);

    // A rotated certificate is served after SIGHUP, and the API keeps answering.
    expect(await servedName(daemon.adminPort, tls.ca)).toBe('admin.sluice.test');
    const rotated = issueCert('rotated-admin.sluice.test', 'server');
    await copyFile(rotated.certFile, daemon.certFile);
    await copyFile(rotated.keyFile, daemon.keyFile);
    daemon.child.kill('SIGHUP');
    await waitUntil(async () => (await servedName(daemon.adminPort, tls.ca).catch(() => '')) === 'rotated-admin.sluice.test', 10_000, 'the rotated certificate');
    // The new certificate is served before the reload has started the new graph; until then the drains API answers 503.
    const drains = () => curl('--cacert', tls.caFile, `${base}/v1/drains`, '-H', `authorization: ${authorization}`);
    await waitUntil(async () => !(await drains()).out.includes('"unavailable"'), 10_000, 'the reload to finish');
    expect(JSON.parse((await drains()).out)).toMatchObject({ drains: [{ id: drain.id }] });
    expect(await daemon.stop()).toBe(0);
  });

  it('requires a client certificate under mTLS: with one everything answers, without one the handshake fails', async () => {
    const tls = testTls();
    const client = issueCert('operator', 'client');
    const withCert = newAgent({ ca: tls.ca, cert: client.cert, key: client.key });
    const daemon = await startTlsAdmin(withCert, tls.caFile);
    const base = `https://127.0.0.1:${daemon.adminPort}`;
    const authorization = `Bearer ${ADMIN_KEY}`;

    expect((await undiciFetch(`${base}/healthz`, { dispatcher: withCert })).status).toBe(200);
    expect(await (await undiciFetch(`${base}/metrics`, { dispatcher: withCert })).text()).toMatch(/sluice_listener_connections\{listener="admin"\}/);
    const drains = await undiciFetch(`${base}/v1/drains`, { dispatcher: withCert, headers: { authorization } });
    expect(drains.status).toBe(200);
    expect(await drains.json()).toEqual({ drains: [] });

    const withoutCert = newAgent({ ca: tls.ca });
    await expect(undiciFetch(`${base}/healthz`, { dispatcher: withoutCert })).rejects.toThrow();
    // The admin key does not stand in for a certificate.
    await expect(undiciFetch(`${base}/v1/drains`, { dispatcher: withoutCert, headers: { authorization } })).rejects.toThrow();

    const curlWithCert = await curl('--cacert', tls.caFile, '--cert', client.certFile, '--key', client.keyFile, `${base}/v1/drains`, '-H', `authorization: ${authorization}`);
    expect(curlWithCert.code).toBe(0);
    expect(JSON.parse(curlWithCert.out)).toEqual({ drains: [] });
    const curlWithout = await curl('--cacert', tls.caFile, '-o', '/dev/null', '-w', '%{http_code}', `${base}/healthz`);
    expect(curlWithout.code).not.toBe(0);
    expect(curlWithout.out).toBe('000');
    // A certificate from another CA is refused as well.
    const stranger = strangerCert('stranger');
    const foreign = newAgent({ ca: tls.ca, cert: stranger.cert, key: stranger.key });
    await expect(undiciFetch(`${base}/healthz`, { dispatcher: foreign })).rejects.toThrow();
    expect(await daemon.stop()).toBe(0);
  });
});
