// Issue 9: no client holds the daemon's lifecycle. A stalled client on every
// listener, then SIGTERM: /readyz answers 503 at once, the process exits 0
// within service.shutdown_grace + 1 s, an open gateway stream gets the
// in-band shutting_down event, and spans acknowledged before the signal
// reach the destination after the next start. An exporter whose destination
// never answers gives up its delivery when the grace is over; the batch stays
// queued and is delivered after the next start.
import type { ServerResponse } from 'node:http';
import { OTLPTraceExporter } from '@opentelemetry/exporter-trace-otlp-proto';
import { afterEach, describe, expect, it } from 'vitest';
import { freePort, startDaemon, waitUntil, type RunningDaemon } from '../helpers/daemon.js';
import { startOtlpSink, type OtlpSink } from '../helpers/otlp-sink.js';
import { halfBody, halfHeaders, idleKeepAlive, openGrpcCall } from '../helpers/raw-clients.js';
import { makeSdkSpans } from '../helpers/sdk-spans.js';
import { chunk, startUpstream, type Upstream } from '../receivers/gateway/harness.js';

const GRACE_MS = 2_000;
const EXPORT_PATH = '/opentelemetry.proto.collector.trace.v1.TraceService/Export';

const cleanups: Array<() => Promise<unknown>> = [];
afterEach(async () => {
  for (const c of cleanups.splice(0).reverse()) await c();
});

interface Ports {
  http: number;
  grpc: number;
  gateway: number;
}

function config(ports: Ports, sink: OtlpSink, upstream: Upstream) {
  return ({ dir, adminPort }: { dir: string; adminPort: number }) => `
receivers:
  otlp:
    protocols:
      http: { endpoint: 127.0.0.1:${ports.http} }
      grpc: { endpoint: 127.0.0.1:${ports.grpc} }
  gateway:
    endpoint: 127.0.0.1:${ports.gateway}
    api_keys: [sk-shutdown]
    providers:
      fake: { type: openai, base_url: ${upstream.url}, api_key: sk-upstream }
    models:
      - { id: fake/model, endpoints: [{ provider: fake, model: upstream-model }] }
exporters:
  otlphttp: { endpoint: ${sink.url}, compression: none, retry_on_failure: { initial_interval: 100ms, max_interval: 200ms } }
service:
  shutdown_grace: ${GRACE_MS}ms
  storage: { directory: ${dir}/data }
  admin: { endpoint: 127.0.0.1:${adminPort} }
  pipelines: { traces: { receivers: [otlp, gateway], exporters: [otlphttp] } }
`;
}

async function exportSpans(port: number): Promise<number> {
  const exporter = new OTLPTraceExporter({ url: `http://127.0.0.1:${port}/v1/traces` });
  const code = await new Promise<number>((resolve) => exporter.export(makeSdkSpans(), (r) => resolve(r.code)));
  await exporter.shutdown();
  return code;
}

/** A gateway stream whose upstream sends one chunk and then goes quiet. */
async function openGatewayStream(port: number, protocol: 'chat' | 'messages'): Promise<{ text: () => string; ended: Promise<void> }> {
  const path = protocol === 'chat' ? '/v1/chat/completions' : '/v1/messages';
  const extra = protocol === 'chat' ? {} : { max_tokens: 100 };
  const response = await fetch(`http://127.0.0.1:${port}${path}`, {
    method: 'POST',
    headers: { authorization: 'Bearer sk-shutdown', 'content-type': 'application/json' },
    body: JSON.stringify({ model: 'fake/model', messages: [{ role: 'user', content: 'hi' }], stream: true, ...extra }),
  });
  expect(response.status).toBe(200);
  const reader = (response.body as ReadableStream<Uint8Array>).getReader();
  const decoder = new TextDecoder();
  let text = '';
  const first = await reader.read();
  text += decoder.decode(first.value);
  const ended = (async () => {
    try {
      for (;;) {
        const { done, value } = await reader.read();
        if (done) return;
        text += decoder.decode(value);
      }
    } catch {
      // the connection was destroyed after the last event
    }
  })();
  return { text: () => text, ended };
}

