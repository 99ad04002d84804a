// The three ways to the fake upstream: direct, through Sluice, through
// Portkey. Each process under test runs as a child, pinned with taskset.
import { spawn, type ChildProcess } from 'node:child_process';
import { mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { CLI, withCore } from './daemon.js';
import type { Target } from './gateway-load.js';
import { promptSamplerThread } from './sampler-thread.js';

const ROOT = fileURLToPath(new URL('../../..', import.meta.url));
const UPSTREAM_SCRIPT = fileURLToPath(new URL('./gateway-upstream.js', import.meta.url));
const PASSTHROUGH_SCRIPT = fileURLToPath(new URL('./gateway-passthrough.js', import.meta.url));
const PORTKEY_BIN = join(ROOT, 'node_modules', '@portkey-ai', 'gateway', 'build', 'start-server.js');
const READY_POLLS = 100;
const READY_POLL_MS = 100;
const STOP_TIMEOUT_MS = 5_000;
const STDERR_KEPT = 4_000; // chars of a child's stderr kept for error messages
const CHAT_PATH = '/v1/chat/completions';
export const API_KEY = 'sk-bench';
export const MODEL = 'fake/bench-model';

export interface Running {
  readonly name: string;
  readonly pid: number;
  /** ms from spawn to ready (Sluice only: lets the profile skip start-up). */
  readonly startupMs?: number;
  readonly target: Target;
  /** Where streamed requests go when it is not `target` (the AI SDK protocol says "stream" in a header). */
  readonly streamTarget?: Target;
  /** The request body for this path (the model id differs). */
  readonly body: (stream: boolean) => string;
  stop(): Promise<void>;
}

export function chatBody(model: string, stream: boolean): string {
  return JSON.stringify({
    model,
    messages: [
      { role: 'system', content: 'You are a terse assistant.' },
      { role: 'user', content: 'Say hello in five words.' },
    ],
    max_tokens: 16,
    temperature: 0,
    stream,
  });
}

/**
 * The request a deployed app sends: a system prompt, the conversation so far,
 * two tools, max_tokens and temperature (issue 10's "realistic request").
 */
export function realisticChatBody(model: string, stream: boolean): string {
  return JSON.stringify({
    model,
    messages: [
      {
        role: 'system',
        content:
          'You are the support assistant of an online shop. Answer in the customer\'s language, in at most three sentences. Use the tools to look up orders and stock; never invent an order number, a price or a delivery date. If a request is outside the shop\'s business, say so politely.',
      },
      { role: 'user', content: 'Hi, I ordered a pair of running shoes last week and they have not arrived yet.' },
      { role: 'assistant', content: 'Sorry to hear that. Could you give me your order number?' },
      { role: 'user', content: 'It is 48213. Also, do you still have the blue ones in size 42?' },
    ],
    tools: [
      {
        type: 'function',
        function: {
          name: 'get_order',
          description: 'Look up an order by its number: status, items, carrier and tracking link.',
          parameters: { type: 'object', properties: { order_id: { type: 'string', description: 'The order number' } }, required: ['order_id'] },
        },
      },
      {
        type: 'function',
        function: {
          name: 'check_stock',
          description: 'Stock of a product variant in the central warehouse.',
          parameters: {
            type: 'object',
            properties: { sku: { type: 'string' }, size: { type: 'string' }, color: { type: 'string' } },
            required: ['sku'],
          },
        },
      },
    ],
    tool_choice: 'auto',
    max_tokens: 512,
    temperature: 0.3,
    stream,
  });
}

interface Child {
  readonly process: ChildProcess;
  stderr(): string;
}

function spawnChild(args: string[], core: number | undefined): Child {
  const [command, argv] = withCore(core, process.execPath, args);
  const child = spawn(command, argv, { stdio: ['ignore', 'ignore', 'pipe'], cwd: ROOT });
  let tail = '';
  child.stderr?.on('data', (c: Buffer) => {
    tail = (tail + c.toString('utf8')).slice(-STDERR_KEPT);
  });
  return { process: child, stderr: () => tail };
}

async function stopChild(child: Child): Promise<void> {
  const p = child.process;
  if (p.exitCode !== null || p.signalCode !== null) return;
  const exited = new Promise<void>((r) => p.once('exit', () => r()));
  p.kill('SIGTERM');
  let timer: NodeJS.Timeout | undefined;
  const late = new Promise<'late'>((r) => (timer = setTimeout(() => r('late'), STOP_TIMEOUT_MS)));
  if ((await Promise.race([exited, late])) === 'late') {
    p.kill('SIGKILL');
    await exited;
  }
  clearTimeout(timer);
}

/** Polls until `probe` says yes; fails early if the child exits. */
async function waitUntil(child: Child, what: string, probe: () => Promise<boolean>): Promise<void> {
  for (let i = 0; i < READY_POLLS; i++) {
    if (child.process.exitCode !== null) throw new Error(`${what} exited with ${child.process.exitCode}: ${child.stderr()}`);
    try {
      if (await probe()) return;
    } catch {
      // not listening yet
    }
    await new Promise((r) => setTimeout(r, READY_POLL_MS));
  }
  await stopChild(child);
  throw new Error(`${what} did not become ready: ${child.stderr()}`);
}

function pidOf(child: Child): number {
  // taskset execs the command, so the pid is node's own.
  if (child.process.pid === undefined) throw new Error('child has no pid');
  return child.process.pid;
}

export async function startUpstream(port: number, core: number): Promise<Running> {
  const child = spawnChild([UPSTREAM_SCRIPT, String(port)], core);
  const origin = `http://127.0.0.1:${port}`;
  await waitUntil(child, 'fake upstream', async () => (await fetch(`${origin}${CHAT_PATH}`, { method: 'POST', body: '{}' })).status === 200);
  return {
    name: 'direct',
    pid: pidOf(child),
    target: { origin, path: CHAT_PATH, headers: { 'content-type': 'application/json', authorization: `Bearer ${API_KEY}` } },
    body: (stream) => chatBody('bench-model', stream),
    stop: () => stopChild(child),
  };
}

/**
 * The same conversation as chatBody in the AI SDK gateway protocol's call
 * options (what `generateText` POSTs to /v1/ai/language-model).
 */
export function aiSdkBody(): string {
  return JSON.stringify({
    prompt: [
      { role: 'system', content: 'You are a terse assistant.' },
      { role: 'user', content: [{ type: 'text', text: 'Say hello in five words.' }] },
    ],
    maxOutputTokens: 16,
    temperature: 0,
  });
}

/** A running Sluice reached through /v1/ai/language-model, as createGateway() from `ai` 6 calls it. */
export function viaAiSdkProtocol(run: Running): Running {
  const headers = (stream: boolean) => ({
    ...run.target.headers,
    'ai-language-model-id': MODEL,
    'ai-language-model-specification-version': '3',
    'ai-language-model-streaming': String(stream),
  });
  const path = '/v1/ai/language-model';
  return {
    ...run,
    name: 'sluice, AI SDK protocol',
    target: { origin: run.target.origin, path, headers: headers(false) },
    streamTarget: { origin: run.target.origin, path, headers: headers(true) },
    body: aiSdkBody,
  };
}

export interface SluiceOptions {
  readonly port: number;
  readonly adminPort: number;
  readonly upstreamPort: number;
  readonly core: number;
  /** Where the otlphttp exporter sends spans (a counting sink). */
  readonly spansUrl: string;
  /** Directory for a --cpu-prof profile; no profiling when absent. */
  readonly profileDir?: string;
}

/** The `gateway` receiver, indented to sit under `receivers:`: `MODEL` routed to the fake upstream on `upstreamPort`, `API_KEY` accepted. */
export function gatewayReceiverYaml(port: number, upstreamPort: number, environment: string): string {
  return `  gateway:
    endpoint: 127.0.0.1:${port}
    environment: ${environment}
    api_keys: [${API_KEY}]
    providers:
      fake: { type: openai, base_url: "http://127.0.0.1:${upstreamPort}/v1" }
    models:
      - id: ${MODEL}
        endpoints: [{ provider: fake, model: bench-model }]`;
}

function sluiceYaml(o: SluiceOptions, dir: string): string {
  return `
receivers:
${gatewayReceiverYaml(o.port, o.upstreamPort, 'bench')}
exporters:
  otlphttp: { endpoint: "${o.spansUrl}", encoding: protobuf, compression: none }
service:
  storage: { directory: ${join(dir, 'data')} }
  admin: { endpoint: 127.0.0.1:${o.adminPort} }
  telemetry: { logs: { level: warn } }
  pipelines:
    traces: { receivers: [gateway], exporters: [otlphttp] }
`;
}

export async function startSluice(o: SluiceOptions): Promise<Running> {
  return startSluiceWith((dir) => sluiceYaml(o, dir), o);
}

/** Sluice on a config of the caller's (`yaml` gets the run's temporary directory); the gateway listens on `o.port`. */
export async function startSluiceWith(yaml: (dir: string) => string, o: Pick<SluiceOptions, 'port' | 'adminPort' | 'core' | 'profileDir'>): Promise<Running> {
  const dir = await mkdtemp(join(tmpdir(), 'sluice-bench-gateway-'));
  const config = join(dir, 'config.yaml');
  await writeFile(config, yaml(dir));
  const profile = o.profileDir === undefined ? [] : ['--cpu-prof', '--cpu-prof-dir', o.profileDir];
  const child = spawnChild([...profile, ...(process.env.SLUICE_BENCH_NODE_FLAGS ?? '').split(' ').filter(Boolean), CLI, 'run', '--config', config], o.core);
  const spawned = performance.now();
  await waitUntil(child, 'sluice', async () => (await fetch(`http://127.0.0.1:${o.adminPort}/readyz`)).status === 200);
  const startupMs = performance.now() - spawned;
  if (o.profileDir !== undefined) process.stdout.write(`sluice under --cpu-prof: ${await promptSamplerThread(pidOf(child))}\n`);
  return {
    name: 'sluice',
    pid: pidOf(child),
    startupMs,
    target: { origin: `http://127.0.0.1:${o.port}`, path: CHAT_PATH, headers: { 'content-type': 'application/json', authorization: `Bearer ${API_KEY}` } },
    body: (stream) => chatBody(MODEL, stream),
    stop: async () => {
      await stopChild(child);
      await rm(dir, { recursive: true, force: true });
    },
  };
}

export async function startPortkey(port: number, upstreamPort: number, core: number): Promise<Running> {
  // --headless: no log-streaming UI; that is how a server deployment runs it.
  const child = spawnChild([PORTKEY_BIN, `--port=${port}`, '--headless'], core);
  const origin = `http://127.0.0.1:${port}`;
  const headers = {
    'content-type': 'application/json',
    authorization: `Bearer ${API_KEY}`,
    'x-portkey-provider': 'openai',
    'x-portkey-custom-host': `http://127.0.0.1:${upstreamPort}/v1`,
  };
  const body = (stream: boolean) => chatBody('bench-model', stream);
  await waitUntil(child, 'portkey', async () => (await fetch(`${origin}${CHAT_PATH}`, { method: 'POST', headers, body: body(false) })).status === 200);
  return { name: 'portkey 1.15.2', pid: pidOf(child), target: { origin, path: CHAT_PATH, headers }, body, stop: () => stopChild(child) };
}

export async function startPassthrough(port: number, upstreamPort: number, core: number): Promise<Running> {
  const child = spawnChild([PASSTHROUGH_SCRIPT, String(port), `http://127.0.0.1:${upstreamPort}`], core);
  const origin = `http://127.0.0.1:${port}`;
  const headers = { 'content-type': 'application/json', authorization: `Bearer ${API_KEY}` };
  const body = (stream: boolean) => chatBody('bench-model', stream);
  await waitUntil(child, 'passthrough', async () => (await fetch(`${origin}${CHAT_PATH}`, { method: 'POST', headers, body: body(false) })).status === 200);
  return { name: 'bare Node passthrough', pid: pidOf(child), target: { origin, path: CHAT_PATH, headers }, body, stop: () => stopChild(child) };
}

/** A helper script of bench/lib (`args[0]`, then its arguments) on a core; ready once its port answers HTTP. */
export async function startProcessOnCore(name: string, args: readonly string[], core: number, port: number): Promise<{ pid: number; stop(): Promise<void> }> {
  const [script = '', ...rest] = args;
  const child = spawnChild([fileURLToPath(new URL(`./${script}`, import.meta.url)), ...rest], core);
  await waitUntil(child, name, async () => {
    await (await fetch(`http://127.0.0.1:${port}/`, { method: 'POST', body: '' })).arrayBuffer();
    return true;
  });
  return { pid: pidOf(child), stop: () => stopChild(child) };
}
