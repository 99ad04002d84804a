// SIGHUP applies a changed config without a restart: new listeners, new
// resource attributes, and data already acknowledged still delivered.
import { readFile, writeFile } from 'node:fs/promises';
import { OTLPTraceExporter } from '@opentelemetry/exporter-trace-otlp-proto';
import { afterEach, describe, expect, it } from 'vitest';
import { freePort, startDaemon, waitUntil, type RunningDaemon } from '../helpers/daemon.js';
import { startOtlpSink, type OtlpSink } from '../helpers/otlp-sink.js';
import { makeSdkSpans } from '../helpers/sdk-spans.js';

let daemon: RunningDaemon | undefined;
let sink: OtlpSink | undefined;
afterEach(async () => {
  await daemon?.cleanup();
  await sink?.close();
  daemon = undefined;
  sink = undefined;
});

function config(sinkUrl: string, otlpPort: number, deploymentId: string) {
  return ({ dir, adminPort }: { dir: string; adminPort: number }) => `
receivers:
  otlp: { protocols: { http: { endpoint: 127.0.0.1:${otlpPort} } } }
processors:
  resource: { attributes: { platform.projectId: prj_reload, platform.deploymentId: ${deploymentId} } }
exporters:
  otlphttp: { endpoint: ${sinkUrl}, compression: none, retry_on_failure: { initial_interval: 100, max_interval: 200 } }
service:
  storage: { directory: ${dir}/data }
  admin: { endpoint: 127.0.0.1:${adminPort} }
  pipelines: { traces: { receivers: [otlp], processors: [resource], exporters: [otlphttp] } }
`;
}

async function send(port: number): Promise<number> {
  const exporter = new OTLPTraceExporter({ url: `http://127.0.0.1:${port}/v1/traces` });
  const code = await new Promise<number>((resolve) => exporter.export(makeSdkSpans(), (r) => resolve(r.code)));
  await exporter.shutdown();
  return code;
}

describe('SIGHUP', () => {
  it('applies a valid new config: a new port and new resource attributes, with earlier data still delivered', async () => {
    sink = await startOtlpSink({ tls: false });
    const [firstPort, secondPort] = [await freePort(), await freePort()];
    daemon = await startDaemon(config(sink.url, firstPort, 'dpl_before'));
    expect(await send(firstPort)).toBe(0);

    expect(await readFile(daemon.configPath, 'utf8')).toContain('dpl_before');
    await writeFile(daemon.configPath, config(sink.url, secondPort, 'dpl_after')({ dir: daemon.dir, adminPort: daemon.adminPort }));
    daemon.child.kill('SIGHUP');
    await waitUntil(async () => (await fetch(`http://127.0.0.1:${secondPort}/v1/traces`, { method: 'GET' }).catch(() => null))?.status === 405, 10_000, 'the new OTLP port');
    expect(await send(secondPort)).toBe(0);
    await expect(fetch(`http://127.0.0.1:${firstPort}/v1/traces`, { method: 'GET' })).rejects.toThrow();

    await sink.waitForSpans(4);
    const deployments = sink.spans().map((s) => s.resource['platform.deploymentId']);
    expect(deployments.filter((d) => d === 'dpl_before')).toHaveLength(2);
    expect(deployments.filter((d) => d === 'dpl_after')).toHaveLength(2);
  });

  it("keeps a drain's delivery counters and a config drain's times across a reload", async () => {
    const otlpPort = await freePort();
    const deadPort = await freePort();
    const yaml = ({ dir, adminPort }: { dir: string; adminPort: number }) => `
receivers:
  otlp: { protocols: { http: { endpoint: 127.0.0.1:${otlpPort} } } }
exporters:
  drains: {}
drains:
  - { name: nowhere, url: "http://127.0.0.1:${deadPort}/v1/traces", insecure: true, format: json, compression: none }
service:
  storage: { directory: ${dir}/data }
  admin: { endpoint: 127.0.0.1:${adminPort}, api_key: reload-admin-key }
  pipelines: { traces: { receivers: [otlp], exporters: [drains] } }
`;
    daemon = await startDaemon(yaml);
    const admin = `http://127.0.0.1:${daemon.adminPort}`;
    const headers = { authorization: 'Bearer reload-admin-key' };
    interface View { id: string; createdAt: number; updatedAt: number; deliveries: { failed: number; pastHour: { failed: number }; lastError: string | null } }
    const drain = async (): Promise<View> => ((await (await fetch(`${admin}/v1/drains`, { headers })).json()) as { drains: View[] }).drains[0] as View;
    expect(await send(otlpPort)).toBe(0);
    await waitUntil(async () => (await drain()).deliveries.failed >= 1, 10_000, 'a failed delivery');
    const before = await drain();

    const reloaded = () => daemon?.logs.some((line) => line.includes('config reloaded')) === true;
    expect(reloaded()).toBe(false);
    daemon.child.kill('SIGHUP');
    await waitUntil(reloaded, 10_000, 'the reload');
    const after = await drain();
    expect(after.id).toBe(before.id);
    expect(after.createdAt).toBe(before.createdAt);
    expect(after.updatedAt).toBe(before.updatedAt);
    expect(after.deliveries.failed).toBeGreaterThanOrEqual(before.deliveries.failed);
    expect(after.deliveries.pastHour.failed).toBeGreaterThanOrEqual(before.deliveries.pastHour.failed);
    expect(after.deliveries.lastError).not.toBeNull();
  });
});
