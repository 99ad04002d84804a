// Two daemons on one storage directory: the second must stop before it
// touches any file of the running one. It used to rewrite the drains'
// sampling decisions (decisions.old.log compacted, decisions.log reopened
// empty) before a queue's lock refused it, so the running daemon's next
// decisions landed after a run of NUL bytes and were lost on its restart.
import { spawn } from 'node:child_process';
import { mkdtemp, readFile, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { configDrainId } from '../../src/exporters/drains/definition.js';
import { CLI, freePort, startDaemon, waitUntil, type RunningDaemon } from '../helpers/daemon.js';
import { startOtlpSink } from '../helpers/otlp-sink.js';
import { requestOf, trace, traceIdWithR, type TestSpan } from '../processors/sampling/helpers.js';

const cleanups: Array<() => Promise<unknown>> = [];
afterEach(async () => {
  for (const cleanup of cleanups.splice(0).reverse()) await cleanup();
});

/** One drain whose rules keep a trace with R = 0 only for its root's /api path: its children wait for the root's decision. */
function config(storage: string, sinkUrl: string, otlpPort: number) {
  return ({ adminPort }: { adminPort: number }) => `
receivers:
  otlp:
    protocols:
      http: { endpoint: 127.0.0.1:${otlpPort} }
exporters:
  drains:
    decision_wait: 30s
    sending_queue: { flush_timeout: 50ms }
drains:
  - name: api
    url: ${sinkUrl}
    insecure: true
    compression: none
    sampling:
      - { environment: production, percentage: 100, path_prefix: /api }
      - { environment: production, percentage: 0 }
service:
  storage: { directory: ${storage} }
  admin: { endpoint: 127.0.0.1:${adminPort} }
  telemetry: { logs: { level: warn } }
  pipelines:
    traces: { receivers: [otlp], exporters: [drains] }
`;
}

async function send(otlpPort: number, spans: readonly TestSpan[]): Promise<void> {
  const res = await fetch(`http://127.0.0.1:${otlpPort}/v1/traces`, { method: 'POST', body: requestOf(spans), headers: { 'content-type': 'application/x-protobuf' } });
  await res.arrayBuffer();
  expect(res.status).toBe(200);
}

async function fileText(path: string): Promise<string> {
  return readFile(path, 'latin1').catch(() => '');
}

describe('a second daemon on a storage directory in use', () => {
  it('exits 1 without touching the running daemon\'s files, whose sampling decisions hold across its restart', { timeout: 40_000 }, async () => {
    const sink = await startOtlpSink({ tls: false });
    cleanups.push(() => sink.close());
    const dir = await mkdtemp(join(tmpdir(), 'sluice-e2e-'));
    cleanups.push(() => rm(dir, { recursive: true, force: true }));
    const storage = join(dir, 'data');
    const decisionsLog = join(storage, 'drains', configDrainId('api'), 'decisions.log');
    const oldDecisionsLog = join(storage, 'drains', configDrainId('api'), 'decisions.old.log');
    const otlpPort = await freePort();
    const start = async (): Promise<RunningDaemon> => {
      const daemon = await startDaemon(config(storage, sink.url, otlpPort), { dir });
      cleanups.push(() => daemon.cleanup());
      return daemon;
    };
    const delivered = (spans: readonly TestSpan[]) => (): boolean => {
      const got = new Set(sink.spans().map((s) => s.span.spanId));
      return spans.every((s) => got.has(s.spanId ?? ''));
    };

    const first = await start();
    const [rootA, ...childrenA] = trace({ path: '/api/a', traceId: traceIdWithR(0n) });
    await send(otlpPort, [rootA as TestSpan]);
    await waitUntil(async () => (await fileText(decisionsLog)).includes(rootA?.traceId ?? '-'), 10_000, 'the first decision on disk');
    const before = { log: await fileText(decisionsLog), old: await fileText(oldDecisionsLog) };

    const secondDir = await mkdtemp(join(tmpdir(), 'sluice-e2e-'));
    cleanups.push(() => rm(secondDir, { recursive: true, force: true }));
    const secondConfig = join(secondDir, 'config.yaml');
    await writeFile(secondConfig, config(storage, sink.url, await freePort())({ adminPort: await freePort() }));
    const second = spawn(process.execPath, [CLI, 'run', '--config', secondConfig], { stdio: ['ignore', 'pipe', 'pipe'] });
    let output = '';
    second.stdout.on('data', (chunk: Buffer) => (output += chunk.toString()));
    const code = await new Promise<number | null>((resolve) => second.once('exit', resolve));
    expect(code).toBe(1);
    expect(output).toContain(`is already in use by process ${first.child.pid ?? ''}`);
    expect({ log: await fileText(decisionsLog), old: await fileText(oldDecisionsLog) }).toEqual(before);

    // A decision the running daemon makes now, and its restart, see the files as it left them.
    const [rootB, ...childrenB] = trace({ path: '/api/b', traceId: traceIdWithR(0n) });
    await send(otlpPort, [rootB as TestSpan]);
    await waitUntil(async () => (await fileText(decisionsLog)).includes(rootB?.traceId ?? '-'), 10_000, 'the second decision on disk');
    expect(await first.stop()).toBe(0);
    await start();
    await send(otlpPort, [...childrenA, ...childrenB]);
    // Followed from the decisions on disk; forgotten, they would wait the 30 s decision_wait and then be sampled out.
    await waitUntil(delivered([rootA, rootB, ...childrenA, ...childrenB] as TestSpan[]), 10_000, 'both traces whole after the restart');
  });
});