async function readyStatus(adminPort: number): Promise<number> {
  return (await fetch(`http://127.0.0.1:${adminPort}/readyz`)).status;
}

describe('bounded shutdown', () => {
  it('exits 0 within shutdown_grace + 1 s whatever its clients do, and keeps what it acknowledged', async () => {
    const held: ServerResponse[] = [];
    const upstream = await startUpstream((_body, res) => {
      res.writeHead(200, { 'content-type': 'text/event-stream' });
      res.write(`data: ${JSON.stringify(chunk({ role: 'assistant', content: 'partial' }))}\n\n`);
      held.push(res);
    });
    cleanups.push(() => upstream.close());
    const sink = await startOtlpSink({ tls: false });
    cleanups.push(() => sink.close());
    sink.respond = () => ({ status: 503 });
    const ports: Ports = { http: await freePort(), grpc: await freePort(), gateway: await freePort() };
    const daemon: RunningDaemon = await startDaemon(config(ports, sink, upstream));
    cleanups.push(() => daemon.cleanup());

    expect(await exportSpans(ports.http)).toBe(0);
    const stalled = [
      await halfHeaders(ports.http),
      await halfBody(ports.http),
      await idleKeepAlive(ports.gateway, '/v1/models', { authorization: 'Bearer sk-shutdown' }),
      await halfBody(ports.gateway, '/v1/chat/completions', { authorization: 'Bearer sk-shutdown' }),
      await halfHeaders(daemon.adminPort),
    ];
    const grpcCall = await openGrpcCall(ports.grpc, EXPORT_PATH);
    const stream = await openGatewayStream(ports.gateway, 'chat');
    expect(stream.text()).toContain('partial');
    const messages = await openGatewayStream(ports.gateway, 'messages');
    expect(messages.text()).toContain('message_start');

    const exited = new Promise<number | null>((resolve) => daemon.child.once('exit', (code) => resolve(code)));
    const signalled = Date.now();
    daemon.child.kill('SIGTERM');
    await waitUntil(async () => (await readyStatus(daemon.adminPort)) === 503, 1_000, '/readyz to answer 503');
    const code = await exited;
    const elapsed = Date.now() - signalled;

    console.log(`shutdown with stalled clients on every listener: exit ${code} after ${elapsed} ms (shutdown_grace ${GRACE_MS} ms)`);
    expect(code).toBe(0);
    expect(elapsed).toBeLessThan(GRACE_MS + 1_000);
    expect(elapsed).toBeGreaterThanOrEqual(GRACE_MS);
    await Promise.all([...stalled.map((client) => client.closed), grpcCall.closed, stream.ended, messages.ended]);
    expect(stream.text()).toContain('"code":"shutting_down"');
    expect(stream.text()).not.toContain('[DONE]');
    // An Anthropic Messages stream gets the error in its own protocol's shape.
    expect(messages.text()).toMatch(/event: error\ndata: \{"type":"error","error":\{"type":"api_error","message":"The gateway is shutting down/);
    expect(daemon.logs.join('\n')).toContain('shutdown grace is over');

    // The acknowledged spans were on disk: the next start delivers them.
    sink.respond = () => ({ status: 200 });
    const next = await startDaemon(config(ports, sink, upstream), { dir: daemon.dir });
    cleanups.push(() => next.cleanup());
    await waitUntil(() => sink.spans().filter((s) => s.resource['service.name'] === 'checkout').length >= 2, 20_000, 'the acknowledged spans');
    expect(sink.spans().filter((s) => s.resource['service.name'] === 'checkout').map((s) => s.span.name).sort()).toEqual(['GET /api/cart', 'SELECT cart']);
    expect(await next.stop()).toBe(0);
  });

  it('bounds a SIGHUP reload that replaces a listener by the same grace', async () => {
    const upstream = await startUpstream((_body, res) => {
      res.end();
    });
    cleanups.push(() => upstream.close());
    const sink = await startOtlpSink({ tls: false });
    cleanups.push(() => sink.close());
    const ports: Ports = { http: await freePort(), grpc: await freePort(), gateway: await freePort() };
    const daemon = await startDaemon(config(ports, sink, upstream));
    cleanups.push(() => daemon.cleanup());
    const stalled = await halfBody(ports.http);

    const moved: Ports = { ...ports, http: await freePort() };
    const { writeFile } = await import('node:fs/promises');
    await writeFile(daemon.configPath, config(moved, sink, upstream)({ dir: daemon.dir, adminPort: daemon.adminPort }));
    const signalled = Date.now();
    daemon.child.kill('SIGHUP');
    await stalled.closed;
    const elapsed = Date.now() - signalled;
    console.log(`SIGHUP replacing a listener with a stalled upload: old connection closed after ${elapsed} ms (shutdown_grace ${GRACE_MS} ms)`);
    expect(elapsed).toBeLessThan(GRACE_MS + 1_000);
    await waitUntil(async () => (await fetch(`http://127.0.0.1:${moved.http}/v1/traces`).catch(() => null))?.status === 405, 5_000, 'the new listener');
    expect(await exportSpans(moved.http)).toBe(0);
    expect(await daemon.stop()).toBe(0);
  });

  const silentDestinations = {
    otlphttp: (url: string) => `exporters:\n  otlphttp: { endpoint: ${url}, compression: none, timeout: 60s }`,
    drains: (url: string) => `exporters:\n  drains: {}\ndrains:\n  - { name: silent, url: ${url}, insecure: true, compression: none }`,
  };
  it.each(['otlphttp', 'drains'] as const)("bounds the %s exporter's last flush by shutdown_grace: a destination that never answers keeps its batch queued for the next start", async (exporter) => {
    const sink = await startOtlpSink({ tls: false });
    cleanups.push(() => sink.close());
    let hanging = 0;
    sink.respond = () => {
      hanging += 1;
      return 'hang';
    };
    const http = await freePort();
    const graceMs = 1_000;
    const flushConfig = ({ dir, adminPort }: { dir: string; adminPort: number }) => `
receivers:
  otlp: { protocols: { http: { endpoint: 127.0.0.1:${http} } } }
${silentDestinations[exporter](sink.url)}
service:
  shutdown_grace: ${graceMs}ms
  storage: { directory: ${dir}/data }
  admin: { endpoint: 127.0.0.1:${adminPort} }
  pipelines: { traces: { receivers: [otlp], exporters: [${exporter}] } }
`;
    const daemon = await startDaemon(flushConfig);
    cleanups.push(() => daemon.cleanup());
    expect(await exportSpans(http)).toBe(0);
    await waitUntil(() => hanging === 1, 10_000, 'the delivery to reach the silent destination');

    const exited = new Promise<number | null>((resolve) => daemon.child.once('exit', (code) => resolve(code)));
    const signalled = Date.now();
    daemon.child.kill('SIGTERM');
    const code = await exited;
    const elapsed = Date.now() - signalled;
    console.log(`shutdown with a delivery to ${exporter} that the destination never answers: exit ${code} after ${elapsed} ms (shutdown_grace ${graceMs} ms)`);
    expect(code).toBe(0);
    expect(elapsed).toBeLessThan(graceMs + 1_000);
    const logs = daemon.logs.join('\n');
    // The exporter gave up its delivery at the grace and closed its queue: a clean stop, not the service's backstop.
    expect(logs).toContain('deliveries still in flight after the grace period; aborting them, their records stay queued');
    expect(logs).toContain('"msg":"sluice stopped"');
    expect(logs).not.toContain('exporters still flushing');

    sink.respond = () => ({ status: 200 });
    const next = await startDaemon(flushConfig, { dir: daemon.dir });
    cleanups.push(() => next.cleanup());
    await sink.waitForSpans(2, 10_000);
    expect(sink.spans().map((s) => s.span.name).sort()).toEqual(['GET /api/cart', 'SELECT cart']);
    expect(await next.stop()).toBe(0);
  });
});
