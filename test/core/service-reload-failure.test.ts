// A reload whose new graph fails to start after one of its listeners took a
// kept port: the connections that waited at the port through the reload go
// to that listener, and the failed graph's stop is bounded by the grace as
// any other stop is, so the previous config comes back.
import { mkdtempSync, rmSync } from 'node:fs';
import { createServer, type AddressInfo } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { pino } from 'pino';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { parseConfigText } from '../../src/config/load.js';
import { otlpReceiverFactory } from '../../src/receivers/otlp/factory.js';
import { Service } from '../../src/service.js';
import { Telemetry } from '../../src/shared/telemetry.js';
import { freePort, waitUntil } from '../helpers/daemon.js';
import { createRecorder, fakeRegistry, type Recorder } from './fakes.js';

let directory: string;
let recorder: Recorder;
let service: Service;

beforeEach(() => {
  directory = mkdtempSync(join(tmpdir(), 'sluice-reload-failure-'));
  recorder = createRecorder();
  service = new Service({ logger: pino({ level: 'silent' }), version: 'test', telemetry: new Telemetry({ defaultMetrics: false }) });
});

afterEach(async () => {
  await service.shutdown();
  rmSync(directory, { recursive: true, force: true });
});

function config(port: number, receivers: string, exporters: string, pipeline: string, grpc = '') {
  const text = `receivers:
  otlp: { protocols: { http: { endpoint: "127.0.0.1:${port}" }${grpc} } }
${receivers}
exporters:
${exporters}
service:
  shutdown_grace: 1s
  storage: { directory: "${join(directory, 'data')}" }
  admin: { endpoint: "127.0.0.1:0" }
  pipelines:
    traces: ${pipeline}
`;
  return parseConfigText(text, { registry: fakeRegistry(recorder).register(otlpReceiverFactory), env: {} });
}

const ONE_SPAN = { resourceSpans: [{ resource: { attributes: [] }, scopeSpans: [{ scope: {}, spans: [{ traceId: '5b8efff798038103d269b633813fc60c', spanId: 'eee19b7ec3c1b174', name: 'held', kind: 1, startTimeUnixNano: '1', endTimeUnixNano: '2' }] }] }] };

describe('a reload that fails to start', () => {
  it('restores the previous config within the grace when a request held through the reload went to the failed graph and does not end', async () => {
    const port = await freePort();
    const first = config(port, '', '  fakeout: {}', '{ receivers: [otlp], exporters: [fakeout] }');
    await service.start(first);

    // The new graph's exporter starts slowly (connections made meanwhile wait at the port) and
    // never finishes an export; the receiver after the OTLP one cannot start.
    const failing = config(port, '  fakein: { fail_start: true }', '  fakeout/hung: { start_delay_ms: 1000, delay_ms: 60000 }', '{ receivers: [otlp, fakein], exporters: [fakeout/hung] }');
    const reloaded = service.reload(() => failing);
    await waitUntil(() => recorder.events.includes('start exporter fakeout/hung'), 5_000, 'the new graph to start');
    const held = fetch(`http://127.0.0.1:${port}/v1/traces`, { method: 'POST', headers: { 'content-type': 'application/json' }, body: JSON.stringify(ONE_SPAN) }).catch((err: unknown) => err);

    expect(await reloaded).toBe(false);
    expect(service.config).toBe(first);
    expect(service.ready).toBe(true);
    expect(await held).toBeInstanceOf(Error);
  });

  it('restores the previous config within the grace when the OTLP receiver that took the held request cannot bind its other protocol', async () => {
    const port = await freePort();
    const taken = createServer();
    await new Promise<void>((resolve) => taken.listen(0, '127.0.0.1', resolve));
    const grpcPort = (taken.address() as AddressInfo).port;
    try {
      const first = config(port, '', '  fakeout: {}', '{ receivers: [otlp], exporters: [fakeout] }');
      await service.start(first);

      // Another process holds the gRPC port: the receiver's HTTP side takes the held request, then gives up.
      const failing = config(port, '', '  fakeout/hung: { start_delay_ms: 1000, delay_ms: 60000 }', '{ receivers: [otlp], exporters: [fakeout/hung] }', `, grpc: { endpoint: "127.0.0.1:${grpcPort}" }`);
      const reloaded = service.reload(() => failing);
      await waitUntil(() => recorder.events.includes('start exporter fakeout/hung'), 5_000, 'the new graph to start');
      const held = fetch(`http://127.0.0.1:${port}/v1/traces`, { method: 'POST', headers: { 'content-type': 'application/json' }, body: JSON.stringify(ONE_SPAN) }).catch((err: unknown) => err);

      expect(await reloaded).toBe(false);
      expect(service.config).toBe(first);
      expect(await held).toBeInstanceOf(Error);
    } finally {
      taken.close();
    }
  });
});
