// A graph a reload replaced is garbage once it has stopped. The gateway's
// module loads while the first graph starts (factory.ts imports it lazily),
// so anything that module makes as it loads must not keep that graph: an
// Error made then captures the async stack, Graph.start's frame and its
// `this` with it, and held the first graph (every component of the first
// config) for the process's life. This file must not import receiver.ts
// itself, or the module would load outside a graph's start.
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { setFlagsFromString } from 'node:v8';
import { runInNewContext } from 'node:vm';
import { pino } from 'pino';
import { afterEach, beforeEach, expect, it } from 'vitest';
import { z } from 'zod';
import { parseConfigText } from '../../../src/config/load.js';
import type { Exporter, ExporterFactory } from '../../../src/core/component.js';
import { ComponentRegistry } from '../../../src/core/registry.js';
import { gatewayReceiverFactory } from '../../../src/receivers/gateway/factory.js';
import { Service } from '../../../src/service.js';
import { Telemetry } from '../../../src/shared/telemetry.js';
import { createRecorder, fakeReceiverFactory } from '../../core/fakes.js';

setFlagsFromString('--expose-gc');
const gc = runInNewContext('gc') as () => void;

/** An exporter that does nothing; each one made is watched through a WeakRef. */
const made: WeakRef<Exporter>[] = [];
const watchedExporterFactory: ExporterFactory<Record<string, never>> = {
  kind: 'exporter',
  type: 'watched',
  configSchema: z.strictObject({}),
  createDefaultConfig: () => ({}),
  create() {
    const exporter: Exporter = { async start() {}, async consume() {}, async shutdown() {} };
    made.push(new WeakRef(exporter));
    return exporter;
  },
};

let directory: string;
let service: Service;
beforeEach(() => {
  directory = mkdtempSync(join(tmpdir(), 'sluice-release-'));
  service = new Service({ logger: pino({ level: 'silent' }), version: 'test', telemetry: new Telemetry({ defaultMetrics: false }) });
});
afterEach(async () => {
  await service.shutdown();
  rmSync(directory, { recursive: true, force: true });
});

function config(receivers: string, pipelineReceivers: string) {
  const registry = new ComponentRegistry().register(gatewayReceiverFactory, fakeReceiverFactory(createRecorder()), watchedExporterFactory);
  const text = `
receivers:
${receivers}
exporters: { watched: {} }
service:
  storage: { directory: "${join(directory, 'data')}" }
  admin: { endpoint: "127.0.0.1:0" }
  pipelines: { traces: { receivers: [${pipelineReceivers}], exporters: [watched] } }
`;
  return parseConfigText(text, { registry, env: {} });
}

async function collectGarbage(): Promise<void> {
  // A WeakRef's target is kept until the job that read it ends: collect between jobs.
  for (let round = 0; round < 3; round++) {
    await new Promise((resolve) => setImmediate(resolve));
    gc();
  }
}

it("lets go of the first graph once a reload has stopped it, though the gateway's module loaded while that graph started", async () => {
  const gateway = `  gateway:
    endpoint: 127.0.0.1:0
    api_keys: [sk-test]
    providers: { fake: { type: openai, base_url: "http://127.0.0.1:9/v1", api_key: sk-upstream } }
    models: [{ id: fake/model, endpoints: [{ provider: fake, model: m }] }]`;
  await service.start(config(gateway, 'gateway'));
  expect(await service.reload(() => config('  fakein: {}', 'fakein'))).toBe(true);
  expect(made).toHaveLength(2);

  await collectGarbage();
  expect(made[0]?.deref()).toBeUndefined();
  expect(made[1]?.deref()).toBeDefined();
});
