// config.example.yaml is what `npm start` runs: it must start with no outside
// service and no variable set, serve its catalog, answer chat requests with a
// clear error until provider keys are set, and accept OTLP.
import { readFile } from 'node:fs/promises';
import { fileURLToPath } from 'node:url';
import { OTLPTraceExporter } from '@opentelemetry/exporter-trace-otlp-proto';
import OpenAI from 'openai';
import { afterEach, describe, expect, it } from 'vitest';
import { freePort, startDaemon, waitUntil, type RunningDaemon } from '../helpers/daemon.js';
import { makeSdkSpans } from '../helpers/sdk-spans.js';

const EXAMPLE = fileURLToPath(new URL('../../config.example.yaml', import.meta.url));
let daemon: RunningDaemon | undefined;

afterEach(async () => {
  await daemon?.cleanup();
  daemon = undefined;
});

async function startExample() {
  const ports = { http: await freePort(), grpc: await freePort(), gateway: await freePort() };
  const yaml = await readFile(EXAMPLE, 'utf8');
  // Only the listeners and the storage move; everything else is the file as shipped.
  const env: Record<string, string> = {
    SLUICE_OTLP_HTTP_ENDPOINT: `127.0.0.1:${ports.http}`,
    SLUICE_OTLP_GRPC_ENDPOINT: `127.0.0.1:${ports.grpc}`,
    SLUICE_GATEWAY_ENDPOINT: `127.0.0.1:${ports.gateway}`,
  };
  for (const name of ['OPENAI_API_KEY', 'ANTHROPIC_API_KEY', 'GEMINI_API_KEY', 'AWS_ACCESS_KEY_ID', 'AWS_SECRET_ACCESS_KEY', 'SLUICE_GATEWAY_KEY', 'PLATFORM_PROJECT_ID']) env[name] = '';
  daemon = await startDaemon(({ dir, adminPort }) => {
    env.SLUICE_ADMIN_ENDPOINT = `127.0.0.1:${adminPort}`;
    env.SLUICE_STORAGE_DIR = `${dir}/data`;
    env.SLUICE_TRACES_FILE = `${dir}/traces.jsonl`;
    return yaml;
  }, { env: new Proxy(env, {}) });
  return { ports, daemon };
}

describe('config.example.yaml', () => {
  it('serves the catalog and answers chat with provider_not_configured until keys are set', async () => {
    const { ports } = await startExample();
    const client = new OpenAI({ baseURL: `http://127.0.0.1:${ports.gateway}/v1`, apiKey: 'sluice-local-key', maxRetries: 0 });
    const models = await client.models.list();
    expect(models.data.map((m) => m.id)).toContain('anthropic/claude-sonnet-4.5');
    const error = await client.chat.completions.create({ model: 'anthropic/claude-sonnet-4.5', messages: [{ role: 'user', content: 'Hi' }] }).catch((e: unknown) => e);
    expect(error).toBeInstanceOf(OpenAI.InternalServerError);
    const apiError = error as InstanceType<typeof OpenAI.InternalServerError>;
    expect(apiError.status).toBe(503);
    expect(apiError.code).toBe('provider_not_configured');
    expect(apiError.message).toContain('AWS');
    expect(apiError.headers?.get('x-sluice-attempts')).toBe('2');

    // An OpenAI-compatible provider whose api_key is set but empty is not configured either
    // (one with no api_key at all, like `local`, is a server that needs none).
    const openaiError = await client.chat.completions.create({ model: 'openai/gpt-4o-mini', messages: [{ role: 'user', content: 'Hi' }] }).catch((e: unknown) => e);
    expect((openaiError as InstanceType<typeof OpenAI.InternalServerError>).code).toBe('provider_not_configured');
    expect((openaiError as Error).message).toContain('receivers.gateway.providers.openai.api_key');
  });

  it('accepts OTLP and writes stamped spans to the file exporter', async () => {
    const { ports, daemon: d } = await startExample();
    const exporter = new OTLPTraceExporter({ url: `http://127.0.0.1:${ports.http}/v1/traces` });
    const code = await new Promise<number>((resolve) => exporter.export(makeSdkSpans(), (r) => resolve(r.code)));
    await exporter.shutdown();
    expect(code).toBe(0);
    const file = `${d.dir}/traces.jsonl`;
    await waitUntil(async () => (await readFile(file, 'utf8').catch(() => '')).includes('dpl_local'), 10_000, 'spans in the file');
    expect(await readFile(file, 'utf8')).toContain('"platform.projectId"');
  });
});
