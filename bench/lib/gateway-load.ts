// Load generators for the gateway benchmark, over keep-alive undici pools.
// Open loop: requests go out on a fixed schedule whatever the answers do, and
// each latency runs from the request's *scheduled* send time, so a stalled
// server is charged for the requests it delayed (no coordinated omission).
// Closed loop: N connections, each sending its next request when the last
// answer is complete, for the maximum rate. Every phase is bounded in time.
import { Pool } from 'undici';

/** ms a request may take before it counts as failed. */
const REQUEST_TIMEOUT_MS = 5_000;
/** ms an open loop waits for stragglers after its last scheduled send. */
const DRAIN_MS = 6_000;
const KEEP_ALIVE_MS = 60_000;

export interface Target {
  readonly origin: string;
  readonly path: string;
  readonly headers: Readonly<Record<string, string>>;
}

export interface OpenLoopOptions {
  readonly ratePerSecond: number;
  readonly durationMs: number;
  /** Time to the first body byte (streams) instead of to the complete answer. */
  readonly firstByte: boolean;
  readonly connections: number;
}

export interface OpenLoopResult {
  /** Sorted, ms, one per successful request. */
  readonly latenciesMs: Float64Array;
  readonly sent: number;
  readonly ok: number;
  /** Non-200 answers, network errors and timeouts. */
  readonly failed: number;
  /** Still unanswered when the drain deadline passed. */
  readonly unfinished: number;
}

export interface ClosedLoopResult {
  readonly ok: number;
  readonly failed: number;
  readonly perSecond: number;
}

function createPool(target: Target, connections: number): Pool {
  return new Pool(target.origin, {
    connections,
    pipelining: 1,
    keepAliveTimeout: KEEP_ALIVE_MS,
    headersTimeout: REQUEST_TIMEOUT_MS,
    bodyTimeout: REQUEST_TIMEOUT_MS,
  });
}

/** A request body, or several sent in turn. */
export type Bodies = string | Uint8Array | readonly Uint8Array[];

function pick(bodies: Bodies, i: number): string | Uint8Array {
  if (typeof bodies === 'string' || bodies instanceof Uint8Array) return bodies;
  const body = bodies[i % bodies.length];
  if (body === undefined) throw new Error('no request bodies');
  return body;
}

/** Sends one request and reads the whole answer; resolves with ms from `since` to the first body byte or to the end. */
async function exchange(pool: Pool, target: Target, body: string | Uint8Array, since: number, firstByte: boolean): Promise<number> {
  const r = await pool.request({ path: target.path, method: 'POST', headers: target.headers, body });
  let first = -1;
  for await (const _chunk of r.body) if (first < 0) first = performance.now() - since;
  if (r.statusCode !== 200) throw new Error(`HTTP ${r.statusCode}`);
  return firstByte && first >= 0 ? first : performance.now() - since;
}

export async function openLoop(target: Target, bodies: Bodies, options: OpenLoopOptions): Promise<OpenLoopResult> {
  const pool = createPool(target, options.connections);
  const total = Math.round((options.ratePerSecond * options.durationMs) / 1000);
  const intervalMs = 1000 / options.ratePerSecond;
  const latencies = new Float64Array(total);
  let ok = 0;
  let failed = 0;
  let inflight = 0;
  let sent = 0;
  let allSettled: () => void = () => undefined;
  const settled = new Promise<void>((resolve) => {
    allSettled = resolve;
  });

  function fire(due: number): void {
    inflight++;
    sent++;
    exchange(pool, target, pick(bodies, sent - 1), due, options.firstByte).then(
      function answered(ms) {
        latencies[ok++] = ms;
      },
      function failedRequest() {
        failed++;
      },
    ).finally(function done() {
      inflight--;
      if (inflight === 0 && sent === total) allSettled();
    });
  }

  const t0 = performance.now();
  await new Promise<void>(function schedule(resolve) {
    // Each tick sends every request that is due, so a late timer never thins
    // the schedule; a late send is charged to the latency of that request.
    function tick(): void {
      const now = performance.now();
      while (sent < total && t0 + sent * intervalMs <= now) fire(t0 + sent * intervalMs);
      if (sent < total) setTimeout(tick, Math.max(0, t0 + sent * intervalMs - performance.now()));
      else resolve();
    }
    tick();
  });
  if (inflight === 0) allSettled();
  let drainTimer: NodeJS.Timeout | undefined;
  try {
    await Promise.race([settled, new Promise<void>((r) => (drainTimer = setTimeout(r, DRAIN_MS)))]);
  } finally {
    clearTimeout(drainTimer);
  }
  // Read before destroy(), which fails the stragglers.
  const unfinished = inflight;
  const failures = failed;
  await pool.destroy();
  const sorted = latencies.slice(0, ok).sort();
  return { latenciesMs: sorted, sent, ok: sorted.length, failed: failures, unfinished };
}

export async function closedLoop(target: Target, body: string, connections: number, durationMs: number): Promise<ClosedLoopResult> {
  const pool = createPool(target, connections);
  let ok = 0;
  let failed = 0;
  const t0 = performance.now();
  const deadline = t0 + durationMs;
  async function worker(): Promise<void> {
    while (performance.now() < deadline) {
      try {
        await exchange(pool, target, body, 0, false);
        if (performance.now() <= deadline) ok++;
      } catch {
        failed++;
      }
    }
  }
  await Promise.all(Array.from({ length: connections }, worker));
  await pool.destroy();
  return { ok, failed, perSecond: ok / (durationMs / 1000) };
}

/** Nearest-rank percentile of a sorted array; NaN when empty. */
export function percentile(sorted: Float64Array, p: number): number {
  if (sorted.length === 0) return Number.NaN;
  const rank = Math.min(sorted.length - 1, Math.max(0, Math.ceil((p / 100) * sorted.length) - 1));
  return sorted[rank] ?? Number.NaN;
}
