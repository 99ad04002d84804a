// Issue 9: TLS, mTLS, OTLP auth and CORS on the built daemon's listeners,
// used by real clients: the OpenTelemetry SDK exporters (HTTP and gRPC with
// credentials and headers), the openai SDK, curl and a browser's preflight.
import { readFile, writeFile, copyFile } from 'node:fs/promises';
import { join } from 'node:path';
import { credentials, Metadata } from '@grpc/grpc-js';
import { ExportResultCode } from '@opentelemetry/core';
import { OTLPTraceExporter as GrpcExporter } from '@opentelemetry/exporter-trace-otlp-grpc';
import { OTLPTraceExporter as ProtoExporter } from '@opentelemetry/exporter-trace-otlp-proto';
import type { SpanExporter } from '@opentelemetry/sdk-trace-base';
import OpenAI from 'openai';
import { Agent, fetch as undiciFetch } from 'undici';
import { afterEach, describe, expect, it } from 'vitest';
import { curl } from '../helpers/curl.js';
import { freePort, startDaemon, waitUntil, type RunningDaemon } from '../helpers/daemon.js';
import { makeSdkSpans } from '../helpers/sdk-spans.js';
import { issueCert, servedName, testTls } from '../helpers/tls.js';
import { completion, sendJson, startUpstream } from '../receivers/gateway/harness.js';

const OTLP_KEY = 'otlp-secret';
const GATEWAY_KEY = 'sk-tls';

const cleanups: Array<() => Promise<unknown>> = [];
afterEach(async () => {
  for (const c of cleanups.splice(0).reverse()) await c();
});

function exportWith(exporter: SpanExporter): Promise<number> {
  return new Promise((resolve) => exporter.export(makeSdkSpans(), (r) => resolve(r.code))).finally(() => exporter.shutdown()) as Promise<number>;
}

async function spansInFile(dir: string): Promise<number> {
  const text = await readFile(join(dir, 'traces.jsonl'), 'utf8').catch(() => '');
  return text.split('\n').filter(Boolean).reduce((n, line) => n + (line.match(/"spanId"/g)?.length ?? 0), 0);
}

