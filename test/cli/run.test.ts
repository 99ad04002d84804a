// `sluice run` as a user runs it: ready on the admin endpoint, SIGHUP with a
// broken config keeps it running, SIGTERM stops it with exit 0, and stdout
// carries nothing but JSON lines.
import { type ChildProcess, execFile, spawn } from 'node:child_process';
import { existsSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { open } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { createServer, type Server } from 'node:net';
import { promisify } from 'node:util';
import { afterEach, beforeAll, describe, expect, it } from 'vitest';
import { freePort } from '../helpers/daemon.js';
import { halfBody } from '../helpers/raw-clients.js';

const CLI = join(import.meta.dirname, '../../dist/src/cli.js');
let directory: string;
let child: ChildProcess | undefined;

beforeAll(async () => {
  if (!existsSync(CLI)) await promisify(execFile)('npx', ['tsc', '-p', 'tsconfig.build.json'], { cwd: join(import.meta.dirname, '../..') }).catch(() => undefined);
}, 120_000);

let blocker: Server | undefined;

afterEach(() => {
  child?.kill('SIGKILL');
  child = undefined;
  blocker?.close();
  blocker = undefined;
  rmSync(directory, { recursive: true, force: true });
});

async function waitFor(check: () => Promise<boolean>, timeoutMs = 10_000): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  while (Date.now() < deadline) {
    if (await check().catch(() => false)) return;
    await new Promise((resolve) => setTimeout(resolve, 50));
  }
  throw new Error('timed out waiting');
}

