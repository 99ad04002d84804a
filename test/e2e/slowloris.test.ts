// Issue 9: a slowloris (2,000 connections, each sending one header byte
// every 5 s) on the OTLP HTTP listener and 2,000 idle connections on the
// gateway, while the OTel SDK exporter and the openai SDK keep being served.
// The daemon's RSS is measured and printed; the slow connections are closed
// by read_header_timeout and counted while open.
import { readFile } from 'node:fs/promises';
import type { Socket } from 'node:net';
import { connect } from 'node:net';
import { ExportResultCode } from '@opentelemetry/core';
import { OTLPTraceExporter } from '@opentelemetry/exporter-trace-otlp-proto';
import OpenAI from 'openai';
import { afterEach, describe, expect, it } from 'vitest';
import { freePort, startDaemon, waitUntil } from '../helpers/daemon.js';
import { makeSdkSpans } from '../helpers/sdk-spans.js';
import { completion, sendJson, startUpstream } from '../receivers/gateway/harness.js';

const SLOW = 2_000;
const IDLE = 2_000;
const BYTE_EVERY_MS = 5_000;

const cleanups: Array<() => Promise<unknown> | void> = [];
afterEach(async () => {
  for (const c of cleanups.splice(0).reverse()) await c();
});

/** Opens `count` connections, at most 100 connecting at a time; `first` is written on connect. */
async function openMany(port: number, count: number, first: string | undefined): Promise<Socket[]> {
  const sockets: Socket[] = [];
  for (let opened = 0; opened < count; opened += 100) {
    const batch = Array.from({ length: Math.min(100, count - opened) }, () =>
      new Promise<Socket>((resolve, reject) => {
        const socket = connect(port, '127.0.0.1', () => {
          if (first !== undefined) socket.write(first);
          resolve(socket);
        });
        socket.on('error', () => {});
        socket.once('error', reject);
        // Read what the server sends (a 408), so its close is seen.
        socket.resume();
      }),
    );
    sockets.push(...(await Promise.all(batch)));
  }
  return sockets;
}

async function rssMiB(pid: number): Promise<number> {
  const status = await readFile(`/proc/${pid}/status`, 'utf8');
  return Number(/VmRSS:\s+(\d+) kB/.exec(status)?.[1] ?? 0) / 1024;
}

async function openConnections(adminPort: number, listener: string): Promise<number> {
  const text = await (await fetch(`http://127.0.0.1:${adminPort}/metrics`)).text();
  const match = new RegExp(`^sluice_listener_connections\\{listener="${listener}"\\} (\\d+)`, 'm').exec(text);
  return Number(match?.[1] ?? 0);
}

describe('slow and idle clients', () => {
  it('leave the SDK exporter and the openai SDK served, with bounded memory, and are closed by read_header_timeout', async () => {
    const upstream = await startUpstream((_body, res) => sendJson(res, 200, completion('still here')));
    cleanups.push(() => upstream.close());
    const [http, gateway] = [await freePort(), await freePort()];
    const daemon = await startDaemon(
      ({ dir, adminPort }) => `
receivers:
  otlp: { protocols: { http: { endpoint: 127.0.0.1:${http} } } }
  gateway:
    endpoint: 127.0.0.1:${gateway}
    api_keys: [sk-slow]
    providers: { fake: { type: openai, base_url: ${upstream.url}, api_key: sk-up } }
    models: [{ id: fake/model, endpoints: [{ provider: fake, model: m }] }]
exporters:
  file: { path: ${dir}/traces.jsonl }
service:
  storage: { directory: ${dir}/data }
  admin: { endpoint: 127.0.0.1:${adminPort} }
  pipelines: { traces: { receivers: [otlp, gateway], exporters: [file] } }
`,
    );
    cleanups.push(() => daemon.cleanup());
    const pid = daemon.child.pid ?? 0;
    const exporter = new OTLPTraceExporter({ url: `http://127.0.0.1:${http}/v1/traces` });
    cleanups.push(() => exporter.shutdown());
    const client = new OpenAI({ baseURL: `http://127.0.0.1:${gateway}/v1`, apiKey: 'sk-slow', maxRetries: 0 });
    const exportOnce = () => new Promise<number>((resolve) => exporter.export(makeSdkSpans(), (r) => resolve(r.code)));

    expect(await exportOnce()).toBe(ExportResultCode.SUCCESS);
    const rssBefore = await rssMiB(pid);

    const slow = await openMany(http, SLOW, 'POST /v1/traces HTTP/1.1\r\nX');
    const idle = await openMany(gateway, IDLE, undefined);
    const all = [...slow, ...idle];
    cleanups.push(() => {
      for (const socket of all) socket.destroy();
    });
    const drip = setInterval(() => {
      for (const socket of slow) if (!socket.destroyed) socket.write('x');
    }, BYTE_EVERY_MS);
    cleanups.push(() => clearInterval(drip));
    await waitUntil(async () => (await openConnections(daemon.adminPort, 'otlp/http')) >= SLOW && (await openConnections(daemon.adminPort, 'gateway')) >= IDLE, 20_000, 'every slow and idle connection open');

    // Well-behaved clients, served while the slow ones hold their connections.
    for (let i = 0; i < 3; i++) {
      expect(await exportOnce()).toBe(ExportResultCode.SUCCESS);
      const answer = await client.chat.completions.create({ model: 'fake/model', messages: [{ role: 'user', content: 'hi' }] });
      expect(answer.choices[0]?.message.content).toBe('still here');
    }
    const rssHeld = await rssMiB(pid);
    const stillOpen = all.filter((socket) => !socket.destroyed).length;

    // read_header_timeout (10 s) closes both kinds, however they drip.
    await waitUntil(() => all.every((socket) => socket.destroyed || socket.closed), 30_000, 'the slow connections to be closed').catch((err: unknown) => {
      throw new Error(`${String(err)}: ${slow.filter((x) => !x.destroyed).length} slow and ${idle.filter((x) => !x.destroyed).length} idle still open`);
    });
    await waitUntil(async () => (await openConnections(daemon.adminPort, 'otlp/http')) < 10 && (await openConnections(daemon.adminPort, 'gateway')) < 10, 10_000, 'the open-connection gauges to fall');
    expect(await exportOnce()).toBe(ExportResultCode.SUCCESS);
    const rssAfter = await rssMiB(pid);

    console.log(`slowloris: ${SLOW} slow + ${IDLE} idle connections (${stillOpen} open while measured): daemon RSS ${rssBefore.toFixed(1)} MiB before, ${rssHeld.toFixed(1)} MiB held, ${rssAfter.toFixed(1)} MiB after they were closed`);
    // Bounded: a few KiB per connection, nowhere near a buffer per request.
    expect(stillOpen).toBe(SLOW + IDLE);
    expect(rssHeld - rssBefore).toBeLessThan(200);
    expect(await daemon.stop()).toBe(0);
  });
});