describe('TLS, auth and CORS on the listeners', () => {
  it('serves the SDK exporters (HTTP and gRPC), the openai SDK and curl over TLS, with OTLP keys and CORS', async () => {
    const tls = testTls();
    const upstream = await startUpstream((_body, res) => sendJson(res, 200, completion('over tls')));
    cleanups.push(() => upstream.close());
    const [http, grpc, gateway] = [await freePort(), await freePort(), await freePort()];
    const dir = join(tls.caFile, '..');
    await writeFile(join(dir, 'e2e-server.pem'), tls.cert);
    await writeFile(join(dir, 'e2e-server.key'), tls.key);
    const tlsKeys = `tls: { cert_file: ${join(dir, 'e2e-server.pem')}, key_file: ${join(dir, 'e2e-server.key')} }`;
    const cors = `cors: { allowed_origins: ["https://*.example.com"], max_age: 2h }`;
    const daemon: RunningDaemon = await startDaemon(
      ({ dir: work, adminPort }) => `
receivers:
  otlp:
    auth: { api_keys: [${OTLP_KEY}] }
    protocols:
      http: { endpoint: 127.0.0.1:${http}, ${tlsKeys}, ${cors} }
      grpc: { endpoint: 127.0.0.1:${grpc}, ${tlsKeys} }
  gateway:
    endpoint: 127.0.0.1:${gateway}
    ${tlsKeys}
    ${cors}
    api_keys: [${GATEWAY_KEY}]
    providers: { fake: { type: openai, base_url: ${upstream.url}, api_key: sk-up } }
    models: [{ id: fake/model, endpoints: [{ provider: fake, model: m }] }]
exporters:
  file: { path: ${work}/traces.jsonl }
service:
  storage: { directory: ${work}/data }
  admin: { endpoint: 127.0.0.1:${adminPort} }
  pipelines:
    traces: { receivers: [otlp], exporters: [file] }
    traces/gateway: { receivers: [gateway], exporters: [file] }
`,
    );
    cleanups.push(() => daemon.cleanup());
    const ca = Buffer.from(tls.ca);
    const authorization = `Bearer ${OTLP_KEY}`;

    // The OTel SDK exporters, with the CA and the key in their own options.
    expect(await exportWith(new ProtoExporter({ url: `https://127.0.0.1:${http}/v1/traces`, headers: { authorization }, httpAgentOptions: { ca } }))).toBe(ExportResultCode.SUCCESS);
    const metadata = new Metadata();
    metadata.set('authorization', authorization);
    expect(await exportWith(new GrpcExporter({ url: `https://127.0.0.1:${grpc}`, credentials: credentials.createSsl(ca), metadata }))).toBe(ExportResultCode.SUCCESS);
    await waitUntil(async () => (await spansInFile(daemon.dir)) >= 4, 10_000, 'four spans in the file');

    // Without the key: refused on both transports, and counted.
    expect(await exportWith(new ProtoExporter({ url: `https://127.0.0.1:${http}/v1/traces`, httpAgentOptions: { ca } }))).toBe(ExportResultCode.FAILED);
    expect(await exportWith(new GrpcExporter({ url: `https://127.0.0.1:${grpc}`, credentials: credentials.createSsl(ca) }))).toBe(ExportResultCode.FAILED);
    const metrics = await (await fetch(`http://127.0.0.1:${daemon.adminPort}/metrics`)).text();
    expect(metrics).toMatch(/sluice_receiver_refused_requests_total\{receiver="otlp",transport="http",reason="unauthenticated"\} [1-9]/);
    expect(metrics).toMatch(/sluice_receiver_refused_requests_total\{receiver="otlp",transport="grpc",reason="unauthenticated"\} [1-9]/);
    expect(metrics).toMatch(/sluice_listener_connections\{listener="otlp\/http"\} \d/);

    // The openai SDK, trusting the test CA through its fetch.
    const dispatcher = new Agent({ connect: { ca: tls.ca } });
    cleanups.push(() => dispatcher.close());
    const tlsFetch = ((url: string, init: object) => undiciFetch(url, { ...init, dispatcher })) as unknown as typeof fetch;
    const client = new OpenAI({ baseURL: `https://127.0.0.1:${gateway}/v1`, apiKey: GATEWAY_KEY, maxRetries: 0, fetch: tlsFetch });
    const answer = await client.chat.completions.create({ model: 'fake/model', messages: [{ role: 'user', content: 'hi' }] });
    expect(answer.choices[0]?.message.content).toBe('over tls');

    // curl: trusted with --cacert, refused without it.
    const models = await curl('--cacert', tls.caFile, `https://127.0.0.1:${gateway}/v1/models`, '-H', `authorization: Bearer ${GATEWAY_KEY}`);
    expect(models.code).toBe(0);
    expect(JSON.parse(models.out)).toMatchObject({ object: 'list', data: [{ id: 'fake/model' }] });
    expect((await curl(`https://127.0.0.1:${gateway}/v1/models`)).code).toBe(60);

    // A browser's preflight: answered without a key for an allowed origin, with no CORS headers for another.
    for (const port of [http, gateway]) {
      const preflight = await curl('--cacert', tls.caFile, '-i', '-X', 'OPTIONS', `https://127.0.0.1:${port}/v1/${port === http ? 'traces' : 'chat/completions'}`,
        '-H', 'origin: https://app.example.com', '-H', 'access-control-request-method: POST', '-H', 'access-control-request-headers: content-type, authorization');
      expect(preflight.out).toMatch(/^HTTP\/1\.1 204/);
      expect(preflight.out).toMatch(/access-control-allow-origin: https:\/\/app\.example\.com/i);
      expect(preflight.out).toMatch(/access-control-allow-headers: .*authorization/i);
      expect(preflight.out).toMatch(/access-control-max-age: 7200/i);
      const foreign = await curl('--cacert', tls.caFile, '-i', '-X', 'OPTIONS', `https://127.0.0.1:${port}/v1/traces`, '-H', 'origin: https://evil.test', '-H', 'access-control-request-method: POST');
      expect(foreign.out).not.toMatch(/access-control-allow-origin/i);
    }
    const simple = await curl('--cacert', tls.caFile, '-i', `https://127.0.0.1:${gateway}/v1/models`, '-H', 'origin: https://app.example.com', '-H', `authorization: Bearer ${GATEWAY_KEY}`);
    expect(simple.out).toMatch(/access-control-allow-origin: https:\/\/app\.example\.com/i);
    expect(simple.out).toMatch(/access-control-expose-headers: x-sluice-provider, x-sluice-attempts, x-sluice-generation-id, retry-after, x-should-retry/i);
    expect(await daemon.stop()).toBe(0);
  });

  it('refuses a client without a certificate under mTLS, and serves a rotated certificate after SIGHUP', async () => {
    const tls = testTls();
    const first = issueCert('first.sluice.test', 'server');
    const second = issueCert('second.sluice.test', 'server');
    const clientCert = issueCert('exporter', 'client');
    const certFile = join(first.certFile, '..', 'rotating.pem');
    const keyFile = join(first.certFile, '..', 'rotating.key');
    await copyFile(first.certFile, certFile);
    await copyFile(first.keyFile, keyFile);
    const http = await freePort();
    const daemon = await startDaemon(
      ({ dir, adminPort }) => `
receivers:
  otlp:
    protocols:
      http: { endpoint: 127.0.0.1:${http}, tls: { cert_file: ${certFile}, key_file: ${keyFile}, client_ca_file: ${tls.caFile}, min_version: "1.2" } }
exporters:
  file: { path: ${dir}/traces.jsonl }
service:
  storage: { directory: ${dir}/data }
  admin: { endpoint: 127.0.0.1:${adminPort} }
  pipelines: { traces: { receivers: [otlp], exporters: [file] } }
`,
    );
    cleanups.push(() => daemon.cleanup());
    const url = `https://127.0.0.1:${http}/v1/traces`;
    const ca = Buffer.from(tls.ca);

    expect(await exportWith(new ProtoExporter({ url, httpAgentOptions: { ca } }))).toBe(ExportResultCode.FAILED);
    const noCert = await curl('--cacert', tls.caFile, '-X', 'POST', url);
    expect(noCert.code).not.toBe(0);
    expect(await exportWith(new ProtoExporter({ url, httpAgentOptions: { ca, cert: clientCert.cert, key: clientCert.key } }))).toBe(ExportResultCode.SUCCESS);
    const withCert = await curl('--cacert', tls.caFile, '--cert', clientCert.certFile, '--key', clientCert.keyFile, '-o', '/dev/null', '-w', '%{http_code}', url, '-X', 'POST', '-H', 'content-type: application/json', '-d', '{}');
    expect(withCert.out).toBe('200');
    // Both refused handshakes (the SDK exporter's and curl's) are counted.
    const metrics = await (await fetch(`http://127.0.0.1:${daemon.adminPort}/metrics`)).text();
    expect(Number(/^sluice_listener_tls_handshake_failures_total\{listener="otlp\/http"\} (\d+)/m.exec(metrics)?.[1])).toBeGreaterThanOrEqual(2);

    expect(await servedName(http, tls.ca, clientCert)).toBe('first.sluice.test');
    await copyFile(second.certFile, certFile);
    await copyFile(second.keyFile, keyFile);
    daemon.child.kill('SIGHUP');
    await waitUntil(async () => (await servedName(http, tls.ca, clientCert).catch(() => '')) === 'second.sluice.test', 10_000, 'the rotated certificate');
    expect(await exportWith(new ProtoExporter({ url, httpAgentOptions: { ca, cert: clientCert.cert, key: clientCert.key } }))).toBe(ExportResultCode.SUCCESS);
    expect(await daemon.stop()).toBe(0);
  });
});
