// Load generators over keep-alive undici connections: closed loop (as fast as
// acknowledgements come back) for maximum throughput, open loop (a fixed
// request rate) for steady-state measurements.
import { Pool } from 'undici';

export interface LoadResult {
  requests: number;
  failures: number;
  seconds: number;
}

export async function closedLoop(url: string, bodies: Uint8Array[], concurrency: number, durationMs: number): Promise<LoadResult> {
  const target = new URL(url);
  const pool = new Pool(target.origin, { connections: concurrency, pipelining: 1, keepAliveTimeout: 60_000 });
  let requests = 0;
  let failures = 0;
  const t0 = performance.now();
  const deadline = t0 + durationMs;
  async function worker(offset: number): Promise<void> {
    let i = offset;
    while (performance.now() < deadline) {
      const body = bodies[i++ % bodies.length]!;
      const r = await pool.request({ path: target.pathname, method: 'POST', body, headers: { 'content-type': 'application/x-protobuf' } });
      await r.body.dump();
      if (r.statusCode === 200) requests++;
      else failures++;
    }
  }
  await Promise.all(Array.from({ length: concurrency }, (_, i) => worker(i * 7)));
  const seconds = (performance.now() - t0) / 1000;
  await pool.close();
  return { requests, failures, seconds };
}

export async function openLoop(url: string, bodies: Uint8Array[], ratePerSecond: number, durationMs: number): Promise<LoadResult> {
  const target = new URL(url);
  const pool = new Pool(target.origin, { connections: 8, keepAliveTimeout: 60_000 });
  let requests = 0;
  let failures = 0;
  const inflight: Promise<void>[] = [];
  const t0 = performance.now();
  const total = Math.round((ratePerSecond * durationMs) / 1000);
  for (let i = 0; i < total; i++) {
    const due = t0 + (i * 1000) / ratePerSecond;
    const wait = due - performance.now();
    if (wait > 1) await new Promise((r) => setTimeout(r, wait));
    inflight.push(
      pool
        .request({ path: target.pathname, method: 'POST', body: bodies[i % bodies.length]!, headers: { 'content-type': 'application/x-protobuf' } })
        .then(async (r) => {
          await r.body.dump();
          if (r.statusCode === 200) requests++;
          else failures++;
        })
        .catch(() => {
          failures++;
        }),
    );
  }
  await Promise.all(inflight);
  const seconds = (performance.now() - t0) / 1000;
  await pool.close();
  return { requests, failures, seconds };
}
