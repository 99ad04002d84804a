// A real redis-server (Debian's package) on a free port, with no persistence,
// for cluster tests. stop() kills it (as an outage would); start() brings it
// back on the same port, empty.
import { spawn, type ChildProcess } from 'node:child_process';
import { connect } from 'node:net';
import { freePort, waitUntil } from './daemon.js';

export interface TestRedis {
  readonly port: number;
  readonly url: string;
  start(): Promise<void>;
  /** SIGKILL: the data is gone, as after a crash of a Redis without persistence. */
  kill(): Promise<void>;
  stop(): Promise<void>;
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

export async function startRedis(): Promise<TestRedis> {
  const port = await freePort();
  let child: ChildProcess | undefined;
  const redis: TestRedis = {
    port,
    url: `redis://127.0.0.1:${port}/0`,
    async start() {
      child = spawn('redis-server', ['--port', String(port), '--bind', '127.0.0.1', '--save', '', '--appendonly', 'no', '--loglevel', 'warning'], { stdio: 'ignore' });
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
  };
  await redis.start();
  return redis;
}
