// SIGHUP applies a changed config without a restart: new listeners, new
// resource attributes, and data already acknowledged still delivered.
import { spawn } from 'node:child_process';
import { readdirSync } from 'node:fs';
import { mkdtemp, readFile, rm, writeFile } from 'node:fs/promises';
import type { ServerResponse } from 'node:http';
import { connect } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { OTLPTraceExporter } from '@opentelemetry/exporter-trace-otlp-proto';
import { afterEach, describe, expect, it } from 'vitest';
import { CLI, freePort, startDaemon, waitUntil, type RunningDaemon } from '../helpers/daemon.js';
import { startOtlpSink, type OtlpSink } from '../helpers/otlp-sink.js';
import { halfBody } from '../helpers/raw-clients.js';
import { makeSdkSpans } from '../helpers/sdk-spans.js';
import type { ExportTraceServiceRequest } from '../../src/otlp/model.js';
import { startUpstream, textStream } from '../receivers/gateway/harness.js';

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

  it('keeps a port the new config listens on open through the reload: a client that connects while the old graph stops is answered by the new one', async () => {
    sink = await startOtlpSink({ tls: false });
    // The first delivery hangs, so the old exporter's stop takes the whole grace.
    let deliveries = 0;
    sink.respond = () => (++deliveries === 1 ? 'hang' : { status: 200 });
    const otlpPort = await freePort();
    const withGrace = (deploymentId: string) => (ctx: { dir: string; adminPort: number }) =>
      config(sink?.url ?? '', otlpPort, deploymentId)(ctx).replace('service:\n', 'service:\n  shutdown_grace: 2s\n');
    daemon = await startDaemon(withGrace('dpl_before'));
    expect(await send(otlpPort)).toBe(0);
    const running = daemon;
    await waitUntil(() => deliveries === 1, 10_000, 'the delivery to reach the sink');

    await writeFile(daemon.configPath, withGrace('dpl_after')({ dir: daemon.dir, adminPort: daemon.adminPort }));
    daemon.child.kill('SIGHUP');
    await waitUntil(async () => (await fetch(`http://127.0.0.1:${running.adminPort}/readyz`)).status === 503, 10_000, 'the old graph to begin stopping');
    expect(running.logs.join('\n')).not.toContain('config reloaded');
    // Connected while no graph listens: it waits for the new one instead of being refused
    // (fetch does not retry a refused connection, as the SDK's exporter does).
    const span = { traceId: '5b8efff798038103d269b633813fc60c', spanId: 'eee19b7ec3c1b174', name: 'during-reload', kind: 1, startTimeUnixNano: '1', endTimeUnixNano: '2' };
    const answer = await fetch(`http://127.0.0.1:${otlpPort}/v1/traces`, {
      method: 'POST',
      headers: { 'content-type': 'application/json' },
      body: JSON.stringify({ resourceSpans: [{ resource: { attributes: [] }, scopeSpans: [{ scope: {}, spans: [span] }] }] }),
    });
    expect(answer.status).toBe(200);
    expect(running.logs.join('\n')).toContain('config reloaded');

    await waitUntil(() => sink?.spans().some(({ span: sent, resource }) => sent.name === 'during-reload' && resource['platform.deploymentId'] === 'dpl_after') === true, 20_000, 'the span sent during the reload');
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

  it("keeps the spans of a gateway request the reload's grace cut before its answer began", async () => {
    const held: ServerResponse[] = [];
    const upstream = await startUpstream((_body, res) => {
      held.push(res);
    });
    const gatewayPort = await freePort();
    const yaml = (environment: string) => ({ dir, adminPort }: { dir: string; adminPort: number }) => `
receivers:
  gateway:
    endpoint: 127.0.0.1:${gatewayPort}
    environment: ${environment}
    api_keys: [sk-reload]
    providers:
      fake: { type: openai, base_url: ${upstream.url}, api_key: sk-upstream }
    models:
      - { id: fake/model, endpoints: [{ provider: fake, model: upstream-model }] }
exporters:
  file: { path: ${dir}/traces.jsonl }
service:
  shutdown_grace: 300ms
  storage: { directory: ${dir}/data }
  admin: { endpoint: 127.0.0.1:${adminPort} }
  pipelines: { traces: { receivers: [gateway], exporters: [file] } }
`;
    try {
      daemon = await startDaemon(yaml('before'));
      const headers = { authorization: 'Bearer sk-reload', 'content-type': 'application/json' };
      const cut = fetch(`http://127.0.0.1:${gatewayPort}/v1/chat/completions`, { method: 'POST', headers, body: JSON.stringify({ model: 'fake/model', messages: [{ role: 'user', content: 'hi' }] }) });
      await waitUntil(() => held.length === 1, 10_000, 'the request to reach the upstream');

      await writeFile(daemon.configPath, yaml('after')({ dir: daemon.dir, adminPort: daemon.adminPort }));
      daemon.child.kill('SIGHUP');
      await expect(cut).rejects.toThrow();
      const running = daemon;
      await waitUntil(() => running.logs.some((line) => line.includes('config reloaded')), 10_000, 'the reload');
      expect((await fetch(`http://127.0.0.1:${gatewayPort}/v1/models`, { headers })).status).toBe(200);

      const file = join(daemon.dir, 'traces.jsonl');
      const spans = async () =>
        (await readFile(file, 'utf8').catch(() => ''))
          .split('\n')
          .filter(Boolean)
          .flatMap((line) => (JSON.parse(line) as ExportTraceServiceRequest).resourceSpans.flatMap((rs) => rs.scopeSpans.flatMap((ss) => ss.spans.map((span) => span.name))));
      // The request after the reload is written by the new graph, after whatever the old one wrote.
      await waitUntil(async () => (await spans()).includes('GET /v1/models'), 10_000, 'the span of the request after the reload');
      expect(await spans()).toEqual(expect.arrayContaining(['POST /v1/chat/completions', 'chat upstream-model']));
      expect(daemon.logs.join('\n')).not.toContain('gateway spans refused by the pipeline');
    } finally {
      for (const res of held) res.destroy();
      await upstream.close();
    }
  });

  it('opens none of the new config when SIGTERM arrives while a reload stops the old one', async () => {
    sink = await startOtlpSink({ tls: false });
    const [firstPort, secondPort] = [await freePort(), await freePort()];
    const withGrace = (port: number) => (ctx: { dir: string; adminPort: number }) => config(sink?.url ?? '', port, 'dpl_reload')(ctx).replace('service:\n', 'service:\n  shutdown_grace: 2s\n');
    daemon = await startDaemon(withGrace(firstPort));
    expect(await send(firstPort)).toBe(0);
    // An upload that never ends holds the old graph's stop for the whole grace.
    const stalled = await halfBody(firstPort);

    await writeFile(daemon.configPath, withGrace(secondPort)({ dir: daemon.dir, adminPort: daemon.adminPort }));
    daemon.child.kill('SIGHUP');
    const running = daemon;
    await waitUntil(() => running.logs.some((line) => line.includes('SIGHUP: reloading config')), 10_000, 'the reload to begin');
    expect(await daemon.stop()).toBe(0);
    await stalled.closed;

    const logs = daemon.logs.join('\n');
    expect(logs).not.toContain('config reloaded');
    expect(logs).not.toContain(`"port":${secondPort}`);
    await sink.waitForSpans(2);
  });

  it('moves the admin endpoint onto the port a receiver listened on before the reload', async () => {
    sink = await startOtlpSink({ tls: false });
    const [firstPort, secondPort] = [await freePort(), await freePort()];
    daemon = await startDaemon(config(sink.url, firstPort, 'dpl_before'));

    await writeFile(daemon.configPath, config(sink.url, secondPort, 'dpl_after')({ dir: daemon.dir, adminPort: firstPort }));
    daemon.child.kill('SIGHUP');
    const running = daemon;
    await waitUntil(() => running.logs.some((line) => /config reloaded|restoring the previous one/.test(line)), 10_000, 'the reload to end');
    expect(running.logs.join('\n')).toContain('config reloaded');
    expect((await fetch(`http://127.0.0.1:${firstPort}/readyz`)).status).toBe(200);
    expect(await send(secondPort)).toBe(0);
  });

  it('closes the kept ports at once when SIGTERM arrives while a reload stops the old graph: no connection waits for a graph that never comes', async () => {
    sink = await startOtlpSink({ tls: false });
    const otlpPort = await freePort();
    const withGrace = (deploymentId: string) => (ctx: { dir: string; adminPort: number }) =>
      config(sink?.url ?? '', otlpPort, deploymentId)(ctx).replace('service:\n', 'service:\n  shutdown_grace: 60s\n');
    daemon = await startDaemon(withGrace('dpl_before'));
    // An upload that never ends holds the old graph's stop (for the whole grace).
    const stalled = await halfBody(otlpPort);

    await writeFile(daemon.configPath, withGrace('dpl_after')({ dir: daemon.dir, adminPort: daemon.adminPort }));
    daemon.child.kill('SIGHUP');
    const running = daemon;
    await waitUntil(async () => (await fetch(`http://127.0.0.1:${running.adminPort}/readyz`)).status === 503, 10_000, 'the old graph to begin stopping');
    running.child.kill('SIGTERM');
    await waitUntil(() => running.logs.some((line) => line.includes('"signal":"SIGTERM"')), 10_000, 'the stop to begin');

    // Refused, as a stopping daemon's port is, not held for the rest of the grace.
    const refused = await new Promise<boolean>((resolve) => {
      const socket = connect(otlpPort, '127.0.0.1');
      socket.once('connect', () => {
        socket.destroy();
        resolve(false);
      });
      socket.once('error', () => resolve(true));
    });
    expect(refused).toBe(true);
    stalled.socket.destroy();
    await waitUntil(() => running.child.exitCode !== null, 20_000, 'the daemon to exit');
    expect(running.child.exitCode).toBe(0);
  });

  it.runIf(process.platform === 'linux')('survives a SIGHUP that comes while it is still loading, and starts', async () => {
    sink = await startOtlpSink({ tls: false });
    const [otlpPort, adminPort] = [await freePort(), await freePort()];
    const dir = await mkdtemp(join(tmpdir(), 'sluice-e2e-'));
    const configPath = join(dir, 'config.yaml');
    await writeFile(configPath, config(sink.url, otlpPort, 'dpl_loading')({ dir, adminPort }));
    const child = spawn(process.execPath, [CLI, 'run', '--config', configPath], { stdio: 'ignore', env: { ...process.env, UV_THREADPOOL_SIZE: '16' } });
    const exited = new Promise<{ code: number | null; signal: NodeJS.Signals | null }>((resolve) => child.once('exit', (code, signal) => resolve({ code, signal })));
    try {
      // libuv's pool (16 threads) starts as the modules begin to load, long before the config is read.
      const threads = () => {
        try {
          return readdirSync(`/proc/${child.pid}/task`).length;
        } catch {
          return 0;
        }
      };
      await waitUntil(() => threads() >= 16, 10_000, 'the module loader to start');
      child.kill('SIGHUP');
      await waitUntil(
        async () => {
          if (child.exitCode !== null || child.signalCode !== null) throw new Error(`the daemon ended: ${JSON.stringify(await exited)}`);
          return (await fetch(`http://127.0.0.1:${adminPort}/readyz`).catch(() => null))?.status === 200;
        },
        20_000,
        'the daemon to be ready',
      );
      expect(await send(otlpPort)).toBe(0);
      await sink.waitForSpans(2);
      child.kill('SIGTERM');
      expect(await exited).toEqual({ code: 0, signal: null });
    } finally {
      child.kill('SIGKILL');
      await rm(dir, { recursive: true, force: true });
    }
  });

  it('drops from /metrics the series of the components a reload removed, gauges included', async () => {
    sink = await startOtlpSink({ tls: false });
    sink.respond = () => ({ status: 503 });
    const otlpPort = await freePort();
    const yaml = (receiver: string, exporter: string) => ({ dir, adminPort }: { dir: string; adminPort: number }) => `
receivers:
  ${receiver}: { protocols: { http: { endpoint: 127.0.0.1:${otlpPort} } } }
exporters:
  ${exporter}: { endpoint: ${sink?.url ?? ''}, compression: none }
service:
  storage: { directory: ${dir}/data }
  admin: { endpoint: 127.0.0.1:${adminPort} }
  pipelines: { traces/${exporter.replace('/', '-')}: { receivers: [${receiver}], exporters: [${exporter}] } }
`;
    daemon = await startDaemon(yaml('otlp', 'otlphttp/first'));
    const metrics = async () => (await (await fetch(`http://127.0.0.1:${daemon?.adminPort ?? 0}/metrics`)).text()).split('\n').filter((line) => !line.startsWith('#'));
    // The destination refuses: the record stays in the queue, which its gauge says.
    expect(await send(otlpPort)).toBe(0);
    await waitUntil(async () => (await metrics()).includes('sluice_queue_records{queue="otlphttp/first"} 1'), 10_000, 'the queued record');
    expect((await metrics()).some((line) => line.includes('listener="otlp/http"'))).toBe(true);

    await writeFile(daemon.configPath, yaml('otlp/next', 'otlphttp/second')({ dir: daemon.dir, adminPort: daemon.adminPort }));
    daemon.child.kill('SIGHUP');
    const running = daemon;
    await waitUntil(() => running.logs.some((line) => line.includes('config reloaded')), 10_000, 'the reload');
    expect(await send(otlpPort)).toBe(0);
    await waitUntil(async () => (await metrics()).includes('sluice_queue_records{queue="otlphttp/second"} 1'), 10_000, 'the new queue');

    const stale = (await metrics()).filter((line) => /"(otlphttp\/first|otlp|otlp\/http|traces\/otlphttp-first)"/.test(line));
    expect(stale).toEqual([]);
  });

  it('drops from /metrics the series of a config drain a reload removed', async () => {
    sink = await startOtlpSink({ tls: false });
    const otlpPort = await freePort();
    const yaml = (names: string[]) => ({ dir, adminPort }: { dir: string; adminPort: number }) => `
receivers:
  otlp: { protocols: { http: { endpoint: 127.0.0.1:${otlpPort} } } }
exporters:
  drains: {}
drains:
${names.map((name) => `  - { name: ${name}, url: "${sink?.url ?? ''}", insecure: true, compression: none }`).join('\n')}
service:
  storage: { directory: ${dir}/data }
  admin: { endpoint: 127.0.0.1:${adminPort}, api_key: reload-admin-key }
  pipelines: { traces: { receivers: [otlp], exporters: [drains] } }
`;
    daemon = await startDaemon(yaml(['kept', 'removed']));
    const admin = `http://127.0.0.1:${daemon.adminPort}`;
    const drains = ((await (await fetch(`${admin}/v1/drains`, { headers: { authorization: 'Bearer reload-admin-key' } })).json()) as { drains: Array<{ id: string; name: string }> }).drains;
    const idOf = (name: string) => drains.find((drain) => drain.name === name)?.id ?? name;
    expect(await send(otlpPort)).toBe(0);
    await sink.waitForSpans(4);
    const metrics = async () => (await (await fetch(`${admin}/metrics`)).text()).split('\n').filter((line) => !line.startsWith('#'));
    expect((await metrics()).filter((line) => line.includes(idOf('removed'))).length).toBeGreaterThan(0);

    await writeFile(daemon.configPath, yaml(['kept'])({ dir: daemon.dir, adminPort: daemon.adminPort }));
    daemon.child.kill('SIGHUP');
    const running = daemon;
    await waitUntil(() => running.logs.some((line) => line.includes('config reloaded')), 10_000, 'the reload');

    expect((await metrics()).filter((line) => line.includes(idOf('removed')))).toEqual([]);
    expect((await metrics()).filter((line) => line.includes(idOf('kept'))).length).toBeGreaterThan(0);
  });

  it('refuses a reload that moves the storage directory: the API drains, the queue and the old config stay', async () => {
    const otlpPort = await freePort();
    const deadPort = await freePort();
    const yaml = (storage: string) => ({ dir, adminPort }: { dir: string; adminPort: number }) => `
receivers:
  otlp: { protocols: { http: { endpoint: 127.0.0.1:${otlpPort} } } }
exporters:
  otlphttp: { endpoint: "http://127.0.0.1:${deadPort}/v1/traces", compression: none }
  drains: {}
service:
  storage: { directory: ${dir}/${storage} }
  admin: { endpoint: 127.0.0.1:${adminPort}, api_key: reload-admin-key }
  pipelines: { traces: { receivers: [otlp], exporters: [otlphttp, drains] } }
`;
    daemon = await startDaemon(yaml('data'));
    const running = daemon;
    const admin = `http://127.0.0.1:${daemon.adminPort}`;
    const headers = { authorization: 'Bearer reload-admin-key', 'content-type': 'application/json' };
    const created = await fetch(`${admin}/v1/drains`, {
      method: 'POST',
      headers,
      body: JSON.stringify({ name: 'api-drain', delivery: { type: 'otlphttp', endpoint: { traces: `http://127.0.0.1:${deadPort}/v1/traces` }, insecure: true } }),
    });
    expect(created.status).toBe(201);
    const { id } = (await created.json()) as { id: string };
    expect(await send(otlpPort)).toBe(0);

    await writeFile(daemon.configPath, yaml('elsewhere')({ dir: daemon.dir, adminPort: daemon.adminPort }));
    daemon.child.kill('SIGHUP');
    await waitUntil(() => running.logs.some((line) => /config reload|restoring/.test(line)), 10_000, 'the reload to end');
    const refusal = running.logs.find((line) => line.includes('config reload refused'));
    expect(refusal).toContain(`service.storage.directory: a reload cannot move the storage directory from ${join(daemon.dir, 'data')} to ${join(daemon.dir, 'elsewhere')}`);
    expect(running.logs.join('\n')).not.toContain('config reloaded');

    const drains = (await (await fetch(`${admin}/v1/drains`, { headers })).json()) as { drains: Array<{ id: string }> };
    expect(drains.drains.map((drain) => drain.id)).toEqual([id]);
    expect(readdirSync(daemon.dir)).not.toContain('elsewhere');
    const metrics = await (await fetch(`${admin}/metrics`)).text();
    expect(metrics).toContain('sluice_queue_records{queue="otlphttp"} 1');
  });

  it('warns when a reload takes out a config drain whose queue still holds acknowledged spans', async () => {
    const otlpPort = await freePort();
    const deadPort = await freePort();
    const yaml = (names: string[]) => ({ dir, adminPort }: { dir: string; adminPort: number }) => `
receivers:
  otlp: { protocols: { http: { endpoint: 127.0.0.1:${otlpPort} } } }
exporters:
  drains: {}
drains:
${names.map((name) => `  - { name: ${name}, url: "http://127.0.0.1:${deadPort}/v1/traces", insecure: true, compression: none }`).join('\n')}
service:
  storage: { directory: ${dir}/data }
  admin: { endpoint: 127.0.0.1:${adminPort}, api_key: reload-admin-key }
  pipelines: { traces: { receivers: [otlp], exporters: [drains] } }
`;
    daemon = await startDaemon(yaml(['kept', 'removed']));
    const running = daemon;
    const admin = `http://127.0.0.1:${daemon.adminPort}`;
    interface View { id: string; name: string; deliveries: { failed: number } }
    const drains = async () => ((await (await fetch(`${admin}/v1/drains`, { headers: { authorization: 'Bearer reload-admin-key' } })).json()) as { drains: View[] }).drains;
    const removed = (await drains()).find((drain) => drain.name === 'removed');
    expect(await send(otlpPort)).toBe(0);
    await waitUntil(async () => (await drains()).every((drain) => drain.deliveries.failed >= 1), 10_000, 'a failed delivery to each drain');

    await writeFile(daemon.configPath, yaml(['kept'])({ dir: daemon.dir, adminPort: daemon.adminPort }));
    daemon.child.kill('SIGHUP');
    await waitUntil(() => running.logs.some((line) => line.includes('config reloaded')), 10_000, 'the reload');
    const warnings = running.logs.filter((line) => line.includes('the queue of a drain no longer configured holds undelivered records')).map((line) => JSON.parse(line) as { drain: string; bytes: number });
    expect(warnings.map(({ drain }) => drain)).toEqual([removed?.id]);
    expect(warnings[0]?.bytes).toBeGreaterThan(0);
  });

  it("sends what an exporter's queue holds to the endpoint a reload gives it", async () => {
    sink = await startOtlpSink({ tls: false });
    const otlpPort = await freePort();
    const deadUrl = `http://127.0.0.1:${await freePort()}/v1/traces`;
    daemon = await startDaemon(config(deadUrl, otlpPort, 'dpl_queued'));
    const running = daemon;
    expect(await send(otlpPort)).toBe(0);
    await waitUntil(() => running.logs.some((line) => line.includes('delivery failed; will retry')), 10_000, 'a failed delivery');

    await writeFile(daemon.configPath, config(sink.url, otlpPort, 'dpl_after')({ dir: daemon.dir, adminPort: daemon.adminPort }));
    daemon.child.kill('SIGHUP');
    await sink.waitForSpans(2);
    expect(sink.spans().map(({ resource }) => resource['platform.deploymentId'])).toEqual(['dpl_queued', 'dpl_queued']);
  });

  it("keeps a sampling processor's trace decisions across a reload: a child span after it follows the root kept before it", async () => {
    sink = await startOtlpSink({ tls: false });
    const otlpPort = await freePort();
    const yaml = (deploymentId: string) => ({ dir, adminPort }: { dir: string; adminPort: number }) => `
receivers:
  otlp: { protocols: { http: { endpoint: 127.0.0.1:${otlpPort} } } }
processors:
  resource: { attributes: { platform.projectId: prj_reload, platform.deploymentId: ${deploymentId} } }
  sampling/api: { rules: [{ environment: production, path_prefix: /api, percentage: 100 }, { environment: production, percentage: 0 }] }
exporters:
  otlphttp: { endpoint: ${sink?.url ?? ''}, compression: none }
service:
  storage: { directory: ${dir}/data }
  admin: { endpoint: 127.0.0.1:${adminPort} }
  pipelines: { traces: { receivers: [otlp], processors: [resource, sampling/api], exporters: [otlphttp] } }
`;
    const traceId = '5b8efff798038103d269b633813fc60d';
    const post = async (span: Record<string, unknown>) => {
      const resource = { attributes: [{ key: 'deployment.environment.name', value: { stringValue: 'production' } }] };
      const body = { resourceSpans: [{ resource, scopeSpans: [{ scope: {}, spans: [{ traceId, kind: 1, startTimeUnixNano: '1', endTimeUnixNano: '2', ...span }] }] }] };
      return (await fetch(`http://127.0.0.1:${otlpPort}/v1/traces`, { method: 'POST', headers: { 'content-type': 'application/json' }, body: JSON.stringify(body) })).status;
    };
    daemon = await startDaemon(yaml('dpl_before'));
    const running = daemon;
    expect(await post({ spanId: 'eee19b7ec3c1b174', name: 'root', kind: 2, attributes: [{ key: 'url.path', value: { stringValue: '/api/cart' } }] })).toBe(200);
    await sink.waitForSpans(1);

    await writeFile(daemon.configPath, yaml('dpl_after')({ dir: daemon.dir, adminPort: daemon.adminPort }));
    daemon.child.kill('SIGHUP');
    await waitUntil(() => running.logs.some((line) => line.includes('config reloaded')), 10_000, 'the reload');
    expect(await post({ spanId: 'eee19b7ec3c1b175', parentSpanId: 'eee19b7ec3c1b174', name: 'child' })).toBe(200);
    const metrics = (await (await fetch(`http://127.0.0.1:${running.adminPort}/metrics`)).text()).split('\n');
    expect(metrics.filter((line) => line.startsWith('sluice_sampling_dropped_spans_total{') && !line.endsWith(' 0'))).toEqual([]);
    await sink.waitForSpans(2);
    expect(sink.spans().map(({ span }) => span.name)).toEqual(['root', 'child']);
  });

  it('closes the connection of a gateway stream whose answer begins after the reload began, so the client moves to the new listener', async () => {
    const held: ServerResponse[] = [];
    const upstream = await startUpstream((_body, res) => {
      held.push(res);
    });
    const gatewayPort = await freePort();
    const yaml = (environment: string) => ({ dir, adminPort }: { dir: string; adminPort: number }) => `
receivers:
  gateway:
    endpoint: 127.0.0.1:${gatewayPort}
    environment: ${environment}
    api_keys: [sk-reload]
    providers:
      fake: { type: openai, base_url: ${upstream.url}, api_key: sk-upstream }
    models:
      - { id: fake/model, endpoints: [{ provider: fake, model: upstream-model }] }
exporters:
  debug: {}
service:
  storage: { directory: ${dir}/data }
  admin: { endpoint: 127.0.0.1:${adminPort} }
  pipelines: { traces: { receivers: [gateway], exporters: [debug] } }
`;
    try {
      daemon = await startDaemon(yaml('before'));
      const running = daemon;
      const headers = { authorization: 'Bearer sk-reload', 'content-type': 'application/json' };
      const stream = fetch(`http://127.0.0.1:${gatewayPort}/v1/chat/completions`, { method: 'POST', headers, body: JSON.stringify({ model: 'fake/model', stream: true, messages: [{ role: 'user', content: 'hi' }] }) });
      await waitUntil(() => held.length === 1, 10_000, 'the request to reach the upstream');

      await writeFile(daemon.configPath, yaml('after')({ dir: daemon.dir, adminPort: daemon.adminPort }));
      daemon.child.kill('SIGHUP');
      await waitUntil(async () => (await fetch(`http://127.0.0.1:${running.adminPort}/readyz`)).status === 503, 10_000, 'the old graph to begin stopping');
      // The upstream answers now: the stream's head is written by a listener that is stopping.
      textStream(held[0] as ServerResponse, ['still ', 'here']);
      const answer = await stream;
      expect(answer.headers.get('connection')).toBe('close');
      expect(await answer.text()).toContain('data: [DONE]');
      await waitUntil(() => running.logs.some((line) => line.includes('config reloaded')), 10_000, 'the reload');
      expect(running.logs.join('\n')).not.toContain('shutdown grace is over');
    } finally {
      for (const res of held) res.destroy();
      await upstream.close();
    }
  });
});
