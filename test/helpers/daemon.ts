// Runs the built daemon (`npm test` builds dist/ first) on a YAML config in a
// temporary directory, the way a user runs it, and stops it afterwards.
import { spawn, type ChildProcess } from 'node:child_process';
import { readFileSync } from 'node:fs';
import { mkdtemp, rm, writeFile } from 'node:fs/promises';
import { createServer } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';

export const CLI = fileURLToPath(new URL('../../dist/src/sluice.cjs', import.meta.url));

/**
 * Ports handed out below the kernel's ephemeral range: a port 0 listener
 * gets one from that range, which every client socket of every test running
 * meanwhile also draws its local port from, so a port freed for the daemon
 * could be taken again before the daemon binds it.
 */
const LOWEST_PORT = 20_000;
const DEFAULT_EPHEMERAL_LOW = 32_768;

function ephemeralLow(): number {
  try {
    const low = Number(readFileSync('/proc/sys/net/ipv4/ip_local_port_range', 'utf8').trim().split(/\s+/)[0]);
    return Number.isInteger(low) && low > LOWEST_PORT + 1_000 ? low : DEFAULT_EPHEMERAL_LOW;
  } catch {
    return DEFAULT_EPHEMERAL_LOW;
  }
}

function canListen(port: number): Promise<boolean> {
  return new Promise((resolve) => {
    const server = createServer();
    server.once('error', () => resolve(false));
    server.listen(port, '127.0.0.1', () => server.close(() => resolve(true)));
  });
}

/** Parallel test workers draw from this many disjoint shares of the range. */
const WORKER_SHARES = 4;
/**
 * Ports this process has handed out, never handed out again: two calls for
 * one daemon (its admin and OTLP endpoints) both find a port free until the
 * daemon binds it, and once drew the same one (the daemon then refused its
 * config).
 */
const handedOut = new Set<number>();

/** [low, high) this worker draws from: its own share, so parallel workers (VITEST_POOL_ID) never draw the same port. */
function portRange(): [number, number] {
  const high = ephemeralLow();
  const worker = Number(process.env['VITEST_POOL_ID']);
  if (!Number.isInteger(worker) || worker < 1) return [LOWEST_PORT, high];
  const width = Math.floor((high - LOWEST_PORT) / WORKER_SHARES);
  const low = LOWEST_PORT + ((worker - 1) % WORKER_SHARES) * width;
  return [low, low + width];
}

/** A port that was free a moment ago and not handed out before (the daemon's config needs fixed ports). */
export async function freePort(): Promise<number> {
  const [low, high] = portRange();
  for (let attempt = 0; attempt < 100; attempt++) {
    const port = low + Math.floor(Math.random() * (high - low));
    if (handedOut.has(port) || !(await canListen(port))) continue;
    handedOut.add(port);
    return port;
  }
  throw new Error(`no free port between ${low} and ${high}`);
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
  /** The script node runs (default: the sluice command, CLI). */
  entry?: string;
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
  const child = spawn(process.execPath, [options.entry ?? CLI, 'run', '--config', configPath], {
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
