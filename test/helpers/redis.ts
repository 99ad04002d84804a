// A real redis-server (Debian's package) on a free port, with no persistence,
// for cluster tests. stop() kills it (as an outage would); start() brings it
// back on the same port, empty; or, started `persistent`, with its data
// (an append-only file synced at every write, in a directory of its own).
import { spawn, type ChildProcess } from 'node:child_process';
import { mkdtempSync, rmSync } from 'node:fs';
import { connect } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import type { Logger } from 'pino';
import { RedisConnection } from '../../src/cluster/redis/connection.js';
import { Telemetry } from '../../src/shared/telemetry.js';
import { freePort, waitUntil } from './daemon.js';

export interface TestRedis {
  readonly port: number;
  readonly url: string;
  start(): Promise<void>;
  /** SIGKILL: the data is gone, as after a crash of a Redis without persistence. */
  kill(): Promise<void>;
  stop(): Promise<void>;
  /** Stops it and removes its data directory (persistent only). */
  remove(): Promise<void>;
}

export interface RedisOptions {
  /** Keeps its data across stop() and start(). */
  readonly persistent?: boolean;
}

function answersPing(port: number): Promise<boolean> {
  return new Promise((resolve) => {
    const socket = connect(port, '127.0.0.1');
    socket.once('connect', () => socket.write('PING\r\n'));
    socket.once('data', (data) => {
      socket.destroy();
      resolve(data.toString().startsWith('+PONG'));
    });
    socket.once('error', () => resolve(false));
  });
}

export async function startRedis(options: RedisOptions = {}): Promise<TestRedis> {
  const port = await freePort();
  const dataDir = options.persistent === true ? mkdtempSync(join(tmpdir(), 'sluice-redis-')) : undefined;
  const persistence = dataDir === undefined ? ['--appendonly', 'no'] : ['--appendonly', 'yes', '--appendfsync', 'always', '--dir', dataDir];
  let child: ChildProcess | undefined;
  const redis: TestRedis = {
    port,
    url: `redis://127.0.0.1:${port}/0`,
    async start() {
      child = spawn('redis-server', ['--port', String(port), '--bind', '127.0.0.1', '--save', '', ...persistence, '--loglevel', 'warning'], { stdio: 'ignore' });
      await waitUntil(() => answersPing(port), 10_000, 'redis-server to answer');
    },
    async kill() {
      const running = child;
      if (running === undefined || running.exitCode !== null || running.signalCode !== null) return;
      const exited = new Promise((r) => running.once('exit', r));
      running.kill('SIGKILL');
      await exited;
    },
    async stop() {
      await redis.kill();
    },
    async remove() {
      await redis.kill();
      if (dataDir !== undefined) rmSync(dataDir, { recursive: true, force: true });
    },
  };
  await redis.start();
  return redis;
}

/** A connection to `url` under `keyPrefix`, once it is up; the caller closes it. */
export async function connectRedis(url: string, keyPrefix: string, timeout: number, deps: { logger: Logger; telemetry?: Telemetry }): Promise<RedisConnection> {
  const connection = new RedisConnection({ url, key_prefix: keyPrefix, timeout }, { logger: deps.logger, telemetry: deps.telemetry ?? new Telemetry({ defaultMetrics: false }) });
  connection.connect();
  await waitUntil(() => connection.up, 5_000, 'redis connection');
  return connection;
}
