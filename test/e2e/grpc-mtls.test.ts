// OTLP/gRPC under mTLS on the built daemon, used by the OpenTelemetry JS
// gRPC exporter: with a client certificate from the configured CA its spans
// are delivered; without one, or with one from another CA, it is refused.
import { readFile } from 'node:fs/promises';
import { join } from 'node:path';
import { credentials } from '@grpc/grpc-js';
import { ExportResultCode } from '@opentelemetry/core';
import { OTLPTraceExporter } from '@opentelemetry/exporter-trace-otlp-grpc';
import { afterEach, describe, expect, it } from 'vitest';
import { freePort, startDaemon, waitUntil } from '../helpers/daemon.js';
import { makeSdkSpans } from '../helpers/sdk-spans.js';
import { issueCert, strangerCert, testTls } from '../helpers/tls.js';

const cleanups: Array<() => Promise<unknown>> = [];
afterEach(async () => {
  for (const c of cleanups.splice(0).reverse()) await c();
});

function exportWith(exporter: OTLPTraceExporter): Promise<number> {
  return new Promise<number>((resolve) => exporter.export(makeSdkSpans(), (r) => resolve(r.code))).finally(() => exporter.shutdown());
}

/** The file exporter writes one OTLP/JSON request per line. */
async function requestsInFile(dir: string): Promise<number> {
  const text = await readFile(join(dir, 'traces.jsonl'), 'utf8').catch(() => '');
  return text.split('\n').filter(Boolean).length;
}

describe('OTLP/gRPC with mTLS', () => {
  it('delivers the spans of an exporter with a client certificate and refuses one without', async () => {
    const tls = testTls();
    const server = issueCert('grpc.sluice.test', 'server');
    const client = issueCert('grpc-exporter', 'client');
    const grpc = await freePort();
    const daemon = await startDaemon(
      ({ dir, adminPort }) => `
receivers:
  otlp:
    protocols:
      grpc: { endpoint: 127.0.0.1:${grpc}, tls: { cert_file: ${server.certFile}, key_file: ${server.keyFile}, client_ca_file: ${tls.caFile} } }
exporters:
  file: { path: ${dir}/traces.jsonl }
service:
  storage: { directory: ${dir}/data }
  admin: { endpoint: 127.0.0.1:${adminPort} }
  pipelines: { traces: { receivers: [otlp], exporters: [file] } }
`,
    );
    cleanups.push(() => daemon.cleanup());
    const url = `https://127.0.0.1:${grpc}`;
    const ca = Buffer.from(tls.ca);

    const mutual = credentials.createSsl(ca, Buffer.from(client.key), Buffer.from(client.cert));
    expect(await exportWith(new OTLPTraceExporter({ url, credentials: mutual }))).toBe(ExportResultCode.SUCCESS);
    await waitUntil(async () => (await requestsInFile(daemon.dir)) === 1, 10_000, 'the export in the file');

    // No client certificate: the handshake fails, nothing reaches the pipeline.
    expect(await exportWith(new OTLPTraceExporter({ url, credentials: credentials.createSsl(ca), timeoutMillis: 3_000 }))).toBe(ExportResultCode.FAILED);
    // A certificate no configured CA signed: refused the same way.
    const other = strangerCert('stranger');
    const stranger = credentials.createSsl(ca, Buffer.from(other.key), Buffer.from(other.cert));
    expect(await exportWith(new OTLPTraceExporter({ url, credentials: stranger, timeoutMillis: 3_000 }))).toBe(ExportResultCode.FAILED);

    // The accepted client still gets through afterwards, and only its spans were written.
    expect(await exportWith(new OTLPTraceExporter({ url, credentials: mutual }))).toBe(ExportResultCode.SUCCESS);
    await waitUntil(async () => (await requestsInFile(daemon.dir)) === 2, 10_000, 'both exports in the file');
    const metrics = await (await fetch(`http://127.0.0.1:${daemon.adminPort}/metrics`)).text();
    expect(metrics).toMatch(/sluice_receiver_accepted_spans_total\{receiver="otlp",transport="grpc"\} 4\b/);
    // The two refused handshakes were counted (grpc-js may retry one); the accepted ones were not.
    expect(Number(/^sluice_listener_tls_handshake_failures_total\{listener="otlp\/grpc"\} (\d+)/m.exec(metrics)?.[1])).toBeGreaterThanOrEqual(2);
    expect(await daemon.stop()).toBe(0);
    expect(await requestsInFile(daemon.dir)).toBe(2);
  });
});
