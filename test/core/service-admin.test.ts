import { pino } from 'pino';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { z } from 'zod';
import { adminRoutesOf } from '../../src/admin/routes.js';
import { sendJson } from '../../src/admin/respond.js';
import { parseConfigText } from '../../src/config/load.js';
import type { ExporterFactory } from '../../src/core/component.js';
import { Service } from '../../src/service.js';
import { Telemetry } from '../../src/shared/telemetry.js';
import { createRecorder, fakeRegistry } from './fakes.js';

const directory = mkdtempSync(join(tmpdir(), 'sluice-service-admin-'));
const service = new Service({ logger: pino({ level: 'silent' }), version: 'test', telemetry: new Telemetry({ defaultMetrics: false }) });

afterEach(async () => {
  await service.shutdown();
  rmSync(directory, { recursive: true, force: true });
});

const mounting: ExporterFactory<Record<string, never>> = {
  kind: 'exporter',
  type: 'mounting',
  configSchema: z.strictObject({}),
  createDefaultConfig: () => ({}),
  create() {
    let unmount: (() => void) | undefined;
    return {
      async consume() {},
      async start(host) {
        const admin = adminRoutesOf(host);
        unmount = admin?.addRoute('/v1/things', (req, res) => {
          if (admin.requireAdminKey(req, res)) sendJson(res, 200, { things: [] });
        });
      },
      async shutdown() {
        unmount?.();
      },
    };
  },
};

describe('service admin routes', () => {
  it('lets a component mount key-guarded admin routes through its host', async () => {
    const text = `
receivers: { fakein: {} }
exporters: { mounting: {} }
service:
  storage: { directory: "${directory}" }
  admin: { endpoint: "127.0.0.1:0", api_key: k3y }
  pipelines: { traces: { receivers: [fakein], exporters: [mounting] } }
`;
    await service.start(parseConfigText(text, { registry: fakeRegistry(createRecorder()).register(mounting), env: {} }));
    const base = `http://127.0.0.1:${service.admin.address()?.port ?? 0}`;
    expect((await fetch(`${base}/v1/things`)).status).toBe(401);
    expect((await fetch(`${base}/v1/things`, { headers: { authorization: 'Bearer k3y' } })).status).toBe(200);
    expect((await fetch(`${base}/readyz`)).status).toBe(200);
  });
});
