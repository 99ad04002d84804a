// Runs the built daemon (`npm test` builds dist/ first) on a YAML config in a
// temporary directory, the way a user runs it, and stops it afterwards.
import { spawn, type ChildProcess } from 'node:child_process';
import { mkdtemp, rm, writeFile } from 'node:fs/promises';
import { createServer } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';

export const CLI = fileURLToPath(new URL('../../dist/src/cli.js', import.meta.url));

/** A port that was free a moment ago (the daemon's config needs fixed ports). */
export async function freePort(): Promise<number> {
  const server = createServer();
  await new Promise<void>((r) => server.listen(0, '127.0.0.1', r));
  const address = server.address();
  await new Promise<void>((r) => server.close(() => r()));
  if (address === null || typeof address === 'string') throw new Error('no port');
  return address.port;
}

export interface RunningDaemon {
  dir: string;
  configPath: string;
  adminPort: number;
  child: ChildProcess;
  logs: string[];
  /** SIGTERM and wait; resolves with the exit code. */
  stop(signal?: NodeJS.Signals): Promise<number | null>;
  cleanup(): Promise<void>;
}

export async function waitUntil(check: () => boolean | Promise<boolean>, timeoutMs = 20_000, what = 'condition'): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  while (!(await check())) {
    if (Date.now() > deadline) throw new Error(`timed out waiting for ${what}`);
    await new Promise((r) => setTimeout(r, 50));
  }
}

export interface DaemonOptions {
  dir?: string;
  env?: Record<string, string>;
  /** How to tell the daemon is ready (default: plain HTTP GET /readyz answers 200); for an admin endpoint behind TLS. */
  ready?: (adminPort: number) => Promise<boolean>;
}

async function plainReadyz(adminPort: number): Promise<boolean> {
  return (await fetch(`http://127.0.0.1:${adminPort}/readyz`)).status === 200;
}

/** Starts the daemon; `yaml` gets the temp dir and the admin port to use. */
export async function startDaemon(yaml: (ctx: { dir: string; adminPort: number }) => string, options: DaemonOptions = {}): Promise<RunningDaemon> {
  const dir = options.dir ?? (await mkdtemp(join(tmpdir(), 'sluice-e2e-')));
  const adminPort = await freePort();
  const configPath = join(dir, 'config.yaml');
  await writeFile(configPath, yaml({ dir, adminPort }));
  const child = spawn(process.execPath, [CLI, 'run', '--config', configPath], {
    env: { ...process.env, ...options.env },
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  const logs: string[] = [];
  const ready = options.ready ?? plainReadyz;
  child.stdout?.on('data', (c: Buffer) => logs.push(...c.toString().split('\n').filter(Boolean)));
  child.stderr?.on('data', (c: Buffer) => logs.push(...c.toString().split('\n').filter(Boolean)));
  const exited = new Promise<number | null>((r) => child.once('exit', (code) => r(code)));
  await waitUntil(
    async () => {
      if (child.exitCode !== null) throw new Error(`daemon exited with ${child.exitCode}:\n${logs.join('\n')}`);
      try {
        return await ready(adminPort);
      } catch {
        return false;
      }
    },
    20_000,
    'the daemon to be ready',
  );
  return {
    dir,
    configPath,
    adminPort,
    child,
    logs,
    stop: async (signal = 'SIGTERM') => {
      if (child.exitCode === null && child.signalCode === null) child.kill(signal);
      return exited;
    },
    cleanup: async () => {
      if (child.exitCode === null && child.signalCode === null) {
        child.kill('SIGKILL');
        await exited;
      }
      if (options.dir === undefined) await rm(dir, { recursive: true, force: true });
    },
  };
}