describe('sluice run', () => {
  it('serves readiness, refuses a broken reload, and exits 0 on SIGTERM', async () => {
    directory = mkdtempSync(join(tmpdir(), 'sluice-run-'));
    const [adminPort, otlpPort] = [await freePort(), await freePort()];
    const file = join(directory, 'config.yaml');
    const good = `
receivers:
  otlp: { protocols: { http: { endpoint: "127.0.0.1:${otlpPort}" } } }
exporters:
  file: { path: "${join(directory, 'traces.jsonl')}" }
service:
  storage: { directory: "${join(directory, 'data')}" }
  admin: { endpoint: "127.0.0.1:${adminPort}" }
  pipelines: { traces: { receivers: [otlp], exporters: [file] } }
`;
    writeFileSync(file, good);
    const proc = spawn(process.execPath, [CLI, 'run', '--config', file], { stdio: ['ignore', 'pipe', 'pipe'] });
    child = proc;
    let stdout = '';
    proc.stdout?.on('data', (chunk: Buffer) => (stdout += chunk.toString('utf8')));
    const exited = new Promise<number | null>((resolve) => proc.on('exit', (code) => resolve(code)));

    const readyz = `http://127.0.0.1:${adminPort}/readyz`;
    await waitFor(async () => (await fetch(readyz)).status === 200);

    writeFileSync(file, good.replace('file: {', 'file: { colour: red,'));
    proc.kill('SIGHUP');
    await waitFor(async () => stdout.includes('config reload refused'));
    expect(stdout).toContain('exporters.file.colour: unknown key');
    expect((await fetch(readyz)).status).toBe(200);

    proc.kill('SIGTERM');
    expect(await exited).toBe(0);
    child = undefined;
    for (const line of stdout.trim().split('\n')) expect(() => JSON.parse(line) as unknown).not.toThrow();
  });

  it('logs the port the admin endpoint took when it asked for port 0', async () => {
    directory = mkdtempSync(join(tmpdir(), 'sluice-run-'));
    const file = join(directory, 'config.yaml');
    writeFileSync(file, `
receivers:
  otlp: { protocols: { http: { endpoint: "127.0.0.1:0" } } }
exporters:
  debug: {}
service:
  storage: { directory: "${join(directory, 'data')}" }
  admin: { endpoint: "127.0.0.1:0" }
  pipelines: { traces: { receivers: [otlp], exporters: [debug] } }
`);
    const proc = spawn(process.execPath, [CLI, 'run', '--config', file], { stdio: ['ignore', 'pipe', 'pipe'] });
    child = proc;
    let stdout = '';
    proc.stdout?.on('data', (chunk: Buffer) => (stdout += chunk.toString('utf8')));
    await waitFor(async () => stdout.includes('sluice started'));
    const started = stdout.split('\n').map((line) => (line === '' ? {} : (JSON.parse(line) as { msg?: string; admin?: string }))).find((line) => line.msg === 'sluice started');
    expect(started?.admin).toMatch(/^127\.0\.0\.1:[1-9]\d*$/);
    expect((await fetch(`http://${started?.admin ?? ''}/healthz`)).status).toBe(200);
  });

  it('logs every problem and exits 1 on an invalid config', async () => {
    directory = mkdtempSync(join(tmpdir(), 'sluice-run-'));
    const file = join(directory, 'config.yaml');
    writeFileSync(file, 'service: { pipelines: {} }\n');
    const { code, stdout } = await new Promise<{ code: number | null; stdout: string }>((resolve) => {
      execFile(process.execPath, [CLI, 'run', '--config', file], (err, out) => resolve({ code: err === null ? 0 : (err.code as number | null) ?? null, stdout: out }));
    });
    expect(code).toBe(1);
    const line = JSON.parse(stdout.trim().split('\n')[0] ?? '{}') as { msg?: string; problems?: string[] };
    expect(line.msg).toBe('invalid config');
    expect(line.problems).toEqual(['service.pipelines: must define at least one pipeline']);
  });

  it('names the endpoint key of a listener whose port is taken, and exits 1', async () => {
    directory = mkdtempSync(join(tmpdir(), 'sluice-run-'));
    const taken = createServer();
    blocker = taken;
    await new Promise<void>((resolve) => taken.listen(0, '127.0.0.1', resolve));
    const port = (taken.address() as { port: number }).port;
    const file = join(directory, 'config.yaml');
    const config = (gateway: string, admin: string) => `
receivers:
  gateway: { endpoint: "${gateway}", api_keys: [k-cli] }
exporters:
  debug: {}
service:
  storage: { directory: "${join(directory, 'data')}" }
  admin: { endpoint: "${admin}" }
  pipelines: { traces: { receivers: [gateway], exporters: [debug] } }
`;
    const failure = async (text: string) => {
      writeFileSync(file, text);
      const { code, stdout } = await new Promise<{ code: number | null; stdout: string }>((resolve) => {
        execFile(process.execPath, [CLI, 'run', '--config', file], (err, out) => resolve({ code: err === null ? 0 : (err.code as number | null) ?? null, stdout: out }));
      });
      const lines = stdout.trim().split('\n').map((line) => JSON.parse(line) as { msg?: string; err?: string });
      return { code, err: lines.find((line) => line.msg === 'failed to start')?.err };
    };

    expect(await failure(config('127.0.0.1:0', `127.0.0.1:${port}`))).toEqual({ code: 1, err: `service.admin.endpoint: cannot listen on 127.0.0.1:${port}: address already in use (EADDRINUSE)` });
    expect(await failure(config(`127.0.0.1:${port}`, '127.0.0.1:0'))).toEqual({
      code: 1,
      err: `receiver gateway failed to start: receivers.gateway.endpoint: cannot listen on 127.0.0.1:${port}: address already in use (EADDRINUSE)`,
    });
  });

  it('exits 0 on a SIGTERM that comes while the config is still being read', async () => {
    directory = mkdtempSync(join(tmpdir(), 'sluice-run-'));
    // A FIFO: reading it waits for a writer, so the config stays "being read" for as long as the test holds it.
    const file = join(directory, 'config.yaml');
    await promisify(execFile)('mkfifo', [file]);
    const proc = spawn(process.execPath, [CLI, 'run', '--config', file], { stdio: ['ignore', 'pipe', 'pipe'] });
    child = proc;
    let stdout = '';
    proc.stdout?.on('data', (chunk: Buffer) => (stdout += chunk.toString('utf8')));
    const exited = new Promise<{ code: number | null; signal: NodeJS.Signals | null }>((resolve) => proc.on('exit', (code, signal) => resolve({ code, signal })));
    // Opening the FIFO for writing completes once the daemon has opened it to read the config.
    const writer = await open(file, 'w');
    proc.kill('SIGTERM');
    await waitFor(async () => stdout.includes('"msg":"stopping"'));
    // Node's exit waits for its pool's threads, one of which may be reading the FIFO: let that read end (with nothing read).
    await writer.close();
    expect(await exited).toEqual({ code: 0, signal: null });
    child = undefined;
  });

  it('does not start a reload on a SIGHUP that comes while it stops', async () => {
    directory = mkdtempSync(join(tmpdir(), 'sluice-run-'));
    const [adminPort, otlpPort] = [await freePort(), await freePort()];
    const file = join(directory, 'config.yaml');
    writeFileSync(file, `
receivers:
  otlp: { protocols: { http: { endpoint: "127.0.0.1:${otlpPort}" } } }
exporters:
  debug: {}
service:
  storage: { directory: "${join(directory, 'data')}" }
  admin: { endpoint: "127.0.0.1:${adminPort}" }
  shutdown_grace: 5s
  pipelines: { traces: { receivers: [otlp], exporters: [debug] } }
`);
    const proc = spawn(process.execPath, [CLI, 'run', '--config', file], { stdio: ['ignore', 'pipe', 'pipe'] });
    child = proc;
    let stdout = '';
    proc.stdout?.on('data', (chunk: Buffer) => (stdout += chunk.toString('utf8')));
    const exited = new Promise<number | null>((resolve) => proc.on('exit', (code) => resolve(code)));
    await waitFor(async () => (await fetch(`http://127.0.0.1:${adminPort}/readyz`)).status === 200);
    // A stalled upload holds the stop in its grace period.
    const upload = await halfBody(otlpPort);
    // Stopped before the daemon has taken the upload's connection (a busy machine), the stop would not wait for it.
    await waitFor(async () => /sluice_listener_connections\{listener="otlp\/http"\} [1-9]/.test(await (await fetch(`http://127.0.0.1:${adminPort}/metrics`)).text()));
    proc.kill('SIGTERM');
    await waitFor(async () => stdout.includes('"msg":"stopping"'));
    proc.kill('SIGHUP');
    expect(await exited).toBe(0);
    child = undefined;
    upload.socket.destroy();
    expect(stdout).toContain('SIGHUP while stopping: not reloading');
    expect(stdout).not.toContain('SIGHUP: reloading config');
  });
});
